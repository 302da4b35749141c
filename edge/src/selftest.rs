//! `depot-edge self-test`: what a freshly flashed box must be able to do,
//! run on its own CPU without settings or a network, one line per check:
//! the bundled SQLite with WAL and fsync (migrations, the writer, a stock
//! movement and the ledger check), key hashing (SHA-256 against a known
//! answer, a key found by its hash), GS1 parsing and labels. CI runs it on
//! the aarch64 build under qemu, so the binary a technician flashes is one
//! that was tested.
//!
//! The labels come from `depot-labels`, the stack the engine prints every
//! document with: the item's label, and a shipping label to an address in
//! Arabic as ZPL and PDF, so this CPU shapes text, rasterises it into the
//! printer's graphic fields and cuts a font subset for the PDF, as a label
//! in any script other than Latin needs.

use anyhow::{Context, bail, ensure};
use depot_labels::{ItemLabel, PackageInfo, Party, ShippingLabel};
use depot_protocol::gs1;
use depot_protocol::order::Address;
use depot_protocol::tenant::Caller;
use depot_wms::Wms;
use depot_wms::tenants::hash_key;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// SHA-256 of "abc", FIPS 180-2's first example: a hash that is wrong on
/// this CPU (a miscompiled or misoptimised build) would let no key in.
const SHA256_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/// What each line of a passing run starts with, in order (the first says
/// which build ran, the last how long it took).
pub const CHECKS: [&str; 4] = ["database:", "keys:", "gs1:", "labels:"];

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "depot-edge-self-test-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Self(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs every check; the lines say what passed, an error what did not.
pub async fn run() -> anyhow::Result<Vec<String>> {
    let started = Instant::now();
    let mut lines = vec![format!(
        "depot-edge {} on {}-{}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::ARCH,
        std::env::consts::OS
    )];
    let scratch = Scratch::new()?;
    let wms = Wms::open_node(&scratch.path().join("edge.db"), "edge:self-test", 1)
        .context("opening and migrating a database")?;
    let business = wms.create_business("Self test", "EUR", "UTC").await?;
    let warehouse = wms
        .create_warehouse(business.id, "ST1", "Self test", Address::default(), true)
        .await?;
    let key = wms
        .create_key(business.id, Some("self-test".into()))
        .await?;
    // The caller the key stands for, as authentication would answer it:
    // the key check below asks authentication itself.
    let caller = Caller {
        key_id: key.key.id,
        business_id: business.id,
    };
    let item = wms
        .create_item(
            business.id,
            serde_json::from_value(serde_json::json!({
                "sku": "ST-1", "name": "Self test", "gtin": "4006381333931"}))?,
        )
        .await?;
    wms.adjust(
        caller,
        serde_json::from_value(serde_json::json!({
            "warehouse_id": warehouse.id, "sku": "ST-1", "reason": "received", "quantity": 3}))?,
    )
    .await?;
    let problems = wms.check_ledger().await?;
    ensure!(
        problems.is_empty(),
        "the ledger does not add up: {problems:?}"
    );
    lines.push(
        "database: migrated a new SQLite database, wrote an item and a stock movement through the writer, the ledger adds up"
            .into(),
    );

    let abc: String = hash_key("abc").iter().map(|b| format!("{b:02x}")).collect();
    ensure!(
        abc == SHA256_ABC,
        "key hashing: SHA-256 of \"abc\" is {abc}, not {SHA256_ABC}"
    );
    ensure!(
        wms.authenticate(&key.secret).await? == Some(caller),
        "key hashing: a key just made does not authenticate"
    );
    // The key's own prefix (what lists show of it), its last digit changed:
    // a key is found by the hash of all of it.
    let mut other = key.secret.clone();
    let last = if other.pop() == Some('0') { '1' } else { '0' };
    other.push(last);
    ensure!(
        wms.authenticate(&other).await?.is_none(),
        "key hashing: a key one digit off authenticates"
    );
    lines.push(
        "keys: SHA-256 gives the known answer, a new key is found by its hash, a key one digit off is not"
            .into(),
    );

    let scanned = gs1::parse_element_string("0104006381333931\u{1d}10LOT-7\u{1d}17301231")
        .map_err(|e| anyhow::anyhow!("GS1 parsing: {e}"))?;
    match scanned.trade_item() {
        Some(g) if g.to_string().ends_with("4006381333931") => {}
        other => bail!("GS1 parsing read the wrong GTIN: {other:?}"),
    }
    lines.push("gs1: parsed a GTIN, a lot and an expiry date from an element string".into());

    let item_zpl = depot_labels::item_label_zpl(&ItemLabel {
        sku: item.sku.clone(),
        name: item.name.clone(),
        detail: item.gtin.clone(),
    });
    ensure!(
        one_format(&item_zpl) && item_zpl.contains("^FH_^FD>:ST-1^FS"),
        "the item label is not one whole format with the SKU as its barcode"
    );
    let shipping = arabic_label()?;
    ensure!(
        depot_labels::label_problems(&shipping).is_empty(),
        "the shipping label cannot print its address whole"
    );
    let zpl = depot_labels::shipping_label_zpl(&shipping);
    ensure!(
        one_format(&zpl) && zpl.contains("^BCN,") && zpl.contains("^GFA,") && zpl.is_ascii(),
        "the shipping label's ZPL is not one whole format with its barcode and the Arabic lines as graphic fields"
    );
    let pdf = depot_labels::shipping_label_pdf(&shipping)
        .map_err(|e| anyhow::anyhow!("the shipping label's PDF: {e}"))?;
    let tail = String::from_utf8_lossy(&pdf[pdf.len().saturating_sub(32)..]).into_owned();
    ensure!(
        pdf.starts_with(b"%PDF-")
            && tail.trim_end().ends_with("%%EOF")
            && contains(&pdf, b"/FontFile"),
        "the shipping label's PDF is not a whole PDF with the Arabic font embedded"
    );
    lines.push(format!(
        "labels: rendered the item's label ({} bytes of ZPL) and a shipping label to an Arabic address ({} bytes of ZPL with the text as images, {} bytes of PDF with a font subset)",
        item_zpl.len(),
        zpl.len(),
        pdf.len()
    ));
    lines.push(format!(
        "self-test ok in {} ms",
        started.elapsed().as_millis()
    ));
    Ok(lines)
}

/// Whether `zpl` is exactly one `^XA`…`^XZ` format.
fn one_format(zpl: &str) -> bool {
    zpl.starts_with("^XA") && zpl.trim_end().ends_with("^XZ") && zpl.matches("^XA").count() == 1
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A shipping label to Riyadh, every line of the address in Arabic: text
/// the printer's resident font cannot draw and the PDF's built-in one
/// cannot either.
fn arabic_label() -> anyhow::Result<ShippingLabel> {
    let shipped_on = chrono::NaiveDate::from_ymd_opt(2025, 3, 14).context("a date")?;
    Ok(ShippingLabel {
        carrier: "Self test".into(),
        service: "Standard".into(),
        tracking_number: "ST0000000001".into(),
        piece_number: "ST0000000001-01".into(),
        sscc: Some("340123450000000017".into()),
        ship_from: Party {
            name: "Depot self test".into(),
            line1: "1 Dock Road".into(),
            line2: None,
            city: "Lyon".into(),
            postal_code: "69001".into(),
            region: None,
            country: "FR".into(),
        },
        ship_to: Party {
            name: "محمد عبد الله".into(),
            line1: "شارع الملك فهد 12، حي العليا".into(),
            line2: None,
            city: "الرياض".into(),
            postal_code: "12271".into(),
            region: None,
            country: "السعودية".into(),
        },
        order_ref: "SO-ST-1".into(),
        package: PackageInfo {
            index: 1,
            count: 1,
            weight_g: 1250,
            dimensions_mm: Some((300, 200, 100)),
        },
        shipped_on,
    })
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn passes_on_the_build_machine_and_leaves_nothing() {
        let lines = super::run().await.expect("self-test");
        assert!(
            lines.last().is_some_and(|l| l.starts_with("self-test ok")),
            "{lines:?}"
        );
        // One line per check, each saying what it did.
        let checks: Vec<&str> = lines[1..lines.len() - 1]
            .iter()
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(checks, super::CHECKS, "{lines:#?}");
        let left = std::fs::read_dir(std::env::temp_dir())
            .expect("temp dir")
            .filter_map(Result::ok)
            .any(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("depot-edge-self-test-{}-", std::process::id()))
            });
        assert!(!left, "the scratch directory was left behind");
    }
}
