//! A simulated Zebra printer on TCP, for tests and the demo.
//!
//! It listens on `127.0.0.1:0`, reads ZPL from any number of connections,
//! prints each `^XA`…`^XZ` format as a [`PrintedLabel`] whose fields are
//! decoded (hex escapes, barcodes), and answers `~HS` and `~HQES` from its
//! state. Through the [`Simulator`] handle a test takes the paper out, opens
//! the head, pauses it, stalls it, drops or cuts connections, and waits for
//! labels without polling.
//!
//! Like a real printer, a format that arrives while out of paper, with the
//! head open or paused is kept and printed once the problem is cleared. A
//! format cut off by a lost connection is discarded; a real printer may
//! hold it as a partial format instead (the `~HS` partial format flag).

mod format;
mod parse;
mod server;

pub use format::{Field, FieldKind, decode_field_hex};

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::printer::status::{ExtendedStatus, PrinterStatus};

/// Reads a ZPL byte stream as the simulator does, without a socket: the
/// fields of each complete format, in order. Control commands (`~…`) are
/// dropped, as a printer acts on them instead of printing them.
pub fn read_formats(zpl: &[u8]) -> Vec<Vec<Field>> {
    let mut commands = Vec::new();
    parse::StreamParser::default().feed(zpl, &mut commands);
    let mut assembler = format::FormatAssembler::default();
    commands
        .iter()
        .filter_map(|command| assembler.apply(command))
        .collect()
}

/// A label the simulator printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintedLabel {
    pub fields: Vec<Field>,
    /// When the format's last byte (its `^XZ`) arrived.
    pub received_at: Instant,
    pub printed_at: Instant,
}

impl PrintedLabel {
    /// The texts of the text fields, in order.
    pub fn texts(&self) -> Vec<&str> {
        self.fields_of(&FieldKind::Text)
    }

    /// The data of the fields of one kind, in order.
    pub fn fields_of(&self, kind: &FieldKind) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|field| &field.kind == kind)
            .map(|field| field.data.as_str())
            .collect()
    }

    pub fn has_text(&self, text: &str) -> bool {
        self.texts().contains(&text)
    }
}

/// Counters a test can wait on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub labels_printed: usize,
    /// Formats received but not printed (out of paper, head open, paused).
    pub formats_waiting: usize,
    /// `~HS` and `~HQES` queries received, answered or not.
    pub status_queries: usize,
    pub connections: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SimError {
    #[error("timed out waiting on the simulator; it is at {0:?}")]
    Timeout(Stats),
}

#[derive(Debug, Default)]
struct Printer {
    paper_out: bool,
    head_open: bool,
    paused: bool,
    silent_when_faulted: bool,
    /// Labels left on the roll; `None` is endless.
    media: Option<u32>,
    waiting: VecDeque<(Vec<Field>, Instant)>,
    printed: Vec<PrintedLabel>,
    status_queries: usize,
    connections: usize,
    /// Reset the first connection to receive more than this many bytes.
    cut_after: Option<usize>,
}

impl Printer {
    fn can_print(&self) -> bool {
        !(self.paper_out || self.head_open || self.paused)
    }

    fn print_waiting(&mut self) {
        while self.can_print() {
            let Some((fields, received_at)) = self.waiting.pop_front() else {
                break;
            };
            self.printed.push(PrintedLabel {
                fields,
                received_at,
                printed_at: Instant::now(),
            });
            if let Some(left) = &mut self.media {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.paper_out = true;
                }
            }
        }
    }

    fn stats(&self) -> Stats {
        Stats {
            labels_printed: self.printed.len(),
            formats_waiting: self.waiting.len(),
            status_queries: self.status_queries,
            connections: self.connections,
        }
    }

    fn host_status(&self) -> PrinterStatus {
        PrinterStatus {
            interface_settings: 30,
            paper_out: self.paper_out,
            paused: self.paused,
            label_length_dots: 1218,
            formats_in_buffer: u32::try_from(self.waiting.len()).unwrap_or(u32::MAX),
            head_open: self.head_open,
            print_mode: 2,
            format_while_printing: true,
            ..PrinterStatus::default()
        }
    }

    fn extended_status(&self) -> ExtendedStatus {
        ExtendedStatus {
            errors: u64::from(self.paper_out) | u64::from(self.head_open) << 2,
            warnings: 0,
        }
    }

    /// What a status query is answered with: nothing while faulted if the
    /// printer is set to stay silent, as some Zebras do.
    fn answer(&mut self, query: Query) -> Option<Vec<u8>> {
        self.status_queries += 1;
        let faulted = self.paper_out || self.head_open;
        if faulted && self.silent_when_faulted {
            return None;
        }
        Some(match query {
            Query::Host => self.host_status().encode(),
            Query::Extended => self.extended_status().encode(),
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Query {
    Host,
    Extended,
}

/// What every connection watches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Control {
    stalled: bool,
    /// Bumped to reset every open connection.
    drop_generation: u64,
}

#[derive(Debug)]
struct Shared {
    printer: Mutex<Printer>,
    stats: watch::Sender<Stats>,
    control: watch::Sender<Control>,
}

impl Shared {
    fn printer(&self) -> MutexGuard<'_, Printer> {
        // A panicking test thread must not take the simulator down with it.
        self.printer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes the printer, prints what it now can, and tells the waiters.
    fn update<T>(&self, change: impl FnOnce(&mut Printer) -> T) -> T {
        let mut printer = self.printer();
        let result = change(&mut printer);
        printer.print_waiting();
        self.stats.send_replace(printer.stats());
        result
    }

    fn receive(&self, fields: Vec<Field>, received_at: Instant) {
        self.update(|printer| printer.waiting.push_back((fields, received_at)));
    }

    fn answer(&self, query: Query) -> Option<Vec<u8>> {
        self.update(|printer| printer.answer(query))
    }
}

/// The handle of a running simulator; dropping it stops the simulator and
/// resets its connections.
#[derive(Debug)]
pub struct Simulator {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl Simulator {
    /// Starts a simulated printer on a free loopback port.
    pub async fn start() -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            printer: Mutex::new(Printer::default()),
            stats: watch::Sender::new(Stats::default()),
            control: watch::Sender::new(Control::default()),
        });
        let accept = tokio::spawn(server::accept(listener, Arc::clone(&shared)));
        Ok(Self {
            addr,
            shared,
            accept,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn labels(&self) -> Vec<PrintedLabel> {
        self.shared.printer().printed.clone()
    }

    pub fn stats(&self) -> Stats {
        *self.shared.stats.borrow()
    }

    /// Waits until `condition` holds for the counters, without polling:
    /// every change is pushed to the waiter.
    pub async fn wait_until(
        &self,
        condition: impl FnMut(&Stats) -> bool,
        timeout: Duration,
    ) -> Result<Stats, SimError> {
        let mut stats = self.shared.stats.subscribe();
        match tokio::time::timeout(timeout, stats.wait_for(condition)).await {
            Ok(Ok(reached)) => Ok(*reached),
            _ => Err(SimError::Timeout(self.stats())),
        }
    }

    /// Waits until at least `count` labels are printed, and returns them all.
    pub async fn wait_for_labels(
        &self,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<PrintedLabel>, SimError> {
        self.wait_until(|stats| stats.labels_printed >= count, timeout)
            .await?;
        Ok(self.labels())
    }

    pub fn set_paper_out(&self, out: bool) {
        self.shared.update(|printer| printer.paper_out = out);
    }

    /// Loads a roll with room for `labels` more labels (`None`: endless);
    /// the paper runs out after the last of them.
    pub fn load_paper(&self, labels: Option<u32>) {
        self.shared.update(|printer| {
            printer.media = labels;
            printer.paper_out = labels == Some(0);
        });
    }

    pub fn set_head_open(&self, open: bool) {
        self.shared.update(|printer| printer.head_open = open);
    }

    pub fn set_paused(&self, paused: bool) {
        self.shared.update(|printer| printer.paused = paused);
    }

    /// Whether `~HS`/`~HQES` go unanswered while out of paper or with the
    /// head open, as the ZPL manual warns some printers do.
    pub fn set_silent_when_faulted(&self, silent: bool) {
        self.shared
            .update(|printer| printer.silent_when_faulted = silent);
    }

    /// A stalled printer accepts connections but reads and answers nothing
    /// until un-stalled.
    pub fn set_stalled(&self, stalled: bool) {
        self.shared
            .control
            .send_modify(|control| control.stalled = stalled);
    }

    /// Clears every fault: paper in (endless), head closed, not paused,
    /// answering, not stalled.
    pub fn recover(&self) {
        self.set_stalled(false);
        self.shared.update(|printer| {
            printer.paper_out = false;
            printer.media = None;
            printer.head_open = false;
            printer.paused = false;
            printer.silent_when_faulted = false;
        });
    }

    /// Resets every open connection now.
    pub fn drop_connections(&self) {
        self.shared
            .control
            .send_modify(|control| control.drop_generation += 1);
    }

    /// Resets the first connection that receives more than `bytes` bytes,
    /// right after its first `bytes` bytes: a transfer cut off mid-job.
    pub fn cut_connection_after(&self, bytes: usize) {
        self.shared.printer().cut_after = Some(bytes);
    }
}

impl Drop for Simulator {
    fn drop(&mut self) {
        self.accept.abort();
        self.drop_connections();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(n: usize) -> (Vec<Field>, Instant) {
        let field = Field {
            x: 0,
            y: 0,
            kind: FieldKind::Text,
            data: n.to_string(),
        };
        (vec![field], Instant::now())
    }

    #[test]
    fn the_roll_runs_out_after_its_labels() {
        let mut printer = Printer {
            media: Some(2),
            ..Printer::default()
        };
        printer.waiting.extend((0..3).map(label));
        printer.print_waiting();
        assert_eq!(printer.printed.len(), 2);
        assert!(printer.paper_out);
        assert_eq!(printer.host_status().formats_in_buffer, 1);
        assert!(printer.host_status().paper_out);
    }

    #[test]
    fn faults_hold_formats_until_cleared() {
        let mut printer = Printer {
            head_open: true,
            ..Printer::default()
        };
        printer.waiting.push_back(label(1));
        printer.print_waiting();
        assert!(printer.printed.is_empty());
        printer.head_open = false;
        printer.print_waiting();
        assert_eq!(printer.printed.len(), 1);
    }

    #[test]
    fn answers_reflect_the_state_or_stay_silent() {
        let mut printer = Printer {
            paper_out: true,
            head_open: true,
            ..Printer::default()
        };
        let answer = printer.answer(Query::Host).expect("answers by default");
        let (status, _) = PrinterStatus::parse(&answer).expect("valid ~HS answer");
        assert!(status.paper_out && status.head_open);
        let answer = printer.answer(Query::Extended).expect("answers by default");
        let (extended, _) = ExtendedStatus::parse(&answer).expect("valid ~HQES answer");
        assert_eq!(extended.errors, 0x5);
        printer.silent_when_faulted = true;
        assert_eq!(printer.answer(Query::Host), None);
        assert_eq!(printer.status_queries, 3);
    }
}
