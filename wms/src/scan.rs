//! What a scan means: the item it names (by GTIN, barcode or SKU) and what a
//! GS1 element string adds (lot, expiry, serial, count). Receiving, picking
//! and packing all resolve scans here, so a code means the same everywhere.

use crate::store::catalog;
use crate::{Result, Wms, WmsError};
use chrono::NaiveDate;
use depot_protocol::gs1::{self, Scan};
use depot_protocol::{BusinessId, FieldError, ItemId};
use depot_sql::Db;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub item_id: ItemId,
    pub sku: String,
    pub lot_tracked: bool,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    pub serial: Option<String>,
    /// Units the code stands for (GS1 AI 37 or 30), if it says.
    pub count: Option<i64>,
    /// Net weight in grams (GS1 AI 310n), for variable-measure goods.
    pub net_weight_g: Option<i64>,
}

/// Grams from a GS1 kilogram measure, rounded to the nearest gram.
fn grams(m: &depot_protocol::gs1::Measure) -> i64 {
    let scale = 10i64.pow(u32::from(m.decimals));
    (i64::from(m.value) * 1000 + scale / 2) / scale
}

/// What a scan says before the catalog is asked: the code an item answers
/// to and what a GS1 element string adds. Pure: a caller that reads with
/// the code can send that read before the item is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The code as items answer to it (a GTIN as GTIN-14).
    pub code: String,
    /// A plain code may be a SKU; a GTIN is not looked up as one.
    pub sku: Option<String>,
    lot: Option<String>,
    expiry: Option<NaiveDate>,
    serial: Option<String>,
    count: Option<i64>,
    net_weight_g: Option<i64>,
}

/// Reads a scan. An unreadable GS1 string is a 422 naming `field` (the
/// body itself was well-formed; its scan was not); a GS1 string with no
/// GTIN a 404.
pub fn parse(raw: &str, field: &str) -> Result<Parsed> {
    let scan = gs1::classify(raw).map_err(|e| {
        WmsError::invalid(vec![FieldError::new(
            field,
            format!("unreadable scan {raw:?}: {e}"),
        )])
    })?;
    let parsed = |code: &str, sku: Option<&str>| Parsed {
        code: catalog::code_key(code),
        sku: sku.map(str::to_owned),
        lot: None,
        expiry: None,
        serial: None,
        count: None,
        net_weight_g: None,
    };
    Ok(match &scan {
        Scan::Gs1(g) => {
            let gtin = g.gtin.as_ref().or(g.content.as_ref()).ok_or_else(|| {
                WmsError::NotFound(format!(
                    "scan {raw:?} carries no GTIN (AI 01 or 02) to identify an item"
                ))
            })?;
            Parsed {
                lot: g.lot.clone(),
                expiry: g.expiry.or(g.best_before),
                serial: g.serial.clone(),
                count: g
                    .count
                    .or(g.variable_count)
                    .and_then(|c| i64::try_from(c).ok()),
                net_weight_g: g.net_weight_kg.as_ref().map(grams),
                ..parsed(gtin.as_str(), None)
            }
        }
        Scan::Gtin(g) => parsed(g.as_str(), None),
        Scan::Code(code) => parsed(code, Some(code)),
    })
}

/// Resolves a scan in a business: [`parse`], then the item its code names
/// (a 404 naming the scan when none does).
pub fn resolve(conn: &Db, business: BusinessId, raw: &str, field: &str) -> Result<Resolved> {
    parse(raw, field).and_then(|p| resolve_parsed(conn, business, p, raw))
}

/// [`resolve`] of a scan already parsed (`raw` as scanned, for the error).
pub fn resolve_parsed(conn: &Db, business: BusinessId, p: Parsed, raw: &str) -> Result<Resolved> {
    let (item_id, sku, lot_tracked) = catalog::scanned(conn, business, &p.code, p.sku.as_deref())?
        .ok_or_else(|| {
            WmsError::NotFound(format!("unknown barcode {raw:?}: no item answers to it"))
        })?;
    Ok(Resolved {
        item_id,
        sku,
        lot_tracked,
        lot: p.lot,
        expiry: p.expiry,
        serial: p.serial,
        count: p.count,
        net_weight_g: p.net_weight_g,
    })
}

impl Wms {
    /// [`resolve`] on a read connection: what a station's scan names.
    pub async fn resolve_scan(&self, business: BusinessId, raw: String) -> Result<Resolved> {
        self.read(move |conn| resolve(conn, business, &raw, "code"))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_protocol::gs1::Measure;

    #[test]
    fn kilograms_become_grams() {
        let m = |value, decimals| Measure { value, decimals };
        assert_eq!(grams(&m(1250, 3)), 1250);
        assert_eq!(grams(&m(15, 1)), 1500);
        assert_eq!(grams(&m(123_456, 5)), 1235);
        assert_eq!(grams(&m(7, 0)), 7000);
    }
}
