//! The baselines: the same label bytes to the same simulator without the
//! edge. Raw TCP, a connection per label as the driver sends a job
//! (connect, write, close and wait for the printer's close, its
//! acknowledgement) or one connection for all; and depot-hardware's
//! printer driver on its own, which adds its `~HS` status query per job.

use crate::{LIMIT, follow};
use anyhow::{Context, bail};
use depot_hardware::printer::sim::Simulator;
use depot_hardware::printer::{DriverConfig, Endpoint, Job, JobId, Printer, PrinterState};
use indicatif::ProgressBar;
use std::net::SocketAddr;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn connect(addr: SocketAddr) -> anyhow::Result<TcpStream> {
    let stream = TcpStream::connect(addr)
        .await
        .with_context(|| format!("cannot connect to the printer at {addr}"))?;
    // As the driver's transport does.
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// Ends our side and waits for the printer to close its own: the driver
/// counts a job as taken only then.
async fn close(mut stream: TcpStream) -> anyhow::Result<()> {
    stream.shutdown().await?;
    let mut rest = Vec::new();
    tokio::time::timeout(LIMIT, stream.read_to_end(&mut rest))
        .await
        .context("the printer did not close the connection")??;
    Ok(())
}

/// A connection per label, one label at a time. Answers when each
/// label's connection was started.
pub async fn per_label(
    addr: SocketAddr,
    labels: &[Vec<u8>],
    bar: &ProgressBar,
) -> anyhow::Result<Vec<Instant>> {
    let mut started = Vec::with_capacity(labels.len());
    for label in labels {
        started.push(Instant::now());
        let mut stream = connect(addr).await?;
        stream.write_all(label).await?;
        close(stream).await?;
        bar.inc(1);
    }
    Ok(started)
}

/// Every label over one connection, back to back. Answers when the
/// connection was started.
pub async fn one_connection(addr: SocketAddr, labels: &[Vec<u8>]) -> anyhow::Result<Instant> {
    let started = Instant::now();
    let mut stream = connect(addr).await?;
    for label in labels {
        stream.write_all(label).await?;
    }
    close(stream).await?;
    Ok(started)
}

/// The driver, started on the simulator and ready (its first `~HS`
/// answered), with the settings the edge gives it when nothing is
/// configured.
async fn driver(sim: &Simulator) -> anyhow::Result<Printer> {
    let endpoint = Endpoint::Tcp {
        host: sim.addr().ip().to_string(),
        port: sim.addr().port(),
    };
    let printer = Printer::spawn(&endpoint, DriverConfig::default());
    let mut state = printer.watch_state();
    match tokio::time::timeout(LIMIT, state.wait_for(|s| *s == PrinterState::Ready)).await {
        Ok(Ok(_)) => Ok(printer),
        _ => bail!(
            "the driver did not find the printer ready: {:?}",
            printer.state()
        ),
    }
}

/// The labels as driver jobs, made before any clock starts.
fn jobs(labels: &[Vec<u8>]) -> Vec<Job> {
    labels
        .iter()
        .enumerate()
        .map(|(i, label)| Job {
            id: JobId(i as u64 + 1),
            data: label.clone(),
        })
        .collect()
}

/// The driver alone, one job at a time: each submitted once the printer
/// has the previous label. Answers when each job was submitted.
pub async fn driver_one_at_a_time(
    sim: &Simulator,
    labels: &[Vec<u8>],
    bar: &ProgressBar,
) -> anyhow::Result<Vec<Instant>> {
    let printer = driver(sim).await?;
    let base = sim.stats().labels_printed;
    let mut submitted = Vec::with_capacity(labels.len());
    for (i, job) in jobs(labels).into_iter().enumerate() {
        submitted.push(Instant::now());
        printer.submit(job)?;
        sim.wait_until(|s| s.labels_printed > base + i, LIMIT)
            .await
            .with_context(|| format!("label {} of the driver alone", i + 1))?;
        bar.inc(1);
    }
    printer.shutdown().await;
    Ok(submitted)
}

/// The driver alone, every job submitted at once. Answers when the first
/// was submitted.
pub async fn driver_at_once(sim: &Simulator, labels: &[Vec<u8>]) -> anyhow::Result<Instant> {
    let printer = driver(sim).await?;
    let base = sim.stats().labels_printed;
    let jobs = jobs(labels);
    let started = Instant::now();
    for job in jobs {
        printer.submit(job)?;
    }
    follow(sim, "the driver alone, at once", base, base + labels.len()).await?;
    printer.shutdown().await;
    Ok(started)
}
