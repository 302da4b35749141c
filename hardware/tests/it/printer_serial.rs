//! The printer task over a serial line: a pseudo-terminal pair, whose
//! master end plays a printer that answers `~HS`.

#![cfg(unix)]

use std::time::Duration;

use depot_hardware::printer::status::PrinterStatus;
use depot_hardware::printer::transport::SerialConfig;
use depot_hardware::printer::{
    DriverConfig, Endpoint, Job, JobId, JobOutcome, Printer, PrinterState,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::{SerialPort, SerialStream};

const LIMIT: Duration = Duration::from_secs(20);

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

fn job(id: u64) -> Job {
    Job {
        id: JobId(id),
        data: format!("^XA^FDserial {id}^FS^XZ").into_bytes(),
    }
}

#[tokio::test]
async fn prints_over_a_serial_line() {
    let (mut line, device) = SerialStream::pair().expect("pseudo-terminal pair");
    let path = device.name().expect("the device end has a path");
    let config = DriverConfig {
        backoff_initial: Duration::from_millis(20),
        idle_poll: None,
        ..DriverConfig::default()
    };
    let mut printer = Printer::spawn(&Endpoint::Serial(SerialConfig::new(path)), config);
    printer.submit(job(1)).expect("task running");
    printer.submit(job(2)).expect("task running");

    let (received_sender, mut received) = tokio::sync::watch::channel(Vec::new());
    let fake_printer = tokio::spawn(async move {
        let mut all = Vec::new();
        let mut answered = 0;
        let mut buf = [0; 256];
        loop {
            let n = line.read(&mut buf).await.expect("the line reads");
            all.extend_from_slice(&buf[..n]);
            // Published before answering: the answer is what lets the
            // test go on.
            received_sender.send_replace(all.clone());
            while answered < count(&all, b"~HS") {
                answered += 1;
                let answer = PrinterStatus::default().encode();
                line.write_all(&answer).await.expect("the line writes");
            }
        }
    });

    for id in [1, 2] {
        let outcome = tokio::time::timeout(LIMIT, printer.next_outcome())
            .await
            .expect("outcome in time");
        assert_eq!(outcome, Some(JobOutcome::Printed { id: JobId(id) }));
    }
    let mut states = printer.watch_state();
    tokio::time::timeout(LIMIT, states.wait_for(|s| *s == PrinterState::Ready))
        .await
        .expect("ready in time")
        .expect("task running");
    let all = received.borrow_and_update().clone();
    assert_eq!(count(&all, &job(1).data), 1);
    assert_eq!(count(&all, &job(2).data), 1);
    printer.shutdown().await;
    fake_printer.abort();
    drop(device);
}
