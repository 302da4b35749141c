//! The simulator's listener and connections.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::format::FormatAssembler;
use super::parse::{Command, StreamParser};
use super::{Query, Shared};

pub(super) async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                shared.update(|printer| printer.connections += 1);
                tokio::spawn(connection(stream, Arc::clone(&shared)));
            }
            Err(error) => {
                // Out of file descriptors, typically: give the tasks holding
                // them a moment instead of spinning.
                tracing::warn!(%error, "printer simulator: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// An abortive close: the peer sees a reset, not an orderly end.
fn reset(stream: TcpStream) {
    if let Err(error) = stream.set_zero_linger() {
        tracing::debug!(%error, "printer simulator: cannot set SO_LINGER");
    }
}

/// How many bytes of a chunk to take before resetting the connection, if a
/// cut is armed and this chunk crosses it.
fn cut_point(shared: &Shared, received: usize, chunk: usize) -> Option<usize> {
    let mut printer = shared.printer();
    match printer.cut_after {
        Some(limit) if received + chunk > limit => {
            printer.cut_after = None;
            Some(limit.saturating_sub(received))
        }
        _ => None,
    }
}

async fn connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut control = shared.control.subscribe();
    let generation = control.borrow().drop_generation;
    let mut parser = StreamParser::default();
    let mut assembler = FormatAssembler::default();
    let mut commands = Vec::new();
    let mut buf = vec![0; 8192];
    let mut received = 0;
    loop {
        let now = *control.borrow_and_update();
        if now.drop_generation != generation {
            return reset(stream);
        }
        if now.stalled {
            if control.changed().await.is_err() {
                return;
            }
            continue;
        }
        let read = tokio::select! {
            changed = control.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
            read = stream.read(&mut buf) => read,
        };
        // End of stream or an error: the client is done; dropping the
        // stream closes this side in turn, which is the acknowledgement a
        // client waits for after sending a job.
        let Ok(n @ 1..) = read else {
            return;
        };
        let cut = cut_point(&shared, received, n);
        let chunk = &buf[..cut.unwrap_or(n)];
        received += chunk.len();
        parser.feed(chunk, &mut commands);
        let arrived = Instant::now();
        for command in commands.drain(..) {
            let query = match &command {
                Command::Tilde {
                    code: [b'H', b'S'], ..
                } => Some(Query::Host),
                Command::Tilde {
                    code: [b'H', b'Q'],
                    params,
                } if params == b"ES" => Some(Query::Extended),
                _ => None,
            };
            if let Some(query) = query {
                if let Some(answer) = shared.answer(query) {
                    if stream.write_all(&answer).await.is_err() {
                        return;
                    }
                }
            } else if let Some(fields) = assembler.apply(&command) {
                shared.receive(fields, arrived);
            }
        }
        if cut.is_some() {
            // The format in progress dies with the connection.
            return reset(stream);
        }
    }
}
