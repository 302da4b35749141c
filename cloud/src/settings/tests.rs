use super::*;

#[test]
fn file_then_environment() {
    figment::Jail::expect_with(|jail| {
        jail.create_file(
            "cloud.toml",
            "listen = \"127.0.0.1:9000\"\n[rate_limit]\nper_second = 5\n",
        )?;
        jail.set_env("DEPOT_RATE_LIMIT__BURST", "7");
        let s = Settings::load(Some(Path::new("cloud.toml"))).map_err(|e| *e)?;
        assert_eq!(s.listen, SocketAddr::from(([127, 0, 0, 1], 9000)));
        assert_eq!(
            s.rate_limit,
            RateLimit {
                per_second: 5,
                burst: 7
            }
        );
        assert_eq!(s.data_dir, PathBuf::from("depot-data"));
        Ok(())
    });
}

#[test]
fn the_own_fleets_limits_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("DEPOT_OWN_FLEET__STANDARD__MAX_WEIGHT_G", "5000");
        jail.set_env("DEPOT_OWN_FLEET__EXPRESS__MAX_SIDES_MM", "[500, 400, 300]");
        let s = Settings::load(None).map_err(|e| *e)?;
        assert_eq!(s.own_fleet.standard.max_weight_g, 5000);
        assert_eq!(s.own_fleet.standard.max_sides_mm, [1200, 600, 600]);
        assert_eq!(s.own_fleet.express.max_sides_mm, [500, 400, 300]);
        jail.set_env("DEPOT_OWN_FLEET__STANDARD__MAX_WEIGHT_G", "0");
        let e = Settings::load(None).err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("own_fleet.standard.max_weight_g")));
        Ok(())
    });
}

#[test]
fn idempotency_keys_are_kept_1_to_720_hours() {
    figment::Jail::expect_with(|jail| {
        assert_eq!(
            Settings::load(None)
                .map_err(|e| *e)?
                .idempotency
                .retention_hours,
            24
        );
        jail.set_env("DEPOT_IDEMPOTENCY__RETENTION_HOURS", "48");
        assert_eq!(
            Settings::load(None)
                .map_err(|e| *e)?
                .idempotency
                .retention_hours,
            48
        );
        for bad in ["0", "721"] {
            jail.set_env("DEPOT_IDEMPOTENCY__RETENTION_HOURS", bad);
            let e = Settings::load(None).err().map(|e| e.to_string());
            assert!(e.is_some_and(|e| e.contains("retention_hours")), "{bad}");
        }
        Ok(())
    });
}

#[test]
fn secrets_come_from_the_environment_and_never_print() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("DEPOT_CARRIERS__OWN__WEBHOOK_SECRET", "hunter2");
        let s = Settings::load(None).map_err(|e| *e)?;
        assert_eq!(
            s.webhook_secrets().get("own").map(String::as_str),
            Some("hunter2")
        );
        assert!(!format!("{s:?}").contains("hunter2"));
        Ok(())
    });
}

#[test]
fn broker_from_file_and_environment() {
    figment::Jail::expect_with(|jail| {
        let s = Settings::load(None).map_err(|e| *e)?;
        assert_eq!(s.broker, BrokerSettings::default());
        assert!(matches!(s.broker.external(), Ok(None)));

        jail.create_file(
            "cloud.toml",
            "[broker]\nembedded_listen = \"0.0.0.0:1884\"\n",
        )?;
        jail.set_env("DEPOT_BROKER__EMBEDDED_LISTEN", "127.0.0.1:1999");
        jail.set_env("DEPOT_BROKER__URL", "mqtts://edge:hunter2@broker.example");
        let s = Settings::load(Some(Path::new("cloud.toml"))).map_err(|e| *e)?;
        assert_eq!(
            s.broker.embedded_listen,
            SocketAddr::from(([127, 0, 0, 1], 1999))
        );
        let url = s.broker.external().map_err(|e| e.to_string())?;
        let url = url.ok_or("an external broker")?;
        assert_eq!(
            (url.host.as_str(), url.port, url.tls),
            ("broker.example", 8883, true)
        );
        assert_eq!(url.password.as_deref(), Some("hunter2"));
        assert!(!format!("{s:?}").contains("hunter2"));

        jail.set_env("DEPOT_BROKER__URL", "");
        let s = Settings::load(None).map_err(|e| *e)?;
        assert!(matches!(s.broker.external(), Ok(None)));

        jail.set_env("DEPOT_BROKER__URL", "http://edge:hunter2@broker.example");
        let e = Settings::load(None).err().ok_or("a bad URL is refused")?;
        assert!(e.to_string().contains("unknown scheme"), "{e}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
        Ok(())
    });
}

#[test]
fn broker_tls_files_are_read_at_load() {
    figment::Jail::expect_with(|jail| {
        // A CA file for the embedded broker, which has no TLS.
        jail.set_env("DEPOT_BROKER__CA_FILE", "site-ca.pem");
        let e = Settings::load(None).err().ok_or("files without a URL")?;
        assert!(e.to_string().contains("the embedded one has no TLS"), "{e}");

        jail.set_env("DEPOT_BROKER__URL", "mqtts://broker.example");
        let e = Settings::load(None).err().ok_or("a missing CA file")?;
        assert!(
            e.to_string()
                .contains("broker.ca_file (site-ca.pem): cannot read it"),
            "{e}"
        );

        jail.create_file("site-ca.pem", "no certificate here\n")?;
        let e = Settings::load(None)
            .err()
            .ok_or("a file without a certificate")?;
        assert!(e.to_string().contains("no certificate in it"), "{e}");
        Ok(())
    });
}

#[test]
fn the_environment_reaches_every_setting() {
    let json = serde_json::to_value(Settings::default()).expect("settings");
    let mut keys: Vec<&str> = json
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let mut fields = FIELDS.to_vec();
    keys.sort_unstable();
    fields.sort_unstable();
    assert_eq!(keys, fields);
}

#[test]
fn the_database_on_a_server_from_the_environment_never_prints() {
    figment::Jail::expect_with(|jail| {
        assert_eq!(
            Settings::load(None).map_err(|e| *e)?.database.postgres(),
            None
        );
        let url = "postgres://depot:s3cr%C3%A9t@db.internal:5432/depot?sslmode=require";
        jail.set_env("DEPOT_DATABASE__URL", url);
        let s = Settings::load(None).map_err(|e| *e)?;
        assert_eq!(s.database.postgres(), Some(url));
        assert!(!format!("{s:?}").contains("s3cr"), "{s:?}");
        for bad in ["mysql://h/db", "postgres://h:notaport/db", "/var/lib/depot"] {
            jail.set_env("DEPOT_DATABASE__URL", bad);
            let e = Settings::load(None).expect_err(bad).to_string();
            assert!(e.contains("database.url"), "{bad}: {e}");
        }
        Ok(())
    });
}

#[test]
fn oauth_from_the_environment() {
    figment::Jail::expect_with(|jail| {
        jail.set_env("DEPOT_OAUTH__TOKEN_TTL_SECS", "600");
        jail.set_env("DEPOT_OAUTH__OPEN_REGISTRATION", "false");
        // The admin CLI's password variable is not a setting.
        jail.set_env("DEPOT_OAUTH_PASSWORD", "not a setting at all");
        let s = Settings::load(None).map_err(|e| *e)?;
        assert_eq!(s.oauth.token_ttl_secs, 600);
        assert!(!s.oauth.open_registration);
        jail.set_env("DEPOT_OAUTH__TOKEN_TTL_SECS", "0");
        assert!(Settings::load(None).is_err());
        Ok(())
    });
}

#[test]
fn changelog_from_file_and_environment() {
    figment::Jail::expect_with(|jail| {
        let s = Settings::load(None).map_err(|e| *e)?;
        assert_eq!(s.changelog, ChangelogSettings::default());
        jail.create_file(
            "cloud.toml",
            "[changelog]\nlocales = [\"en\", \"de\"]\ntranslations_dir = \"/srv/tr\"\n",
        )?;
        jail.set_env("DEPOT_CHANGELOG__BASE_URL", "https://changelog.example.com");
        jail.set_env("DEPOT_CHANGELOG__DEFAULT_LOCALE", "de");
        let s = Settings::load(Some(Path::new("cloud.toml"))).map_err(|e| *e)?;
        assert_eq!(s.changelog.base_url, "https://changelog.example.com");
        assert_eq!(s.changelog.locales, ["en", "de"]);
        assert_eq!(s.changelog.default_locale, "de");
        assert_eq!(s.changelog.translations_dir, Some(PathBuf::from("/srv/tr")));

        jail.set_env("DEPOT_CHANGELOG__DEFAULT_LOCALE", "fr");
        let e = Settings::load(Some(Path::new("cloud.toml"))).err();
        assert!(e.is_some_and(|e| e.to_string().contains("default_locale")));
        jail.set_env("DEPOT_CHANGELOG__DEFAULT_LOCALE", "en");
        jail.set_env("DEPOT_CHANGELOG__LOCALES", "[\"en\", \"english\"]");
        let e = Settings::load(None).err();
        assert!(e.is_some_and(|e| e.to_string().contains("english")));
        Ok(())
    });
}

#[test]
fn unknown_keys_and_zero_limits_are_refused() {
    figment::Jail::expect_with(|jail| {
        jail.create_file("bad.toml", "lisen = \"127.0.0.1:9000\"\n")?;
        assert!(Settings::load(Some(Path::new("bad.toml"))).is_err());
        jail.create_file("zero.toml", "[rate_limit]\nper_second = 0\n")?;
        assert!(Settings::load(Some(Path::new("zero.toml"))).is_err());
        Ok(())
    });
}
