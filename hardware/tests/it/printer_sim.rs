//! The simulated printer, spoken to over a plain socket as a ZPL client
//! would.

use std::time::Duration;

use depot_hardware::printer::sim::{FieldKind, SimError, Simulator};
use depot_hardware::printer::status::{ExtendedStatus, PrinterStatus, Problem, StatusError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMIT: Duration = Duration::from_secs(10);

async fn connect(sim: &Simulator) -> TcpStream {
    TcpStream::connect(sim.addr())
        .await
        .expect("simulator accepts")
}

/// Reads until `parse` accepts what arrived.
async fn read_answer<T>(
    stream: &mut TcpStream,
    parse: impl Fn(&[u8]) -> Result<(T, usize), StatusError>,
) -> T {
    let mut answer = Vec::new();
    let mut buf = [0; 512];
    tokio::time::timeout(LIMIT, async {
        loop {
            match parse(&answer) {
                Ok((value, _)) => return value,
                Err(StatusError::Incomplete) => {}
                Err(error) => panic!("bad answer {answer:?}: {error}"),
            }
            let n = stream.read(&mut buf).await.expect("readable");
            assert_ne!(n, 0, "connection closed before the answer");
            answer.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("answered in time")
}

async fn host_status(stream: &mut TcpStream) -> PrinterStatus {
    stream.write_all(b"~HS").await.expect("writable");
    read_answer(stream, PrinterStatus::parse).await
}

#[tokio::test]
async fn answers_host_status_from_its_state() {
    let sim = Simulator::start().await.expect("starts");
    let mut stream = connect(&sim).await;
    assert!(host_status(&mut stream).await.is_ready());

    sim.set_paused(true);
    stream
        .write_all(b"^XA^FDone^FS^XZ^XA^FDtwo^FS^XZ")
        .await
        .expect("writable");
    let status = host_status(&mut stream).await;
    assert_eq!(status.problems(), [Problem::Paused]);
    assert_eq!(status.formats_in_buffer, 2);

    sim.set_paused(false);
    sim.set_head_open(true);
    let status = host_status(&mut stream).await;
    assert_eq!(status.problems(), [Problem::HeadOpen]);
    assert_eq!(sim.stats().labels_printed, 2, "printed when unpaused");
}

#[tokio::test]
async fn answers_extended_status() {
    let sim = Simulator::start().await.expect("starts");
    sim.set_paper_out(true);
    let mut stream = connect(&sim).await;
    stream.write_all(b"~HQES").await.expect("writable");
    let status = read_answer(&mut stream, ExtendedStatus::parse).await;
    assert_eq!(status.problems(), [Problem::PaperOut]);
}

#[tokio::test]
async fn keeps_formats_while_out_of_paper() {
    let sim = Simulator::start().await.expect("starts");
    sim.set_paper_out(true);
    let mut stream = connect(&sim).await;
    stream
        .write_all(b"^XA^FO1,2^FH^FDkept_21^FS^XZ")
        .await
        .expect("writable");
    sim.wait_until(|stats| stats.formats_waiting == 1, LIMIT)
        .await
        .expect("format received");
    assert_eq!(sim.stats().labels_printed, 0);
    sim.load_paper(None);
    let labels = sim.wait_for_labels(1, LIMIT).await.expect("prints");
    assert_eq!(labels[0].texts(), ["kept!"]);
    assert_eq!((labels[0].fields[0].x, labels[0].fields[0].y), (1, 2));
}

#[tokio::test]
async fn a_silent_printer_does_not_answer_while_faulted() {
    let sim = Simulator::start().await.expect("starts");
    sim.set_silent_when_faulted(true);
    sim.set_head_open(true);
    let mut stream = connect(&sim).await;
    stream.write_all(b"~HS").await.expect("writable");
    sim.wait_until(|stats| stats.status_queries == 1, LIMIT)
        .await
        .expect("query received");
    sim.set_head_open(false);
    // Had the first query been answered, its answer (head open) would come
    // first.
    assert!(host_status(&mut stream).await.is_ready());
}

#[tokio::test]
async fn labels_arrive_in_pieces_with_their_arrival_time() {
    let sim = Simulator::start().await.expect("starts");
    let mut stream = connect(&sim).await;
    let zpl =
        b"^XA^FO5,5^BY2^BCN,50,Y,N,N,N^FH^FD>:BIN_5FA>01^FS^FO0,0^BQN,2,4^FH^FDMA,hello^FS^XZ";
    let before = tokio::time::Instant::now().into_std();
    for piece in zpl.chunks(7) {
        stream.write_all(piece).await.expect("writable");
    }
    let labels = sim.wait_for_labels(1, LIMIT).await.expect("prints");
    let label = &labels[0];
    assert_eq!(label.fields_of(&FieldKind::Code128), ["BIN_A>1"]);
    assert_eq!(label.fields_of(&FieldKind::Qr), ["hello"]);
    assert!(label.received_at >= before);
}

#[tokio::test]
async fn a_raw_tilde_in_field_data_is_acted_on() {
    // What escaping protects against: the printer answers the ~HS hidden
    // in the text and prints the text without it.
    let sim = Simulator::start().await.expect("starts");
    let mut stream = connect(&sim).await;
    stream
        .write_all(b"^XA^FDab~HScd^FS^XZ")
        .await
        .expect("writable");
    let status = read_answer(&mut stream, PrinterStatus::parse).await;
    assert!(status.is_ready());
    let labels = sim.wait_for_labels(1, LIMIT).await.expect("prints");
    assert_eq!(labels[0].texts(), ["abcd"]);
}

#[tokio::test]
async fn a_cut_connection_loses_its_partial_format() {
    let sim = Simulator::start().await.expect("starts");
    sim.cut_connection_after(10);
    let mut first = connect(&sim).await;
    first
        .write_all(b"^XA^FDcut off^FS^XZ")
        .await
        .expect("writable");
    let mut rest = Vec::new();
    let read = first.read_to_end(&mut rest).await;
    assert!(read.is_err() || rest.is_empty(), "reset or closed");

    let mut second = connect(&sim).await;
    second
        .write_all(b"^XA^FDwhole^FS^XZ")
        .await
        .expect("writable");
    let labels = sim.wait_for_labels(1, LIMIT).await.expect("prints");
    assert_eq!(labels.len(), 1);
    assert_eq!(labels[0].texts(), ["whole"]);
}

#[tokio::test]
async fn dropped_connections_see_a_reset() {
    let sim = Simulator::start().await.expect("starts");
    let mut stream = connect(&sim).await;
    // Make sure the simulator is serving this connection before dropping it.
    assert!(host_status(&mut stream).await.is_ready());
    sim.drop_connections();
    let mut buf = [0; 16];
    let read = tokio::time::timeout(LIMIT, stream.read(&mut buf))
        .await
        .expect("the drop arrives");
    assert!(matches!(read, Ok(0) | Err(_)));
}

#[tokio::test]
async fn a_stalled_printer_answers_once_released() {
    let sim = Simulator::start().await.expect("starts");
    sim.set_stalled(true);
    let mut stream = connect(&sim).await;
    stream.write_all(b"~HS").await.expect("writable");
    sim.wait_until(|stats| stats.connections == 1, LIMIT)
        .await
        .expect("accepted");
    assert_eq!(sim.stats().status_queries, 0, "not read while stalled");
    sim.set_stalled(false);
    let status = read_answer(&mut stream, PrinterStatus::parse).await;
    assert!(status.is_ready());
}

#[tokio::test]
async fn the_roll_runs_out() {
    let sim = Simulator::start().await.expect("starts");
    sim.load_paper(Some(1));
    let mut stream = connect(&sim).await;
    stream
        .write_all(b"^XA^FDa^FS^XZ^XA^FDb^FS^XZ")
        .await
        .expect("writable");
    let stats = sim
        .wait_until(
            |stats| stats.labels_printed + stats.formats_waiting == 2,
            LIMIT,
        )
        .await
        .expect("both received");
    assert_eq!((stats.labels_printed, stats.formats_waiting), (1, 1));
    assert!(host_status(&mut stream).await.paper_out);
}

#[tokio::test]
async fn waiting_too_long_reports_where_it_got() {
    let sim = Simulator::start().await.expect("starts");
    let result = sim.wait_for_labels(1, Duration::from_millis(10)).await;
    assert!(matches!(result, Err(SimError::Timeout(stats)) if stats.labels_printed == 0));
}
