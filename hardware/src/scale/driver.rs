//! The task that owns a serial scale's port.

use std::{collections::VecDeque, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::{mpsc, watch},
    time::{Instant, sleep_until, timeout},
};
use tokio_serial::SerialStream;

use super::{
    Reading, ScaleError, ScaleState, SerialProtocol, SerialScaleConfig,
    cas::{self, Header},
    link::{Link, Op, Outcome, SicsLink, ToledoLink},
    task::{Request, pause, publish},
};

enum Exit {
    /// Every handle is gone.
    Stop,
    /// The port failed or the device vanished: reopen it.
    Lost(ScaleError),
}

fn lost(error: std::io::Error) -> Exit {
    Exit::Lost(ScaleError::Disconnected(error.to_string()))
}

/// Opens the port, drives the protocol until the port fails, and reopens
/// it with backoff, until the last handle is dropped.
pub(crate) async fn run(
    config: SerialScaleConfig,
    state: watch::Sender<ScaleState>,
    mut requests: mpsc::Receiver<Request>,
) {
    let name = format!("{} on {}", config.protocol.name(), config.port.path);
    let mut delay = config.reconnect.initial;
    loop {
        let error = match config.port.open() {
            Ok(mut port) => {
                tracing::info!(scale = %name, "serial port open");
                delay = config.reconnect.initial;
                let exit = match config.protocol {
                    SerialProtocol::MtSics => {
                        let mut link = SicsLink::default();
                        polled(&mut port, &mut link, &config, &state, &mut requests, &name).await
                    }
                    SerialProtocol::Toledo8217 { unit } => {
                        let mut link = ToledoLink::new(unit);
                        polled(&mut port, &mut link, &config, &state, &mut requests, &name).await
                    }
                    SerialProtocol::Cas => {
                        streamed(&mut port, &config, &state, &mut requests, &name).await
                    }
                };
                match exit {
                    Exit::Stop => return,
                    Exit::Lost(error) => error,
                }
            }
            Err(error) => error,
        };
        publish(&state, ScaleState::fault(error.clone()), &name);
        if !pause(&mut requests, delay, &error).await {
            return;
        }
        delay = config.reconnect.next(delay);
    }
}

/// A scale that answers commands: poll its weight, and pass on zero and
/// tare between polls (one command on the line at a time).
async fn polled(
    port: &mut SerialStream,
    link: &mut impl Link,
    config: &SerialScaleConfig,
    state: &watch::Sender<ScaleState>,
    requests: &mut mpsc::Receiver<Request>,
    name: &str,
) -> Exit {
    let mut queued = VecDeque::new();
    let mut in_flight: Option<Request> = None;
    let mut next_poll = Instant::now();
    let mut buf = [0_u8; 256];
    let exit = loop {
        let now = Instant::now();
        if link.is_idle() {
            // Commands first: a station waiting on tare matters more than
            // one more reading.
            let next = match queued.pop_front() {
                Some(request) => Some((now + config.command_timeout, Some(request))),
                None if now >= next_poll => {
                    next_poll = now + config.poll_interval;
                    Some((now + config.reply_timeout, None))
                }
                None => None,
            };
            if let Some((deadline, request)) = next {
                let op = request.as_ref().map_or(Op::Poll, Request::op);
                match link.send(op, deadline.into_std()) {
                    Ok(bytes) => {
                        in_flight = request;
                        if let Err(exit) = write(port, &bytes, config.reply_timeout, op).await {
                            break exit;
                        }
                    }
                    Err(error) => match request {
                        Some(request) => request.fail(error),
                        None => publish(state, ScaleState::fault(error), name),
                    },
                }
                continue;
            }
        }
        let wake = link.deadline().map_or(next_poll, Instant::from_std);
        tokio::select! {
            read = port.read(&mut buf) => match read {
                Ok(0) => break lost(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    for outcome in link.receive(&buf[..n]) {
                        settle(outcome, &mut in_flight, state, name);
                    }
                }
                Err(error) => break lost(error),
            },
            () = sleep_until(wake) => {
                if let Some(outcome) = link.expire(Instant::now().into_std()) {
                    settle(outcome, &mut in_flight, state, name);
                }
            }
            request = requests.recv() => match request {
                Some(request) => queued.push_back(request),
                None => break Exit::Stop,
            },
        }
    };
    if let Exit::Lost(error) = &exit {
        for request in in_flight.into_iter().chain(queued) {
            request.fail(error.clone());
        }
    }
    exit
}

/// A write that cannot hang: flow control (XOFF, CTS low) can hold a
/// serial write forever.
async fn write(port: &mut SerialStream, bytes: &[u8], limit: Duration, op: Op) -> Result<(), Exit> {
    match timeout(limit, port.write_all(bytes)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(lost(error)),
        Err(_) => Err(Exit::Lost(ScaleError::Timeout { command: op.name() })),
    }
}

fn settle(
    outcome: Outcome,
    in_flight: &mut Option<Request>,
    state: &watch::Sender<ScaleState>,
    name: &str,
) {
    match outcome {
        Outcome::Poll(new) => publish(state, new, name),
        outcome => match in_flight.take() {
            Some(request) => request.answer(outcome),
            None => tracing::debug!(scale = name, ?outcome, "answer with no caller"),
        },
    }
}

/// A scale that streams its weight: decode what comes, notice silence.
async fn streamed(
    port: &mut SerialStream,
    config: &SerialScaleConfig,
    state: &watch::Sender<ScaleState>,
    requests: &mut mpsc::Receiver<Request>,
    name: &str,
) -> Exit {
    let mut decoder = cas::Decoder::new();
    let mut buf = [0_u8; 256];
    let mut silent_from = Instant::now() + config.reply_timeout;
    let mut reported_silence = false;
    loop {
        tokio::select! {
            read = port.read(&mut buf) => match read {
                Ok(0) => return lost(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    for frame in decoder.push(&buf[..n]) {
                        let new = match frame {
                            Ok(frame) => frame_state(frame),
                            // Noise on the line: the next frame will do.
                            Err(error @ (ScaleError::Malformed(_) | ScaleError::Overlong(_))) => {
                                tracing::debug!(scale = name, %error, "CAS frame skipped");
                                continue;
                            }
                            Err(error) => ScaleState::fault(error),
                        };
                        silent_from = Instant::now() + config.reply_timeout;
                        reported_silence = false;
                        publish(state, new, name);
                    }
                }
                Err(error) => return lost(error),
            },
            () = sleep_until(silent_from), if !reported_silence => {
                reported_silence = true;
                publish(state, ScaleState::fault(ScaleError::Silent(config.reply_timeout)), name);
            }
            request = requests.recv() => match request {
                Some(request) => {
                    let operation = request.op().name();
                    let protocol = config.protocol.name();
                    request.fail(ScaleError::Unsupported { operation, protocol });
                }
                None => return Exit::Stop,
            },
        }
    }
}

fn frame_state(frame: cas::Frame) -> ScaleState {
    let stable = match frame.header {
        Header::Overload => return ScaleState::fault(ScaleError::Overload),
        Header::Stable => true,
        Header::Unstable => false,
    };
    ScaleState::Weight(Reading {
        weight: frame.weight,
        unit: frame.unit,
        stable,
        at: std::time::SystemTime::now(),
    })
}
