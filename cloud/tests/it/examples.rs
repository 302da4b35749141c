//! `examples/cloud.toml` loads through the real settings and says what it
//! says, over the defaults.

// figment's Jail closures return figment's own (large) error type.
#![allow(clippy::result_large_err)]

use depot_cloud::settings::Settings;
use std::path::{Path, PathBuf};

#[test]
fn the_example_cloud_configuration_loads() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cloud.toml");
    figment::Jail::expect_with(|_| {
        let s = Settings::load(Some(&file)).map_err(|e| e.to_string())?;
        assert_eq!(s.data_dir, PathBuf::from("/var/lib/depot"));
        assert_eq!(s.changelog.base_url, "https://depot.example.com");
        assert!(
            matches!(s.broker.external(), Ok(None)),
            "the embedded broker"
        );
        assert!(s.carriers.is_empty() && s.oauth.trusted_issuers.is_empty());
        Ok(())
    });
}
