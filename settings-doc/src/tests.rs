use super::*;
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::BTreeMap;

const REFERENCE: Reference<'static> = Reference {
    title: "Test configuration",
    intro: "For the tests.",
    command: "test config reference",
    regenerate: "`regenerate`",
};

/// A top-level table.
#[derive(Serialize, JsonSchema)]
#[serde(default)]
struct Settings {
    /// Where to listen.
    listen: String,
    /// The link.
    link: Link,
    /// Machines by name.
    machines: BTreeMap<String, Machine>,
    /// Things on the floor.
    things: Vec<Thing>,
    /// Optional, unset by default.
    extra: Option<u16>,
}

#[derive(Serialize, JsonSchema)]
struct Link {
    /// Seconds between tries.
    retry_secs: u64,
}

#[derive(Serialize, JsonSchema)]
struct Machine {
    /// Its secret.
    secret: String,
}

/// A thing.
// Only described, never made.
#[allow(dead_code)]
#[derive(Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Thing {
    /// A lamp.
    Lamp(Lamp),
    /// A bell.
    Bell {
        /// How loud, 0 to 10.
        #[serde(default = "five")]
        volume: u8,
    },
}

fn five() -> u8 {
    5
}

#[derive(Serialize, JsonSchema)]
struct Lamp {
    /// Its name.
    name: String,
    /// Its colour.
    colour: Colour,
}

/// A colour.
#[allow(dead_code)]
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Colour {
    /// Like blood.
    Red,
    /// Like the sea.
    Blue,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:1".into(),
            link: Link { retry_secs: 3 },
            machines: BTreeMap::new(),
            things: Vec::new(),
            extra: None,
        }
    }
}

fn made() -> Result<String, String> {
    let schema = schemars::schema_for!(Settings);
    let defaults = serde_json::to_value(Settings::default()).map_err(|e| e.to_string())?;
    markdown(schema.as_value(), &defaults, &REFERENCE)
}

#[test]
fn every_kind_of_setting_gets_its_row() {
    let doc = made().unwrap_or_else(|e| panic!("{e}"));
    for line in [
        "| `listen` | string | `\"127.0.0.1:1\"` | `DEPOT_LISTEN` | Where to listen. |",
        "| `link.retry_secs` | integer, 0 or more | `3` | `DEPOT_LINK__RETRY_SECS` | Seconds between tries. |",
        "| `extra` | integer, 0 to 65535 | unset | `DEPOT_EXTRA` | Optional, unset by default. |",
        "| `machines` | tables by name, see [`[machines.<name>]`](#machinesname) | `{}` | `DEPOT_MACHINES__<NAME>__…` | Machines by name. |",
        "| `secret` | string | required | Its secret. |",
        "| `things` | list of tables, see [`[[things]]`](#things) | `[]` | `DEPOT_THINGS` (the whole list) | Things on the floor. |",
        "### `kind = \"lamp\"`",
        "| `kind` | `\"lamp\"` | required | A lamp. |",
        "| `colour` | `\"red\"` \\| `\"blue\"` | required | Its colour. `\"red\"`: Like blood. `\"blue\"`: Like the sea. |",
        "### `kind = \"bell\"`",
        "| `volume` | integer, 0 to 255 | `5` | How loud, 0 to 10. |",
    ] {
        assert!(doc.contains(line), "missing {line}\n{doc}");
    }
    assert!(doc.starts_with("# Test configuration\n"), "{doc}");
    assert!(doc.contains("`regenerate`"), "{doc}");
}

#[test]
fn a_setting_without_a_doc_comment_is_named() {
    #[derive(Serialize, JsonSchema, Default)]
    #[serde(default)]
    struct Bare {
        /// Documented.
        fine: bool,
        forgotten: u32,
        nested: Inner,
    }
    #[derive(Serialize, JsonSchema, Default)]
    struct Inner {
        also_forgotten: String,
    }
    let schema = schemars::schema_for!(Bare);
    let defaults = serde_json::to_value(Bare::default()).unwrap_or_default();
    let e = markdown(schema.as_value(), &defaults, &REFERENCE).err();
    let e = e.unwrap_or_default();
    assert!(e.contains("forgotten"), "{e}");
    assert!(e.contains("nested.also_forgotten"), "{e}");
    assert!(!e.contains("fine"), "{e}");
}

#[test]
fn a_stale_copy_is_refused_with_the_command_that_remakes_it() {
    let dir = std::env::temp_dir().join(format!("settings-doc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_default();
    let path = dir.join("reference.md");
    std::fs::write(&path, "# Old\nsame\n").unwrap_or_default();
    let e = check_committed(&path, "# New\nsame\n", "`remake it`").err();
    let e = e.unwrap_or_default();
    assert!(e.contains("`remake it`") && e.contains("line 1"), "{e}");
    assert!(check_committed(&path, "# Old\nsame\n", "`remake it`").is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}
