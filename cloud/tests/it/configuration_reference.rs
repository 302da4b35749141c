//! docs/cloud-configuration.md is what the settings types say, and what it
//! says about the environment holds.

// figment's Jail closures return figment's own (large) error type.
#![allow(clippy::result_large_err)]

use depot_cloud::settings::{REFERENCE, Settings, reference_markdown};
use std::path::Path;

#[test]
fn the_committed_reference_is_made_from_the_settings_types() {
    let made = reference_markdown().unwrap_or_else(|e| panic!("{e}"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cloud-configuration.md");
    if let Err(e) = depot_settings_doc::check_committed(&path, &made, REFERENCE.regenerate) {
        panic!("{e}");
    }
}

#[test]
fn the_reference_names_every_setting_and_its_variable() {
    let made = reference_markdown().unwrap_or_else(|e| panic!("{e}"));
    for line in [
        "| `rate_limit.per_second` | integer, 0 or more | `50` | `DEPOT_RATE_LIMIT__PER_SECOND` |",
        "| `broker.url` | string | unset | `DEPOT_BROKER__URL` |",
        "## `[carriers.<name>]`",
        "## `[[oauth.trusted_issuers]]`",
    ] {
        assert!(made.contains(line), "{line}\n{made}");
    }
}

/// What the reference says of lists of tables and tables by name.
#[test]
fn lists_and_named_tables_come_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.set_env(
            "DEPOT_OAUTH__TRUSTED_ISSUERS",
            r#"[{issuer = "https://idp.example.com", jwks_uri = "https://idp.example.com/jwks", scopes = ["releases:write"]}]"#,
        );
        jail.set_env("DEPOT_CARRIERS__OWN__WEBHOOK_SECRET", "hunter2");
        let s = Settings::load(None).map_err(|e| *e)?;
        let [issuer] = s.oauth.trusted_issuers.as_slice() else {
            panic!("one issuer: {:?}", s.oauth.trusted_issuers);
        };
        assert_eq!(issuer.issuer, "https://idp.example.com");
        assert_eq!(issuer.scopes, ["releases:write"]);
        assert_eq!(
            s.webhook_secrets().get("own").map(String::as_str),
            Some("hunter2")
        );
        Ok(())
    });
}
