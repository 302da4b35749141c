//! docs/edge-configuration.md is what the settings types say, and what it
//! says about the environment holds.

// figment's Jail closures return figment's own (large) error type.
#![allow(clippy::result_large_err)]

use depot_edge::settings::{REFERENCE, Settings, reference_markdown};
use std::path::Path;

#[test]
fn the_committed_reference_is_made_from_the_settings_types() {
    let made = reference_markdown().unwrap_or_else(|e| panic!("{e}"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/edge-configuration.md");
    if let Err(e) = depot_settings_doc::check_committed(&path, &made, REFERENCE.regenerate) {
        panic!("{e}");
    }
}

#[test]
fn the_reference_names_every_setting_and_its_variable() {
    let made = reference_markdown().unwrap_or_else(|e| panic!("{e}"));
    for line in [
        "| `broker.url` | string | `\"mqtt://127.0.0.1:1883\"` | `DEPOT_BROKER__URL` |",
        "| `node` | integer, 0 or more | `0` | `DEPOT_NODE` |",
        "## `[[devices.printers]]`",
        "### `kind = \"usb\"`",
    ] {
        assert!(made.contains(line), "{line}\n{made}");
    }
    // Defaults the printer's driver applies when a key is left out.
    assert!(
        made.contains("| `connect_timeout_ms` | integer, 0 or more | `5000` |"),
        "{made}"
    );
}

/// What the reference says of lists of tables: one variable holds the
/// whole list, written inline.
#[test]
fn a_list_of_tables_comes_whole_from_the_environment() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/edge.toml");
    figment::Jail::expect_with(|jail| {
        jail.set_env(
            "DEPOT_STATIONS",
            r#"[{name = "pack-2", scanners = ["pack-1-gun"], scale = "pack-1-scale", packaging_g = 80}]"#,
        );
        jail.set_env("DEPOT_BROKER__WINDOW", "500");
        let s = Settings::load(Some(&file)).map_err(|e| e.to_string())?;
        let names: Vec<&str> = s.stations.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pack-2"]);
        assert_eq!(s.stations[0].packaging_g, 80);
        assert_eq!(s.stations[0].printer, None);
        assert_eq!(s.broker.window, 500);
        Ok(())
    });
}
