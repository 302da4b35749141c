//! The registry task: enumerates the bus every couple of seconds, opens the
//! devices that are configured scanners, follows them across unplug and
//! replug, and publishes which scanners are connected.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::MissedTickBehavior;

use super::bus::{DeviceBus, DeviceError, ReportSource};
use super::reader::{Decoder, Exit, Reader};
use super::{ScannerMatch, bind, validate};
use crate::scanner::{ConfigError, Connection, DeviceId, Scan};

#[derive(Clone, Debug)]
pub struct RegistryOptions {
    /// How often the bus is enumerated: the delay before a plugged-in
    /// scanner is picked up.
    pub rescan_every: Duration,
    /// The longest a device read blocks, so a reader notices promptly that
    /// it is told to stop.
    pub read_slice: Duration,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self {
            rescan_every: Duration::from_secs(2),
            read_slice: Duration::from_millis(100),
        }
    }
}

/// The HID bus as the last enumeration found it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BusState {
    /// Not enumerated yet.
    #[default]
    Starting,
    Ready,
    /// Enumeration works but found no HID device at all.
    NoDevices,
    /// Enumeration fails (no HID subsystem, no permission); retried.
    Unavailable {
        reason: String,
    },
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryStatus {
    pub bus: BusState,
    /// Every configured scanner, by name.
    pub scanners: BTreeMap<String, Connection>,
}

impl RegistryStatus {
    pub fn is_connected(&self, scanner: &str) -> bool {
        self.scanners
            .get(scanner)
            .is_some_and(Connection::is_connected)
    }
}

/// Runs the registry until `shutdown` resolves or `scans` has no receiver.
/// Scans go to `scans` tagged with the scanner's configured name; `status`
/// always holds every configured scanner's connection. Fails only on an
/// invalid configuration: a missing or broken HID subsystem is a
/// [`BusState`], retried at every rescan.
pub async fn run<B: DeviceBus>(
    scanners: Vec<ScannerMatch>,
    bus: B,
    mut options: RegistryOptions,
    scans: mpsc::Sender<Scan>,
    status: watch::Sender<RegistryStatus>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ConfigError> {
    validate(&scanners)?;
    // `interval` panics on a zero period, and a zero read slice would spin.
    options.rescan_every = options.rescan_every.max(Duration::from_millis(1));
    options.read_slice = options.read_slice.max(Duration::from_millis(1));
    let (exits_tx, mut exits) = mpsc::unbounded_channel();
    status.send_replace(RegistryStatus {
        bus: BusState::Starting,
        scanners: scanners
            .iter()
            .map(|s| (s.name.clone(), Connection::Disconnected { reason: None }))
            .collect(),
    });
    let mut registry = Registry {
        scanners: scanners.into(),
        bus: Arc::new(Mutex::new(bus)),
        options,
        scans: scans.clone(),
        status,
        exits: exits_tx,
        open: HashMap::new(),
        generation: 0,
        first_rescan: true,
    };

    let mut tick = tokio::time::interval(registry.options.rescan_every);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = scans.closed() => break,
            _ = tick.tick() => registry.rescan().await,
            Some(exited) = exits.recv() => registry.reader_exited(exited),
        }
    }
    registry.stop_all().await;
    Ok(())
}

struct Open {
    path: String,
    generation: u64,
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<()>,
}

struct Exited {
    scanner: usize,
    generation: u64,
    exit: Exit,
}

/// What one enumeration found, computed on a blocking thread.
struct Rescan {
    devices: Result<usize, DeviceError>,
    /// Per configured scanner, the path of the device that is it.
    bound: Vec<Option<String>>,
    /// Devices that are configured scanners not yet open at that path.
    opened: Vec<Opened>,
}

struct Opened {
    scanner: usize,
    path: String,
    source: Result<Box<dyn ReportSource>, DeviceError>,
}

struct Registry<B> {
    scanners: Arc<[ScannerMatch]>,
    bus: Arc<Mutex<B>>,
    options: RegistryOptions,
    scans: mpsc::Sender<Scan>,
    status: watch::Sender<RegistryStatus>,
    exits: mpsc::UnboundedSender<Exited>,
    /// Readers running, by index in `scanners`.
    open: HashMap<usize, Open>,
    generation: u64,
    first_rescan: bool,
}

impl<B: DeviceBus> Registry<B> {
    async fn rescan(&mut self) {
        let bus = Arc::clone(&self.bus);
        let scanners = Arc::clone(&self.scanners);
        let open: Vec<Option<String>> = (0..scanners.len())
            .map(|i| self.open.get(&i).map(|o| o.path.clone()))
            .collect();
        let rescan =
            match tokio::task::spawn_blocking(move || enumerate(&bus, &scanners, &open)).await {
                Ok(rescan) => rescan,
                Err(err) => {
                    tracing::error!("HID enumeration panicked: {err}");
                    self.set_bus(BusState::Unavailable {
                        reason: "enumeration panicked".into(),
                    });
                    return;
                }
            };
        match rescan.devices {
            Err(err) => {
                self.set_bus(BusState::Unavailable {
                    reason: err.to_string(),
                });
                return;
            }
            Ok(0) => self.set_bus(BusState::NoDevices),
            Ok(_) => self.set_bus(BusState::Ready),
        }

        // Readers whose device is gone (or now serves another scanner).
        let gone: Vec<usize> = self
            .open
            .iter()
            .filter(|(i, open)| rescan.bound[**i].as_deref() != Some(open.path.as_str()))
            .map(|(i, _)| *i)
            .collect();
        for index in gone {
            if let Some(open) = self.open.remove(&index) {
                open.stop.store(true, Ordering::Relaxed);
            }
            self.set_scanner(index, Connection::Disconnected { reason: None });
        }

        for Opened {
            scanner: index,
            path,
            source,
        } in rescan.opened
        {
            match source.map(|source| self.start_reader(index, &path, source)) {
                Ok(Ok(())) => self.set_scanner(index, Connection::Connected { device: path }),
                Ok(Err(err)) => self.set_scanner(
                    index,
                    Connection::Disconnected {
                        reason: Some(format!("cannot start a reader thread: {err}")),
                    },
                ),
                Err(err) => self.set_scanner(
                    index,
                    Connection::Disconnected {
                        reason: Some(err.to_string()),
                    },
                ),
            }
        }

        for (index, bound) in rescan.bound.iter().enumerate() {
            if bound.is_none() && !self.open.contains_key(&index) {
                if self.first_rescan {
                    let s = &self.scanners[index];
                    tracing::warn!(
                        scanner = %s.name,
                        "scanner {:04x}:{:04x} not present; waiting for it to be plugged in",
                        s.vendor_id,
                        s.product_id
                    );
                }
                self.set_scanner(index, Connection::Disconnected { reason: None });
            }
        }
        self.first_rescan = false;
    }

    fn start_reader(
        &mut self,
        index: usize,
        path: &str,
        source: Box<dyn ReportSource>,
    ) -> std::io::Result<()> {
        let scanner = &self.scanners[index];
        self.generation += 1;
        let generation = self.generation;
        let stop = Arc::new(AtomicBool::new(false));
        let reader = Reader {
            device: DeviceId::new(scanner.name.clone()),
            source,
            decoder: Decoder::for_mode(&scanner.mode),
            scans: self.scans.clone(),
            stop: Arc::clone(&stop),
            slice: self.options.read_slice,
        };
        let exits = self.exits.clone();
        let thread = thread::Builder::new()
            .name(format!("scanner {}", scanner.name))
            .spawn(move || {
                let exit = reader.run();
                // The registry may have finished already; nothing to tell.
                let _ = exits.send(Exited {
                    scanner: index,
                    generation,
                    exit,
                });
            })?;
        self.open.insert(
            index,
            Open {
                path: path.to_owned(),
                generation,
                stop,
                thread,
            },
        );
        Ok(())
    }

    fn reader_exited(&mut self, exited: Exited) {
        if self
            .open
            .get(&exited.scanner)
            .is_none_or(|open| open.generation != exited.generation)
        {
            return;
        }
        self.open.remove(&exited.scanner);
        let reason = match exited.exit {
            Exit::Failed(err) => Some(err.to_string()),
            Exit::Stopped | Exit::ScansClosed => None,
        };
        self.set_scanner(exited.scanner, Connection::Disconnected { reason });
    }

    async fn stop_all(&mut self) {
        let threads: Vec<_> = self
            .open
            .drain()
            .map(|(_, open)| {
                open.stop.store(true, Ordering::Relaxed);
                open.thread
            })
            .collect();
        let joined = tokio::task::spawn_blocking(move || {
            for thread in threads {
                if thread.join().is_err() {
                    tracing::error!("a scanner reader thread panicked");
                }
            }
        })
        .await;
        if let Err(err) = joined {
            tracing::error!("joining scanner readers failed: {err}");
        }
    }

    fn set_bus(&self, bus: BusState) {
        self.status.send_if_modified(|status| {
            if status.bus == bus {
                return false;
            }
            match &bus {
                BusState::Unavailable { reason } => {
                    tracing::warn!("HID scanners unavailable: {reason}");
                }
                BusState::NoDevices => {
                    tracing::warn!("no HID device present; scanners are picked up when plugged in");
                }
                BusState::Ready | BusState::Starting => tracing::debug!("HID bus ready"),
            }
            status.bus = bus;
            true
        });
    }

    fn set_scanner(&self, index: usize, connection: Connection) {
        let name = &self.scanners[index].name;
        self.status.send_if_modified(|status| {
            let Some(current) = status.scanners.get_mut(name) else {
                return false;
            };
            if *current == connection {
                return false;
            }
            match &connection {
                Connection::Connected { device } => {
                    tracing::info!(scanner = %name, "scanner connected at {device}");
                }
                Connection::Disconnected {
                    reason: Some(reason),
                } => {
                    tracing::warn!(scanner = %name, "scanner disconnected: {reason}");
                }
                Connection::Disconnected { reason: None } => {
                    tracing::info!(scanner = %name, "scanner unplugged");
                }
            }
            *current = connection;
            true
        });
    }
}

fn enumerate<B: DeviceBus>(
    bus: &Mutex<B>,
    scanners: &[ScannerMatch],
    open: &[Option<String>],
) -> Rescan {
    // A panic inside a bus call leaves no state this code relies on.
    let mut bus = bus.lock().unwrap_or_else(PoisonError::into_inner);
    let mut bound = vec![None; scanners.len()];
    let devices = match bus.enumerate() {
        Ok(devices) => devices,
        Err(err) => {
            return Rescan {
                devices: Err(err),
                bound,
                opened: Vec::new(),
            };
        }
    };
    let mut opened = Vec::new();
    for binding in bind(scanners, &devices) {
        let Some(index) = scanners
            .iter()
            .position(|s| std::ptr::eq(s, binding.scanner))
        else {
            continue;
        };
        let path = binding.device.path.clone();
        if open[index].as_deref() != Some(path.as_str()) {
            opened.push(Opened {
                scanner: index,
                path: path.clone(),
                source: bus.open(binding.device),
            });
        }
        bound[index] = Some(path);
    }
    Rescan {
        devices: Ok(devices.len()),
        bound,
        opened,
    }
}
