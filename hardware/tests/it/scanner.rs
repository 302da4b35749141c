//! Scanners end to end: the registry task with simulated USB scanners
//! (keyboard wedge and HID-POS, unplugged and plugged back), the real HID bus
//! on a machine without scanners, and a serial scanner on a pseudo-terminal.

use std::time::Duration;

use depot_hardware::scanner::registry::{
    self, BusState, HidDeviceInfo, HidapiBus, RegistryOptions, RegistryStatus, ScannerMatch,
    ScannerMode,
};
use depot_hardware::scanner::sim::encode::{ControlKeys, WedgeEncoding};
use depot_hardware::scanner::sim::{SerialSim, SimBus};
use depot_hardware::scanner::wedge::WedgeConfig;
use depot_hardware::scanner::{ConfigError, Connection, DeviceId, Scan, Symbology, serial};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

const PATIENCE: Duration = Duration::from_secs(10);
const GS1_128: &str = "0109506000134352\u{1d}10ABC123\u{1d}17250101";

fn fast() -> RegistryOptions {
    RegistryOptions {
        rescan_every: Duration::from_millis(20),
        read_slice: Duration::from_millis(20),
    }
}

fn scanner(name: &str, serial: &str, mode: ScannerMode) -> ScannerMatch {
    ScannerMatch {
        name: name.into(),
        vendor_id: 0x0C2E,
        product_id: 0x0B61,
        serial: Some(serial.into()),
        usb_path: None,
        mode,
    }
}

fn device(path: &str, serial: &str, usage_page: u16, usage: u16) -> HidDeviceInfo {
    HidDeviceInfo {
        path: path.into(),
        vendor_id: 0x0C2E,
        product_id: 0x0B61,
        serial: Some(serial.into()),
        usb_path: Some("1-1.2".into()),
        usage_page,
        usage,
    }
}

struct Running {
    scans: mpsc::Receiver<Scan>,
    status: watch::Receiver<RegistryStatus>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ConfigError>>,
}

fn start(scanners: Vec<ScannerMatch>, bus: impl registry::DeviceBus) -> Running {
    let (scans_tx, scans) = mpsc::channel(16);
    let (status_tx, status) = watch::channel(RegistryStatus::default());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(registry::run(
        scanners,
        bus,
        fast(),
        scans_tx,
        status_tx,
        async move {
            let _ = stopped.await;
        },
    ));
    Running {
        scans,
        status,
        stop,
        task,
    }
}

async fn next_scan(scans: &mut mpsc::Receiver<Scan>) -> Scan {
    tokio::time::timeout(PATIENCE, scans.recv())
        .await
        .expect("a scan in time")
        .expect("scans still being sent")
}

impl Running {
    async fn wait_until(&mut self, what: &str, check: impl FnMut(&RegistryStatus) -> bool) {
        tokio::time::timeout(PATIENCE, self.status.wait_for(check))
            .await
            .unwrap_or_else(|_| panic!("timed out waiting until {what}"))
            .expect("registry running");
    }

    async fn next_scan(&mut self) -> Scan {
        next_scan(&mut self.scans).await
    }

    async fn shut_down(self) {
        self.stop.send(()).expect("registry running");
        let outcome = tokio::time::timeout(PATIENCE, self.task)
            .await
            .expect("registry stops promptly")
            .expect("registry task did not panic");
        assert_eq!(outcome, Ok(()));
    }
}

#[tokio::test]
async fn wedge_scanner_types_gs1_128_with_separators() {
    let bus = SimBus::new();
    let mode = ScannerMode::Wedge(WedgeConfig::default());
    let mut running = start(vec![scanner("pack-1", "S1", mode)], bus.clone());
    let plugged = bus.plug(device("/dev/hidraw3", "S1", 0x01, 0x06));
    running
        .wait_until("pack-1 connects", |s| s.is_connected("pack-1"))
        .await;

    for control in [ControlKeys::AltKeypad, ControlKeys::Ctrl] {
        let encoding = WedgeEncoding {
            control,
            ..WedgeEncoding::default()
        };
        plugged.type_text(GS1_128, &encoding).expect("typable");
        let scan = running.next_scan().await;
        assert_eq!(scan.text, GS1_128, "{control:?}");
        assert_eq!(scan.device, DeviceId::new("pack-1"));
        assert_eq!(scan.symbology, None);
    }
    running.shut_down().await;
}

#[tokio::test]
async fn hidpos_scanner_sends_long_data_matrix_in_continued_reports() {
    let bus = SimBus::new();
    let mut running = start(
        vec![scanner("recv-2", "S2", ScannerMode::HidPos)],
        bus.clone(),
    );
    // A composite scanner: the keyboard interface must be left alone.
    let _keyboard = bus.plug(device("/dev/hidraw4", "S2", 0x01, 0x06));
    let pos = bus.plug(device("/dev/hidraw5", "S2", 0x8C, 0x02));
    running
        .wait_until("recv-2 connects on its POS interface", |s| {
            s.scanners.get("recv-2")
                == Some(&Connection::Connected {
                    device: "/dev/hidraw5".into(),
                })
        })
        .await;

    let data = format!("{GS1_128}\u{1d}21{}", "X".repeat(80));
    // Another report on the interface (a status report, id 4) is ignored.
    let mut status_report = [0u8; 64];
    status_report[0] = 0x04;
    pos.send_report(&status_report).expect("reader running");
    pos.scan_hidpos(data.as_bytes(), Some("]d2"))
        .expect("encodable");
    let scan = running.next_scan().await;
    assert_eq!(scan.text, data);
    assert_eq!(scan.symbology, Some(Symbology::Gs1DataMatrix));
    assert_eq!(scan.device, DeviceId::new("recv-2"));
    running.shut_down().await;
}

#[tokio::test]
async fn an_unplugged_scanner_comes_back_to_its_binding_when_replugged() {
    let bus = SimBus::new();
    let mode = ScannerMode::Wedge(WedgeConfig::default());
    let mut running = start(
        vec![
            scanner("pick-a", "A1", mode.clone()),
            scanner("pick-b", "B1", mode),
        ],
        bus.clone(),
    );
    let a = bus.plug(device("/dev/hidraw1", "A1", 0x01, 0x06));
    let b = bus.plug(device("/dev/hidraw2", "B1", 0x01, 0x06));
    running
        .wait_until("both connect", |s| {
            s.is_connected("pick-a") && s.is_connected("pick-b")
        })
        .await;
    a.type_text("BEFORE", &WedgeEncoding::default())
        .expect("typable");
    assert_eq!(running.next_scan().await.device, DeviceId::new("pick-a"));

    a.unplug();
    running
        .wait_until("pick-a is disconnected", |s| !s.is_connected("pick-a"))
        .await;
    assert!(running.status.borrow().is_connected("pick-b"));

    // Back on another port: the kernel gives it a new node, the serial
    // number gives it its name back.
    let a = bus.plug(device("/dev/hidraw7", "A1", 0x01, 0x06));
    running
        .wait_until("pick-a reconnects", |s| {
            s.scanners.get("pick-a")
                == Some(&Connection::Connected {
                    device: "/dev/hidraw7".into(),
                })
        })
        .await;
    a.type_text("AFTER", &WedgeEncoding::default())
        .expect("typable");
    b.type_text("OTHER", &WedgeEncoding::default())
        .expect("typable");
    let mut scans = [running.next_scan().await, running.next_scan().await];
    scans.sort_by(|x, y| x.text.cmp(&y.text));
    assert_eq!(
        (scans[0].text.as_str(), scans[0].device.as_str()),
        ("AFTER", "pick-a")
    );
    assert_eq!(
        (scans[1].text.as_str(), scans[1].device.as_str()),
        ("OTHER", "pick-b")
    );
    running.shut_down().await;
}

#[tokio::test]
async fn an_unavailable_bus_is_a_state_and_scanners_come_once_it_recovers() {
    let bus = SimBus::new();
    bus.set_unavailable(Some("no hidraw"));
    let mode = ScannerMode::Wedge(WedgeConfig::default());
    let mut running = start(vec![scanner("pack-1", "S1", mode)], bus.clone());
    running
        .wait_until("the bus is reported unavailable", |s| {
            s.bus
                == BusState::Unavailable {
                    reason: "HID devices cannot be listed: no hidraw".into(),
                }
        })
        .await;
    assert!(!running.status.borrow().is_connected("pack-1"));

    bus.set_unavailable(None);
    running
        .wait_until("no devices yet", |s| s.bus == BusState::NoDevices)
        .await;
    let _plugged = bus.plug(device("/dev/hidraw3", "S1", 0x01, 0x06));
    running
        .wait_until("ready and connected", |s| {
            s.bus == BusState::Ready && s.is_connected("pack-1")
        })
        .await;
    running.shut_down().await;
}

#[tokio::test]
async fn the_real_hid_bus_without_scanners_degrades_to_a_state() {
    let mode = ScannerMode::HidPos;
    let mut running = start(vec![scanner("absent", "none", mode)], HidapiBus::new());
    running
        .wait_until("the bus is enumerated or found unavailable", |s| {
            s.bus != BusState::Starting
        })
        .await;
    assert!(!running.status.borrow().is_connected("absent"));
    running.shut_down().await;
}

#[tokio::test]
async fn the_registry_refuses_two_scanners_with_one_name() {
    let mode = ScannerMode::HidPos;
    let running = start(
        vec![
            scanner("twin", "1", mode.clone()),
            scanner("twin", "2", mode),
        ],
        SimBus::new(),
    );
    let outcome = tokio::time::timeout(PATIENCE, running.task)
        .await
        .expect("fails at once")
        .expect("no panic");
    assert_eq!(outcome, Err(ConfigError::DuplicateName("twin".into())));
}

#[tokio::test]
async fn serial_scanner_on_a_pty_with_crlf_and_garbage() {
    let mut sim = SerialSim::pty().expect("pseudo-terminal");
    let mut config = serial::SerialScannerConfig::new("dock-3", sim.path());
    config.aim_prefix = true;
    config.reopen_ms = 20;
    let (scans_tx, mut scans) = mpsc::channel(16);
    let (status_tx, mut status) = watch::channel(Connection::Disconnected { reason: None });
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serial::run(config, scans_tx, status_tx, async move {
        let _ = stopped.await;
    }));
    tokio::time::timeout(PATIENCE, status.wait_for(Connection::is_connected))
        .await
        .expect("port opens in time")
        .expect("task running");

    let ending = serial::LineEnding::CrLf;
    sim.write_raw(b"\xff\x00\xfe noise\r\n").expect("pty write");
    sim.scan(GS1_128, Some("]C1"), ending).expect("pty write");
    // A scan split across writes, as a slow UART delivers it.
    sim.write_raw(b"]E040063813").expect("pty write");
    sim.write_raw(b"33931\r").expect("pty write");
    sim.write_raw(b"\n").expect("pty write");

    let first = next_scan(&mut scans).await;
    assert_eq!(first.text, GS1_128);
    assert_eq!(first.symbology, Some(Symbology::Gs1_128));
    assert_eq!(first.device, DeviceId::new("dock-3"));
    let second = next_scan(&mut scans).await;
    assert_eq!(second.text, "4006381333931");
    assert_eq!(second.symbology, Some(Symbology::Ean13));

    sim.unplug();
    tokio::time::timeout(PATIENCE, status.wait_for(|c| !c.is_connected()))
        .await
        .expect("the unplug is noticed")
        .expect("task running");

    stop.send(()).expect("task running");
    let outcome = tokio::time::timeout(PATIENCE, task)
        .await
        .expect("stops promptly")
        .expect("no panic");
    assert_eq!(outcome, Ok(()));
}
