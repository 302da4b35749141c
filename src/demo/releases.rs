//! The demo's release notes: the running version published in English, and
//! a translation source beside the databases with its Spanish, so that
//! `POST /api/sync-translations` has something to fill.

use anyhow::Context;
use depot_protocol::Page;
use depot_protocol::release::{NewRelease, Note, Product};
use depot_wms::Wms;
use depot_wms::releases::ReleaseFilter;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Publishes this version's notes, once.
pub async fn publish(wms: &Wms) -> anyhow::Result<()> {
    let this = ReleaseFilter {
        product: Some(Product::Wms),
        version: Some(VERSION.into()),
        ..ReleaseFilter::default()
    };
    let found = wms.release_page(this, Page::default()).await?;
    if found.filtered > 0 {
        return Ok(());
    }
    let notes = BTreeMap::from([(
        "en".to_owned(),
        Note {
            title: "The floor keeps working offline".into(),
            body: "- Stations pick, pack and receive at the edge while the uplink is down.\n\
                   - Packing checks the **scale** and prints the label on the station's printer."
                .into(),
        },
    )]);
    wms.publish_release(
        NewRelease {
            product: Product::Wms,
            version: VERSION.into(),
            date: depot_protocol::now().date_naive(),
            default_locale: "en".into(),
            notes,
        },
        Some("demo".into()),
    )
    .await
    .context("publishing the demo's release notes")?;
    Ok(())
}

/// Writes the Spanish notes where translation sync reads them (kept if
/// someone edited them) and answers the directory.
pub fn translations(data_dir: &Path) -> anyhow::Result<PathBuf> {
    let dir = data_dir.join("translations");
    let product = dir.join("es").join("wms");
    std::fs::create_dir_all(&product).with_context(|| format!("creating {}", product.display()))?;
    let file = product.join(format!("{VERSION}.md"));
    if !file.exists() {
        std::fs::write(
            &file,
            "# La nave sigue trabajando sin conexión\n\n\
             - Los puestos preparan, empaquetan y reciben en el edge aunque caiga la línea.\n\
             - Al empaquetar se comprueba la **báscula** y la etiqueta sale en la impresora del puesto.\n",
        )
        .with_context(|| format!("writing {}", file.display()))?;
    }
    Ok(dir)
}
