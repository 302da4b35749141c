//! Scales: MT-SICS, Toledo 8217 and CAS over serial lines, and any scale
//! that publishes its weight in Modbus registers (TCP or RTU).
//!
//! The protocol modules (`sics`, `toledo`, `cas`, `modbus`'s register map)
//! are pure: bytes and time in, readings and bytes to send out. [`spawn`]
//! starts the task that owns the port or socket and returns a
//! [`ScaleHandle`], the same for every protocol: the latest state on a watch
//! channel, a stable weight for packing, zero and tare where the protocol
//! has them.

pub mod cas;
mod driver;
mod error;
mod exchange;
mod framer;
mod handle;
mod link;
pub mod modbus;
mod serial;
pub mod sics;
pub mod sim;
mod task;
pub mod toledo;
mod weight;

use std::{fmt, str::FromStr, time::SystemTime};

pub use error::{Limit, ScaleError};
pub use handle::{Backoff, ScaleConfig, ScaleHandle, spawn};
pub use serial::{FlowControl, Parity, SerialPortConfig, SerialProtocol, SerialScaleConfig};
pub use task::ScaleState;
pub use weight::{MAX_DECIMALS, Weight};

/// The units the drivers report. Scales configured for others (carats,
/// pennyweights, tonnes) are refused with [`ScaleError::UnsupportedUnit`].
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub enum Unit {
    #[serde(rename = "g")]
    Gram,
    #[serde(rename = "kg")]
    Kilogram,
    #[serde(rename = "lb")]
    Pound,
    #[serde(rename = "oz")]
    Ounce,
}

impl Unit {
    pub const fn symbol(self) -> &'static str {
        match self {
            Self::Gram => "g",
            Self::Kilogram => "kg",
            Self::Pound => "lb",
            Self::Ounce => "oz",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl FromStr for Unit {
    type Err = ScaleError;

    /// Case-insensitive, since CAS indicators print "KG" or "kg" by model.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_lowercase().as_str() {
            "g" => Ok(Self::Gram),
            "kg" => Ok(Self::Kilogram),
            "lb" | "lbs" => Ok(Self::Pound),
            "oz" => Ok(Self::Ounce),
            _ => Err(ScaleError::UnsupportedUnit(text.escape_debug().to_string())),
        }
    }
}

/// One weight from a scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub weight: Weight,
    pub unit: Unit,
    /// The scale reported the weight at rest (no motion).
    pub stable: bool,
    /// When the driver received it.
    pub at: SystemTime,
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.weight, self.unit)?;
        if !self.stable {
            f.write_str(" (in motion)")?;
        }
        Ok(())
    }
}
