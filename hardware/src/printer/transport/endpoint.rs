//! Where a printer is, as written in the edge's configuration:
//!
//! - `tcp://192.168.1.50:9100` (the port defaults to 9100, the raw ZPL
//!   port; IPv6 hosts in brackets);
//! - `serial:///dev/ttyUSB0?baud=9600&data_bits=8&parity=none&stop_bits=1&flow_control=hardware`
//!   (every parameter optional; the defaults are a Zebra's factory
//!   settings, see [`SerialConfig::new`]);
//! - `/dev/usb/lp0` or `file:///dev/usb/lp0`: a character device (the
//!   kernel's USB printer class driver).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The raw ZPL port of Zebra print servers.
pub const DEFAULT_TCP_PORT: u16 = 9100;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "String", into = "String")]
pub enum Endpoint {
    Tcp { host: String, port: u16 },
    Serial(SerialConfig),
    Device { path: PathBuf },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parity {
    None,
    Odd,
    Even,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowControl {
    None,
    /// XON/XOFF.
    Software,
    /// RTS/CTS.
    Hardware,
}

/// A serial line's settings; they must match the printer's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SerialConfig {
    pub path: String,
    pub baud_rate: u32,
    /// 7 or 8.
    pub data_bits: u8,
    pub parity: Parity,
    /// 1 or 2.
    pub stop_bits: u8,
    pub flow_control: FlowControl,
}

impl SerialConfig {
    /// Zebra's factory serial settings: 9600 baud, 8 data bits, no parity,
    /// 1 stop bit, XON/XOFF handshake.
    pub fn new(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            baud_rate: 9600,
            data_bits: 8,
            parity: Parity::None,
            stop_bits: 1,
            flow_control: FlowControl::Software,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error("{0:?}: expected tcp://host[:port], serial:///path[?options] or a device path")]
    Scheme(String),
    #[error("{0:?}: missing host")]
    MissingHost(String),
    #[error("{0:?}: invalid port")]
    Port(String),
    #[error("{0:?}: missing path")]
    MissingPath(String),
    #[error("serial option {name}={value:?}: {expected}")]
    SerialOption {
        name: String,
        value: String,
        expected: &'static str,
    },
}

fn parse_tcp(input: &str, rest: &str) -> Result<Endpoint, EndpointError> {
    let rest = rest.trim_end_matches('/');
    let (host, port) = if let Some(bracketed) = rest.strip_prefix('[') {
        let (host, after) = bracketed
            .split_once(']')
            .ok_or_else(|| EndpointError::MissingHost(input.to_owned()))?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(EndpointError::Port(input.to_owned())),
        }
    } else {
        match rest.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        }
    };
    if host.is_empty() {
        return Err(EndpointError::MissingHost(input.to_owned()));
    }
    let port = match port {
        Some(port) => port
            .parse()
            .ok()
            .filter(|&port| port != 0)
            .ok_or_else(|| EndpointError::Port(input.to_owned()))?,
        None => DEFAULT_TCP_PORT,
    };
    Ok(Endpoint::Tcp {
        host: host.to_owned(),
        port,
    })
}

fn parse_serial(input: &str, rest: &str) -> Result<Endpoint, EndpointError> {
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    if path.is_empty() {
        return Err(EndpointError::MissingPath(input.to_owned()));
    }
    let mut config = SerialConfig::new(path);
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let invalid = |expected| EndpointError::SerialOption {
            name: name.to_owned(),
            value: value.to_owned(),
            expected,
        };
        match name {
            "baud" | "baud_rate" => {
                config.baud_rate = value
                    .parse()
                    .ok()
                    .filter(|&baud| baud > 0)
                    .ok_or_else(|| invalid("a positive number"))?;
            }
            "data_bits" => {
                config.data_bits = match value {
                    "7" => 7,
                    "8" => 8,
                    _ => return Err(invalid("7 or 8")),
                };
            }
            "stop_bits" => {
                config.stop_bits = match value {
                    "1" => 1,
                    "2" => 2,
                    _ => return Err(invalid("1 or 2")),
                };
            }
            "parity" => {
                config.parity = match value {
                    "none" => Parity::None,
                    "odd" => Parity::Odd,
                    "even" => Parity::Even,
                    _ => return Err(invalid("none, odd or even")),
                };
            }
            "flow_control" => {
                config.flow_control = match value {
                    "none" => FlowControl::None,
                    "software" => FlowControl::Software,
                    "hardware" => FlowControl::Hardware,
                    _ => return Err(invalid("none, software or hardware")),
                };
            }
            _ => {
                return Err(invalid(
                    "a known option (baud, data_bits, parity, stop_bits, flow_control)",
                ));
            }
        }
    }
    Ok(Endpoint::Serial(config))
}

impl FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let trimmed = input.trim();
        if let Some(rest) = trimmed.strip_prefix("tcp://") {
            parse_tcp(input, rest)
        } else if let Some(rest) = trimmed.strip_prefix("serial://") {
            parse_serial(input, rest)
        } else if let Some(path) = trimmed.strip_prefix("file://") {
            if path.is_empty() {
                return Err(EndpointError::MissingPath(input.to_owned()));
            }
            Ok(Endpoint::Device { path: path.into() })
        } else if trimmed.starts_with('/') {
            Ok(Endpoint::Device {
                path: trimmed.into(),
            })
        } else {
            Err(EndpointError::Scheme(input.to_owned()))
        }
    }
}

impl TryFrom<String> for Endpoint {
    type Error = EndpointError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<Endpoint> for String {
    fn from(endpoint: Endpoint) -> Self {
        endpoint.to_string()
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => {
                write!(f, "tcp://[{host}]:{port}")
            }
            Endpoint::Tcp { host, port } => write!(f, "tcp://{host}:{port}"),
            Endpoint::Serial(config) => {
                let parity = match config.parity {
                    Parity::None => "none",
                    Parity::Odd => "odd",
                    Parity::Even => "even",
                };
                let flow = match config.flow_control {
                    FlowControl::None => "none",
                    FlowControl::Software => "software",
                    FlowControl::Hardware => "hardware",
                };
                write!(
                    f,
                    "serial://{}?baud={}&data_bits={}&parity={parity}&stop_bits={}&flow_control={flow}",
                    config.path, config.baud_rate, config.data_bits, config.stop_bits
                )
            }
            Endpoint::Device { path } => write!(f, "file://{}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> Result<Endpoint, EndpointError> {
        input.parse()
    }

    fn tcp(host: &str, port: u16) -> Endpoint {
        Endpoint::Tcp {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn tcp_endpoints() {
        assert_eq!(parse("tcp://10.0.0.5:9100"), Ok(tcp("10.0.0.5", 9100)));
        assert_eq!(parse("tcp://printer-3"), Ok(tcp("printer-3", 9100)));
        assert_eq!(
            parse(" tcp://zebra.local:6101/ "),
            Ok(tcp("zebra.local", 6101))
        );
        assert_eq!(parse("tcp://[fe80::1]:9100"), Ok(tcp("fe80::1", 9100)));
        assert_eq!(parse("tcp://[::1]"), Ok(tcp("::1", 9100)));
    }

    #[test]
    fn bad_tcp_endpoints() {
        assert!(matches!(
            parse("tcp://"),
            Err(EndpointError::MissingHost(_))
        ));
        assert!(matches!(
            parse("tcp://:9100"),
            Err(EndpointError::MissingHost(_))
        ));
        assert!(matches!(parse("tcp://h:0"), Err(EndpointError::Port(_))));
        assert!(matches!(
            parse("tcp://h:99999"),
            Err(EndpointError::Port(_))
        ));
        assert!(matches!(parse("tcp://[::1]x"), Err(EndpointError::Port(_))));
        assert!(matches!(
            parse("tcp://[::1"),
            Err(EndpointError::MissingHost(_))
        ));
    }

    #[test]
    fn serial_endpoints() {
        assert_eq!(
            parse("serial:///dev/ttyUSB0"),
            Ok(Endpoint::Serial(SerialConfig::new("/dev/ttyUSB0")))
        );
        let Ok(Endpoint::Serial(config)) = parse(
            "serial:///dev/ttyS1?baud=115200&data_bits=7&parity=even&stop_bits=2&flow_control=hardware",
        ) else {
            panic!("valid serial endpoint");
        };
        assert_eq!(config.baud_rate, 115_200);
        assert_eq!(config.data_bits, 7);
        assert_eq!(config.parity, Parity::Even);
        assert_eq!(config.stop_bits, 2);
        assert_eq!(config.flow_control, FlowControl::Hardware);
    }

    #[test]
    fn bad_serial_options() {
        for input in [
            "serial://",
            "serial:///dev/ttyS0?baud=fast",
            "serial:///dev/ttyS0?baud=0",
            "serial:///dev/ttyS0?data_bits=9",
            "serial:///dev/ttyS0?stop_bits=3",
            "serial:///dev/ttyS0?parity=mark",
            "serial:///dev/ttyS0?flow_control=rts",
            "serial:///dev/ttyS0?speed=9600",
        ] {
            assert!(parse(input).is_err(), "{input} accepted");
        }
    }

    #[test]
    fn device_endpoints() {
        let lp0 = Endpoint::Device {
            path: "/dev/usb/lp0".into(),
        };
        assert_eq!(parse("/dev/usb/lp0"), Ok(lp0.clone()));
        assert_eq!(parse("file:///dev/usb/lp0"), Ok(lp0));
        assert!(matches!(
            parse("file://"),
            Err(EndpointError::MissingPath(_))
        ));
        assert!(matches!(parse("lp0"), Err(EndpointError::Scheme(_))));
        assert!(matches!(parse("http://x"), Err(EndpointError::Scheme(_))));
    }

    #[test]
    fn display_round_trips() {
        for input in [
            "tcp://10.0.0.5:9100",
            "tcp://[fe80::1]:9100",
            "serial:///dev/ttyS1?baud=19200&data_bits=8&parity=odd&stop_bits=1&flow_control=none",
            "file:///dev/usb/lp0",
        ] {
            let endpoint = parse(input).expect("valid endpoint");
            assert_eq!(endpoint.to_string(), input);
            assert_eq!(parse(&endpoint.to_string()), Ok(endpoint));
        }
    }
}
