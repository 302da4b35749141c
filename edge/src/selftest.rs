//! `depot-edge self-test`: what a freshly flashed box must be able to do,
//! run on its own CPU without settings or a network: the bundled SQLite
//! with WAL and fsync (migrations, the writer, a stock movement and the
//! ledger check), key hashing, GS1 parsing and a ZPL label. CI runs it on
//! the aarch64 build under qemu, so the binary a technician flashes is one
//! that was tested.

use anyhow::{Context, bail, ensure};
use depot_hardware::printer::zpl::{Dpi, ItemLabel, LabelSize};
use depot_protocol::gs1;
use depot_protocol::order::Address;
use depot_wms::Wms;
use std::path::{Path, PathBuf};
use std::time::Instant;

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
    let caller = wms
        .authenticate(&key.secret)
        .await?
        .context("a key just made does not authenticate")?;
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
    lines.push("sqlite: migrated, wrote through the writer and checked the ledger".into());

    let scanned = gs1::parse_element_string("0104006381333931\u{1d}10LOT-7\u{1d}17301231")
        .map_err(|e| anyhow::anyhow!("GS1 parsing: {e}"))?;
    match scanned.trade_item() {
        Some(g) if g.to_string().ends_with("4006381333931") => {}
        other => bail!("GS1 parsing read the wrong GTIN: {other:?}"),
    }
    lines.push("gs1: parsed a GTIN, lot and expiry".into());

    let label = ItemLabel {
        code: item.sku.clone(),
        title: item.name.clone(),
        detail: item.gtin.clone(),
    }
    .to_zpl(LabelSize::from_mm(50, 25, Dpi::D203))
    .map_err(|e| anyhow::anyhow!("ZPL: {e}"))?;
    let text = String::from_utf8_lossy(&label);
    ensure!(
        text.contains("^XA") && text.trim_end().ends_with("^XZ") && text.contains("ST-1"),
        "the ZPL label is not one whole format naming the item"
    );
    lines.push(format!(
        "zpl: rendered an item label ({} bytes)",
        label.len()
    ));
    lines.push(format!(
        "self-test ok in {} ms",
        started.elapsed().as_millis()
    ));
    Ok(lines)
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
