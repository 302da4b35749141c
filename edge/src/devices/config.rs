//! The devices and stations of `edge.toml`: what is attached to the box and
//! which station uses what. Checked as the settings are read, so a typo is
//! a clear error at start instead of a station that silently does nothing.

use depot_hardware::printer::{DriverConfig, Endpoint};
use depot_hardware::scale::modbus::{ModbusScaleConfig, RegisterMap};
use depot_hardware::scale::{
    FlowControl, Parity, ScaleConfig, SerialPortConfig, SerialScaleConfig, Unit,
};
use depot_hardware::scanner::registry::{self, ScannerMatch};
use depot_hardware::scanner::serial::SerialScannerConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;

/// `[devices]`: printers, scales and scanners. Empty by default: a box
/// without devices serves the API alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DevicesConfig {
    /// Label printers.
    pub printers: Vec<PrinterDevice>,
    /// Scales.
    pub scales: Vec<ScaleDevice>,
    /// Barcode scanners, USB or serial.
    pub scanners: Vec<ScannerDevice>,
}

/// `[[devices.printers]]`: a label printer this box prints on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PrinterDevice {
    /// The name of the printer's record, as synced from the cloud, whose
    /// connection is `edge://<this edge's id>`.
    pub name: String,
    /// `tcp://10.0.0.5:9100`, `serial:///dev/ttyUSB0?baud=9600` or
    /// `/dev/usb/lp0`.
    pub endpoint: Endpoint,
    /// Milliseconds connecting may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::connect_timeout_ms")]
    pub connect_timeout_ms: Option<u64>,
    /// Milliseconds the printer may take to answer a status request (`~HS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::status_timeout_ms")]
    pub status_timeout_ms: Option<u64>,
    /// Milliseconds writing one job may take (a paused printer with a full
    /// buffer stops reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::transfer_timeout_ms")]
    pub transfer_timeout_ms: Option<u64>,
    /// Milliseconds the printer may take to close after the end of a job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::close_timeout_ms")]
    pub close_timeout_ms: Option<u64>,
    /// Milliseconds to wait after a fault or a lost printer before trying
    /// again; doubles up to `backoff_max_ms` while the problem lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::backoff_initial_ms")]
    pub backoff_initial_ms: Option<u64>,
    /// The longest wait between tries, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::backoff_max_ms")]
    pub backoff_max_ms: Option<u64>,
    /// How often an idle printer is asked for its status, in milliseconds,
    /// so that one that went away is noticed; 0: only when printing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::idle_poll_ms")]
    pub idle_poll_ms: Option<u64>,
    /// Cut-off transfers after which a job is given up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(default = "driver_default::max_transfer_attempts")]
    pub max_transfer_attempts: Option<u32>,
}

/// What a printer key left out means: the driver's default, shown in the
/// configuration reference.
mod driver_default {
    use depot_hardware::printer::DriverConfig;
    use std::time::Duration;

    fn ms(d: Duration) -> Option<u64> {
        u64::try_from(d.as_millis()).ok()
    }

    pub fn connect_timeout_ms() -> Option<u64> {
        ms(DriverConfig::default().connect_timeout)
    }

    pub fn status_timeout_ms() -> Option<u64> {
        ms(DriverConfig::default().status_timeout)
    }

    pub fn transfer_timeout_ms() -> Option<u64> {
        ms(DriverConfig::default().transfer_timeout)
    }

    pub fn close_timeout_ms() -> Option<u64> {
        ms(DriverConfig::default().close_timeout)
    }

    pub fn backoff_initial_ms() -> Option<u64> {
        ms(DriverConfig::default().backoff_initial)
    }

    pub fn backoff_max_ms() -> Option<u64> {
        ms(DriverConfig::default().backoff_max)
    }

    pub fn idle_poll_ms() -> Option<u64> {
        DriverConfig::default().idle_poll.map_or(Some(0), ms)
    }

    pub fn max_transfer_attempts() -> Option<u32> {
        Some(DriverConfig::default().max_transfer_attempts)
    }
}

/// A configured number of milliseconds, or the default.
fn ms(v: Option<u64>, default: Duration) -> Duration {
    v.map_or(default, Duration::from_millis)
}

impl PrinterDevice {
    /// A printer reached at `endpoint`, every driver setting at its default.
    pub fn new(name: impl Into<String>, endpoint: Endpoint) -> Self {
        Self {
            name: name.into(),
            endpoint,
            connect_timeout_ms: None,
            status_timeout_ms: None,
            transfer_timeout_ms: None,
            close_timeout_ms: None,
            backoff_initial_ms: None,
            backoff_max_ms: None,
            idle_poll_ms: None,
            max_transfer_attempts: None,
        }
    }

    /// The driver's settings: the defaults, with what is configured.
    pub fn driver(&self) -> DriverConfig {
        let d = DriverConfig::default();
        DriverConfig {
            connect_timeout: ms(self.connect_timeout_ms, d.connect_timeout),
            status_timeout: ms(self.status_timeout_ms, d.status_timeout),
            transfer_timeout: ms(self.transfer_timeout_ms, d.transfer_timeout),
            close_timeout: ms(self.close_timeout_ms, d.close_timeout),
            backoff_initial: ms(self.backoff_initial_ms, d.backoff_initial),
            backoff_max: ms(self.backoff_max_ms, d.backoff_max),
            idle_poll: match self.idle_poll_ms {
                None => d.idle_poll,
                Some(0) => None,
                Some(v) => Some(Duration::from_millis(v)),
            },
            max_transfer_attempts: self
                .max_transfer_attempts
                .unwrap_or(d.max_transfer_attempts),
        }
    }

    fn check(&self) -> Result<(), String> {
        let d = self.driver();
        let timeouts = [
            ("connect_timeout_ms", d.connect_timeout),
            ("status_timeout_ms", d.status_timeout),
            ("transfer_timeout_ms", d.transfer_timeout),
            ("close_timeout_ms", d.close_timeout),
            ("backoff_initial_ms", d.backoff_initial),
        ];
        if let Some((name, _)) = timeouts.iter().find(|(_, v)| v.is_zero()) {
            return Err(format!("{name} must be at least 1"));
        }
        if d.backoff_max < d.backoff_initial {
            return Err("backoff_max_ms must not be below backoff_initial_ms".into());
        }
        if d.max_transfer_attempts == 0 {
            return Err("max_transfer_attempts must be at least 1".into());
        }
        Ok(())
    }
}

/// What a scale speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScaleProtocol {
    /// Mettler-Toledo MT-SICS, on a serial port.
    MtSics,
    /// Toledo 8217 (continuous or on request), on a serial port.
    #[serde(rename = "toledo_8217")]
    Toledo8217,
    /// CAS, on a serial port.
    Cas,
    /// Modbus over TCP (`address`).
    ModbusTcp,
    /// Modbus RTU, on a serial port.
    ModbusRtu,
}

impl ScaleProtocol {
    /// As written in the configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MtSics => "mt_sics",
            Self::Toledo8217 => "toledo_8217",
            Self::Cas => "cas",
            Self::ModbusTcp => "modbus_tcp",
            Self::ModbusRtu => "modbus_rtu",
        }
    }
}

/// `[[devices.scales]]`: a scale, on a serial port or over Modbus. Serial
/// line settings default to the protocol's factory settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScaleDevice {
    /// Unique among the devices; what `[[stations]]` name it by.
    pub id: String,
    pub protocol: ScaleProtocol,
    /// The serial port (all but `modbus_tcp`): better a
    /// `/dev/serial/by-id/…` link than `/dev/ttyUSB0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// Serial line speed; unset: the protocol's factory setting (9600 for
    /// most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baud_rate: Option<u32>,
    /// Serial data bits, 5 to 8; unset: the protocol's factory setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_bits: Option<u8>,
    /// Serial parity; unset: the protocol's factory setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parity: Option<Parity>,
    /// Serial stop bits, 1 or 2; unset: the protocol's factory setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_bits: Option<u8>,
    /// Serial handshake; unset: the protocol's factory setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_control: Option<FlowControl>,
    /// `toledo_8217`: the unit the scale is set to (its frames carry none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// `modbus_tcp`: `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Modbus: the unit (slave) id, 1 by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_id: Option<u8>,
    /// Modbus: where the scale publishes its weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registers: Option<RegisterMap>,
    /// Milliseconds between weight requests (for a scale that is asked);
    /// unset: the protocol's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// How long an answer may take (for a streaming scale, how long it may
    /// stay silent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl ScaleDevice {
    /// A scale speaking `protocol`, every other setting left to the
    /// protocol's factory settings and defaults.
    pub fn new(id: impl Into<String>, protocol: ScaleProtocol) -> Self {
        Self {
            id: id.into(),
            protocol,
            port: None,
            baud_rate: None,
            data_bits: None,
            parity: None,
            stop_bits: None,
            flow_control: None,
            unit: None,
            address: None,
            unit_id: None,
            registers: None,
            poll_interval_ms: None,
            timeout_ms: None,
        }
    }

    /// The driver's configuration, or what is wrong with this entry.
    pub fn hardware(&self) -> Result<ScaleConfig, String> {
        use ScaleProtocol::*;
        let modbus = matches!(self.protocol, ModbusTcp | ModbusRtu);
        let serial = self.protocol != ModbusTcp;
        let misplaced = [
            ("port", self.port.is_some() && !serial),
            (
                "address",
                self.address.is_some() && self.protocol != ModbusTcp,
            ),
            ("unit", self.unit.is_some() && self.protocol != Toledo8217),
            ("unit_id", self.unit_id.is_some() && !modbus),
            ("registers", self.registers.is_some() && !modbus),
        ];
        if let Some((field, _)) = misplaced.iter().find(|(_, wrong)| *wrong) {
            return Err(format!(
                "{field} does not apply to protocol {}",
                self.protocol.as_str()
            ));
        }
        let path = || {
            self.port
                .clone()
                .ok_or_else(|| "port (the serial device) is required".to_owned())
        };
        let registers = || {
            self.registers
                .ok_or_else(|| "registers (the Modbus register map) is required".to_owned())
        };
        match self.protocol {
            MtSics => self.serial(SerialScaleConfig::mt_sics(path()?)),
            Cas => self.serial(SerialScaleConfig::cas(path()?)),
            Toledo8217 => {
                let unit = self.unit.ok_or("unit (g, kg, lb or oz) is required")?;
                self.serial(SerialScaleConfig::toledo_8217(path()?, unit))
            }
            ModbusTcp => {
                let address = self
                    .address
                    .clone()
                    .ok_or("address (host:port) is required")?;
                self.modbus(ModbusScaleConfig::tcp(address, registers()?))
            }
            ModbusRtu => {
                let mut port = SerialPortConfig::new(path()?, 9600);
                self.line(&mut port);
                self.modbus(ModbusScaleConfig::rtu(port, 1, registers()?))
            }
        }
    }

    /// The protocol's factory settings, with what is configured.
    fn serial(&self, mut c: SerialScaleConfig) -> Result<ScaleConfig, String> {
        self.line(&mut c.port);
        c.poll_interval = ms(self.poll_interval_ms, c.poll_interval);
        c.reply_timeout = ms(self.timeout_ms, c.reply_timeout);
        c.validate().map_err(|e| e.to_string())?;
        Ok(ScaleConfig::Serial(c))
    }

    fn modbus(&self, mut c: ModbusScaleConfig) -> Result<ScaleConfig, String> {
        c.unit_id = self.unit_id.unwrap_or(c.unit_id);
        c.poll_interval = ms(self.poll_interval_ms, c.poll_interval);
        c.timeout = ms(self.timeout_ms, c.timeout);
        c.validate().map_err(|e| e.to_string())?;
        Ok(ScaleConfig::Modbus(c))
    }

    fn line(&self, port: &mut SerialPortConfig) {
        port.baud_rate = self.baud_rate.unwrap_or(port.baud_rate);
        port.data_bits = self.data_bits.unwrap_or(port.data_bits);
        port.parity = self.parity.unwrap_or(port.parity);
        port.stop_bits = self.stop_bits.unwrap_or(port.stop_bits);
        port.flow_control = self.flow_control.unwrap_or(port.flow_control);
    }
}

/// `[[devices.scanners]]`: `kind = "usb"` (matched by vendor, product and
/// serial number or port) or `kind = "serial"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScannerDevice {
    Usb(ScannerMatch),
    Serial(SerialScannerConfig),
}

impl ScannerDevice {
    pub fn name(&self) -> &str {
        match self {
            Self::Usb(s) => &s.name,
            Self::Serial(s) => &s.name,
        }
    }
}

/// `[[stations]]`: a place on the floor and the devices it uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StationConfig {
    /// Unique; the `{station}` of `/v1/edge/stations/{station}/…`.
    pub name: String,
    /// Names of `[[devices.scanners]]`; a scanner serves one station.
    #[serde(default)]
    pub scanners: Vec<String>,
    /// The id of a `[[devices.scales]]` entry: packing weighs on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<String>,
    /// The name of a `[[devices.printers]]` entry: packing prints the
    /// shipping label on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printer: Option<String>,
    /// A package may weigh this much more or less than expected, or
    /// `tolerance_pct` of the expected weight, whichever is more.
    #[serde(default = "default_tolerance_g")]
    pub tolerance_g: i64,
    /// See `tolerance_g`: a percentage, 0 to 100.
    #[serde(default = "default_tolerance_pct")]
    pub tolerance_pct: f64,
    /// What the box and filling weigh, added to the items' weight.
    #[serde(default)]
    pub packaging_g: i64,
    /// How long packing waits for a stable weight.
    #[serde(default = "default_weigh_timeout_ms")]
    pub weigh_timeout_ms: u64,
}

fn default_tolerance_g() -> i64 {
    20
}

fn default_tolerance_pct() -> f64 {
    5.0
}

fn default_weigh_timeout_ms() -> u64 {
    5000
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Printer,
    Scale,
    Scanner,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Printer => "a printer",
            Kind::Scale => "a scale",
            Kind::Scanner => "a scanner",
        }
    }

    fn section(self) -> &'static str {
        match self {
            Kind::Printer => "printers",
            Kind::Scale => "scales",
            Kind::Scanner => "scanners",
        }
    }
}

/// Checks the devices and the stations that use them; the error names the
/// entry and what is wrong with it.
pub fn check(devices: &DevicesConfig, stations: &[StationConfig]) -> Result<(), String> {
    let mut names: HashMap<&str, Kind> = HashMap::new();
    let all = devices
        .printers
        .iter()
        .map(|p| (p.name.as_str(), Kind::Printer))
        .chain(devices.scales.iter().map(|s| (s.id.as_str(), Kind::Scale)))
        .chain(devices.scanners.iter().map(|s| (s.name(), Kind::Scanner)));
    let mut index: HashMap<Kind, usize> = HashMap::new();
    for (name, kind) in all {
        let i = index.entry(kind).or_default();
        let at = format!("devices.{}[{i}]", kind.section());
        *i += 1;
        if name.trim().is_empty() {
            return Err(format!("{at}: the name must not be empty"));
        }
        if let Some(other) = names.insert(name, kind) {
            return Err(format!(
                "{at}: the name {name:?} is already {}: device names must be unique",
                other.as_str()
            ));
        }
    }
    for (i, p) in devices.printers.iter().enumerate() {
        p.check()
            .map_err(|e| format!("devices.printers[{i}] ({:?}): {e}", p.name))?;
    }
    for (i, s) in devices.scales.iter().enumerate() {
        s.hardware()
            .map_err(|e| format!("devices.scales[{i}] ({:?}): {e}", s.id))?;
    }
    let usb: Vec<ScannerMatch> = devices
        .scanners
        .iter()
        .filter_map(|s| match s {
            ScannerDevice::Usb(m) => Some(m.clone()),
            ScannerDevice::Serial(_) => None,
        })
        .collect();
    registry::validate(&usb).map_err(|e| format!("devices.scanners: {e}"))?;
    for (i, s) in devices.scanners.iter().enumerate() {
        if let ScannerDevice::Serial(c) = s {
            c.validate()
                .map_err(|e| format!("devices.scanners[{i}] ({:?}): {e}", c.name))?;
        }
    }
    check_stations(&names, stations)
}

fn check_stations(devices: &HashMap<&str, Kind>, stations: &[StationConfig]) -> Result<(), String> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut scanner_owner: HashMap<&str, &str> = HashMap::new();
    for (i, s) in stations.iter().enumerate() {
        let at = format!("stations[{i}] ({:?})", s.name);
        if s.name.trim().is_empty() {
            return Err(format!("stations[{i}]: the name must not be empty"));
        }
        if let Some(first) = seen.insert(&s.name, i) {
            return Err(format!("{at}: stations[{first}] has the same name"));
        }
        let expect = |name: &str, kind: Kind| match devices.get(name) {
            Some(k) if *k == kind => Ok(()),
            Some(k) => Err(format!(
                "{at}: {name:?} is {}, not {}",
                k.as_str(),
                kind.as_str()
            )),
            None => Err(format!(
                "{at}: {name:?} is not configured under [[devices.{}]]",
                kind.section()
            )),
        };
        for scanner in &s.scanners {
            expect(scanner, Kind::Scanner)?;
            if let Some(other) = scanner_owner.insert(scanner, &s.name) {
                return Err(format!(
                    "{at}: scanner {scanner:?} already serves station {other:?}"
                ));
            }
        }
        if let Some(scale) = &s.scale {
            expect(scale, Kind::Scale)?;
        }
        if let Some(printer) = &s.printer {
            expect(printer, Kind::Printer)?;
        }
        if s.tolerance_g < 0 || s.packaging_g < 0 {
            return Err(format!(
                "{at}: tolerance_g and packaging_g must be 0 or more"
            ));
        }
        if !(0.0..=100.0).contains(&s.tolerance_pct) {
            return Err(format!("{at}: tolerance_pct must be between 0 and 100"));
        }
        if !(1..=60_000).contains(&s.weigh_timeout_ms) {
            return Err(format!(
                "{at}: weigh_timeout_ms must be between 1 and 60000"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
