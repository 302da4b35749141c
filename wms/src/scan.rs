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

/// Resolves a scan in a business. An unreadable GS1 string is a 422 naming
/// `field` (the body itself was well-formed; its scan was not); a code no
/// item answers to is a 404 naming it.
pub fn resolve(conn: &Db, business: BusinessId, raw: &str, field: &str) -> Result<Resolved> {
    let scan = gs1::classify(raw).map_err(|e| {
        WmsError::invalid(vec![FieldError::new(
            field,
            format!("unreadable scan {raw:?}: {e}"),
        )])
    })?;
    let net_weight_g = match &scan {
        Scan::Gs1(g) => g.net_weight_kg.as_ref().map(grams),
        _ => None,
    };
    let (item, lot, expiry, serial, count) = match &scan {
        Scan::Gs1(g) => {
            let gtin = g.gtin.as_ref().or(g.content.as_ref()).ok_or_else(|| {
                WmsError::NotFound(format!(
                    "scan {raw:?} carries no GTIN (AI 01 or 02) to identify an item"
                ))
            })?;
            let count = g
                .count
                .or(g.variable_count)
                .and_then(|c| i64::try_from(c).ok());
            (
                catalog::scanned(conn, business, gtin.as_str(), None)?,
                g.lot.clone(),
                g.expiry.or(g.best_before),
                g.serial.clone(),
                count,
            )
        }
        Scan::Gtin(g) => (
            catalog::scanned(conn, business, g.as_str(), None)?,
            None,
            None,
            None,
            None,
        ),
        Scan::Code(code) => (
            catalog::scanned(conn, business, code, Some(code))?,
            None,
            None,
            None,
            None,
        ),
    };
    let (item_id, sku, lot_tracked) = item.ok_or_else(|| {
        WmsError::NotFound(format!("unknown barcode {raw:?}: no item answers to it"))
    })?;
    Ok(Resolved {
        item_id,
        sku,
        lot_tracked,
        lot,
        expiry,
        serial,
        count,
        net_weight_g,
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
