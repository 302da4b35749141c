//! A business seeded into an engine: what nearly every test starts from (a
//! business, a warehouse, an API key), made one way instead of by hand in
//! each test. The defaults are the plainest; a test changes only what it is
//! about.

use depot_protocol::order::Address;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_wms::Wms;

/// What [`business`] made.
#[derive(Clone, Debug)]
pub struct Tenant {
    pub business: BusinessId,
    /// The first of [`Tenant::warehouses`].
    pub warehouse: WarehouseId,
    pub warehouses: Vec<WarehouseId>,
    /// The API key's secret, as a caller sends it.
    pub key: String,
    /// Who the key is, for calling the engine directly.
    pub caller: Caller,
    /// The ids of the items asked for, in order.
    pub items: Vec<ItemId>,
}

/// A business named `name` to seed: in EUR, on UTC, with one (hidden)
/// warehouse `W` and an unnamed key, until told otherwise.
pub fn business(name: &str) -> Business {
    Business {
        name: name.to_owned(),
        time_zone: "UTC".into(),
        warehouses: vec![("W".into(), "W".into(), false)],
        key_label: None,
        items: Vec::new(),
    }
}

/// A business to seed; [`Business::seed`] makes it.
#[derive(Clone, Debug)]
pub struct Business {
    name: String,
    time_zone: String,
    warehouses: Vec<(String, String, bool)>,
    key_label: Option<String>,
    items: Vec<String>,
}

impl Business {
    pub fn time_zone(mut self, tz: &str) -> Self {
        self.time_zone = tz.to_owned();
        self
    }

    /// Its warehouses instead of `W` (at least one): code, name, and
    /// whether its stock is shown to buyers.
    pub fn warehouses(mut self, warehouses: &[(&str, &str, bool)]) -> Self {
        self.warehouses = warehouses
            .iter()
            .map(|&(code, name, visible)| (code.to_owned(), name.to_owned(), visible))
            .collect();
        self
    }

    pub fn key_label(mut self, label: &str) -> Self {
        self.key_label = Some(label.to_owned());
        self
    }

    /// Adds an item named as its SKU, with no price.
    pub fn item(mut self, sku: &str) -> Self {
        self.items.push(sku.to_owned());
        self
    }

    /// Writes it into `wms`.
    pub async fn seed(self, wms: &Wms) -> Tenant {
        let b = wms
            .create_business(&self.name, "EUR", &self.time_zone)
            .await
            .expect("business")
            .id;
        let mut warehouses = Vec::new();
        for (code, name, visible) in &self.warehouses {
            let w = wms
                .create_warehouse(b, code, name, Address::default(), *visible)
                .await
                .expect("warehouse");
            warehouses.push(w.id);
        }
        let k = wms.create_key(b, self.key_label).await.expect("key");
        let mut items = Vec::new();
        for sku in &self.items {
            items.push(item(wms, b, sku).await);
        }
        Tenant {
            business: b,
            warehouse: *warehouses
                .first()
                .expect("a business seeded with a warehouse"),
            warehouses,
            key: k.secret,
            caller: Caller {
                key_id: k.key.id,
                business_id: b,
            },
            items,
        }
    }
}

/// Creates item `sku` (named as its SKU, no price) in `business`.
pub async fn item(wms: &Wms, business: BusinessId, sku: &str) -> ItemId {
    let req = serde_json::from_value(serde_json::json!({"sku": sku, "name": sku})).expect("item");
    wms.create_item(business, req).await.expect("item").id
}
