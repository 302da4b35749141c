//! The catalog: items, unique per business by SKU and by every code.

use crate::store::{self, catalog as sql, tenants};
use crate::{Result, Wms, WmsError};
use depot_protocol::catalog::{Item, ItemCreate, ItemEdit, ItemFields};
use depot_protocol::event::EventKind;
use depot_protocol::{BusinessId, FieldError, ItemId, Page, now};
use depot_sql::Db;

pub use sql::ItemFilter;

/// Checks what only the database knows: SKU and codes not taken by another
/// item, bin locations in this business's warehouses.
fn check_unique(
    conn: &Db,
    business: BusinessId,
    f: &ItemFields,
    this: Option<ItemId>,
) -> Result<()> {
    let other = |owner: Option<ItemId>| owner.is_some_and(|o| Some(o) != this);
    let mut conflicts = Vec::new();
    if other(sql::sku_owner(conn, business, &f.sku)?) {
        conflicts.push(FieldError::new(
            "sku",
            format!("SKU {} already exists", f.sku),
        ));
    }
    let mut keys = Vec::new();
    if let Some(g) = &f.gtin {
        if other(sql::code_owner(conn, business, g.as_str())?) {
            conflicts.push(FieldError::new(
                "gtin",
                format!("GTIN {g} belongs to another item"),
            ));
        }
        keys.push(sql::code_key(g.as_str()));
    }
    for (i, b) in f.barcodes.iter().enumerate() {
        let key = sql::code_key(b.as_str());
        if keys.contains(&key) {
            conflicts.push(FieldError::new(
                format!("barcodes[{i}]"),
                "is the same code as the GTIN or another barcode",
            ));
        } else if other(sql::code_owner(conn, business, b.as_str())?) {
            conflicts.push(FieldError::new(
                format!("barcodes[{i}]"),
                format!("{} belongs to another item", b.as_str()),
            ));
        }
        keys.push(key);
    }
    if !conflicts.is_empty() {
        let message = conflicts
            .iter()
            .map(|e| e.status.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(WmsError::Conflict {
            message,
            errors: conflicts,
        });
    }
    let mut unknown = Vec::new();
    for (i, l) in f.locations.iter().enumerate() {
        if tenants::warehouse(conn, business, l.warehouse_id)?.is_none() {
            unknown.push(FieldError::new(
                format!("locations[{i}].warehouse_id"),
                "no such warehouse in this business",
            ));
        }
    }
    if !unknown.is_empty() {
        return Err(WmsError::invalid(unknown));
    }
    Ok(())
}

fn load(conn: &Db, business: BusinessId, id: ItemId) -> Result<Item> {
    sql::item(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("item {id} does not exist")))
}

impl Wms {
    pub async fn create_item(&self, business: BusinessId, req: ItemCreate) -> Result<Item> {
        let fields = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            check_unique(conn, business, &fields, None)?;
            let id = sql::insert_item(conn, business, &fields, &now())?;
            crate::locations::record_assignments(conn, &origin, Some(id))?;
            let item = load(conn, business, id)?;
            store::events::append(conn, &origin, Some(business), EventKind::ItemCreated, &item)?;
            Ok(item)
        })
        .await
    }

    pub async fn edit_item(
        &self,
        business: BusinessId,
        id: ItemId,
        edit: ItemEdit,
    ) -> Result<Item> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            let current = load(conn, business, id)?;
            let fields = edit
                .apply(sql::fields(&current))
                .map_err(WmsError::invalid)?;
            check_unique(conn, business, &fields, Some(id))?;
            sql::update_item(conn, business, id, &fields, &now())?;
            crate::locations::record_assignments(conn, &origin, Some(id))?;
            let item = load(conn, business, id)?;
            store::events::append(conn, &origin, Some(business), EventKind::ItemUpdated, &item)?;
            Ok(item)
        })
        .await
    }

    pub async fn item(&self, business: BusinessId, id: ItemId) -> Result<Item> {
        self.read(move |conn| load(conn, business, id)).await
    }

    pub async fn list_items(
        &self,
        business: BusinessId,
        filter: ItemFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Item>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}
