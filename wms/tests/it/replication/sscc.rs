//! Every parcel its own SSCC, whichever node packs it and however long it
//! was offline: the cloud grants each node blocks of the business's GS1
//! serials through sync, a box numbers only in its own, and the cloud
//! refuses a parcel whose SSCC is not the sending box's to give. Then the
//! dock: parcels scanned onto the vehicle by SSCC or piece number, and a
//! run that will not close with one left behind.

use depot_protocol::gs1::sscc::{CompanyPrefix, Sscc};
use depot_protocol::order::{Address, OrderStatus};
use depot_protocol::shipping::{LoadRequest, Shipment};
use depot_protocol::sync::{EdgeId, SyncEvent};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, WarehouseId};
use depot_wms::sync::PageOutcome;
use depot_wms::{Wms, WmsError};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Twelve digits: blocks of 100 serials, so a test can use one up.
const PREFIX: &str = "061414100009";
const EDGE: &str = "sscc-1";

struct Site {
    cloud: Wms,
    edge: Wms,
    c: Caller,
    w: WarehouseId,
    /// How much of the edge's log the cloud has.
    sent: i64,
    _dir: tempfile::TempDir,
    /// The cloud's database when it is on PostgreSQL.
    _database: Option<depot_testkit::pg::PgDatabase>,
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("request")
}

async fn site() -> Site {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cloud, database) = depot_testkit::pg::cloud_engine(dir.path());
    let b = cloud
        .create_business("B", "EUR", "UTC")
        .await
        .expect("business");
    let set = cloud
        .set_gs1_prefix(b.id, Some(PREFIX))
        .await
        .expect("prefix");
    assert_eq!(set.gs1_company_prefix.as_deref(), Some(PREFIX));
    let w = cloud
        .create_warehouse(b.id, "W1", "Main", Address::default(), false)
        .await
        .expect("warehouse")
        .id;
    let k = cloud.create_key(b.id, None).await.expect("key");
    let c = Caller {
        key_id: k.key.id,
        business_id: b.id,
    };
    cloud
        .create_item(b.id, from(json!({"sku": "A", "name": "Widget"})))
        .await
        .expect("item");
    cloud
        .adjust(
            c,
            from(json!({"warehouse_id": w.0, "sku": "A", "reason": "adjusted", "delta": 1000})),
        )
        .await
        .expect("stock");
    let node = cloud
        .register_edge(b.id, EdgeId::parse(EDGE).expect("id"), None)
        .await
        .expect("register")
        .node;
    let edge =
        Wms::open_node(&dir.path().join("edge.db"), &format!("edge:{EDGE}"), node).expect("edge");
    let s = Site {
        cloud,
        edge,
        c,
        w,
        sent: 0,
        _dir: dir,
        _database: database,
    };
    pull(&s).await;
    s
}

/// The cloud's pages for the edge, applied there.
async fn pull(s: &Site) {
    let b = s.c.business_id;
    loop {
        let (_, cursor) = s.edge.sync_state().await.expect("state");
        let page = s
            .cloud
            .changes_for(b, EdgeId::parse(EDGE).expect("id"), cursor, 200)
            .await
            .expect("page");
        let more = page.more;
        match s.edge.apply_page(b, page).await.expect("apply") {
            PageOutcome::Applied { outcomes, .. } => assert!(
                outcomes.iter().all(|o| matches!(
                    o,
                    depot_wms::replica::Outcome::Applied | depot_wms::replica::Outcome::Duplicate
                )),
                "{outcomes:?}"
            ),
            other => panic!("{other:?}"),
        }
        if !more {
            return;
        }
    }
}

/// The edge's new events, as sync sends them up.
async fn log(s: &Site) -> Vec<SyncEvent> {
    let head = s.edge.outgoing_head().await.expect("head");
    s.edge
        .outgoing_sync(s.sent, head, 100_000)
        .await
        .expect("outgoing")
}

/// Sends the edge's new events up; answers the rejections' reasons.
async fn push(s: &mut Site, events: Vec<SyncEvent>) -> Vec<String> {
    let ack = s
        .cloud
        .receive_batch(s.c.business_id, EdgeId::parse(EDGE).expect("id"), events)
        .await
        .expect("batch");
    s.sent = ack.through;
    ack.rejected.into_iter().map(|r| r.reason).collect()
}

/// An order taken in the cloud and confirmed there (orders come from the
/// channels, through the cloud), known at the edge.
async fn order(s: &Site, reference: &str) -> depot_protocol::OrderId {
    let (o, _) = s
        .cloud
        .create_order(
            s.c,
            from(
                json!({"channel": "web", "external_ref": reference, "warehouse_id": s.w.0,
                "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123",
                    "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"},
                "lines": [{"sku": "A", "quantity": 1}]}),
            ),
        )
        .await
        .expect("order");
    s.cloud
        .set_order_status(s.c, o.id, OrderStatus::Confirmed, None)
        .await
        .expect("confirm");
    pull(s).await;
    o.id
}

/// Packs an order on `wms` in `packages` parcels.
async fn pack(
    wms: &Wms,
    s: &Site,
    order: depot_protocol::OrderId,
    packages: usize,
) -> Result<Shipment, WmsError> {
    let parcels: Vec<Value> = (0..packages).map(|_| json!({"weight_g": 500})).collect();
    Ok(wms
        .pack_order(
            s.c,
            from(json!({"order_id": order, "items": [{"code": "A"}], "packages": parcels})),
        )
        .await?
        .shipment)
}

/// An order taken in the cloud and packed on `wms`.
async fn packed(
    wms: &Wms,
    s: &Site,
    reference: &str,
    packages: usize,
) -> Result<Shipment, WmsError> {
    let o = order(s, reference).await;
    pack(wms, s, o, packages).await
}

fn ssccs(s: &Shipment) -> Vec<Sscc> {
    s.packages
        .iter()
        .map(|p| Sscc::parse(p.sscc.as_deref().expect("an SSCC")).expect("valid"))
        .collect()
}

fn serial(s: &Sscc) -> i64 {
    CompanyPrefix::parse(PREFIX)
        .expect("prefix")
        .serial_of(s)
        .expect("of the prefix")
}

#[tokio::test]
async fn every_parcel_gets_its_own_sscc_on_every_node_and_offline() {
    let mut s = site().await;
    let b: BusinessId = s.c.business_id;
    // The edge holds its block before it packs anything, and the business
    // record with the prefix.
    let at_edge = s.edge.business(b).await.expect("business");
    assert_eq!(at_edge.gs1_company_prefix.as_deref(), Some(PREFIX));

    // Offline, the edge packs 100 parcels: its whole block, each distinct.
    let mut orders = Vec::new();
    for n in 0..3 {
        orders.push(order(&s, &format!("E{n}")).await);
    }
    let mut all = BTreeSet::new();
    let mut edge_serials = Vec::new();
    for o in &orders[..2] {
        let shipment = pack(&s.edge, &s, *o, 50).await.expect("pack");
        for sscc in ssccs(&shipment) {
            edge_serials.push(serial(&sscc));
            assert!(all.insert(sscc));
        }
    }
    // The 101st is refused whole, saying why, and leaves nothing behind.
    let before = log(&s).await.len();
    let e = pack(&s.edge, &s, orders[2], 1).await.expect_err("used up");
    assert!(
        matches!(e, WmsError::Conflict { ref message, .. } if message.contains("used every SSCC")),
        "{e:?}"
    );
    let shipments = s
        .edge
        .list_shipments(b, Default::default(), Default::default())
        .await
        .expect("list")
        .rows;
    assert_eq!(shipments.len(), 2);
    assert_eq!(log(&s).await.len(), before);

    // The cloud packs meanwhile, from its own blocks.
    for n in 0..3 {
        let shipment = packed(&s.cloud, &s, &format!("C{n}"), 40)
            .await
            .expect("pack");
        for sscc in ssccs(&shipment) {
            assert!(!edge_serials.contains(&serial(&sscc)));
            assert!(all.insert(sscc));
        }
    }

    // Back online: the cloud takes every parcel, and grants the edge its
    // next block, which reaches it and lets it pack again.
    let events = log(&s).await;
    assert_eq!(push(&mut s, events).await, Vec::<String>::new());
    pull(&s).await;
    let shipment = packed(&s.edge, &s, "E3", 3).await.expect("pack again");
    for sscc in ssccs(&shipment) {
        assert!(all.insert(sscc));
    }
    let events = log(&s).await;
    assert_eq!(push(&mut s, events).await, Vec::<String>::new());
    // Both nodes hold every parcel, with the same SSCCs.
    pull(&s).await;
    for wms in [&s.cloud, &s.edge] {
        let page = depot_protocol::Page::parse(Some(0), Some(1000)).expect("page");
        let depot_protocol::Listed { rows: list, .. } = wms
            .list_shipments(b, Default::default(), page)
            .await
            .expect("list");
        let here: BTreeSet<Sscc> = list.iter().flat_map(ssccs).collect();
        assert_eq!(here, all);
    }
    assert_eq!(all.len(), 223);
}

#[tokio::test]
async fn the_cloud_refuses_a_parcel_numbered_outside_the_boxs_blocks() {
    let mut s = site().await;
    let cloud_parcel = packed(&s.cloud, &s, "C1", 1).await.expect("cloud pack");
    let taken = cloud_parcel.packages[0].sscc.clone().expect("sscc");
    packed(&s.edge, &s, "E1", 2).await.expect("edge pack");
    let mut events = log(&s).await;
    let i = events
        .iter()
        .position(|e| e.kind == "shipment.packed")
        .expect("packed");
    // A box (a bug, a tampered database) sends the cloud's own SSCC, then a
    // number of another company's prefix.
    for (j, forged) in [(0, taken.as_str()), (1, "340123450000000003")] {
        let mut payload: Value = serde_json::from_str(events[i].payload.get()).expect("json");
        payload["packages"][j]["sscc"] = json!(forged);
        events[i].payload =
            serde_json::value::RawValue::from_string(payload.to_string()).expect("raw");
    }
    let rejected = push(&mut s, events).await;
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert!(
        rejected[0].contains("is not in a block granted to node"),
        "{rejected:?}"
    );
    // Nothing of it was applied.
    let depot_protocol::Listed { rows: list, .. } = s
        .cloud
        .list_shipments(s.c.business_id, Default::default(), Default::default())
        .await
        .expect("list");
    assert_eq!(list.len(), 1);
}

#[tokio::test]
async fn the_dock_scans_each_parcel_and_the_run_waits_for_the_last() {
    let mut s = site().await;
    let b = s.c.business_id;
    let one = packed(&s.edge, &s, "D1", 2).await.expect("pack");
    let two = packed(&s.edge, &s, "D2", 1).await.expect("pack");
    let run = one.dispatch_run_id.expect("run");
    assert_eq!(two.dispatch_run_id, Some(run));
    let scan = |code: String| LoadRequest { code };
    // The first parcel by its SSCC as a GS1-128 scanner sends it.
    let first = ssccs(&one)[0].to_string();
    let r = s
        .edge
        .load_package(s.c, run, scan(format!("]C100{first}")))
        .await
        .expect("load");
    assert_eq!(
        (r.shipment_id, r.package, r.already_loaded),
        (one.id, 1, false)
    );
    assert_eq!((r.packages, r.loaded), (3, 1));
    // Again, as the HRI reads: nothing changes.
    let again = s
        .edge
        .load_package(s.c, run, scan(format!("(00) {first}")))
        .await
        .expect("again");
    assert!(again.already_loaded);
    assert_eq!(again.loaded, 1);
    // The shipment's number is not a parcel's when it has two.
    let e = s
        .edge
        .load_package(s.c, run, scan(one.tracking_number.clone()))
        .await
        .expect_err("whole shipment");
    assert!(e.to_string().contains("own barcode"), "{e}");
    // Closing now would leave two parcels on the dock: each is named.
    let e = s
        .edge
        .close_dispatch_run(s.c, run, false)
        .await
        .expect_err("missing");
    let WmsError::Conflict { message, errors } = &e else {
        panic!("{e:?}")
    };
    assert!(message.contains("2 of 3 packages not loaded"), "{message}");
    let named: Vec<&str> = errors.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        named,
        [
            format!("{}-02", one.tracking_number),
            two.tracking_number.clone()
        ]
    );
    // The second parcel by its piece number, the third by its 18 digits.
    s.edge
        .load_package(s.c, run, scan(format!("{}-02", one.tracking_number)))
        .await
        .expect("piece");
    let done = s
        .edge
        .load_package(s.c, run, scan(ssccs(&two)[0].to_string()))
        .await
        .expect("digits");
    assert_eq!(done.loaded, 3);
    // Unknown and foreign codes are told apart from a parcel of another run.
    let e = s
        .edge
        .load_package(s.c, run, scan("999999999999999999".into()))
        .await
        .expect_err("unknown");
    assert!(matches!(e, WmsError::NotFound(_)), "{e:?}");
    let closed = s
        .edge
        .close_dispatch_run(s.c, run, false)
        .await
        .expect("close");
    assert_eq!(closed.loaded, 3);
    // A parcel packed after belongs to the next run: kept off this one.
    let late = packed(&s.edge, &s, "D3", 1).await.expect("pack");
    assert_ne!(late.dispatch_run_id, Some(run));
    let e = s
        .edge
        .load_package(s.c, run, scan(late.tracking_number.clone()))
        .await
        .expect_err("another run");
    assert!(e.to_string().contains("keep it off this vehicle"), "{e}");
    // The cloud learns which parcels were loaded, and when.
    let events = log(&s).await;
    assert_eq!(push(&mut s, events).await, Vec::<String>::new());
    let at_cloud = s.cloud.shipment(b, one.id).await.expect("shipment");
    assert!(at_cloud.packages.iter().all(|p| p.loaded_at.is_some()));
    // Forcing closes a run with a parcel left, for when that is the truth.
    let other = packed(&s.edge, &s, "D4", 1).await.expect("pack");
    let next = late.dispatch_run_id.expect("run");
    assert_eq!(other.dispatch_run_id, Some(next));
    s.edge
        .load_package(s.c, next, scan(late.tracking_number.clone()))
        .await
        .expect("load");
    assert!(s.edge.close_dispatch_run(s.c, next, false).await.is_err());
    s.edge
        .close_dispatch_run(s.c, next, true)
        .await
        .expect("forced");
}
