//! A pack that fails at any step leaves the database exactly as it was;
//! an order that cannot be shipped is refused before anything is written.

use super::pack_and_render;
use crate::{Result, Wms, WmsError};
use depot_protocol::OrderStatus;
use depot_protocol::order::Address;
use depot_protocol::shipping::PackRequest;
use depot_protocol::tenant::Caller;
use depot_sql::{Db, params};
use serde_json::{Value, json};

struct Fixture {
    wms: Wms,
    caller: Caller,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let wms = Wms::open(&dir.path().join("pack.db"), "cloud").expect("open");
    let b = wms
        .create_business("Ωmega Λtd", "EUR", "Europe/Athens")
        .await
        .expect("business");
    let from = Address {
        name: Some("Αποθήκη Πειραιά".into()),
        line1: Some("Λεωφόρος Ποσειδώνος 12".into()),
        city: Some("Πειραιάς".into()),
        postal_code: Some("185 31".into()),
        country: Some("GR".into()),
        ..Address::default()
    };
    let w = wms
        .create_warehouse(b.id, "PIR1", "Piraeus", from, true)
        .await
        .expect("warehouse");
    let k = wms.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: k.key.id,
        business_id: b.id,
    };
    let item = serde_json::from_value(
        json!({"sku": "ΚΑΦΕ-1", "name": "Ελληνικός καφές", "barcodes": ["KAFE-1"]}),
    )
    .expect("item");
    wms.create_item(b.id, item).await.expect("create item");
    let adjust = serde_json::from_value(
        json!({"warehouse_id": w.id.0, "sku": "ΚΑΦΕ-1", "reason": "received", "quantity": 50}),
    )
    .expect("adjust");
    wms.adjust(caller, adjust).await.expect("stock");
    Fixture {
        wms,
        caller,
        _dir: dir,
    }
}

impl Fixture {
    /// A confirmed order of two units to `address`.
    async fn order(&self, reference: &str, address: Value) -> i64 {
        self.try_order(reference, address).await.expect("confirm")
    }

    /// An order of two units to `address`, and its confirmation.
    async fn try_order(&self, reference: &str, address: Value) -> Result<i64> {
        let req = serde_json::from_value(json!({
            "channel": "web", "external_ref": reference, "shipping_address": address,
            "buyer": {"name": "Ελένη"}, "lines": [{"sku": "ΚΑΦΕ-1", "quantity": 2}]
        }))
        .expect("order");
        let (order, _) = self
            .wms
            .create_order(self.caller, req)
            .await
            .expect("create");
        self.wms
            .set_order_status(self.caller, order.id, OrderStatus::Confirmed, None)
            .await?;
        Ok(order.id.0)
    }

    async fn pack(
        &self,
        order: i64,
        packages: Value,
        fail_at: Option<&'static str>,
    ) -> Result<Vec<&'static str>> {
        let req: PackRequest = serde_json::from_value(json!({
            "order_id": order, "items": [{"code": "KAFE-1", "quantity": 2}], "packages": packages
        }))
        .expect("pack request");
        let (caller, origin) = (self.caller, self.wms.origin().to_owned());
        let fleet = self.wms.own_fleet();
        self.wms
            .write(move |conn| {
                let mut steps = Vec::new();
                pack_and_render(conn, &origin, &caller, req, &fleet, &mut |step| {
                    steps.push(step);
                    if Some(step) == fail_at {
                        return Err(WmsError::Internal(format!("injected at {step}")));
                    }
                    Ok(())
                })?;
                Ok(steps)
            })
            .await
    }

    /// Every row of every table, as text: two snapshots are equal only if
    /// nothing was written in between.
    async fn snapshot(&self) -> Vec<String> {
        self.wms.read(|conn| Ok(dump(conn))).await.expect("dump")
    }
}

fn dump(conn: &Db) -> Vec<String> {
    let mut out = Vec::new();
    let tables: Vec<String> = conn
        .query_map(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
            params![],
            |r| r.get(0),
        )
        .expect("tables");
    for t in tables {
        let rows: Vec<String> = conn
            .query_map(&format!("SELECT * FROM \"{t}\""), params![], |r| {
                let mut row = format!("{t}:");
                for i in 0..r.column_count() {
                    row.push_str(&format!("{:?}|", r.get_ref(i)?));
                }
                Ok(row)
            })
            .expect("rows");
        out.extend(rows);
    }
    out.sort();
    out
}

fn full_address(line1: &str, city: &str) -> Value {
    json!({"name": "Ελένη Παπαδοπούλου", "line1": line1, "city": city, "postal_code": "546 24", "country": "GR"})
}

#[tokio::test]
async fn a_failure_at_any_step_leaves_nothing() {
    let f = fixture().await;
    let order = f
        .order(
            "Παραγγελία-Éric-12",
            full_address("Τσιμισκή 43", "Θεσσαλονίκη"),
        )
        .await;
    let two = json!([{"weight_g": 800}, {"weight_g": 1200, "length_mm": 300, "width_mm": 200, "height_mm": 100}]);
    // A dry run that fails at the end names every step.
    let before = f.snapshot().await;
    let Err(_) = f.pack(order, two.clone(), Some("slip_pdf")).await else {
        panic!("the injected failure should fail the pack")
    };
    assert_eq!(f.snapshot().await, before, "failed at slip_pdf");
    let mut steps = Vec::new();
    for step in [
        "status",
        "run",
        "shipment",
        "tracking",
        "package",
        "milestone",
        "event",
        "slip_zpl",
    ] {
        let r = f.pack(order, two.clone(), Some(step)).await;
        assert!(
            matches!(&r, Err(WmsError::Internal(m)) if m.contains(step)),
            "{step}: {r:?}"
        );
        assert_eq!(f.snapshot().await, before, "failed at {step}");
        steps.push(step);
    }
    let done = f.pack(order, two, None).await.expect("the pack itself");
    for step in steps {
        assert!(done.contains(&step), "{step} never ran: {done:?}");
    }
    assert_eq!(done.iter().filter(|s| **s == "package").count(), 2);
    assert_ne!(f.snapshot().await, before);
}

#[tokio::test]
async fn an_order_that_cannot_ship_is_refused_before_any_write() {
    let f = fixture().await;
    // Addresses the country's rules refuse cannot even be confirmed.
    let cases = [
        (json!(null), "shipping_address.country"),
        (
            json!({"city": "Αθήνα", "country": "GR"}),
            "shipping_address.line1",
        ),
        (
            json!({"line1": "Ερμού 1", "city": "Αθήνα", "postal_code": "105 63"}),
            "shipping_address.country",
        ),
        (
            json!({"line1": "Ερμού 1", "city": "Αθήνα", "postal_code": "10563-1", "country": "GR"}),
            "shipping_address.postal_code",
        ),
    ];
    for (i, (address, field)) in cases.into_iter().enumerate() {
        let before = f.snapshot().await;
        let Err(WmsError::Invalid { errors, .. }) = f.try_order(&format!("BAD-{i}"), address).await
        else {
            panic!("case {i} was confirmed")
        };
        assert!(
            errors.iter().any(|e| e.name == field),
            "case {i}: {errors:?}"
        );
        // The order itself is kept as the channel sent it; confirming wrote
        // nothing.
        let after = f.snapshot().await;
        assert!(after.len() > before.len(), "case {i}: the order is kept");
    }
    // An address the rules accept but no label can hold whole is refused at
    // pack, before anything is written.
    let long = json!({"name": "Ω".repeat(100), "line1": "Ω".repeat(199), "line2": "Ω".repeat(199),
                      "city": "Ω".repeat(100), "region": "Ω".repeat(100), "postal_code": "105 63",
                      "country": "GR"});
    let order = f.order("LONG", long).await;
    let before = f.snapshot().await;
    let r = f.pack(order, json!([{"weight_g": 500}]), None).await;
    let Err(WmsError::Invalid { errors, .. }) = &r else {
        panic!("a label that cannot hold the address: {r:?}")
    };
    assert_eq!(errors[0].name, "shipping_address", "{errors:?}");
    assert_eq!(f.snapshot().await, before);
    // A piece the carrier does not take, likewise.
    let order = f.order("HEAVY", full_address("Ερμού 1", "Αθήνα")).await;
    let before = f.snapshot().await;
    let r = f
        .pack(
            order,
            json!([{"weight_g": 500}, {"weight_g": 999_000}]),
            None,
        )
        .await;
    let Err(WmsError::Invalid { errors, .. }) = &r else {
        panic!("a 999 kg parcel: {r:?}")
    };
    assert_eq!(errors[0].name, "packages[1]", "{errors:?}");
    assert_eq!(f.snapshot().await, before);
}

#[tokio::test]
async fn any_order_reference_packs_with_its_documents() {
    let f = fixture().await;
    for reference in [
        "Commande-Éric-12".to_owned(),
        "x".repeat(67),
        "订单-东京-7".into(),
        "طلب-٤٥".into(),
    ] {
        let order = f
            .order(&reference, full_address("Τσιμισκή 43", "Θεσσαλονίκη"))
            .await;
        let steps = f
            .pack(order, json!([{"weight_g": 250}]), None)
            .await
            .unwrap_or_else(|e| panic!("{reference}: {e}"));
        assert!(steps.contains(&"slip_pdf"));
    }
}

#[tokio::test]
async fn a_station_pack_prints_its_labels_in_the_same_write_or_does_nothing() {
    let f = fixture().await;
    let b = f.caller.business_id;
    f.wms
        .set_gs1_prefix(b, Some("5201234"))
        .await
        .expect("prefix");
    let printer = |name: &str, kind: &str| {
        serde_json::from_value(
            json!({"name": name, "kind": kind, "connection": "tcp://192.0.2.7:9100"}),
        )
        .expect("printer")
    };
    let pdf = f
        .wms
        .create_printer(b, printer("Office", "pdf"))
        .await
        .expect("pdf printer");
    let zpl = f
        .wms
        .create_printer(b, printer("Pack 1", "zpl"))
        .await
        .expect("zpl printer");
    let order = f
        .order("ST-1", full_address("Τσιμισκή 43", "Θεσσαλονίκη"))
        .await;
    let req = || -> PackRequest {
        serde_json::from_value(
            json!({"order_id": order, "items": [{"code": "KAFE-1", "quantity": 2}],
                                      "packages": [{"weight_g": 800}, {"weight_g": 900}]}),
        )
        .expect("pack request")
    };
    // A printer that cannot take ZPL: the pack is refused whole.
    let before = f.snapshot().await;
    let r = f.wms.pack_and_print(f.caller, req(), pdf.id).await;
    let Err(WmsError::Conflict { message, .. }) = &r else {
        panic!("{r:?}")
    };
    assert!(message.contains("nothing was packed"), "{message}");
    assert_eq!(f.snapshot().await, before);
    // A label printer: packed, and a label per package queued with it.
    let (packed, job) = f
        .wms
        .pack_and_print(f.caller, req(), zpl.id)
        .await
        .expect("pack and print");
    assert_eq!(job.printer_id, zpl.id);
    let data = f
        .wms
        .read(move |conn| {
            Ok(conn.query_row(
                "SELECT data FROM print_jobs WHERE id = ?1",
                params![job.id.0],
                |r| r.get::<Vec<u8>>(0),
            )?)
        })
        .await
        .expect("job data");
    let zpl_text = String::from_utf8(data).expect("utf-8");
    assert_eq!(zpl_text.matches("^XA").count(), 2);
    for p in &packed.shipment.packages {
        let sscc = p.sscc.as_deref().expect("an SSCC");
        assert!(zpl_text.contains(&format!(">;>800{sscc}")), "{sscc}");
    }
}
