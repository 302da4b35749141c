//! Simulated scales, for tests and the demo: MT-SICS, Toledo 8217 and CAS
//! on a pseudo-terminal, and a Modbus TCP scale. Each can be told to weigh,
//! move, overload, answer slowly, talk nonsense or fall silent.

mod modbus;
mod serial;

pub use modbus::ModbusScaleSim;
pub use serial::{SerialScaleSim, SimProtocol};
