//! The scanner's trigger. The simulated serial scanner sends its scans on a
//! pseudo-terminal that the edge reads; what a person writes to that
//! terminal's path goes the other way, to the simulator, never to the edge.
//! So the trigger is a second pseudo-terminal, reached through a link in
//! the data directory (a path that stays the same from run to run): each
//! line written to it is scanned by the simulated scanner, as if its
//! trigger were pulled on that code.

use depot_hardware::scanner::serial::LineEnding;
use depot_hardware::scanner::sim::SerialSim;
use serialport::{SerialPort, TTYPort};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the trigger's thread looks up from a quiet line to see
/// whether it should stop.
const TICK: Duration = Duration::from_millis(50);
/// Longer lines are not barcodes; they are dropped.
const MAX_LINE: usize = 4096;

/// The trigger, running; dropping it stops it and removes the link.
pub struct Trigger {
    link: PathBuf,
    scanner_port: String,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Trigger {
    /// Links `link` to a new pseudo-terminal whose lines `scanner` scans.
    pub fn start(link: PathBuf, scanner: SerialSim) -> io::Result<Self> {
        let (mut input, terminal) = TTYPort::pair()?;
        let path = terminal
            .name()
            .ok_or_else(|| io::Error::other("pseudo-terminal without a name"))?;
        input.set_timeout(TICK)?;
        // The link of an earlier run points at a terminal that is gone.
        match std::fs::remove_file(&link) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        std::os::unix::fs::symlink(&path, &link)?;
        let scanner_port = scanner.path().to_owned();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("demo scanner trigger".into())
            .spawn({
                let stop = Arc::clone(&stop);
                // The terminal side stays open here, so that the other side
                // keeps reading while writers come and go.
                move || pass_lines(input, terminal, scanner, &stop)
            })?;
        Ok(Self {
            link,
            scanner_port,
            stop,
            thread: Some(thread),
        })
    }

    /// The link to write lines to.
    pub fn path(&self) -> &Path {
        &self.link
    }

    /// The port the edge reads the scanner on.
    pub fn scanner_port(&self) -> &str {
        &self.scanner_port
    }
}

impl Drop for Trigger {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::warn!("the demo's scanner trigger panicked");
            }
        }
        if let Err(error) = std::fs::remove_file(&self.link) {
            tracing::debug!(%error, link = %self.link.display(), "cannot remove the scanner's trigger");
        }
    }
}

fn pass_lines(mut input: TTYPort, _terminal: TTYPort, mut scanner: SerialSim, stop: &AtomicBool) {
    let mut lines = Lines::default();
    let mut buf = [0_u8; 256];
    while !stop.load(Ordering::Relaxed) {
        let n = match input.read(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) =>
            {
                continue;
            }
            Err(error) => {
                tracing::debug!(%error, "the demo's scanner trigger cannot read");
                std::thread::sleep(TICK);
                continue;
            }
        };
        for code in lines.feed(&buf[..n]) {
            if let Err(error) = scanner.scan(&code, None, LineEnding::CrLf) {
                tracing::warn!(%error, %code, "the simulated scanner cannot send a scan");
            }
        }
    }
}

/// Splits what is written into codes: one per line (LF, CR or both),
/// trimmed, empty lines skipped.
#[derive(Debug, Default)]
struct Lines {
    line: Vec<u8>,
    overlong: bool,
}

impl Lines {
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut codes = Vec::new();
        for &b in bytes {
            if b != b'\n' && b != b'\r' {
                if self.line.len() < MAX_LINE {
                    self.line.push(b);
                } else {
                    self.overlong = true;
                }
                continue;
            }
            let code = String::from_utf8_lossy(&self.line).trim().to_owned();
            if std::mem::take(&mut self.overlong) {
                tracing::warn!(
                    "a line over {MAX_LINE} bytes written to the scanner's trigger: dropped"
                );
            } else if !code.is_empty() {
                codes.push(code);
            }
            self.line.clear();
        }
        codes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_codes_whatever_their_ending() {
        let mut lines = Lines::default();
        assert_eq!(
            lines.feed(b"DEMO-001\n2000000000015\r\n\n  "),
            ["DEMO-001", "2000000000015"]
        );
        assert_eq!(lines.feed(b"DEMO-002 \r"), ["DEMO-002"]);
        let long = vec![b'x'; MAX_LINE + 1];
        assert!(lines.feed(&long).is_empty());
        assert_eq!(lines.feed(b"\nDEMO-003\n"), ["DEMO-003"]);
    }
}
