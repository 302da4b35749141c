//! Zebra (ZPL) label printers: reading their status ([`status`]), the
//! connection state machine ([`driver`]), the I/O task that runs it over
//! TCP, serial or a device file ([`Printer`]), and a simulated printer for
//! tests and the demo ([`sim`]).
//!
//! A printer here takes bytes and knows no layouts: documents are made by
//! `depot-labels`, the workspace's one ZPL writer. The edge has the engine
//! render a label, persists the job, and submits its bytes:
//!
//! ```no_run
//! # async fn demo(zpl: String) -> Result<(), Box<dyn std::error::Error>> {
//! use depot_hardware::printer::{DriverConfig, Job, JobId, Printer};
//!
//! let printer = Printer::spawn(&"tcp://10.0.0.5:9100".parse()?, DriverConfig::default());
//! printer.submit(Job { id: JobId(42), data: zpl.into_bytes() })?;
//! # Ok(())
//! # }
//! ```

pub mod driver;
pub mod sim;
pub mod status;
mod task;
pub mod transport;

pub use driver::{DriverConfig, Job, JobId, JobOutcome, PrinterState};
pub use status::Problem;
pub use task::{Printer, PrinterHandle, PrinterStopped};
pub use transport::Endpoint;
