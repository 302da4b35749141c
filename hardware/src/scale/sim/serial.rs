//! Serial scales on a pseudo-terminal.
//!
//! The driver opens the terminal side by its path, exactly as it opens
//! `/dev/ttyUSB0`; the simulator answers on the controlling side from a
//! plain thread with blocking reads, so it runs the same under any test
//! runtime (or none).

use std::{
    io::{self, Read, Write},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use serialport::{SerialPort, TTYPort};

use crate::scale::{
    Unit, Weight,
    cas::{self, Header},
    framer::Framer,
    sics::{self, Command as Sics},
    toledo::{self, Command as Toledo, Status},
};

/// How often the simulator thread looks up from a quiet line.
const TICK: Duration = Duration::from_millis(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimProtocol {
    MtSics,
    /// Answers `W`, `S` and `Z`; sends no unit (the driver is told).
    Toledo8217,
    /// Streams a frame every `interval`.
    Cas {
        interval: Duration,
    },
}

#[derive(Debug)]
struct Scale {
    gross: Weight,
    /// Gross weight at the last zero.
    zero: Weight,
    tare: Weight,
    unit: Unit,
    stable: bool,
    overload: bool,
    delay: Duration,
    garbage: bool,
    silent: bool,
}

impl Scale {
    /// What the display shows; on arithmetic overflow (absurd weights set by
    /// a test), the gross weight.
    fn net(&self) -> Weight {
        self.gross
            .checked_sub(self.zero)
            .and_then(|w| w.checked_sub(self.tare))
            .unwrap_or(self.gross)
    }

    fn at_zero(&self) -> bool {
        self.net().value() == 0
    }

    fn sics(&mut self, command: Option<Sics>) -> Vec<u8> {
        let line = |text: &str| format!("{text}\r\n").into_bytes();
        match command {
            None => line("ES"),
            Some(Sics::WeighImmediately | Sics::WeighStable) if self.overload => line("S +"),
            Some(Sics::WeighImmediately) => sics::value_line(
                if self.stable { "S S" } else { "S D" },
                self.net(),
                self.unit,
            ),
            Some(Sics::WeighStable) if self.stable => {
                sics::value_line("S S", self.net(), self.unit)
            }
            Some(Sics::WeighStable) => line("S I"),
            Some(Sics::Zero) if !self.stable || self.overload => line("Z I"),
            Some(Sics::Zero) => {
                self.zero = self.gross;
                self.tare = Weight::ZERO;
                line("Z A")
            }
            Some(Sics::Tare) if !self.stable || self.overload => line("T I"),
            Some(Sics::Tare) => {
                self.tare = self.gross.checked_sub(self.zero).unwrap_or(self.gross);
                sics::value_line("T S", self.tare, self.unit)
            }
            Some(Sics::TareQuery) => sics::value_line("TA A", self.tare, self.unit),
            Some(Sics::TareClear) => {
                self.tare = Weight::ZERO;
                line("TAC A")
            }
            Some(Sics::SerialNumber) => line("I4 A \"0123456789\""),
        }
    }

    fn toledo_status(&self) -> Status {
        let flag = |on: bool, flag: u8| if on { flag } else { 0 };
        Status::from_flags(
            flag(!self.stable, Status::MOTION)
                | flag(self.overload, Status::OVER_CAPACITY)
                | flag(self.net().is_negative(), Status::UNDER_ZERO)
                | flag(self.at_zero(), Status::CENTER_OF_ZERO),
        )
    }

    fn toledo(&mut self, command: Option<Toledo>) -> Vec<u8> {
        match command {
            Some(Toledo::Weigh) if self.stable && !self.overload => {
                toledo::encode_weight(self.net())
                    .unwrap_or_else(|_| toledo::encode_status(self.toledo_status()))
            }
            Some(Toledo::Zero) if self.stable && !self.overload => {
                self.zero = self.gross;
                toledo::encode_status(self.toledo_status())
            }
            // Unknown commands get the status too, as on real scales.
            _ => toledo::encode_status(self.toledo_status()),
        }
    }

    fn cas(&self) -> Vec<u8> {
        let header = if self.overload {
            Header::Overload
        } else if self.stable {
            Header::Stable
        } else {
            Header::Unstable
        };
        cas::encode(&cas::Frame {
            header,
            net: self.tare.value() != 0,
            weight: self.net(),
            unit: self.unit,
        })
    }
}

/// A simulated serial scale. Dropping it unplugs it: the port goes away
/// under the driver.
#[derive(Debug)]
pub struct SerialScaleSim {
    path: String,
    scale: Arc<Mutex<Scale>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SerialScaleSim {
    /// A scale showing 0 in `unit`, stable, answering at once.
    pub fn start(protocol: SimProtocol, unit: Unit) -> io::Result<Self> {
        let (mut master, slave) = TTYPort::pair()?;
        let path = slave
            .name()
            .ok_or_else(|| io::Error::other("pseudo-terminal without a name"))?;
        master.set_timeout(TICK)?;
        let zero = Weight::ZERO;
        let scale = Arc::new(Mutex::new(Scale {
            gross: zero,
            zero,
            tare: zero,
            unit,
            stable: true,
            overload: false,
            delay: Duration::ZERO,
            garbage: false,
            silent: false,
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name(format!("scale-sim {path}"))
            .spawn({
                let (scale, stop) = (scale.clone(), stop.clone());
                // The terminal side stays open here too, so that the controlling
                // side keeps working while the driver closes and reopens it.
                move || serve(master, slave, protocol, &scale, &stop)
            })?;
        Ok(Self {
            path,
            scale,
            stop,
            thread: Some(thread),
        })
    }

    /// The device path for the driver.
    pub fn path(&self) -> &str {
        &self.path
    }

    fn with<T>(&self, change: impl FnOnce(&mut Scale) -> T) -> T {
        change(&mut self.scale.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The load on the pan.
    pub fn set_weight(&self, gross: Weight) {
        self.with(|s| s.gross = gross);
    }

    /// `false`: in motion (MT-SICS `S D`, 8217 motion status, CAS `US`).
    pub fn set_stable(&self, stable: bool) {
        self.with(|s| s.stable = stable);
    }

    pub fn set_overload(&self, overload: bool) {
        self.with(|s| s.overload = overload);
    }

    /// Waits this long before each answer.
    pub fn set_delay(&self, delay: Duration) {
        self.with(|s| s.delay = delay);
    }

    /// Answers with noise instead of frames.
    pub fn set_garbage(&self, garbage: bool) {
        self.with(|s| s.garbage = garbage);
    }

    /// Reads commands but answers (or streams) nothing.
    pub fn set_silent(&self, silent: bool) {
        self.with(|s| s.silent = silent);
    }
}

impl Drop for SerialScaleSim {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::warn!(path = %self.path, "scale simulator thread panicked");
            }
        }
    }
}

fn serve(
    mut port: TTYPort,
    _terminal: TTYPort,
    protocol: SimProtocol,
    scale: &Mutex<Scale>,
    stop: &AtomicBool,
) {
    let mut commands = Framer::lines(64);
    let mut buf = [0_u8; 64];
    let mut next_frame = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let received = match port.read(&mut buf) {
            Ok(n) => &buf[..n],
            Err(error)
                if matches!(
                    error.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) =>
            {
                &[]
            }
            Err(error) => {
                tracing::debug!(%error, "scale simulator read failed");
                std::thread::sleep(TICK);
                &[]
            }
        };
        for byte in received {
            let answer = match protocol {
                SimProtocol::MtSics => match commands.push(*byte) {
                    Some(line) => {
                        let command = line.ok().and_then(|line| Sics::parse(&line));
                        lock(scale).sics(command)
                    }
                    None => continue,
                },
                SimProtocol::Toledo8217 => lock(scale).toledo(Toledo::parse(*byte)),
                SimProtocol::Cas { .. } => continue,
            };
            send(&mut port, answer, protocol, scale);
        }
        if let SimProtocol::Cas { interval } = protocol {
            if Instant::now() >= next_frame {
                next_frame = Instant::now() + interval;
                let frame = lock(scale).cas();
                send(&mut port, frame, protocol, scale);
            }
        }
    }
}

fn lock(scale: &Mutex<Scale>) -> std::sync::MutexGuard<'_, Scale> {
    scale.lock().unwrap_or_else(PoisonError::into_inner)
}

fn send(port: &mut TTYPort, answer: Vec<u8>, protocol: SimProtocol, scale: &Mutex<Scale>) {
    let (delay, garbage, silent) = {
        let scale = lock(scale);
        (scale.delay, scale.garbage, scale.silent)
    };
    if silent {
        return;
    }
    std::thread::sleep(delay);
    let bytes = if garbage {
        // Noise shaped like each protocol's frames, so that it reaches the
        // decoder instead of being skipped as line noise.
        match protocol {
            SimProtocol::MtSics => b"\xfe\x00#?!garbage\r\n".to_vec(),
            SimProtocol::Toledo8217 => b"\x02#!garbage\r".to_vec(),
            SimProtocol::Cas { .. } => b"ST,GS,#?!garbage\r\n".to_vec(),
        }
    } else {
        answer
    };
    if let Err(error) = port.write_all(&bytes).and_then(|()| port.flush()) {
        tracing::debug!(%error, "scale simulator write failed");
    }
}
