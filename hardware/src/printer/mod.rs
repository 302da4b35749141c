//! Zebra (ZPL) label printers: building labels ([`zpl`]), reading their
//! status ([`status`]), the connection state machine ([`driver`]), the I/O
//! task that runs it over TCP, serial or a device file ([`Printer`]), and a
//! simulated printer for tests and the demo ([`sim`]).
//!
//! The edge builds a label, persists the job, and submits it:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use depot_hardware::printer::{DriverConfig, Job, JobId, Printer};
//! use depot_hardware::printer::zpl::{Dpi, ItemLabel, LabelSize};
//!
//! let printer = Printer::spawn(&"tcp://10.0.0.5:9100".parse()?, DriverConfig::default());
//! let label = ItemLabel { code: "A-01-03".into(), title: "Bin A-01-03".into(), detail: None };
//! let data = label.to_zpl(LabelSize::from_mm(50, 25, Dpi::D203))?;
//! printer.submit(Job { id: JobId(42), data })?;
//! # Ok(())
//! # }
//! ```

pub mod driver;
pub mod sim;
pub mod status;
mod task;
pub mod transport;
pub mod zpl;

pub use driver::{DriverConfig, Job, JobId, JobOutcome, PrinterState};
pub use status::Problem;
pub use task::{Printer, PrinterHandle, PrinterStopped};
pub use transport::Endpoint;
