//! The demo's label printer: a simulated Zebra behind a tap. The edge's
//! spooler connects to the tap, which passes every byte on to the
//! simulator, and the simulator's answers back, unchanged, and keeps each
//! complete format (`^XA`…`^XZ`) the edge sends. Once the simulator has
//! printed it, the format is saved as `NNNN.zpl` and announced with the
//! tracking number the simulator read on it.

use super::Announce;
use depot_hardware::printer::sim::{FieldKind, Simulator};
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long the simulator may take to print a format it was sent: it
/// prints as it reads, unless someone took its paper out.
const PRINT_WAIT: Duration = Duration::from_secs(5);
/// Bytes without a `^XZ` after which a format is given up: the edge's
/// jobs are at most 128 KiB.
const MAX_FORMAT: usize = 1 << 20;
/// Formats on their way to be saved.
const BACKLOG: usize = 64;

/// The printer, running; dropping it stops the tap and the simulator.
pub struct LabelPrinter {
    addr: SocketAddr,
    dir: PathBuf,
    accept: JoinHandle<()>,
    clerk: JoinHandle<()>,
}

impl LabelPrinter {
    /// Taps `sim` on a free loopback port; labels are saved in `dir`,
    /// numbered after those an earlier run saved there.
    pub async fn start(
        sim: Simulator,
        dir: PathBuf,
        name: &str,
        announce: Announce,
    ) -> io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        let next = last_number(&dir)? + 1;
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (formats, received) = mpsc::channel(BACKLOG);
        let accept = tokio::spawn(accept(listener, sim.addr(), formats));
        let clerk = Clerk {
            sim,
            dir: dir.clone(),
            name: name.to_owned(),
            announce,
            next,
            sent: 0,
        };
        let clerk = tokio::spawn(clerk.run(received));
        Ok(Self {
            addr,
            dir,
            accept,
            clerk,
        })
    }

    /// Where the edge prints.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for LabelPrinter {
    fn drop(&mut self) {
        self.accept.abort();
        self.clerk.abort();
    }
}

/// The highest `NNNN.zpl` in `dir`, 0 if none.
fn last_number(dir: &Path) -> io::Result<u32> {
    let mut last = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "zpl") {
            let n = path.file_stem().and_then(|s| s.to_str()?.parse().ok());
            last = last.max(n.unwrap_or(0));
        }
    }
    Ok(last)
}

async fn accept(listener: TcpListener, printer: SocketAddr, formats: mpsc::Sender<Vec<u8>>) {
    loop {
        match listener.accept().await {
            Ok((edge, _)) => {
                tokio::spawn(relay(edge, printer, formats.clone()));
            }
            Err(error) => {
                // Out of file descriptors, typically: give the connections
                // holding them a moment instead of spinning.
                tracing::warn!(%error, "the demo's printer tap: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// One connection of the edge's, passed through to the simulator.
async fn relay(edge: TcpStream, printer: SocketAddr, formats: mpsc::Sender<Vec<u8>>) {
    let printer = match TcpStream::connect(printer).await {
        Ok(printer) => printer,
        Err(error) => {
            // The edge's connection drops with this task: its spooler
            // retries, as with a printer that is off.
            tracing::warn!(%error, "the demo's printer tap cannot reach the simulator");
            return;
        }
    };
    let (mut from_edge, mut to_edge) = edge.into_split();
    let (mut from_printer, mut to_printer) = printer.into_split();
    // The printer's close goes back too: it tells the edge a job is printed.
    let answers = async move {
        let _ = tokio::io::copy(&mut from_printer, &mut to_edge).await;
        let _ = to_edge.shutdown().await;
    };
    let jobs = async move {
        let mut cutter = Formats::default();
        let mut buf = vec![0; 8192];
        while let Ok(n @ 1..) = from_edge.read(&mut buf).await {
            if to_printer.write_all(&buf[..n]).await.is_err() {
                break;
            }
            for format in cutter.feed(&buf[..n]) {
                // Refused only once the clerk has stopped: the demo is ending.
                let _ = formats.send(format).await;
            }
        }
        // The edge is done: the printer reads to the end and closes.
        let _ = to_printer.shutdown().await;
    };
    tokio::join!(answers, jobs);
}

/// Cuts the byte stream the edge sends into formats, dropping the status
/// queries (`~HS`) between them. A plain search is enough: the edge's
/// renderer escapes every `^` in field data.
#[derive(Debug, Default)]
struct Formats {
    pending: Vec<u8>,
}

impl Formats {
    /// Takes the next bytes; returns the formats they complete.
    fn feed(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.pending.extend_from_slice(bytes);
        let mut done = Vec::new();
        loop {
            let Some(start) = find(&self.pending, b"^XA") else {
                // What could be the start of a `^XA` cut by the chunk.
                let keep = self.pending.len().min(2);
                self.pending.drain(..self.pending.len() - keep);
                break;
            };
            self.pending.drain(..start);
            let Some(end) = find(&self.pending[3..], b"^XZ") else {
                if self.pending.len() > MAX_FORMAT {
                    self.pending.clear();
                }
                break;
            };
            done.push(self.pending.drain(..end + 6).collect());
        }
        done
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Saves and announces the formats, in the order they were sent.
struct Clerk {
    sim: Simulator,
    dir: PathBuf,
    name: String,
    announce: Announce,
    next: u32,
    /// Formats sent to the simulator since it started.
    sent: usize,
}

impl Clerk {
    async fn run(mut self, mut formats: mpsc::Receiver<Vec<u8>>) {
        while let Some(zpl) = formats.recv().await {
            self.file(&zpl).await;
        }
    }

    async fn file(&mut self, zpl: &[u8]) {
        self.sent += 1;
        let n = self.next;
        self.next += 1;
        let path = self.dir.join(format!("{n:04}.zpl"));
        // With the newline the edge ends each format with (the cutter
        // stops at `^XZ`), so that the file reads whole in a terminal.
        let zpl = [zpl, b"\n"].concat();
        // A few KiB to a local disk: not worth a blocking thread.
        let saved = match std::fs::write(&path, &zpl) {
            Ok(()) => format!("saved as {}", path.display()),
            Err(error) => format!("not saved as {}: {error}", path.display()),
        };
        let bytes = thousands(zpl.len());
        let line = match self.sim.wait_for_labels(self.sent, PRINT_WAIT).await {
            Ok(labels) => {
                // The shipping label's one barcode is its tracking number.
                let tracking = labels
                    .get(self.sent - 1)
                    .and_then(|l| l.fields_of(&FieldKind::Code128).first().copied())
                    .unwrap_or("(no barcode)");
                format!(
                    "label {n} printed by the simulated printer {}: {bytes} bytes of ZPL, tracking {tracking}, {saved}",
                    self.name
                )
            }
            Err(error) => format!(
                "label {n} sent to the simulated printer {} but not printed ({error}): {bytes} bytes of ZPL, {saved}",
                self.name
            ),
        };
        (self.announce)(line);
    }
}

/// 1234567 as "1,234,567".
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() * 4 / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_cut_out_of_the_stream_whatever_the_chunks() {
        let stream = b"~HS~HQES^XA^FO1,1^FDone^FS^XZ\n~HS^XA^FDtwo^FS^XZ\n^XA^FDthree";
        let expected: Vec<&[u8]> = vec![b"^XA^FO1,1^FDone^FS^XZ", b"^XA^FDtwo^FS^XZ"];
        for size in [1, 2, 3, 5, stream.len()] {
            let mut cutter = Formats::default();
            let got: Vec<Vec<u8>> = stream
                .chunks(size)
                .flat_map(|chunk| cutter.feed(chunk))
                .collect();
            assert_eq!(got, expected, "chunks of {size}");
            assert_eq!(cutter.feed(b"^FS^XZ"), vec![b"^XA^FDthree^FS^XZ".to_vec()]);
        }
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234), "1,234");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn labels_are_numbered_after_the_last_saved() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(last_number(dir.path()).expect("read"), 0);
        for name in ["0002.zpl", "0010.zpl", "notes.txt", "x.zpl"] {
            std::fs::write(dir.path().join(name), b"").expect("write");
        }
        assert_eq!(last_number(dir.path()).expect("read"), 10);
    }
}
