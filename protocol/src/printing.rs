//! Printers and print jobs.

use crate::validate::Check;
use crate::{BusinessId, FieldError, PrintJobId, PrinterId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Largest print job accepted: a long run of ZPL labels or a multi-page PDF.
pub const MAX_JOB_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PrinterKind {
    /// A thermal label printer speaking ZPL.
    Zpl,
    /// A document printer taking PDF.
    Pdf,
}

impl PrinterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Zpl => "zpl",
            Self::Pdf => "pdf",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Zpl, Self::Pdf].into_iter().find(|k| k.as_str() == s)
    }
}

/// How the printer is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    /// Raw TCP, usually port 9100.
    Tcp { host: String, port: u16 },
    /// A serial device, e.g. `/dev/ttyUSB0`, with its baud rate.
    Serial { device: String, baud: u32 },
    /// A USB printer character device, e.g. `/dev/usb/lp0`.
    Device { path: String },
    /// Attached to an edge box, which prints on it.
    Edge { edge_id: String },
}

impl Connection {
    /// Parses `tcp://host:9100`, `serial:///dev/ttyUSB0?baud=9600`,
    /// `device:///dev/usb/lp0`, `edge://<edge id>`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("tcp://") {
            let (host, port) = rest.rsplit_once(':').unwrap_or((rest, "9100"));
            let port: u16 = port.parse().map_err(|_| format!("bad port {port:?}"))?;
            if host.is_empty() || port == 0 || host.contains('/') {
                return Err("expected tcp://host:port".into());
            }
            return Ok(Self::Tcp {
                host: host.to_owned(),
                port,
            });
        }
        if let Some(rest) = s.strip_prefix("serial://") {
            let (device, query) = rest.split_once('?').unwrap_or((rest, ""));
            let baud = match query.strip_prefix("baud=") {
                Some(b) => b
                    .parse()
                    .ok()
                    .filter(|baud: &u32| *baud > 0)
                    .ok_or_else(|| format!("bad baud rate {b:?}: 1 to {}", u32::MAX))?,
                None if query.is_empty() => 9600,
                None => return Err(format!("unknown serial option {query:?}")),
            };
            if !device.starts_with("/dev/") {
                return Err("expected serial:///dev/<device>".into());
            }
            return Ok(Self::Serial {
                device: device.to_owned(),
                baud,
            });
        }
        if let Some(path) = s.strip_prefix("device://") {
            if !path.starts_with("/dev/") {
                return Err("expected device:///dev/<device>".into());
            }
            return Ok(Self::Device {
                path: path.to_owned(),
            });
        }
        if let Some(edge) = s.strip_prefix("edge://") {
            if edge.is_empty()
                || !edge
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err("expected edge://<edge id>".into());
            }
            return Ok(Self::Edge {
                edge_id: edge.to_owned(),
            });
        }
        Err("expected tcp://, serial://, device:// or edge://".into())
    }

    pub fn render(&self) -> String {
        match self {
            Self::Tcp { host, port } => format!("tcp://{host}:{port}"),
            Self::Serial { device, baud } => format!("serial://{device}?baud={baud}"),
            Self::Device { path } => format!("device://{path}"),
            Self::Edge { edge_id } => format!("edge://{edge_id}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Printer {
    pub id: PrinterId,
    pub business_id: BusinessId,
    pub name: String,
    pub kind: PrinterKind,
    pub connection: String,
    pub station: Option<String>,
    /// online, offline, or unknown until a device reports.
    pub status: String,
    pub last_seen: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Body of printer create and edit: on edit, absent fields are kept.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub struct PrinterFields {
    #[schema(format = "printable", max_length = 100)]
    pub name: Option<String>,
    pub kind: Option<PrinterKind>,
    /// tcp://host:9100, serial:///dev/ttyUSB0?baud=9600, device:///dev/usb/lp0, edge://<edge id>
    // The pattern takes every connection `Connection::parse` takes (a
    // property test holds it); a port out of range it cannot say.
    #[schema(
        pattern = r"^\s*(tcp://[^/]+|serial:///dev/[^?]*(\?(baud=\+?[0-9]+)?)?|device:///dev/[\s\S]*|edge://[A-Za-z0-9_-]+)\s*$"
    )]
    pub connection: Option<String>,
    #[schema(format = "line", max_length = 64)]
    pub station: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPrinter {
    pub name: String,
    pub kind: PrinterKind,
    pub connection: String,
    pub station: Option<String>,
}

/// Characters that print nothing or reorder what follows (soft hyphen,
/// zero-width spaces and joiners, bidirectional controls, BOM): in a name
/// that people type into station settings, two names that look alike would
/// be different records.
fn invisible(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

impl PrinterFields {
    /// Checks the fields over `current` (create passes `None`: everything
    /// but the station is then required).
    pub fn apply(self, current: Option<CheckedPrinter>) -> Result<CheckedPrinter, Vec<FieldError>> {
        let mut c = Check::new();
        let name = match (self.name, &current) {
            (Some(n), _) if n.chars().any(invisible) => {
                c.fail(
                    "name",
                    "must be printable: no invisible or direction-changing characters",
                );
                n
            }
            (Some(n), _) => c.text("name", &n, 100),
            (None, Some(cur)) => cur.name.clone(),
            (None, None) => c.text("name", "", 100),
        };
        let kind = match (self.kind, &current) {
            (Some(k), _) => k,
            (None, Some(cur)) => cur.kind,
            (None, None) => {
                c.fail("kind", "is required (zpl or pdf)");
                PrinterKind::Zpl
            }
        };
        let connection = match (self.connection, &current) {
            (Some(conn), _) => match Connection::parse(&conn) {
                Ok(parsed) => parsed.render(),
                Err(e) => {
                    c.fail("connection", e);
                    conn
                }
            },
            (None, Some(cur)) => cur.connection.clone(),
            (None, None) => {
                c.fail("connection", "is required");
                String::new()
            }
        };
        let station = match self.station {
            Some(s) => c.opt_text("station", Some(&s), 64),
            None => current.and_then(|cur| cur.station),
        };
        c.finish(CheckedPrinter {
            name,
            kind,
            connection,
            station,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Queued,
    Sent,
    Printed,
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Sent => "sent",
            Self::Printed => "printed",
            Self::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Queued, Self::Sent, Self::Printed, Self::Failed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PrintJob {
    pub id: PrintJobId,
    pub printer_id: PrinterId,
    pub format: PrinterKind,
    pub size: i64,
    pub status: JobStatus,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Largest job for a printer attached to an edge: it travels to the edge
/// inside one sync message (base64 in JSON), which must stay under
/// `sync::message::MAX_MESSAGE_BYTES`.
pub const MAX_EDGE_JOB_BYTES: usize = 128 * 1024;

/// The `print_job.created` event: the job, its business, and, for a printer
/// attached to an edge, its bytes (base64), so the edge can print it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrintJobCreated {
    #[serde(flatten)]
    pub job: PrintJob,
    pub business_id: BusinessId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_base64: Option<String>,
}

/// The `print_job.updated` event: what the device did with a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrintJobUpdated {
    pub id: PrintJobId,
    pub business_id: BusinessId,
    pub printer_id: PrinterId,
    pub status: JobStatus,
    pub error: Option<String>,
    pub at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The `connection` pattern of the API description, as served.
    fn described() -> regex::Regex {
        let schema = serde_json::to_value(<PrinterFields as utoipa::PartialSchema>::schema())
            .expect("schema");
        let pattern = schema["properties"]["connection"]["pattern"]
            .as_str()
            .expect("a pattern")
            .to_owned();
        regex::Regex::new(&pattern).expect("pattern")
    }

    proptest! {
        // A generator that follows the description is never told a
        // connection it sends is fine when it is not, and the other way:
        // what the server takes, the pattern takes.
        #[test]
        fn the_described_pattern_takes_what_the_parser_takes(
            scheme in prop_oneof![Just("tcp://"), Just("serial://"), Just("device://"),
                Just("edge://"), Just("TCP://"), Just("")],
            rest in prop_oneof![
                "/dev/[a-zA-Z0-9 *?=+]{0,8}",
                "[a-z0-9.:/ _-]{0,12}",
                "/dev/ttyS0\\?baud=\\+?[0-9]{1,4}",
                any::<String>(),
            ],
            pad in "[ \t\n]{0,2}",
        ) {
            let s = format!("{pad}{scheme}{rest}{pad}");
            if Connection::parse(&s).is_ok() {
                prop_assert!(described().is_match(&s), "{:?} is taken but not described", s);
            }
        }
    }

    #[test]
    fn printer_names_are_printable_and_bounded() {
        let fields = |name: &str| PrinterFields {
            name: Some(name.into()),
            kind: Some(PrinterKind::Zpl),
            connection: Some("edge://mad-1".into()),
            station: None,
        };
        for ok in ["Pack 1", "Εκτυπωτής 2", "梱包ライン"] {
            assert!(fields(ok).apply(None).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "   ",
            "Pack\u{202e}1",
            "Pack\u{200b} 1",
            "Pack\n1",
            "\u{feff}Pack",
            &"P".repeat(101),
        ] {
            let e = fields(bad).apply(None).expect_err(bad);
            assert_eq!(e[0].name, "name", "{bad:?}");
        }
    }

    #[test]
    fn connections() {
        assert_eq!(
            Connection::parse("tcp://10.0.0.5:9100"),
            Ok(Connection::Tcp {
                host: "10.0.0.5".into(),
                port: 9100
            })
        );
        assert_eq!(
            Connection::parse("tcp://zebra-1").map(|c| c.render()),
            Ok("tcp://zebra-1:9100".into())
        );
        assert_eq!(
            Connection::parse("serial:///dev/ttyUSB0?baud=115200"),
            Ok(Connection::Serial {
                device: "/dev/ttyUSB0".into(),
                baud: 115200
            })
        );
        assert_eq!(
            Connection::parse("device:///dev/usb/lp0").map(|c| c.render()),
            Ok("device:///dev/usb/lp0".into())
        );
        assert_eq!(
            Connection::parse("edge://edge-7"),
            Ok(Connection::Edge {
                edge_id: "edge-7".into()
            })
        );
        for bad in [
            "",
            "http://x",
            "tcp://:9100",
            "tcp://h:0",
            "tcp://h:99999",
            "tcp://h:-1",
            "tcp://h:18446744073709551615",
            "serial:///dev/x?baud=0",
            "serial:///dev/x?baud=-9600",
            "serial:///dev/x?baud=4294967296",
            "serial:///dev/x?baud=1e3",
            "serial://ttyUSB0",
            "serial:///dev/x?parity=e",
            "edge://a b",
        ] {
            assert!(Connection::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn create_needs_everything_edit_keeps_the_rest() {
        let e = PrinterFields::default()
            .apply(None)
            .err()
            .unwrap_or_default();
        let names: Vec<_> = e.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["name", "kind", "connection"]);
        let current = CheckedPrinter {
            name: "P".into(),
            kind: PrinterKind::Zpl,
            connection: "tcp://h:9100".into(),
            station: Some("S1".into()),
        };
        let edited = PrinterFields {
            station: Some(String::new()),
            ..Default::default()
        }
        .apply(Some(current));
        assert_eq!(edited.map(|p| (p.name, p.station)), Ok(("P".into(), None)));
    }
}
