use super::*;

const VID: u16 = 0x0C2E;
const PID: u16 = 0x0B61;

fn scanner(name: &str) -> ScannerMatch {
    ScannerMatch {
        name: name.into(),
        vendor_id: VID,
        product_id: PID,
        serial: None,
        usb_path: None,
        mode: ScannerMode::default(),
    }
}

fn keyboard(path: &str, serial: Option<&str>, usb_path: &str) -> HidDeviceInfo {
    HidDeviceInfo {
        path: path.into(),
        vendor_id: VID,
        product_id: PID,
        serial: serial.map(str::to_owned),
        usb_path: Some(usb_path.into()),
        usage_page: 0x01,
        usage: 0x06,
    }
}

fn names<'a>(bindings: &[Binding<'a>]) -> Vec<(&'a str, &'a str)> {
    let mut pairs: Vec<_> = bindings
        .iter()
        .map(|b| (b.scanner.name.as_str(), b.device.path.as_str()))
        .collect();
    pairs.sort();
    pairs
}

#[test]
fn vendor_and_product_identify_a_lone_scanner() {
    let scanners = [scanner("pack-1")];
    let mut other = keyboard("/dev/hidraw0", None, "1-2");
    other.vendor_id = 0x046D;
    let devices = [other, keyboard("/dev/hidraw1", None, "1-1")];
    assert_eq!(
        names(&bind(&scanners, &devices)),
        [("pack-1", "/dev/hidraw1")]
    );
}

#[test]
fn serial_numbers_tell_identical_models_apart_wherever_plugged() {
    let mut a = scanner("pick-a");
    a.serial = Some("18092B0123".into());
    let mut b = scanner("pick-b");
    b.serial = Some("18092B0456".into());
    let scanners = [a, b];
    let devices = [
        keyboard("/dev/hidraw4", Some("18092B0456"), "1-1"),
        keyboard("/dev/hidraw7", Some("18092B0123"), "1-2"),
    ];
    assert_eq!(
        names(&bind(&scanners, &devices)),
        [("pick-a", "/dev/hidraw7"), ("pick-b", "/dev/hidraw4")]
    );
}

#[test]
fn usb_paths_tell_apart_scanners_without_serial_numbers() {
    let mut left = scanner("left");
    left.usb_path = Some("1-1.4".into());
    let mut right = scanner("right");
    right.usb_path = Some("1-1.3".into());
    let scanners = [left, right];
    let devices = [
        keyboard("/dev/hidraw2", None, "1-1.3"),
        keyboard("/dev/hidraw3", None, "1-1.4"),
    ];
    assert_eq!(
        names(&bind(&scanners, &devices)),
        [("left", "/dev/hidraw3"), ("right", "/dev/hidraw2")]
    );
}

#[test]
fn specific_entries_choose_before_catch_alls() {
    // The catch-all comes first in the file but must not take the device
    // the precise entry names.
    let any = scanner("any");
    let mut exact = scanner("exact");
    exact.serial = Some("S2".into());
    let scanners = [any, exact];
    let devices = [
        keyboard("/dev/hidraw1", Some("S2"), "1-1"),
        keyboard("/dev/hidraw2", Some("S9"), "1-2"),
    ];
    assert_eq!(
        names(&bind(&scanners, &devices)),
        [("any", "/dev/hidraw2"), ("exact", "/dev/hidraw1")]
    );
}

#[test]
fn a_device_serves_one_scanner_and_a_missing_one_is_unbound() {
    let scanners = [scanner("a"), scanner("b")];
    let devices = [keyboard("/dev/hidraw1", None, "1-1")];
    assert_eq!(names(&bind(&scanners, &devices)), [("a", "/dev/hidraw1")]);
    assert!(bind(&scanners, &[]).is_empty());
}

#[test]
fn the_mode_picks_the_interface_of_a_composite_scanner() {
    let keyboard_if = keyboard("/dev/hidraw1", Some("S1"), "1-1");
    let pos_if = HidDeviceInfo {
        path: "/dev/hidraw2".into(),
        usage_page: 0x8C,
        usage: 0x02,
        ..keyboard_if.clone()
    };
    let vendor_if = HidDeviceInfo {
        path: "/dev/hidraw3".into(),
        usage_page: 0xFF00,
        usage: 0x01,
        ..keyboard_if.clone()
    };
    let devices = [vendor_if, pos_if, keyboard_if];

    let mut pos = scanner("pos");
    pos.mode = ScannerMode::HidPos;
    assert_eq!(names(&bind(&[pos], &devices)), [("pos", "/dev/hidraw2")]);
    assert_eq!(
        names(&bind(&[scanner("kbd")], &devices)),
        [("kbd", "/dev/hidraw1")]
    );
}

#[test]
fn a_device_with_unknown_usages_is_taken() {
    let mut device = keyboard("/dev/hidraw1", None, "1-1");
    device.usage_page = 0;
    device.usage = 0;
    let mut pos = scanner("pos");
    pos.mode = ScannerMode::HidPos;
    assert_eq!(names(&bind(&[pos], &[device])), [("pos", "/dev/hidraw1")]);
}

#[test]
fn binding_does_not_depend_on_enumeration_order() {
    let scanners = [scanner("first"), scanner("second")];
    let a = keyboard("/dev/hidraw9", None, "1-1");
    let b = keyboard("/dev/hidraw0", None, "1-2");
    let forward = [a.clone(), b.clone()];
    let backward = [b, a];
    assert_eq!(
        names(&bind(&scanners, &forward)),
        names(&bind(&scanners, &backward))
    );
    assert_eq!(
        names(&bind(&scanners, &forward)),
        [("first", "/dev/hidraw9"), ("second", "/dev/hidraw0")]
    );
}

#[test]
fn validation_refuses_ambiguous_or_useless_configurations() {
    assert_eq!(validate(&[scanner("a"), scanner("b")]), Ok(()));
    assert_eq!(
        validate(&[scanner("a"), scanner("a")]),
        Err(ConfigError::DuplicateName("a".into()))
    );
    assert_eq!(validate(&[scanner("")]), Err(ConfigError::EmptyName));
    let mut idle = scanner("idle");
    idle.mode = ScannerMode::Wedge(WedgeConfig {
        terminator: Terminator::Timeout { idle_ms: 0 },
        aim_prefix: false,
    });
    assert_eq!(
        validate(&[idle]),
        Err(ConfigError::Zero("idle".into(), "idle_ms"))
    );
}
