//! The engine a sequence runs on (two warehouses, their locations, sales
//! channels, two items, an inbound order) and the model beside it.

use super::*;

pub(super) fn code(at: usize) -> Option<String> {
    match at {
        DOCK => Some("DOCK".to_owned()),
        PICK => Some("P-0".to_owned()),
        RET => Some("RET".to_owned()),
        QUAR => Some("Q".to_owned()),
        at => LOCATIONS.get(at).map(|c| (*c).to_owned()),
    }
}

pub(super) struct World {
    pub(super) wms: Wms,
    pub(super) caller: Caller,
    pub(super) items: Vec<ItemId>,
    pub(super) whs: Vec<WarehouseId>,
    pub(super) inbound: i64,
    pub(super) _dir: tempfile::TempDir,
}

pub(super) async fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let wms = Wms::open(&dir.path().join("p.db"), "cloud").expect("open");
    let b = wms
        .create_business("P", "EUR", "UTC")
        .await
        .expect("business");
    let mut whs = Vec::new();
    for code in ["A", "B"] {
        whs.push(
            wms.create_warehouse(b.id, code, code, Address::default(), false)
                .await
                .expect("wh")
                .id,
        );
    }
    for wh in &whs {
        for code in LOCATIONS {
            let fields = serde_json::from_value(
                serde_json::json!({"warehouse_id": wh.0, "code": code, "type": "bulk"}),
            )
            .expect("fields");
            wms.create_location(b.id, fields).await.expect("location");
        }
    }
    for (code, kind) in [
        ("DOCK", "dock"),
        ("P-0", "pick"),
        ("RET", "returns"),
        ("Q", "quarantine"),
    ] {
        let fields = serde_json::from_value(
            serde_json::json!({"warehouse_id": whs[0].0, "code": code, "type": kind}),
        )
        .expect("fields");
        wms.create_location(b.id, fields).await.expect("location");
    }
    // Sales channels over either warehouse, both, with each kind of rule:
    // their figures must follow every op below.
    for (code, whs_of, rules) in CHANNELS {
        let ids: Vec<i64> = whs_of.iter().map(|i| whs[*i].0).collect();
        let mut body = serde_json::json!({"code": code, "name": code, "kind": "marketplace",
            "warehouse_ids": ids});
        for (k, v) in rules {
            body[k] = serde_json::json!(v);
        }
        let fields = serde_json::from_value(body).expect("channel");
        wms.create_channel(b.id, fields).await.expect("channel");
    }
    let k = wms.create_key(b.id, None).await.expect("key");
    let caller = Caller {
        key_id: k.key.id,
        business_id: b.id,
    };
    let mut items = Vec::new();
    for sku in ["X", "Y"] {
        let req =
            serde_json::from_value(serde_json::json!({"sku": sku, "name": sku})).expect("item");
        items.push(wms.create_item(b.id, req).await.expect("create").id);
    }
    let inbound = wms
        .create_inbound(
            b.id,
            serde_json::from_value(serde_json::json!({"warehouse_id": whs[0].0,
                "reference": "PO-1", "supplier": "S",
                "lines": [{"sku": "X", "quantity": 1000}, {"sku": "Y", "quantity": 1000}]}))
            .expect("inbound"),
        )
        .await
        .expect("inbound")
        .id;
    World {
        wms,
        caller,
        items,
        whs,
        inbound,
        _dir: dir,
    }
}

pub(super) fn adjust(wh: WarehouseId, item: ItemId, reason: MovementReason) -> AdjustRequest {
    AdjustRequest {
        warehouse_id: wh,
        item_id: Some(item),
        sku: None,
        reason,
        quantity: None,
        delta: None,
        counted: None,
        to_warehouse_id: None,
        location: None,
        to_location: None,
        reference: None,
        note: None,
    }
}

/// The model: on-hand per (item, warehouse, location), orders by
/// reference.
#[derive(Default)]
pub(super) struct Model {
    pub(super) on_hand: HashMap<(usize, usize, usize), i64>,
    pub(super) orders: HashMap<u8, (OrderId, usize, i64, OrderStatus)>,
    /// Putaway tasks still open: id, item, units left where they wait
    /// (the dock, or the returns bay).
    pub(super) tasks: Vec<(depot_protocol::PutawayTaskId, usize, i64, usize)>,
    /// Units of each order on returns.
    pub(super) returned: HashMap<u8, i64>,
    /// Units of each order picked, by where they were picked.
    pub(super) picked: HashMap<u8, Vec<(usize, i64)>>,
}

impl Model {
    pub(super) fn total(&self, item: usize, wh: usize) -> i64 {
        (0..=QUAR)
            .map(|at| self.on_hand.get(&(item, wh, at)).copied().unwrap_or(0))
            .sum()
    }

    pub(super) fn add(&mut self, item: usize, wh: usize, at: usize, delta: i64) {
        *self.on_hand.entry((item, wh, at)).or_default() += delta;
    }

    /// Units pending orders sold and have not reserved: the channels'
    /// figures count them as sold.
    pub(super) fn pending(&self, item: usize) -> i64 {
        self.orders
            .values()
            .filter(|(_, i, _, s)| *i == item && *s == OrderStatus::Pending)
            .map(|(_, _, q, _)| q)
            .sum()
    }

    pub(super) fn reserved(&self, item: usize) -> i64 {
        self.orders
            .values()
            .filter(|(_, i, _, s)| *i == item && s.holds_reservation())
            .map(|(_, _, q, _)| q)
            .sum()
    }
}
