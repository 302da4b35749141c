//! `docs/events.md` is the catalogue, as generated: it cannot drift.

use std::path::PathBuf;

#[test]
fn docs_events_md_is_the_catalogue() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/events.md");
    let generated = depot_protocol::catalogue::markdown::document();
    if std::env::var_os("DEPOT_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("writing docs/events.md");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/events.md differs from the catalogue in protocol/src/catalogue: \
         regenerate it with DEPOT_BLESS=1 cargo test -p depot-protocol --test events_doc"
    );
}
