//! A printer behind a character device (`/dev/usb/lp0`).
//!
//! Device files have no readiness notification tokio could use, so, like
//! `tokio::fs`, this uses blocking threads: writes go to the blocking pool,
//! and one reader thread per open device forwards what the printer sends.
//! The device stays open across the driver's connections: a second open
//! file would mean a second reader, and whichever read first would take the
//! other's `~HS` answer. Each connection gets its own channel; the reader
//! sends to the current one, so bytes never reach a connection that
//! already ended. The device is opened again only once its reader has
//! failed (a printer unplugged); a reader blocked in `read` ends at the
//! printer's next output after the device is dropped.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::mpsc;

use super::Incoming;

/// How long the reader waits after a read found nothing (a printer without
/// a back channel returns no data rather than blocking).
const EMPTY_READ_PAUSE: Duration = Duration::from_millis(100);

type Sink = Arc<Mutex<Option<mpsc::UnboundedSender<Incoming>>>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Open {
    file: Arc<File>,
    sink: Sink,
    /// Cleared by the reader when it fails: the device must be reopened.
    reader_alive: Arc<AtomicBool>,
    /// Set when the device is dropped: the reader stops after its next read.
    stop: Arc<AtomicBool>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

#[derive(Clone)]
pub(crate) struct Device {
    path: PathBuf,
    open: Arc<Mutex<Option<Open>>>,
}

impl Device {
    pub(super) fn new(path: PathBuf) -> Self {
        Self {
            path,
            open: Arc::new(Mutex::new(None)),
        }
    }

    /// A fresh channel of the device's output, and the file to write to.
    pub(super) async fn connect(
        &self,
    ) -> io::Result<(mpsc::UnboundedReceiver<Incoming>, Arc<File>)> {
        let usable = lock(&self.open)
            .as_ref()
            .is_some_and(|open| open.reader_alive.load(Ordering::Acquire));
        if !usable {
            let path = self.path.clone();
            let file = tokio::task::spawn_blocking(move || {
                OpenOptions::new().read(true).write(true).open(path)
            })
            .await
            .map_err(io::Error::other)??;
            let open = Open {
                file: Arc::new(file),
                sink: Arc::new(Mutex::new(None)),
                reader_alive: Arc::new(AtomicBool::new(true)),
                stop: Arc::new(AtomicBool::new(false)),
            };
            let reader = Reader {
                file: Arc::clone(&open.file),
                sink: Arc::clone(&open.sink),
                alive: Arc::clone(&open.reader_alive),
                stop: Arc::clone(&open.stop),
            };
            std::thread::Builder::new()
                .name("printer-device-reader".into())
                .spawn(move || reader.run())?;
            *lock(&self.open) = Some(open);
        }
        let guard = lock(&self.open);
        let open = guard
            .as_ref()
            .ok_or_else(|| io::Error::other("the printer device was closed while opening"))?;
        let (sender, receiver) = mpsc::unbounded_channel();
        *lock(&open.sink) = Some(sender);
        Ok((receiver, Arc::clone(&open.file)))
    }
}

struct Reader {
    file: Arc<File>,
    sink: Sink,
    alive: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Reader {
    fn run(self) {
        let mut buf = vec![0; 4096];
        while !self.stop.load(Ordering::Acquire) {
            match (&*self.file).read(&mut buf) {
                Ok(0) => std::thread::sleep(EMPTY_READ_PAUSE),
                Ok(n) => {
                    if let Some(sink) = lock(&self.sink).as_ref() {
                        // The connection may have ended: its bytes go nowhere.
                        let _ = sink.send(Incoming::Data(buf[..n].to_vec()));
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    self.alive.store(false, Ordering::Release);
                    if let Some(sink) = lock(&self.sink).take() {
                        let _ = sink.send(Incoming::Error(error));
                    }
                    return;
                }
            }
        }
    }
}

/// Writes on the blocking pool; the kernel driver taking the bytes is all
/// the acknowledgement a device gives.
pub(super) async fn write(file: &Arc<File>, data: Vec<u8>) -> io::Result<()> {
    let file = Arc::clone(file);
    tokio::task::spawn_blocking(move || {
        let mut file = &*file;
        file.write_all(&data)?;
        file.flush()
    })
    .await
    .map_err(io::Error::other)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_reach_the_file_and_the_device_is_reused() {
        let path =
            std::env::temp_dir().join(format!("depot-printer-device-{}", std::process::id()));
        std::fs::write(&path, b"").expect("temp file");
        let device = Device::new(path.clone());
        let (_first, file) = device.connect().await.expect("opens");
        write(&file, b"^XA^XZ".to_vec()).await.expect("writes");
        let (_second, again) = device.connect().await.expect("reuses");
        assert!(Arc::ptr_eq(&file, &again));
        assert_eq!(std::fs::read(&path).expect("readable"), b"^XA^XZ");
        drop(device);
        let _ = std::fs::remove_file(path);
    }

    #[tokio::test]
    async fn a_missing_device_is_an_error() {
        let device = Device::new("/nonexistent/depot/lp9".into());
        assert!(device.connect().await.is_err());
    }
}
