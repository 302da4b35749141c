//! The printer task against the simulated Zebra over TCP: running out of
//! paper mid-queue, a stalled or silent printer, a connection cut mid-job,
//! and label content end to end. The labels are made by depot-labels, the
//! stack production prints with.

use std::collections::HashMap;
use std::time::Duration;

use depot_hardware::printer::sim::{FieldKind, PrintedLabel, Simulator};
use depot_hardware::printer::{
    DriverConfig, Endpoint, Job, JobId, JobOutcome, Printer, PrinterState, Problem,
};
use depot_labels::{ItemLabel, PackageInfo, Party, ShippingLabel};

/// An upper bound for anything to happen; tests never sleep.
const LIMIT: Duration = Duration::from_secs(20);

fn fast() -> DriverConfig {
    DriverConfig {
        connect_timeout: Duration::from_secs(2),
        status_timeout: Duration::from_millis(300),
        transfer_timeout: Duration::from_secs(5),
        close_timeout: Duration::from_secs(2),
        backoff_initial: Duration::from_millis(20),
        backoff_max: Duration::from_millis(200),
        idle_poll: Some(Duration::from_millis(200)),
        max_transfer_attempts: 5,
    }
}

fn endpoint(sim: &Simulator) -> Endpoint {
    Endpoint::Tcp {
        host: "127.0.0.1".into(),
        port: sim.addr().port(),
    }
}

fn item_job(id: u64) -> Job {
    let label = ItemLabel {
        sku: format!("SKU-{id}"),
        name: format!("Item {id}"),
        detail: None,
    };
    Job {
        id: JobId(id),
        data: depot_labels::item_label_zpl(&label).into_bytes(),
    }
}

async fn wait_state(printer: &Printer, wanted: impl Fn(&PrinterState) -> bool) -> PrinterState {
    let mut states = printer.watch_state();
    let state = tokio::time::timeout(LIMIT, states.wait_for(|state| wanted(state)))
        .await
        .expect("state reached in time")
        .expect("printer task running");
    state.clone()
}

/// Outcomes until every id in `ids` was printed; panics on a failure.
async fn outcomes_until_printed(printer: &mut Printer, ids: &[u64]) -> Vec<JobOutcome> {
    let mut outcomes = Vec::new();
    let mut printed: HashMap<u64, usize> = HashMap::new();
    while !ids.iter().all(|id| printed.contains_key(id)) {
        let outcome = tokio::time::timeout(LIMIT, printer.next_outcome())
            .await
            .expect("outcome in time")
            .expect("printer task running");
        if let JobOutcome::Printed { id } = &outcome {
            *printed.entry(id.0).or_default() += 1;
        }
        assert!(!matches!(outcome, JobOutcome::Failed { .. }), "{outcome:?}");
        outcomes.push(outcome);
    }
    outcomes
}

fn sku(label: &PrintedLabel) -> String {
    label.fields_of(&FieldKind::Code128).concat()
}

#[tokio::test]
async fn twenty_labels_survive_the_paper_running_out_after_five() {
    let sim = Simulator::start().await.expect("simulator starts");
    sim.load_paper(Some(5));
    let mut printer = Printer::spawn(&endpoint(&sim), fast());
    for id in 1..=20 {
        printer.submit(item_job(id)).expect("task running");
    }

    let faulted = wait_state(&printer, |s| matches!(s, PrinterState::Faulted { .. })).await;
    assert_eq!(
        faulted,
        PrinterState::Faulted {
            problems: vec![Problem::PaperOut]
        }
    );
    let stats = sim.stats();
    assert_eq!(stats.labels_printed, 5);
    assert_eq!(stats.formats_waiting, 0, "nothing sent while out of paper");

    sim.load_paper(None);
    let labels = sim
        .wait_for_labels(20, LIMIT)
        .await
        .expect("all labels print");
    let ids: Vec<u64> = (1..=20).collect();
    let outcomes = outcomes_until_printed(&mut printer, &ids).await;
    wait_state(&printer, |s| *s == PrinterState::Ready).await;

    let skus: Vec<String> = labels.iter().map(sku).collect();
    let expected: Vec<String> = ids.iter().map(|id| format!("SKU-{id}")).collect();
    assert_eq!(skus, expected, "each label exactly once, in order");
    assert_eq!(sim.stats().labels_printed, 20);
    let printed: Vec<JobOutcome> = ids
        .iter()
        .map(|&id| JobOutcome::Printed { id: JobId(id) })
        .collect();
    assert_eq!(outcomes, printed, "no retries, each job reported once");
}

#[tokio::test]
async fn a_stalled_printer_is_unreachable_until_it_recovers() {
    let sim = Simulator::start().await.expect("simulator starts");
    sim.set_stalled(true);
    let mut printer = Printer::spawn(&endpoint(&sim), fast());
    wait_state(&printer, |s| matches!(s, PrinterState::Unreachable { .. })).await;
    printer.submit(item_job(1)).expect("task running");
    // Still unreachable after more polls: the job waits.
    let polls = sim.stats().connections;
    sim.wait_until(|stats| stats.connections >= polls + 2, LIMIT)
        .await
        .expect("the printer polls again");
    assert_eq!(sim.stats().labels_printed, 0);
    assert!(matches!(printer.state(), PrinterState::Unreachable { .. }));

    sim.recover();
    outcomes_until_printed(&mut printer, &[1]).await;
    let labels = sim.wait_for_labels(1, LIMIT).await.expect("label prints");
    assert_eq!(sku(&labels[0]), "SKU-1");
    wait_state(&printer, |s| *s == PrinterState::Ready).await;
}

#[tokio::test]
async fn a_printer_silent_with_its_head_open_gets_no_job() {
    let sim = Simulator::start().await.expect("simulator starts");
    sim.set_silent_when_faulted(true);
    sim.set_head_open(true);
    let mut printer = Printer::spawn(&endpoint(&sim), fast());
    printer.submit(item_job(1)).expect("task running");
    wait_state(&printer, |s| matches!(s, PrinterState::Unreachable { .. })).await;
    let queries = sim.stats().status_queries;
    let stats = sim
        .wait_until(|stats| stats.status_queries >= queries + 2, LIMIT)
        .await
        .expect("the printer polls again");
    assert_eq!(
        stats.formats_waiting + stats.labels_printed,
        0,
        "silence is not success"
    );

    sim.set_head_open(false);
    outcomes_until_printed(&mut printer, &[1]).await;
    assert_eq!(
        sim.wait_for_labels(1, LIMIT).await.expect("prints").len(),
        1
    );
}

#[tokio::test]
async fn a_job_cut_off_mid_transfer_is_sent_again_and_printed_once() {
    let sim = Simulator::start().await.expect("simulator starts");
    // The status query is 3 bytes; the cut lands inside the first job.
    sim.cut_connection_after(3 + 60);
    let mut printer = Printer::spawn(&endpoint(&sim), fast());
    printer.submit(item_job(1)).expect("task running");
    printer.submit(item_job(2)).expect("task running");

    let outcomes = outcomes_until_printed(&mut printer, &[1, 2]).await;
    assert!(
        matches!(
            &outcomes[0],
            JobOutcome::Retrying {
                id: JobId(1),
                attempt: 1,
                ..
            }
        ),
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes[1..],
        [
            JobOutcome::Printed { id: JobId(1) },
            JobOutcome::Printed { id: JobId(2) }
        ]
    );
    let labels = sim.wait_for_labels(2, LIMIT).await.expect("labels print");
    let skus: Vec<String> = labels.iter().map(sku).collect();
    // The cut-off copy was discarded by the printer: delivered once. Had
    // the cut come after its last byte, it would have printed twice (the
    // at-least-once window the driver documents).
    assert_eq!(skus, ["SKU-1", "SKU-2"]);
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let endpoint = Endpoint::Tcp {
        host: "127.0.0.1".into(),
        port,
    };
    let printer = Printer::spawn(&endpoint, fast());
    wait_state(&printer, |s| matches!(s, PrinterState::Unreachable { .. })).await;
    printer.shutdown().await;
}

#[tokio::test]
async fn a_shipping_label_arrives_intact() {
    let sim = Simulator::start().await.expect("simulator starts");
    let mut printer = Printer::spawn(&endpoint(&sim), fast());
    let party = |name: &str, line1: &str, postal_code: &str, city: &str, country: &str| Party {
        name: name.into(),
        line1: line1.into(),
        line2: None,
        city: city.into(),
        postal_code: postal_code.into(),
        region: None,
        country: country.into(),
    };
    let label = ShippingLabel {
        carrier: "UPS".into(),
        service: "Express Saver".into(),
        tracking_number: "1Z999AA10123456784".into(),
        piece_number: "1Z999AA10123456784".into(),
        sscc: None,
        ship_from: party("Depot", "1 Dock Road", "75001", "Paris", "FR"),
        ship_to: party(
            "Zoë ^XZ~JA",
            "2 Rue_Haute \\ Bâtiment B",
            "1000",
            "Bruxelles",
            "BE",
        ),
        order_ref: "SO-1042".into(),
        package: PackageInfo {
            index: 1,
            count: 1,
            weight_g: 1250,
            dimensions_mm: None,
        },
        shipped_on: chrono::NaiveDate::from_ymd_opt(2025, 3, 14).expect("a date"),
    };
    let data = depot_labels::shipping_label_zpl(&label).into_bytes();
    printer
        .submit(Job { id: JobId(9), data })
        .expect("task running");
    outcomes_until_printed(&mut printer, &[9]).await;
    let labels = sim.wait_for_labels(1, LIMIT).await.expect("label prints");
    let printed = &labels[0];
    // The address one line to a field, each as written.
    assert!(printed.has_text("Zoë ^XZ~JA"), "{:?}", printed.texts());
    assert!(printed.has_text("2 Rue_Haute \\ Bâtiment B"));
    assert!(printed.has_text("1000 Bruxelles"));
    assert!(printed.has_text("UPS"));
    assert!(printed.has_text("SO-1042"));
    assert!(printed.has_text("1.25 kg"));
    assert_eq!(
        printed.fields_of(&FieldKind::Code128),
        ["1Z999AA10123456784"]
    );
    assert!(printed.received_at <= printed.printed_at);
    assert_eq!(
        sim.stats().labels_printed,
        1,
        "the ~JA in the name cancelled nothing"
    );
}
