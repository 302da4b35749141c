// figment's Jail closures return figment's own (large) error type.
#![allow(clippy::result_large_err)]

use super::*;
use crate::settings::Settings;
use depot_hardware::scale::SerialProtocol;
use depot_hardware::scanner::registry::ScannerMode;
use std::path::Path;

/// The example of docs/devices.md, whole.
const EXAMPLE: &str = r#"
business_id = 1
edge_id = "mad-1"
node = 1

[[devices.printers]]
name = "Pack 1 labels"
endpoint = "tcp://10.0.0.5:9100"
status_timeout_ms = 2000

[[devices.printers]]
name = "Dock labels"
endpoint = "serial:///dev/ttyUSB0?baud=9600"

[[devices.scales]]
id = "pack-1-scale"
protocol = "mt_sics"
port = "/dev/serial/by-id/usb-Mettler_Toledo-if00"

[[devices.scales]]
id = "dock-scale"
protocol = "modbus_tcp"
address = "10.0.0.7:502"
registers = { table = "holding", address = 0, width = "u32", word_order = "high_first", signed = true, decimals = 1, unit = "kg", stable = { table = "holding", address = 2, bit = 0 } }

[[devices.scanners]]
kind = "usb"
name = "pack-1-gun"
vendor_id = 0x0C2E
product_id = 0x0B61
serial = "17011B0F4A"
mode = { kind = "hid_pos" }

[[devices.scanners]]
kind = "serial"
name = "dock-gun"
path = "/dev/serial/by-id/usb-Honeywell-if00"

[[stations]]
name = "pack-1"
scanners = ["pack-1-gun"]
scale = "pack-1-scale"
printer = "Pack 1 labels"
tolerance_g = 30
tolerance_pct = 3.5
packaging_g = 120

[[stations]]
name = "dock"
scanners = ["dock-gun"]
"#;

fn load(toml: &str) -> Result<Settings, String> {
    let mut out = Err(String::new());
    figment::Jail::expect_with(|jail| {
        jail.create_file("edge.toml", toml)?;
        out = Settings::load(Some(Path::new("edge.toml"))).map_err(|e| e.to_string());
        Ok(())
    });
    out
}

/// The example with `replace` swapped for `with`.
fn variant(replace: &str, with: &str) -> String {
    assert!(EXAMPLE.contains(replace), "{replace}");
    EXAMPLE.replacen(replace, with, 1)
}

fn error_of(toml: &str) -> String {
    match load(toml) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e,
    }
}

#[test]
fn the_example_reads_whole() {
    let s = load(EXAMPLE).expect("valid");
    let d = &s.devices;
    assert_eq!(d.printers.len(), 2);
    assert_eq!(d.printers[0].endpoint.to_string(), "tcp://10.0.0.5:9100");
    assert_eq!(
        d.printers[0].driver().status_timeout,
        Duration::from_millis(2000)
    );
    assert_eq!(
        d.printers[1].driver().connect_timeout,
        DriverConfig::default().connect_timeout
    );
    match d.scales[0].hardware() {
        Ok(ScaleConfig::Serial(c)) => {
            assert_eq!(c.protocol, SerialProtocol::MtSics);
            assert_eq!(c.port.baud_rate, 9600);
        }
        other => panic!("{other:?}"),
    }
    match d.scales[1].hardware() {
        Ok(ScaleConfig::Modbus(c)) => {
            assert_eq!(c.unit_id, 1);
            assert_eq!(c.map.decimals, 1);
            assert!(c.map.stable.is_some());
        }
        other => panic!("{other:?}"),
    }
    match &d.scanners[0] {
        ScannerDevice::Usb(m) => {
            assert_eq!((m.vendor_id, m.mode.clone()), (0x0C2E, ScannerMode::HidPos));
        }
        other => panic!("{other:?}"),
    }
    match &d.scanners[1] {
        ScannerDevice::Serial(c) => assert_eq!(c.baud_rate, 9600),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.stations[0].tolerance_pct, 3.5);
    assert_eq!(s.stations[1].tolerance_g, 20);
    assert_eq!(s.stations[1].weigh_timeout_ms, 5000);
}

#[test]
fn no_devices_is_the_default() {
    let s = load("business_id = 1\nedge_id = \"e\"\nnode = 1\n").expect("valid");
    assert_eq!(s.devices, DevicesConfig::default());
    assert!(s.stations.is_empty());
}

#[test]
fn the_environment_can_add_a_printer() {
    figment::Jail::expect_with(|jail| {
        jail.create_file("edge.toml", "business_id = 1\nedge_id = \"e\"\nnode = 1\n")?;
        jail.set_env(
            "DEPOT_DEVICES__PRINTERS",
            r#"[{name = "P", endpoint = "tcp://printer:9100"}]"#,
        );
        let s = Settings::load(Some(Path::new("edge.toml")))
            .map_err(|e| figment::Error::from(e.to_string()))?;
        assert_eq!(s.devices.printers[0].name, "P");
        Ok(())
    });
}

#[test]
fn a_bad_endpoint_is_named() {
    let e = error_of(&variant("tcp://10.0.0.5:9100", "tcp://:9100"));
    assert!(e.contains("missing host") && e.contains("endpoint"), "{e}");
    let e = error_of(&variant("tcp://10.0.0.5:9100", "http://printer"));
    assert!(e.contains("expected tcp://"), "{e}");
    let e = error_of(&variant("?baud=9600", "?baud=fast"));
    assert!(e.contains("baud"), "{e}");
}

#[test]
fn a_station_naming_an_unknown_device_is_refused() {
    let e = error_of(&variant("scale = \"pack-1-scale\"", "scale = \"nope\""));
    assert!(
        e.contains("stations[0] (\"pack-1\")") && e.contains("[[devices.scales]]"),
        "{e}"
    );
    let e = error_of(&variant(
        "scanners = [\"dock-gun\"]",
        "scanners = [\"dock\"]",
    ));
    assert!(e.contains("\"dock\" is not configured"), "{e}");
    let e = error_of(&variant(
        "printer = \"Pack 1 labels\"",
        "printer = \"Nope\"",
    ));
    assert!(e.contains("[[devices.printers]]"), "{e}");
    // A device of the wrong kind.
    let e = error_of(&variant("scale = \"pack-1-scale\"", "scale = \"dock-gun\""));
    assert!(e.contains("is a scanner, not a scale"), "{e}");
}

#[test]
fn names_are_unique_across_kinds() {
    let e = error_of(&variant("id = \"dock-scale\"", "id = \"Dock labels\""));
    assert!(
        e.contains("devices.scales[1]") && e.contains("already a printer"),
        "{e}"
    );
    let e = error_of(&variant("name = \"dock\"\n", "name = \"pack-1\"\n"));
    assert!(e.contains("stations[1]") && e.contains("same name"), "{e}");
    let e = error_of(&variant(
        "scanners = [\"dock-gun\"]",
        "scanners = [\"pack-1-gun\"]",
    ));
    assert!(e.contains("already serves station \"pack-1\""), "{e}");
    let e = error_of(&variant("name = \"dock-gun\"", "name = \" \""));
    assert!(e.contains("must not be empty"), "{e}");
}

#[test]
fn scales_need_what_their_protocol_needs() {
    let e = error_of(&variant(
        "port = \"/dev/serial/by-id/usb-Mettler_Toledo-if00\"",
        "",
    ));
    assert!(e.contains("devices.scales[0]") && e.contains("port"), "{e}");
    let e = error_of(&variant(
        "protocol = \"mt_sics\"",
        "protocol = \"toledo_8217\"",
    ));
    assert!(e.contains("unit"), "{e}");
    let e = error_of(&variant(
        "address = \"10.0.0.7:502\"",
        "address = \"10.0.0.7:502\"\nport = \"/dev/ttyS0\"",
    ));
    assert!(e.contains("port does not apply"), "{e}");
    let e = error_of(&variant("decimals = 1", "decimals = 12"));
    assert!(e.contains("decimals"), "{e}");
    let e = error_of(&variant("protocol = \"mt_sics\"", "protocol = \"sics\""));
    assert!(e.contains("protocol"), "{e}");
}

#[test]
fn unknown_keys_and_bad_numbers_are_refused() {
    let e = error_of(&variant("packaging_g = 120", "packaging = 120"));
    assert!(e.contains("packaging"), "{e}");
    let e = error_of(&variant("serial = \"17011B0F4A\"", "serial_no = \"x\""));
    assert!(e.contains("serial_no"), "{e}");
    let e = error_of(&variant("tolerance_pct = 3.5", "tolerance_pct = 300.0"));
    assert!(e.contains("tolerance_pct"), "{e}");
    let e = error_of(&variant(
        "status_timeout_ms = 2000",
        "status_timeout_ms = 0",
    ));
    assert!(e.contains("status_timeout_ms"), "{e}");
    let e = error_of(&variant("kind = \"serial\"", "kind = \"bluetooth\""));
    assert!(e.contains("bluetooth"), "{e}");
}
