//! `depot-edge doctor`: checks what a box needs to work, one line per
//! check, each failure with what to do about it. Read-mostly and safe while
//! the daemon runs; the database is opened (and created and migrated, as
//! `serve` would) but nothing in it is changed.

use crate::devices::config::{ScaleProtocol, ScannerDevice};
use crate::disk::StorageState;
use crate::settings::Settings;
use depot_hardware::printer::Endpoint;
use depot_hardware::scanner::registry::{DeviceBus, HidapiBus};
use depot_protocol::BusinessId;
use depot_protocol::sync::message::StateMessage;
use depot_protocol::sync::topic::CLOUD_STATE;
use depot_protocol::sync::{Channel, EdgeId, EdgeTopic};
use depot_wms::database::Recovery;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a device, the broker or the cloud may take to answer.
const TIMEOUT: Duration = Duration::from_secs(2);

/// A clock further than this from the cloud's fails the check.
const MAX_SKEW: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Fail,
    Skip,
}

#[derive(Debug, Clone)]
pub struct Check {
    pub what: String,
    pub outcome: Outcome,
    /// What was found, and for a failure what to do.
    pub detail: String,
}

impl Check {
    fn new(what: impl Into<String>, outcome: Outcome, detail: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            outcome,
            detail: detail.into(),
        }
    }
}

/// An error with its causes, on one line: reqwest's own message alone says
/// only that sending failed.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let outcome = match self.outcome {
            Outcome::Ok => "OK",
            Outcome::Fail => "FAIL",
            Outcome::Skip => "SKIP",
        };
        write!(f, "{outcome:<5} {:<22} {}", self.what, self.detail)
    }
}

/// Runs every check, printing each line as it is decided; answers whether
/// none failed.
pub async fn run(config: Option<&Path>, cloud: Option<&str>) -> bool {
    run_reporting(config, cloud, |c| {
        // The checks go on even if nobody reads the report.
        let _ = writeln!(std::io::stdout(), "{c}");
    })
    .await
}

/// Runs every check, handing each to `report` as it is decided; answers
/// whether none failed.
pub async fn run_reporting(
    config: Option<&Path>,
    cloud: Option<&str>,
    mut report: impl FnMut(&Check),
) -> bool {
    let mut failed = false;
    let mut out = |c: Check| {
        failed |= c.outcome == Outcome::Fail;
        report(&c);
    };
    let settings = match Settings::load(config) {
        Ok(s) => {
            out(Check::new(
                "configuration",
                Outcome::Ok,
                format!(
                    "{}: {} (node {}) of business {}",
                    config.map_or_else(|| "environment".to_owned(), |p| p.display().to_string()),
                    s.origin(),
                    s.node,
                    s.business_id
                ),
            ));
            s
        }
        Err(e) => {
            out(Check::new(
                "configuration",
                Outcome::Fail,
                format!(
                    "{}: fix {} (or the DEPOT_… variables); nothing else can be checked",
                    chain(&e),
                    config
                        .map_or_else(|| "the environment".to_owned(), |p| p.display().to_string())
                ),
            ));
            return false;
        }
    };
    out(data_dir(&settings.data_dir));
    out(disk(&settings));
    out(database(&settings));
    for c in devices(&settings).await {
        out(c);
    }
    let (broker, cloud_state) = broker(&settings).await;
    out(broker);
    out(cloud_state);
    out(clock(cloud).await);
    !failed
}

fn data_dir(dir: &Path) -> Check {
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::File::create(&probe))
        .and_then(|mut f| {
            f.write_all(b"probe")?;
            f.sync_all()
        });
    let _ = std::fs::remove_file(&probe);
    match written {
        Ok(()) => Check::new(
            "data directory",
            Outcome::Ok,
            format!("{} is writable", dir.display()),
        ),
        Err(e) if e.kind() == std::io::ErrorKind::StorageFull => Check::new(
            "data directory",
            Outcome::Fail,
            format!("{}: {e}: the disk is full; free space on it", dir.display()),
        ),
        Err(e) => Check::new(
            "data directory",
            Outcome::Fail,
            format!(
                "{}: {e}: create it and give the user depot-edge runs as write access (data_dir, DEPOT_DATA_DIR)",
                dir.display()
            ),
        ),
    }
}

/// Room on the data directory's disk: a full one refuses every write.
fn disk(settings: &Settings) -> Check {
    match crate::disk::probe(settings).read(None) {
        Ok(storage) => Check::new(
            "disk",
            if storage.state == StorageState::Ok {
                Outcome::Ok
            } else {
                Outcome::Fail
            },
            storage.summary(),
        ),
        Err(e) => Check::new(
            "disk",
            Outcome::Fail,
            format!(
                "cannot read the disk of {}: {e}",
                settings.data_dir.display()
            ),
        ),
    }
}

fn database(settings: &Settings) -> Check {
    let path = settings.database();
    let existed = path.exists();
    let opened = depot_wms::database::check_opens(&path, settings.node, &settings.origin());
    if let Err(e) = opened {
        return Check::new(
            "database",
            Outcome::Fail,
            format!(
                "{}: {e}: if it is damaged, restore the last backup (`depot-edge restore FILE`)",
                path.display()
            ),
        );
    }
    let read = depot_wms::database::log_state(&path);
    match read {
        Ok((
            _,
            Some(Recovery {
                stalled: Some(why),
                from,
                ..
            }),
        )) => Check::new(
            "database",
            Outcome::Fail,
            format!(
                "{}: its own log is certain only through seq {from}, and {why}",
                path.display()
            ),
        ),
        Ok(((head, acked), recovery)) => Check::new(
            "database",
            Outcome::Ok,
            format!(
                "{} opens and is up to date{}: events through seq {head}, {acked} acknowledged by the cloud{}",
                path.display(),
                if existed {
                    ""
                } else {
                    " (new: serve had not run)"
                },
                match recovery {
                    Some(r) => format!(
                        "; its own log is certain only through seq {}, the rest is being taken back from the cloud (through seq {} so far)",
                        r.from, r.recovered
                    ),
                    None => String::new(),
                }
            ),
        ),
        Err(e) => Check::new(
            "database",
            Outcome::Fail,
            format!("{}: {e}", path.display()),
        ),
    }
}

/// What a device is reached by.
enum Reach {
    Path(PathBuf),
    Tcp(String),
    Usb(depot_hardware::scanner::registry::ScannerMatch),
}

async fn devices(settings: &Settings) -> Vec<Check> {
    let d = &settings.devices;
    let mut wanted: Vec<(String, Reach)> = Vec::new();
    for p in &d.printers {
        let reach = match &p.endpoint {
            Endpoint::Tcp { host, port } => Reach::Tcp(format!("{host}:{port}")),
            Endpoint::Serial(s) => Reach::Path(PathBuf::from(&s.path)),
            Endpoint::Device { path } => Reach::Path(path.clone()),
        };
        wanted.push((format!("printer {}", p.name), reach));
    }
    for s in &d.scales {
        let reach = match (s.protocol, &s.port, &s.address) {
            (ScaleProtocol::ModbusTcp, _, Some(address)) => Reach::Tcp(address.clone()),
            (_, Some(port), _) => Reach::Path(PathBuf::from(port)),
            // `check` refused a scale without either when the settings loaded.
            _ => continue,
        };
        wanted.push((format!("scale {}", s.id), reach));
    }
    for s in &d.scanners {
        let reach = match s {
            ScannerDevice::Usb(m) => Reach::Usb(m.clone()),
            ScannerDevice::Serial(c) => Reach::Path(PathBuf::from(&c.path)),
        };
        wanted.push((format!("scanner {}", s.name()), reach));
    }
    if wanted.is_empty() {
        return vec![Check::new("devices", Outcome::Ok, "none configured")];
    }
    let usb = if wanted.iter().any(|(_, r)| matches!(r, Reach::Usb(_))) {
        Some(
            tokio::task::spawn_blocking(|| HidapiBus::new().enumerate())
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.to_string())),
        )
    } else {
        None
    };
    let mut checks = Vec::new();
    for (what, reach) in wanted {
        let (outcome, detail) = match reach {
            Reach::Path(path) => open_device(&path).await,
            Reach::Tcp(addr) => match connect(&addr).await {
                Ok(()) => (Outcome::Ok, format!("{addr} accepts connections")),
                Err(e) => (
                    Outcome::Fail,
                    format!("{addr}: {e}: is it on, on this network, and is the address right?"),
                ),
            },
            Reach::Usb(m) => match &usb {
                Some(Ok(found)) => {
                    let hit = found.iter().find(|d| {
                        d.vendor_id == m.vendor_id
                            && d.product_id == m.product_id
                            && m.serial
                                .as_ref()
                                .is_none_or(|s| d.serial.as_ref() == Some(s))
                            && m.usb_path
                                .as_ref()
                                .is_none_or(|p| d.usb_path.as_ref() == Some(p))
                    });
                    match hit {
                        Some(d) => (Outcome::Ok, format!("found at {}", d.path)),
                        None => (
                            Outcome::Fail,
                            format!(
                                "no USB device {:04x}:{:04x}{} is visible: is it plugged in, and may this user read /dev/hidraw* (udev rule)?",
                                m.vendor_id,
                                m.product_id,
                                m.serial
                                    .as_ref()
                                    .map(|s| format!(" with serial {s}"))
                                    .unwrap_or_default()
                            ),
                        ),
                    }
                }
                Some(Err(e)) => (Outcome::Fail, format!("cannot list USB devices: {e}")),
                None => (Outcome::Skip, String::new()),
            },
        };
        checks.push(Check::new(what, outcome, detail));
    }
    checks
}

/// Opens a device for reading and writing, as its driver will. Some serial
/// drivers block in open() waiting for carrier, hence the thread and the
/// timeout.
async fn open_device(path: &Path) -> (Outcome, String) {
    if std::fs::metadata(path).is_err() {
        return (
            Outcome::Fail,
            format!(
                "{} does not exist: is it plugged in and the path right? (a /dev/serial/by-id/… link survives replugging)",
                path.display()
            ),
        );
    }
    let p = path.to_owned();
    let open = tokio::task::spawn_blocking(move || {
        std::fs::OpenOptions::new().read(true).write(true).open(&p)
    });
    match tokio::time::timeout(TIMEOUT, open).await {
        Ok(Ok(Ok(_))) => (Outcome::Ok, format!("{} opens", path.display())),
        Ok(Ok(Err(e))) => (
            Outcome::Fail,
            format!(
                "{}: {e}: may this user open it? (add it to the dialout or lp group)",
                path.display()
            ),
        ),
        Ok(Err(e)) => (Outcome::Fail, format!("{}: {e}", path.display())),
        Err(_) => (
            Outcome::Fail,
            format!(
                "{} did not open within {}s",
                path.display(),
                TIMEOUT.as_secs()
            ),
        ),
    }
}

async fn connect(addr: &str) -> Result<(), String> {
    match tokio::time::timeout(TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {}s", TIMEOUT.as_secs())),
    }
}

/// A real MQTT connection, as the link makes it: TCP, TLS with the
/// configured files, the credentials, the CONNACK and the SUBACK; then
/// what the cloud last said on the broker.
async fn broker(settings: &Settings) -> (Check, Check) {
    let shown = depot_mqtt::redact(&settings.broker.url);
    let (url, tls) = match settings.broker.connection() {
        Ok(c) => c,
        Err(e) => return (Check::new("broker", Outcome::Fail, e.to_string()), unseen()),
    };
    // Not the link's own client id: a broker drops the older of two
    // connections with one id, which would cut a running daemon's link.
    let client_id = format!(
        "depot-edge-doctor-{}-{}-{}",
        settings.business_id,
        settings.edge_id,
        std::process::id()
    );
    let how = match (url.tls, tls.with_ca_file(), tls.with_client_cert()) {
        (false, ..) => "plain TCP",
        (true, false, false) => "TLS, public roots",
        (true, true, false) => "TLS, broker.ca_file",
        (true, false, true) => "TLS, public roots, client certificate",
        (true, true, true) => "TLS, broker.ca_file, client certificate",
    };
    let login = url
        .username
        .as_deref()
        .map_or_else(|| "no credentials".to_owned(), |u| format!("as {u}"));
    // Where the link subscribes: a broker's rules may refuse it there.
    let down = match EdgeId::parse(&settings.edge_id) {
        Ok(edge) => {
            EdgeTopic::new(BusinessId(settings.business_id), edge, Channel::Down).to_string()
        }
        Err(e) => {
            let failed = Check::new("broker", Outcome::Fail, format!("edge_id: {e}"));
            return (failed, unseen());
        }
    };
    let filters = [down.as_str(), CLOUD_STATE];
    let asked = depot_mqtt::Probe {
        client_id: &client_id,
        filters: &filters,
        retained: Some((CLOUD_STATE, TIMEOUT)),
        within: TIMEOUT * 2,
    };
    match depot_mqtt::probe(&url, &tls, asked).await {
        Ok(state) => (
            Check::new(
                "broker",
                Outcome::Ok,
                format!(
                    "{shown} accepted an MQTT connection ({how}, {login}) and the subscription to {}",
                    filters.join(" and ")
                ),
            ),
            cloud_state(state.as_deref(), &down),
        ),
        Err(why) => {
            // Where the reason names no setting and no rule of the broker's,
            // the address is the one.
            let fix = if why.contains("broker.") || why.contains("access rules") {
                ""
            } else {
                " (broker.url, DEPOT_BROKER__URL)"
            };
            let failed = Check::new(
                "broker",
                Outcome::Fail,
                format!("{shown} ({how}, {login}): {why}{fix}. The floor works offline meanwhile"),
            );
            (failed, unseen())
        }
    }
}

fn unseen() -> Check {
    Check::new(
        "cloud",
        Outcome::Skip,
        "not looked for: the broker check failed",
    )
}

/// The cloud leaves its state retained on the broker (its last will says
/// offline), so any subscriber hears it at once: silence means no cloud
/// ever connected to this broker, or rules that let this box subscribe but
/// withhold what is published there, which the SUBACK cannot show.
fn cloud_state(state: Option<&[u8]>, down: &str) -> Check {
    let Some(payload) = state else {
        return Check::new(
            "cloud",
            Outcome::Fail,
            format!(
                "nothing on {CLOUD_STATE} within {}s: either depot-cloud has never connected to this broker (is it running, with this broker's URL?), or the broker's rules withhold it from this user; they must let it read {CLOUD_STATE} and {down}. The floor works offline meanwhile",
                TIMEOUT.as_secs()
            ),
        );
    };
    match depot_protocol::sync::message::decode::<StateMessage>(payload) {
        Ok(StateMessage::Online { version, .. }) => Check::new(
            "cloud",
            Outcome::Ok,
            format!("online on the broker (depot-cloud {version})"),
        ),
        Ok(StateMessage::Offline { .. }) => Check::new(
            "cloud",
            Outcome::Fail,
            "offline: depot-cloud stopped or lost the broker, so nothing syncs until it is back; the floor works offline meanwhile",
        ),
        Err(e) => Check::new(
            "cloud",
            Outcome::Fail,
            format!(
                "what is retained on {CLOUD_STATE} is not a cloud's state ({e}): is another program publishing there?"
            ),
        ),
    }
}

/// The box's clock against the `Date` the cloud answers with.
async fn clock(cloud: Option<&str>) -> Check {
    let Some(url) = cloud else {
        return Check::new(
            "clock",
            Outcome::Skip,
            "the settings do not name the cloud's HTTP address: pass --cloud https://… to compare clocks",
        );
    };
    let client = match reqwest::Client::builder().timeout(TIMEOUT).build() {
        Ok(c) => c,
        Err(e) => return Check::new("clock", Outcome::Fail, e.to_string()),
    };
    let sent = Instant::now();
    let sent_at = chrono::Utc::now();
    let answer = match client.get(url).send().await {
        Ok(r) => r,
        Err(e) => {
            return Check::new(
                "clock",
                Outcome::Fail,
                format!("cannot reach the cloud at {url}: {}", chain(&e)),
            );
        }
    };
    let rtt = sent.elapsed();
    let date = answer
        .headers()
        .get(reqwest::header::DATE)
        .and_then(|d| d.to_str().ok())
        .and_then(|d| chrono::DateTime::parse_from_rfc2822(d).ok());
    let Some(date) = date else {
        return Check::new(
            "clock",
            Outcome::Skip,
            format!("{url} answered without a Date header"),
        );
    };
    // The cloud stamped its answer about half-way through the round trip;
    // its Date has whole seconds.
    let here = sent_at + chrono::Duration::from_std(rtt / 2).unwrap_or_default();
    let skew = (here - date.with_timezone(&chrono::Utc)).num_milliseconds() as f64 / 1000.0;
    clock_verdict(skew)
}

/// What a clock `skew` seconds off the cloud's (ahead when positive) says.
fn clock_verdict(skew: f64) -> Check {
    let side = if skew >= 0.0 { "ahead of" } else { "behind" };
    if skew.abs() <= MAX_SKEW.as_secs_f64() {
        let drift = if skew >= 0.0 { "ahead" } else { "behind" };
        Check::new(
            "clock",
            Outcome::Ok,
            format!(
                "within {:.0}s of the cloud's (this box is {:.1}s {drift})",
                MAX_SKEW.as_secs_f64(),
                skew.abs()
            ),
        )
    } else {
        Check::new(
            "clock",
            Outcome::Fail,
            format!(
                "{:.0}s {side} the cloud's: turn on time sync (`timedatectl set-ntp true`)",
                skew.abs()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_check_says_which_way_the_box_is_off() {
        let ok = clock_verdict(0.2);
        assert_eq!(ok.outcome, Outcome::Ok);
        assert!(
            ok.detail.ends_with("(this box is 0.2s ahead)"),
            "{}",
            ok.detail
        );
        let ok = clock_verdict(-0.4);
        assert!(
            ok.detail.ends_with("(this box is 0.4s behind)"),
            "{}",
            ok.detail
        );
        let far = clock_verdict(-90.0);
        assert_eq!(far.outcome, Outcome::Fail);
        assert!(
            far.detail.starts_with("90s behind the cloud's"),
            "{}",
            far.detail
        );
    }
    use depot_protocol::sync::message::encode;

    const DOWN: &str = "depot/v1/7/edge/doc/down";

    #[test]
    fn the_clouds_retained_state_decides_the_cloud_check() {
        let online = encode(&StateMessage::Online {
            version: "1.2.3".into(),
            session: "s".into(),
            head: None,
        });
        let check = cloud_state(Some(&online), DOWN);
        assert_eq!(check.outcome, Outcome::Ok);
        assert!(check.detail.contains("depot-cloud 1.2.3"), "{check}");

        let offline = encode(&StateMessage::Offline {
            session: "s".into(),
        });
        let check = cloud_state(Some(&offline), DOWN);
        assert_eq!(check.outcome, Outcome::Fail);
        assert!(check.detail.starts_with("offline"), "{check}");

        let check = cloud_state(Some(b"hello"), DOWN);
        assert_eq!(check.outcome, Outcome::Fail);
        assert!(check.detail.contains("not a cloud's state"), "{check}");
    }

    #[test]
    fn silence_names_both_causes_and_the_topics_to_read() {
        let check = cloud_state(None, DOWN);
        assert_eq!(check.outcome, Outcome::Fail);
        for said in ["never connected", "withhold", CLOUD_STATE, DOWN] {
            assert!(check.detail.contains(said), "{check} does not say {said:?}");
        }
    }
}
