//! Serial port and serial scale configuration.

use std::time::Duration;

use tokio_serial::SerialStream;

use super::{Backoff, ScaleError, Unit};

#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Parity {
    #[default]
    None,
    Odd,
    Even,
}

#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FlowControl {
    #[default]
    None,
    /// XON/XOFF, the factory setting of some Mettler-Toledo balances.
    Software,
    /// RTS/CTS.
    Hardware,
}

/// A serial port and its line settings.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SerialPortConfig {
    /// `/dev/ttyUSB0`, or better a udev symlink that survives replugging.
    pub path: String,
    pub baud_rate: u32,
    /// 5 to 8.
    pub data_bits: u8,
    pub parity: Parity,
    /// 1 or 2.
    pub stop_bits: u8,
    pub flow_control: FlowControl,
}

impl SerialPortConfig {
    /// 8 data bits, no parity, 1 stop bit, no flow control.
    pub fn new(path: impl Into<String>, baud_rate: u32) -> Self {
        Self {
            path: path.into(),
            baud_rate,
            data_bits: 8,
            parity: Parity::None,
            stop_bits: 1,
            flow_control: FlowControl::None,
        }
    }

    pub fn validate(&self) -> Result<(), ScaleError> {
        let invalid = |what: String| Err(ScaleError::Config(format!("{}: {what}", self.path)));
        if self.path.is_empty() {
            return Err(ScaleError::Config("empty serial port path".into()));
        }
        if self.baud_rate == 0 {
            return invalid("baud rate 0".into());
        }
        if !(5..=8).contains(&self.data_bits) {
            return invalid(format!("{} data bits (5 to 8)", self.data_bits));
        }
        if !(1..=2).contains(&self.stop_bits) {
            return invalid(format!("{} stop bits (1 or 2)", self.stop_bits));
        }
        Ok(())
    }

    pub(crate) fn open(&self) -> Result<SerialStream, ScaleError> {
        use tokio_serial::{DataBits, StopBits};
        let data_bits = match self.data_bits {
            5 => DataBits::Five,
            6 => DataBits::Six,
            7 => DataBits::Seven,
            _ => DataBits::Eight,
        };
        let stop_bits = if self.stop_bits == 2 {
            StopBits::Two
        } else {
            StopBits::One
        };
        let parity = match self.parity {
            Parity::None => tokio_serial::Parity::None,
            Parity::Odd => tokio_serial::Parity::Odd,
            Parity::Even => tokio_serial::Parity::Even,
        };
        let flow_control = match self.flow_control {
            FlowControl::None => tokio_serial::FlowControl::None,
            FlowControl::Software => tokio_serial::FlowControl::Software,
            FlowControl::Hardware => tokio_serial::FlowControl::Hardware,
        };
        let builder = tokio_serial::new(&self.path, self.baud_rate)
            .data_bits(data_bits)
            .stop_bits(stop_bits)
            .parity(parity)
            .flow_control(flow_control);
        SerialStream::open(&builder)
            .map_err(|error| ScaleError::Disconnected(format!("{}: {error}", self.path)))
    }
}

/// What a serial scale speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum SerialProtocol {
    /// Mettler-Toledo MT-SICS: polled with `SI`; zero and tare.
    MtSics,
    /// Toledo 8217: polled with `W`; zero. The weight carries no unit, so
    /// the one the scale is set to is configured here.
    Toledo8217 { unit: Unit },
    /// CAS continuous output: the scale streams; no commands.
    Cas,
}

impl SerialProtocol {
    pub const fn name(self) -> &'static str {
        match self {
            Self::MtSics => "MT-SICS",
            Self::Toledo8217 { .. } => "Toledo 8217",
            Self::Cas => "CAS continuous",
        }
    }
}

/// A scale on a serial port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerialScaleConfig {
    pub port: SerialPortConfig,
    pub protocol: SerialProtocol,
    /// How often a polled scale is asked for its weight.
    pub poll_interval: Duration,
    /// How long a weight request may take; for a streaming scale, how long
    /// it may stay silent before it is reported as such.
    pub reply_timeout: Duration,
    /// How long zero and tare may take: the scale first waits for the
    /// weight to settle.
    pub command_timeout: Duration,
    /// Reopening the port after it failed or vanished.
    pub reconnect: Backoff,
}

impl SerialScaleConfig {
    /// Factory settings of MT-SICS balances: 9600 8N1. (Some models ship
    /// with XON/XOFF: set `port.flow_control` to match the balance menu.)
    pub fn mt_sics(path: impl Into<String>) -> Self {
        Self::with(SerialPortConfig::new(path, 9600), SerialProtocol::MtSics)
    }

    /// The 8217 line settings: 9600 7E1.
    pub fn toledo_8217(path: impl Into<String>, unit: Unit) -> Self {
        let port = SerialPortConfig {
            data_bits: 7,
            parity: Parity::Even,
            ..SerialPortConfig::new(path, 9600)
        };
        Self::with(port, SerialProtocol::Toledo8217 { unit })
    }

    /// CAS indicators' usual setting: 9600 8N1.
    pub fn cas(path: impl Into<String>) -> Self {
        Self::with(SerialPortConfig::new(path, 9600), SerialProtocol::Cas)
    }

    fn with(port: SerialPortConfig, protocol: SerialProtocol) -> Self {
        Self {
            port,
            protocol,
            poll_interval: Duration::from_millis(200),
            reply_timeout: Duration::from_secs(1),
            command_timeout: Duration::from_secs(10),
            reconnect: Backoff::default(),
        }
    }

    pub fn validate(&self) -> Result<(), ScaleError> {
        self.port.validate()?;
        self.reconnect.validate()?;
        for (name, value) in [
            ("poll_interval", self.poll_interval),
            ("reply_timeout", self.reply_timeout),
            ("command_timeout", self.command_timeout),
        ] {
            if value.is_zero() {
                return Err(ScaleError::Config(format!("{name} is zero")));
            }
        }
        Ok(())
    }
}
