//! `examples/edge.toml` (what the Debian package installs as
//! /etc/depot/edge.toml) loads through the real settings, devices and
//! stations checks included, and describes one station with its devices.

// figment's Jail closures return figment's own (large) error type.
#![allow(clippy::result_large_err)]

use depot_edge::devices::config::{ScaleProtocol, ScannerDevice};
use depot_edge::settings::Settings;
use depot_hardware::printer::Endpoint;
use std::path::Path;

#[test]
fn the_example_edge_configuration_loads_with_its_station() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/edge.toml");
    figment::Jail::expect_with(|_| {
        // In a jail, so that a DEPOT_… variable of the caller's cannot
        // change what the file says.
        let s = Settings::load(Some(&file)).map_err(|e| e.to_string())?;
        assert_eq!((s.business_id, s.edge_id.as_str(), s.node), (1, "mad-1", 1));
        assert!(s.broker.url.starts_with("mqtts://"));

        let [station] = s.stations.as_slice() else {
            panic!("one station: {:?}", s.stations);
        };
        let [printer] = s.devices.printers.as_slice() else {
            panic!("one printer: {:?}", s.devices.printers);
        };
        let [scale] = s.devices.scales.as_slice() else {
            panic!("one scale: {:?}", s.devices.scales);
        };
        let [scanner] = s.devices.scanners.as_slice() else {
            panic!("one scanner: {:?}", s.devices.scanners);
        };
        assert_eq!(station.printer.as_deref(), Some(printer.name.as_str()));
        assert_eq!(station.scale.as_deref(), Some(scale.id.as_str()));
        assert_eq!(station.scanners, [scanner.name()]);

        assert!(
            matches!(&printer.endpoint, Endpoint::Tcp { port: 9100, .. }),
            "{:?}",
            printer.endpoint
        );
        assert_eq!(scale.protocol, ScaleProtocol::MtSics);
        assert!(
            scale
                .port
                .as_deref()
                .is_some_and(|p| p.starts_with("/dev/depot/")),
            "{:?}",
            scale.port
        );
        assert!(scale.hardware().is_ok());
        assert!(matches!(scanner, ScannerDevice::Usb(m) if m.serial.is_some()));
        Ok(())
    });
}
