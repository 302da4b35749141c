//! `depot demo`: the cloud on embedded defaults, seeded with a business that
//! looks like a real one, and the lines to try it with; one edge with a
//! packing station on simulated devices ([`station`]); [`start`] starts
//! it all.

mod addresses;
pub mod banner;
mod labels;
mod releases;
mod run;
pub mod station;
mod trigger;

pub use run::{Options, Running, start};

/// Where what happens at the station is told: a line at a time.
pub type Announce = std::sync::Arc<dyn Fn(String) + Send + Sync>;

use anyhow::Context;
use depot_protocol::barcode::gs1_check_digit;
use depot_protocol::catalog::ItemCreate;
use depot_protocol::inbound::InboundCreate;
use depot_protocol::order::{Buyer, OrderStatus};
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, Money, WarehouseId};
use depot_wms::Wms;
use serde_json::{Value, json};

pub const DEMO_NAME: &str = "Demo Outfitters";

/// The demo's edge, registered on first use.
pub const DEMO_EDGE: &str = "demo-edge";

/// The demo edge's node number, registering it on first use.
pub async fn edge_node(wms: &Wms, business: BusinessId) -> anyhow::Result<u32> {
    let id = depot_protocol::sync::EdgeId::parse(DEMO_EDGE)?;
    if let Some(e) = wms.edge(business, id.clone()).await? {
        return Ok(e.node);
    }
    Ok(wms
        .register_edge(business, id, Some("Demo warehouse box".into()))
        .await?
        .node)
}

/// The demo's GS1 company prefix: the one GS1's own documents use in their
/// examples (no real company's), so every demo parcel gets an SSCC.
pub const DEMO_GS1_PREFIX: &str = "0614141";

/// What the demo's own-fleet carrier signs its webhooks with.
pub const DEMO_WEBHOOK_SECRET: &str = "demo-webhook-secret";

/// What a demo run needs to tell its user.
#[derive(Debug, Clone)]
pub struct Demo {
    pub business: BusinessId,
    pub key: String,
    /// A second operator's key: a count's recount is someone else's.
    pub second_key: String,
}

/// One request to try, printed as `curl` and run as-is by the tests.
#[derive(Debug, Clone)]
pub struct Example {
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
}

impl Example {
    pub fn curl(&self, base: &str, key: &str) -> String {
        let mut line = format!("curl -s -H 'X-API-KEY: {key}'");
        if self.method != "GET" {
            line.push_str(&format!(" -X {}", self.method));
        }
        if let Some(body) = &self.body {
            line.push_str(&format!(" -H 'Content-Type: application/json' -d '{body}'"));
        }
        line.push_str(&format!(" '{base}{}'", self.path));
        line
    }
}

pub fn examples(business: BusinessId) -> Vec<Example> {
    vec![
        Example {
            method: "GET",
            path: format!("/v1/orders/{business}/list?status=confirmed&length=5"),
            body: None,
        },
        Example {
            method: "GET",
            path: format!("/v1/inventory/{business}/items/list?sku=DEMO-001"),
            body: None,
        },
        Example {
            method: "POST",
            path: format!("/v1/orders/{business}/create"),
            body: Some(
                json!({"channel": "webshop", "external_ref": "TRY-1", "buyer": {"name": "Ada Lovelace"},
                              "lines": [{"sku": "DEMO-001", "quantity": 1}]}),
            ),
        },
    ]
}

const CATEGORIES: [(&str, &str); 6] = [
    ("Backpacks", "Trailhead"),
    ("Tents", "Trailhead"),
    ("Jackets", "Northwind"),
    ("Footwear", "Northwind"),
    ("Lighting", "Lumen"),
    ("Cookware", "Campfire"),
];

/// A valid EAN-13 in the GS1 range reserved for demonstrations (prefix 200).
fn demo_gtin(n: usize) -> String {
    let data: Vec<u8> = format!("200000{n:06}").bytes().map(|b| b - b'0').collect();
    let check = gs1_check_digit(&data);
    format!("200000{n:06}{check}")
}

pub use releases::translations;

/// Opens the demo database, seeding it on first use, and creates a fresh key.
pub async fn prepare(wms: &Wms) -> anyhow::Result<Demo> {
    let business = match wms
        .businesses()
        .await?
        .into_iter()
        .find(|b| b.name == DEMO_NAME)
    {
        Some(b) => b.id,
        None => seed(wms).await.context("seeding the demo business")?,
    };
    // Here rather than in the seed: a business seeded by an earlier demo
    // gets the station's printer too.
    station::printer_record(wms, business)
        .await
        .context("the packing station's printer")?;
    releases::publish(wms).await?;
    let key = wms.create_key(business, Some("demo".into())).await?;
    let second = wms
        .create_key(business, Some("demo, second operator".into()))
        .await?;
    Ok(Demo {
        business,
        key: key.secret,
        second_key: second.secret,
    })
}

/// The demo's orders: how many end in each status (the README says how
/// many in all).
const ORDER_PLAN: [(OrderStatus, usize); 7] = [
    (OrderStatus::Pending, 8),
    (OrderStatus::Confirmed, 8),
    (OrderStatus::Picking, 5),
    (OrderStatus::Packed, 5),
    (OrderStatus::Dispatched, 5),
    (OrderStatus::Delivered, 6),
    (OrderStatus::Cancelled, 3),
];

async fn seed(wms: &Wms) -> anyhow::Result<BusinessId> {
    let b = wms
        .create_business(DEMO_NAME, "EUR", "Europe/Madrid")
        .await?;
    wms.set_gs1_prefix(b.id, Some(DEMO_GS1_PREFIX)).await?;
    let madrid = addresses::madrid();
    let barcelona = addresses::barcelona();
    let w1 = wms
        .create_warehouse(b.id, "MAD1", "Madrid fulfilment centre", madrid, true)
        .await?
        .id;
    let w2 = wms
        .create_warehouse(b.id, "BCN1", "Barcelona overflow", barcelona, false)
        .await?
        .id;
    // A dock and reserve racks in each warehouse; the pick faces are the
    // items' own locations, made as the items are.
    for (w, code, kind, sequence) in [
        (w1, "DOCK-1", "dock", 0),
        (w1, "STAGE-1", "staging", 10),
        (w1, "B-01", "bulk", 500),
        (w1, "B-02", "bulk", 510),
        (w1, "RET-1", "returns", 900),
        (w1, "Q-1", "quarantine", 910),
        (w2, "DOCK-1", "dock", 0),
        (w2, "B-01", "bulk", 500),
    ] {
        let fields = serde_json::from_value(
            json!({"warehouse_id": w.0, "code": code, "type": kind, "sequence": sequence}),
        )?;
        wms.create_location(b.id, fields).await?;
    }
    let seeder = wms.create_key(b.id, Some("demo seeding".into())).await?;
    let caller = Caller {
        key_id: seeder.key.id,
        business_id: b.id,
    };

    for n in 1..=36usize {
        let (category, brand) = CATEGORIES[n % CATEGORIES.len()];
        let sku = format!("DEMO-{n:03}");
        let req: ItemCreate = serde_json::from_value(json!({
            "sku": sku,
            "name": format!("{brand} {} {n}", category.trim_end_matches('s')),
            "brand": brand,
            "category": category,
            "gtin": demo_gtin(n),
            "dimensions": {"length_mm": 200 + n as i64 * 10, "width_mm": 150, "height_mm": 80 + n as i64},
            "weight_g": 250 + n as i64 * 40,
            "prices": [{"price_list_id": 1, "amount": Money(1999 + n as i64 * 250).to_string(), "currency": "EUR"},
                       {"price_list_id": 2, "amount": Money(1499 + n as i64 * 200).to_string(), "currency": "EUR"}],
            "links": [{"channel": "webshop", "url": format!("https://shop.example.com/p/{}", sku.to_lowercase())}],
            "locations": [{"warehouse_id": w1.0, "location": format!("A-{:02}-{}", n / 6 + 1, n % 6 + 1)}]
        }))?;
        wms.create_item(b.id, req).await?;
        receive(wms, caller, w1, &sku, 20 + (n as i64 * 7) % 40).await?;
        if n % 3 == 0 {
            receive(wms, caller, w2, &sku, 10).await?;
        }
    }

    // Orders walked to every status, so lists and filters have something to show.
    let buyers = addresses::buyers();
    let plan = ORDER_PLAN;
    let path = [
        OrderStatus::Confirmed,
        OrderStatus::Picking,
        OrderStatus::Packed,
        OrderStatus::Dispatched,
        OrderStatus::Delivered,
    ];
    let mut n = 0usize;
    for (target, count) in plan {
        for _ in 0..count {
            n += 1;
            let to = buyers[n % buyers.len()].clone();
            let buyer = to.name.clone().unwrap_or_default();
            let req = OrderCreate {
                channel: ["webshop", "marketplace", "pos"][n % 3].into(),
                external_ref: format!("DEMO-{n:04}"),
                warehouse_id: Some(w1),
                buyer: Some(Buyer {
                    name: Some(buyer),
                    email: Some(format!("buyer{}@example.com", n % buyers.len() + 1)),
                    phone: None,
                }),
                shipping_address: Some(to),
                payments: None,
                lines: vec![
                    OrderLineCreate {
                        sku: format!("DEMO-{:03}", n % 36 + 1),
                        quantity: 1 + (n % 3) as i64,
                        unit_price: None,
                    },
                    OrderLineCreate {
                        sku: format!("DEMO-{:03}", (n * 7) % 36 + 1),
                        quantity: 1,
                        unit_price: None,
                    },
                ],
                currency: None,
                carrier: None,
                service: None,
                ordered_at: Some(
                    depot_protocol::now() - chrono::Duration::hours((60 - n as i64) * 7),
                ),
            };
            let (order, _) = wms.create_order(caller, req).await?;
            let steps: Vec<OrderStatus> = match target {
                OrderStatus::Cancelled => vec![OrderStatus::Confirmed, OrderStatus::Cancelled],
                OrderStatus::Pending => vec![],
                t => path
                    .iter()
                    .copied()
                    .take_while(|s| *s != t)
                    .chain([t])
                    .collect(),
            };
            for s in steps {
                wms.set_order_status(caller, order.id, s, None).await?;
            }
        }
    }
    // Goods on their way in.
    let inbound: InboundCreate = serde_json::from_value(json!({
        "warehouse_id": w1.0, "reference": "PO-DEMO-1", "supplier": "Trailhead Manufacturing",
        "lines": [{"sku": "DEMO-001", "quantity": 24}, {"sku": "DEMO-002", "quantity": 12}, {"sku": "DEMO-003", "quantity": 6}]
    }))?;
    wms.create_inbound(b.id, inbound).await?;
    wms.revoke_key(seeder.key.id).await?;
    Ok(b.id)
}

async fn receive(
    wms: &Wms,
    caller: Caller,
    w: WarehouseId,
    sku: &str,
    quantity: i64,
) -> anyhow::Result<()> {
    let req = AdjustRequest {
        warehouse_id: w,
        item_id: None,
        sku: Some(sku.into()),
        reason: MovementReason::Received,
        quantity: Some(quantity),
        delta: None,
        counted: None,
        to_warehouse_id: None,
        to_location: None,
        location: None,
        reference: Some("PO-DEMO".into()),
        note: None,
    };
    wms.adjust(caller, req).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_readme_counts_the_demos_orders() {
        let total: usize = ORDER_PLAN.iter().map(|(_, n)| n).sum();
        let readme = include_str!("../../README.md");
        assert!(
            readme.contains(&format!("{total} orders in every status")),
            "README.md should say the demo seeds {total} orders"
        );
    }

    #[test]
    fn demo_gtins_are_valid_and_distinct() {
        let a = demo_gtin(1);
        assert!(depot_protocol::barcode::Gtin::parse(&a).is_ok(), "{a}");
        assert_ne!(a, demo_gtin(2));
    }

    #[test]
    fn curl_lines_quote_what_the_shell_would_mangle() {
        let e = &examples(BusinessId(1))[0];
        assert_eq!(
            e.curl("http://h", "k"),
            "curl -s -H 'X-API-KEY: k' 'http://h/v1/orders/1/list?status=confirmed&length=5'"
        );
    }
}
