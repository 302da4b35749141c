//! The floor's work travels whole, with the ids it was given; print jobs
//! reach their printer and report back.

use super::*;

#[tokio::test]
async fn warehouse_work_travels_whole_both_ways() {
    let mut p = pair().await;
    let b = p.caller.business_id;
    adjust(&p.cloud.wms, p.caller, p.warehouse, 10).await;
    // The cloud configures a printer and announces a delivery…
    let printer = p
        .cloud
        .wms
        .create_printer(
            b,
            serde_json::from_value(
                json!({"name": "Pack 1", "kind": "zpl", "connection": "tcp://10.0.0.5:9100"}),
            )
            .expect("printer"),
        )
        .await
        .expect("create printer");
    let inbound = p
        .cloud
        .wms
        .create_inbound(
            b,
            serde_json::from_value(json!({"warehouse_id": p.warehouse.0, "reference": "PO-1",
                "supplier": "Acme", "lines": [{"sku": "A", "quantity": 5}]}))
            .expect("inbound"),
        )
        .await
        .expect("create inbound");
    let r1 = confirmed(&mut p, "R1", 2).await;
    let r2 = confirmed(&mut p, "R2", 1).await;
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let at_edge = p.edge.wms.printers(b).await.expect("printers");
    assert_eq!(at_edge.len(), 1);
    assert_eq!(
        (at_edge[0].id, at_edge[0].connection.as_str()),
        (printer.id, "tcp://10.0.0.5:9100")
    );
    assert_eq!(
        p.edge
            .wms
            .inbound(b, inbound.id)
            .await
            .expect("inbound")
            .reference,
        "PO-1"
    );

    // …and the floor, at the edge, receives it, picks, packs and dispatches.
    let edge = p.edge.wms.clone();
    edge.receive(
        p.caller,
        serde_json::from_value(
            json!({"inbound_id": inbound.id, "lines": [{"code": "A", "quantity": 5}]}),
        )
        .expect("reception"),
    )
    .await
    .expect("receive");
    let wave = edge
        .create_wave(
            b,
            serde_json::from_value(json!({"warehouse_id": p.warehouse.0})).expect("wave"),
        )
        .await
        .expect("create wave");
    for (o, q) in [(r1, 2), (r2, 1)] {
        edge.pick_scan(
            p.caller,
            serde_json::from_value(
                json!({"wave_id": wave.id, "order_id": o, "code": "A", "quantity": q}),
            )
            .expect("scan"),
        )
        .await
        .expect("pick");
        edge.pack_order(
            p.caller,
            serde_json::from_value(
                json!({"order_id": o, "items": [{"code": "A", "quantity": q}],
                "packages": [{"weight_g": 800}]}),
            )
            .expect("pack"),
        )
        .await
        .expect("pack");
    }
    let depot_protocol::Listed { rows: runs, .. } = edge
        .dispatch_runs(b, Default::default(), Default::default())
        .await
        .expect("runs");
    assert_eq!(runs.len(), 1);
    let run = edge
        .close_dispatch_run(p.caller, runs[0].id, false)
        .await
        .expect("close");

    let at_cloud = exchange(&mut p.edge, &p.cloud).await;
    no_rejections(&at_cloud);
    let cloud = p.cloud.wms.clone();
    let received = cloud.inbound(b, inbound.id).await.expect("inbound");
    assert_eq!(
        (received.lines[0].accepted, received.status.as_str()),
        (5, "received")
    );
    let w = cloud.wave(b, wave.id).await.expect("wave in the cloud");
    assert_eq!((w.units_picked, w.status.as_str()), (3, "completed"));
    for o in [r1, r2] {
        assert_eq!(status(&cloud, &p, o).await, OrderStatus::Dispatched);
    }
    let depot_protocol::Listed { rows: shipped, .. } = cloud
        .list_shipments(b, Default::default(), Default::default())
        .await
        .expect("shipments");
    let depot_protocol::Listed { rows: made, .. } = edge
        .list_shipments(b, Default::default(), Default::default())
        .await
        .expect("shipments");
    assert_eq!(
        shipped, made,
        "the cloud shows the edge's shipments as made"
    );
    let depot_protocol::Listed { rows: closed, .. } = cloud
        .dispatch_runs(b, Default::default(), Default::default())
        .await
        .expect("runs");
    assert_eq!(closed, vec![run.clone()]);
    assert!(
        cloud
            .manifest(b, run.id)
            .await
            .expect("manifest")
            .starts_with(b"%PDF")
    );
    same_books(&p).await;
    assert_eq!(
        cloud.stock_level(p.item, p.warehouse).await.expect("level"),
        (10 + 5 - 3, 0)
    );

    // Delivered twice (a redelivery after a lost ack): nothing moves.
    p.edge.sent = 0;
    let again = exchange(&mut p.edge, &p.cloud).await;
    assert!(again.iter().all(|o| *o == Outcome::Duplicate), "{again:?}");
    same_books(&p).await;
    for node in [&p.cloud.wms, &p.edge.wms] {
        assert!(
            node.conflicts(None, 10)
                .await
                .expect("conflicts")
                .is_empty()
        );
    }

    // A record arriving under an id that is taken here, by an event this
    // node has not seen: the same record changes nothing; another record
    // (two nodes that numbered alike) is rejected and recorded, not
    // skipped as if it were already here.
    let cases = [
        (
            &p.edge.wms,
            &cloud,
            "wave.created",
            "warehouse_id",
            json!(p.warehouse.0 + 1),
        ),
        (
            &p.edge.wms,
            &cloud,
            "shipment.packed",
            "order_id",
            json!(r1.0 + r2.0),
        ),
        (
            &cloud,
            &p.edge.wms,
            "order.created",
            "external_ref",
            json!("R9"),
        ),
        (
            &cloud,
            &p.edge.wms,
            "inbound.created",
            "reference",
            json!("PO-9"),
        ),
    ];
    for (from, to, kind, field, other) in cases {
        let made = from
            .business_events(b, 0, Some(kind.into()), 1)
            .await
            .expect("events")
            .remove(0);
        let mut same = made.clone();
        same.id = depot_protocol::EventId::new();
        let mut clash = same.clone();
        clash.id = depot_protocol::EventId::new();
        clash.payload[field] = other;
        let outcomes = to.apply_remote(vec![same, clash]).await.expect("apply");
        assert_eq!(
            outcomes[0],
            Outcome::Applied,
            "{kind}: the same record again"
        );
        match &outcomes[1] {
            Outcome::Rejected { reason } => {
                assert!(
                    reason.contains("here is another record"),
                    "{kind}: {reason}"
                )
            }
            o => panic!("{kind}: another record under a taken id was {o:?}"),
        }
    }
    for node in [&cloud, &p.edge.wms] {
        let conflicts = node.conflicts(None, 10).await.expect("conflicts");
        assert_eq!(conflicts.len(), 2, "{conflicts:?}");
    }
    let w = cloud.wave(b, wave.id).await.expect("wave in the cloud");
    assert_eq!((w.warehouse_id, w.units_picked), (p.warehouse, 3));
    let o = p.edge.wms.order(b, r1).await.expect("order at the edge");
    assert_eq!(o.external_ref, "R1");
    same_books(&p).await;
}

#[tokio::test]
async fn print_jobs_reach_their_printer_and_report_back() {
    use depot_protocol::printing::{JobStatus, MAX_EDGE_JOB_BYTES};
    let mut p = pair().await;
    let b = p.caller.business_id;
    let printer = p
        .cloud
        .wms
        .create_printer(b, serde_json::from_value(json!({"name": "Pack 1", "kind": "zpl", "connection": "edge://mad-1", "station": "pack-1"})).expect("fields"))
        .await
        .expect("printer");
    let label = b"^XA^FO20,20^A0N,30,30^FDOrder 1001^FS^XZ".to_vec();
    let cloud_job = p
        .cloud
        .wms
        .submit_job(p.caller, printer.id, label.clone())
        .await
        .expect("job");
    // A job for a printer at an edge travels in one sync message: capped.
    let mut big = b"^XA".to_vec();
    big.resize(MAX_EDGE_JOB_BYTES + 1, b' ');
    assert!(matches!(
        p.cloud.wms.submit_job(p.caller, printer.id, big).await,
        Err(depot_wms::WmsError::Invalid { .. })
    ));
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);

    // The edge has the job, with its bytes, under the cloud's id.
    let queued = p
        .edge
        .wms
        .queued_print_jobs(vec![printer.id], Default::default())
        .await
        .expect("queued");
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].0.id, cloud_job.id);
    assert_eq!(queued[0].1, label);

    // The edge's printer prints it; a station there prints one of its own.
    p.edge
        .wms
        .print_job_update(cloud_job.id, JobStatus::Printed, None)
        .await
        .expect("printed");
    let local = p
        .edge
        .wms
        .submit_job(p.caller, printer.id, b"^XA^FDbin A-01^FS^XZ".to_vec())
        .await
        .expect("local job");
    p.edge
        .wms
        .print_job_update(local.id, JobStatus::Queued, Some("paper out".into()))
        .await
        .expect("waiting");
    assert_eq!(
        p.edge
            .wms
            .queued_print_jobs(vec![printer.id], Default::default())
            .await
            .expect("queued")
            .iter()
            .map(|(j, _)| j.id)
            .collect::<Vec<_>>(),
        vec![local.id]
    );
    no_rejections(&exchange(&mut p.edge, &p.cloud).await);

    // The cloud's job list follows the edge's printer.
    let jobs = p.cloud.wms.print_jobs(b, printer.id).await.expect("jobs");
    let by_id =
        |id: depot_protocol::PrintJobId| jobs.iter().find(|j| j.id == id).expect("job listed");
    assert_eq!(by_id(cloud_job.id).status, JobStatus::Printed);
    assert_eq!(by_id(local.id).status, JobStatus::Queued);
    assert_eq!(by_id(local.id).error.as_deref(), Some("paper out"));
    assert_eq!(by_id(local.id).size, local.size);
    // The cloud does not print an edge's jobs.
    assert!(
        p.cloud
            .wms
            .queued_print_jobs(vec![printer.id], Default::default())
            .await
            .expect("queued")
            .iter()
            .all(|(j, data)| j.id != local.id || data.is_empty())
    );

    // Delivered twice: nothing changes.
    p.edge.sent = 0;
    exchange(&mut p.edge, &p.cloud).await;
    assert_eq!(
        p.cloud.wms.print_jobs(b, printer.id).await.expect("jobs"),
        jobs
    );

    // The edge's job again under an event the cloud has not seen: the same
    // job changes nothing, another job under its id is a conflict.
    let made = p
        .edge
        .wms
        .business_events(b, 0, Some("print_job.created".into()), 10)
        .await
        .expect("events")
        .into_iter()
        .find(|e| e.payload["id"] == json!(local.id))
        .expect("the edge logged its job");
    let mut same = made.clone();
    same.id = depot_protocol::EventId::new();
    let mut clash = same.clone();
    clash.id = depot_protocol::EventId::new();
    clash.payload["size"] = json!(local.size + 1);
    let outcomes = p
        .cloud
        .wms
        .apply_remote(vec![same, clash])
        .await
        .expect("apply");
    assert_eq!(outcomes[0], Outcome::Applied);
    assert!(
        matches!(&outcomes[1], Outcome::Rejected { reason } if reason.contains("print job")),
        "{outcomes:?}"
    );
    assert_eq!(
        p.cloud.wms.print_jobs(b, printer.id).await.expect("jobs"),
        jobs
    );
}

#[tokio::test]
async fn a_printers_state_from_the_edge_sets_its_record_in_the_cloud() {
    use depot_protocol::event::EventKind;
    let mut p = pair().await;
    let b = p.caller.business_id;
    let printer = p
        .cloud
        .wms
        .create_printer(
            b,
            serde_json::from_value(
                json!({"name": "Pack 1", "kind": "zpl", "connection": "edge://mad-1"}),
            )
            .expect("fields"),
        )
        .await
        .expect("printer");
    no_rejections(&exchange(&mut p.cloud, &p.edge).await);
    let state = |state: &str, previous: &str, at: &str| {
        json!({"business_id": b, "printer_id": printer.id, "device": "Pack 1", "station": null,
            "state": state, "problems": [], "previous": previous, "at": at})
    };
    let status = |wms: Wms| async move {
        let all = wms.printers(b).await.expect("printers");
        let p = all
            .into_iter()
            .find(|r| r.id == printer.id)
            .expect("record");
        (p.status, p.last_seen.map(|t| depot_protocol::format_ts(&t)))
    };
    assert_eq!(status(p.cloud.wms.clone()).await.0, "unknown");

    p.edge
        .wms
        .device_event(
            b,
            EventKind::PrinterStateChanged,
            state("ready", "unknown", "2026-01-02T10:00:00Z"),
        )
        .await
        .expect("ready");
    no_rejections(&exchange(&mut p.edge, &p.cloud).await);
    let online = ("online".to_owned(), Some("2026-01-02T10:00:00Z".to_owned()));
    assert_eq!(status(p.cloud.wms.clone()).await, online);
    assert_eq!(
        status(p.edge.wms.clone()).await,
        online,
        "the edge's own record too"
    );

    // Unreachable: offline, and it was last seen when it last answered.
    p.edge
        .wms
        .device_event(
            b,
            EventKind::PrinterStateChanged,
            state("unreachable", "ready", "2026-01-02T11:00:00Z"),
        )
        .await
        .expect("unreachable");
    no_rejections(&exchange(&mut p.edge, &p.cloud).await);
    assert_eq!(
        status(p.cloud.wms.clone()).await,
        (
            "offline".to_owned(),
            Some("2026-01-02T10:00:00Z".to_owned())
        )
    );
    // A printer.seen (the record told again, or refreshed while the
    // printer answers) sets it the same way, at the edge and in the cloud;
    // one older than what the record has does not take last_seen back.
    let seen = |state: &str, at: &str| {
        json!({"business_id": b, "printer_id": printer.id, "device": "Pack 1", "station": null,
            "state": state, "problems": [], "at": at})
    };
    for (state, at) in [
        ("ready", "2026-01-02T12:00:00Z"),
        ("faulted", "2026-01-02T09:00:00Z"),
    ] {
        p.edge
            .wms
            .device_event(b, EventKind::PrinterSeen, seen(state, at))
            .await
            .expect("seen");
    }
    no_rejections(&exchange(&mut p.edge, &p.cloud).await);
    let refreshed = ("online".to_owned(), Some("2026-01-02T12:00:00Z".to_owned()));
    assert_eq!(status(p.cloud.wms.clone()).await, refreshed);
    assert_eq!(status(p.edge.wms.clone()).await, refreshed);
    // Not a device's event: refused.
    assert!(
        p.edge
            .wms
            .device_event(b, EventKind::StockMoved, json!({}))
            .await
            .is_err()
    );
}
