//! Items and everything hanging off them.

use super::{maybe, parse_ts, ts};
use crate::error::Result;
use depot_protocol::barcode::{Barcode, Gtin};
use depot_protocol::catalog::{BinLocation, Dimensions, Item, ItemFields, Price, PublicationLink};
use depot_protocol::{BusinessId, ItemId, Money, Page, PriceListId, Timestamp, WarehouseId};
use depot_sql::{Db, Row, params};
use std::sync::LazyLock;

/// The key a code is unique under: GTINs in their 14-digit form, so the
/// EAN-13 and the GTIN-14 of one product collide as they should.
pub fn code_key(code: &str) -> String {
    match Gtin::parse(code) {
        Ok(g) => g.to_gtin14(),
        Err(_) => code.to_owned(),
    }
}

/// The item that already answers to `code` in this business, if any.
pub fn code_owner(conn: &Db, business: BusinessId, code: &str) -> Result<Option<ItemId>> {
    maybe(conn.query_row(
        "SELECT item_id FROM item_codes WHERE business_id = ?1 AND code = ?2",
        params![business.0, code_key(code)],
        |r| Ok(ItemId(r.get(0)?)),
    ))
}

pub fn sku_owner(conn: &Db, business: BusinessId, sku: &str) -> Result<Option<ItemId>> {
    maybe(conn.query_row(
        "SELECT id FROM items WHERE business_id = ?1 AND sku = ?2",
        params![business.0, sku],
        |r| Ok(ItemId(r.get(0)?)),
    ))
}

/// What an order line takes from the item it names.
pub struct LineItem {
    pub id: ItemId,
    pub sku: String,
    pub name: String,
    /// The price in the item's first price list, if it has one.
    pub list_price: Option<Money>,
}

/// Sent with the reads around it ([`Db::query_later`]): an order reads
/// every line's item at once.
pub fn for_order_line(
    conn: &Db,
    business: BusinessId,
    sku: &str,
) -> Result<depot_sql::Later<LineItem>> {
    Ok(conn.query_later("SELECT i.id, i.sku, i.name,
                    (SELECT amount_cents FROM item_prices p WHERE p.item_id = i.id ORDER BY price_list_id LIMIT 1)
             FROM items i WHERE i.business_id = ?1 AND i.sku = ?2", params![business.0, sku], |r| {
            Ok(LineItem {
                id: ItemId(r.get(0)?),
                sku: r.get(1)?,
                name: r.get(2)?,
                list_price: r.get::<Option<i64>>(3)?.map(Money),
            })
        })?)
}

/// The id of the item a scanned code names, in a business (`?1`), by its
/// code as [`code_key`] makes it (`?2`) or else its SKU (`?3`, `NULL` when
/// the code is not one): [`scanned`]'s lookup, and a pick scan's lines'
/// (`picking::scanned_lines_later`).
pub const SCANNED_ITEM: &str = "COALESCE(
    (SELECT item_id FROM item_codes WHERE business_id = ?1 AND code = ?2),
    (SELECT id FROM items WHERE business_id = ?1 AND sku = ?3))";

/// What a scan needs of the item a code names: its id, SKU and whether it
/// is picked by lot. The item's barcodes answer first; its SKU only when
/// `sku` is given (a plain code may be either). Every scan of the floor asks
/// this, so it is one statement whichever way the code names the item (on
/// PostgreSQL each statement is a round trip), and one without a sort: a
/// compound query with a preference order cost twice what two statements
/// did on SQLite; the second probe here runs only when the first finds
/// nothing. `key` is the code as [`code_key`] makes it.
pub fn scanned(
    conn: &Db,
    business: BusinessId,
    key: &str,
    sku: Option<&str>,
) -> Result<Option<(ItemId, String, bool)>> {
    static SCANNED: LazyLock<String> = LazyLock::new(|| {
        format!("SELECT id, sku, lot_tracked FROM items WHERE id = {SCANNED_ITEM}")
    });
    maybe(
        conn.query_row(&SCANNED, params![business.0, key, sku], |r| {
            Ok((ItemId(r.get(0)?), r.get(1)?, r.get(2)?))
        }),
    )
}

pub fn insert_item(
    conn: &Db,
    business: BusinessId,
    f: &ItemFields,
    at: &Timestamp,
) -> Result<ItemId> {
    let inserted: i64 = conn.query_value("INSERT INTO items (business_id, sku, name, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4) RETURNING id", params![business.0, f.sku, f.name, ts(at)])?;
    let id = ItemId(inserted);
    update_item(conn, business, id, f, at)?;
    Ok(id)
}

pub fn update_item(
    conn: &Db,
    business: BusinessId,
    id: ItemId,
    f: &ItemFields,
    at: &Timestamp,
) -> Result<()> {
    conn.execute("UPDATE items SET sku = ?3, name = ?4, brand = ?5, category = ?6, gtin = ?7, length_mm = ?8,
                width_mm = ?9, height_mm = ?10, weight_g = ?11, updated_at = ?12, lot_tracked = ?13
         WHERE business_id = ?1 AND id = ?2", params![
        business.0,
        id.0,
        f.sku,
        f.name,
        f.brand,
        f.category,
        f.gtin.as_ref().map(Gtin::as_str),
        f.dimensions.map(|d| d.length_mm),
        f.dimensions.map(|d| d.width_mm),
        f.dimensions.map(|d| d.height_mm),
        f.weight_g,
        ts(at),
        f.lot_tracked,
    ])?;
    for table in ["item_codes", "item_prices", "item_links", "item_locations"] {
        conn.execute(
            &format!("DELETE FROM {table} WHERE item_id = ?1"),
            params![id.0],
        )?;
    }
    write_children(conn, business, id, f)
}

fn write_children(conn: &Db, business: BusinessId, id: ItemId, f: &ItemFields) -> Result<()> {
    let code = "INSERT INTO item_codes (business_id, code, item_id, kind, position, display) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
    if let Some(g) = &f.gtin {
        conn.execute(
            code,
            params![business.0, g.to_gtin14(), id.0, "gtin", 0, g.as_str()],
        )?;
    }
    for (i, b) in f.barcodes.iter().enumerate() {
        conn.execute(
            code,
            params![
                business.0,
                code_key(b.as_str()),
                id.0,
                "barcode",
                i as i64,
                b.as_str()
            ],
        )?;
    }
    let price = "INSERT INTO item_prices (item_id, price_list_id, amount_cents, currency) VALUES (?1, ?2, ?3, ?4)";
    for p in &f.prices {
        conn.execute(
            price,
            params![id.0, p.price_list_id.0, p.amount.cents(), p.currency],
        )?;
    }
    let link = "INSERT INTO item_links (item_id, position, channel, url) VALUES (?1, ?2, ?3, ?4)";
    for (i, l) in f.links.iter().enumerate() {
        conn.execute(link, params![id.0, i as i64, l.channel, l.url])?;
    }
    let loc = "INSERT INTO item_locations (item_id, warehouse_id, location) VALUES (?1, ?2, ?3)";
    for l in &f.locations {
        conn.execute(loc, params![id.0, l.warehouse_id.0, l.location])?;
    }
    Ok(())
}

const ITEM_COLS: &str = "id, business_id, sku, name, brand, category, gtin, length_mm, width_mm, height_mm, weight_g, \
                         created_at, updated_at, lot_tracked";

fn item_row(r: &Row) -> depot_sql::Result<Item> {
    let dims: (Option<i64>, Option<i64>, Option<i64>) = (r.get(7)?, r.get(8)?, r.get(9)?);
    Ok(Item {
        id: ItemId(r.get(0)?),
        business_id: BusinessId(r.get(1)?),
        sku: r.get(2)?,
        name: r.get(3)?,
        brand: r.get(4)?,
        category: r.get(5)?,
        gtin: r.get(6)?,
        barcodes: Vec::new(),
        dimensions: match dims {
            (Some(length_mm), Some(width_mm), Some(height_mm)) => Some(Dimensions {
                length_mm,
                width_mm,
                height_mm,
            }),
            _ => None,
        },
        weight_g: r.get(10)?,
        prices: Vec::new(),
        links: Vec::new(),
        locations: Vec::new(),
        created_at: parse_ts(&r.get::<String>(11)?)?,
        updated_at: parse_ts(&r.get::<String>(12)?)?,
        lot_tracked: r.get(13)?,
    })
}

fn fill_children(conn: &Db, item: &mut Item) -> Result<()> {
    let stmt =
        "SELECT display FROM item_codes WHERE item_id = ?1 AND kind = 'barcode' ORDER BY position";
    item.barcodes = conn.query_map(stmt, params![item.id.0], |r| r.get(0))?;
    let stmt = "SELECT price_list_id, amount_cents, currency FROM item_prices WHERE item_id = ?1 ORDER BY price_list_id";
    item.prices = conn.query_map(stmt, params![item.id.0], |r| {
        Ok(Price {
            price_list_id: PriceListId(r.get(0)?),
            amount: Money(r.get(1)?),
            currency: r.get(2)?,
        })
    })?;
    let stmt = "SELECT channel, url FROM item_links WHERE item_id = ?1 ORDER BY position";
    item.links = conn.query_map(stmt, params![item.id.0], |r| {
        Ok(PublicationLink {
            channel: r.get(0)?,
            url: r.get(1)?,
        })
    })?;
    let stmt = "SELECT warehouse_id, location FROM item_locations WHERE item_id = ?1 ORDER BY warehouse_id";
    item.locations = conn.query_map(stmt, params![item.id.0], |r| {
        Ok(BinLocation {
            warehouse_id: WarehouseId(r.get(0)?),
            location: r.get(1)?,
        })
    })?;
    Ok(())
}

pub fn item(conn: &Db, business: BusinessId, id: ItemId) -> Result<Option<Item>> {
    let found = maybe(conn.query_row(
        &format!("SELECT {ITEM_COLS} FROM items WHERE business_id = ?1 AND id = ?2"),
        params![business.0, id.0],
        item_row,
    ))?;
    let Some(mut item) = found else {
        return Ok(None);
    };
    fill_children(conn, &mut item)?;
    Ok(Some(item))
}

/// The stored fields of an item, as an edit starts from them.
pub fn fields(item: &Item) -> ItemFields {
    ItemFields {
        sku: item.sku.clone(),
        name: item.name.clone(),
        brand: item.brand.clone(),
        category: item.category.clone(),
        gtin: item.gtin.as_deref().and_then(|g| Gtin::parse(g).ok()),
        barcodes: item
            .barcodes
            .iter()
            .filter_map(|b| Barcode::parse(b).ok())
            .collect(),
        dimensions: item.dimensions,
        weight_g: item.weight_g,
        prices: item.prices.clone(),
        links: item.links.clone(),
        locations: item.locations.clone(),
        lot_tracked: item.lot_tracked,
    }
}

/// Filters of the item list.
#[derive(Debug, Clone, Default)]
pub struct ItemFilter {
    pub sku: Option<String>,
    /// Any code the item answers to (GTIN or barcode).
    pub barcode: Option<String>,
    pub brand: Option<String>,
    pub category: Option<String>,
    /// Text contained in the name or the SKU.
    pub q: Option<String>,
}

/// Escapes `%`, `_` and `\` so user text matches literally in LIKE.
pub(crate) fn like_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for ch in s.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

pub fn list(
    conn: &Db,
    business: BusinessId,
    f: &ItemFilter,
    page: Page,
) -> Result<depot_protocol::Listed<Item>> {
    let mut q = super::ListQuery::new("FROM items i WHERE i.business_id = ?", business);
    if let Some(sku) = &f.sku {
        q.and("i.sku = ?", [sku.clone().into()]);
    }
    if let Some(code) = &f.barcode {
        q.and("i.id IN (SELECT item_id FROM item_codes WHERE business_id = i.business_id AND code = ?)", [code_key(code).into()]);
    }
    if let Some(brand) = &f.brand {
        q.and("i.brand = ?", [brand.clone().into()]);
    }
    if let Some(category) = &f.category {
        q.and("i.category = ?", [category.clone().into()]);
    }
    if let Some(text) = &f.q {
        let pattern = format!("%{}%", like_literal(text));
        q.and(
            "(i.name LIKE ? ESCAPE '\\' OR i.sku LIKE ? ESCAPE '\\')",
            [pattern.clone().into(), pattern.into()],
        );
    }
    let cols = ITEM_COLS
        .split(", ")
        .map(|c| format!("i.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut listed = q.run(
        conn,
        "items",
        &cols,
        super::Order::asc(&[super::Key::Int("i.id")]),
        page,
        item_row,
    )?;
    for item in &mut listed.rows {
        fill_children(conn, item)?;
    }
    Ok(listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtin_forms_share_a_key() {
        assert_eq!(code_key("4006381333931"), code_key("04006381333931"));
        assert_eq!(code_key("BIN-1"), "BIN-1");
    }

    #[test]
    fn like_is_literal() {
        assert_eq!(like_literal("50%_a\\"), "50\\%\\_a\\\\");
    }
}
