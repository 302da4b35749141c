//! The catalog: items (one per SKU) with barcodes, prices, publication links
//! and bin locations.

use crate::barcode::{Barcode, Gtin};
use crate::validate::Check;
use crate::{BusinessId, FieldError, ItemId, Money, PriceListId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub const MAX_SKU: usize = 64;
pub const MAX_NAME: usize = 200;
pub const MAX_LABEL: usize = 100;
pub const MAX_LOCATION: usize = 32;
pub const MAX_URL: usize = 2048;
pub const MAX_LIST: usize = 50;
/// Ten metres and a thousand kilograms: beyond that it is a typo.
pub const MAX_DIMENSION_MM: i64 = 10_000;
pub const MAX_WEIGHT_G: i64 = 1_000_000;

/// Outer dimensions in millimetres, each 1 to 10000.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Dimensions {
    #[schema(minimum = 1, maximum = 10_000)]
    pub length_mm: i64,
    #[schema(minimum = 1, maximum = 10_000)]
    pub width_mm: i64,
    #[schema(minimum = 1, maximum = 10_000)]
    pub height_mm: i64,
}

/// The item's price in one price list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Price {
    /// 1 or more.
    pub price_list_id: PriceListId,
    /// 0 to 999999999999999.99.
    #[schema(value_type = String, format = "amount")]
    pub amount: Money,
    #[schema(pattern = "^\\s*[A-Za-z]{3}\\s*$")]
    pub currency: String,
}

/// Where the item is published (a marketplace listing, a shop page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PublicationLink {
    #[schema(format = "code", max_length = 100)]
    pub channel: String,
    #[schema(pattern = r"^\s*https?://[^\s\u0000-\u001f\u007f-\u009f]+\s*$")]
    pub url: String,
}

/// The item's pick location in one warehouse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BinLocation {
    pub warehouse_id: WarehouseId,
    #[schema(format = "code", max_length = 64)]
    pub location: String,
}

/// A catalog item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Item {
    pub id: ItemId,
    pub business_id: BusinessId,
    pub sku: String,
    pub name: String,
    pub brand: Option<String>,
    pub category: Option<String>,
    pub gtin: Option<String>,
    pub barcodes: Vec<String>,
    pub dimensions: Option<Dimensions>,
    pub weight_g: Option<i64>,
    pub prices: Vec<Price>,
    pub links: Vec<PublicationLink>,
    pub locations: Vec<BinLocation>,
    /// Received, picked and shipped by lot (with expiry).
    pub lot_tracked: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Body of `POST /v1/items/{business_id}/create`.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub struct ItemCreate {
    #[schema(format = "code", max_length = 64)]
    pub sku: String,
    #[schema(format = "line", max_length = 200)]
    pub name: String,
    #[schema(format = "opt-line", max_length = 100)]
    pub brand: Option<String>,
    #[schema(format = "opt-line", max_length = 100)]
    pub category: Option<String>,
    /// GTIN-8/12/13/14 with a valid check digit.
    #[schema(pattern = r"^\s*([0-9]{8}|[0-9]{12,14})?\s*$")]
    pub gtin: Option<String>,
    /// Further barcodes: GTINs (checked) or internal codes.
    #[schema(format = "code")]
    pub barcodes: Option<Vec<String>>,
    pub dimensions: Option<Dimensions>,
    /// Grams, 1 to 1000000.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub weight_g: Option<i64>,
    pub prices: Option<Vec<Price>>,
    pub links: Option<Vec<PublicationLink>>,
    pub locations: Option<Vec<BinLocation>>,
    pub lot_tracked: Option<bool>,
}

/// Body of `PUT /v1/items/{business_id}/{item_id}/edit`: fields present are
/// changed, absent ones kept; a list present replaces the old list; an empty
/// string clears brand, category or GTIN.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
pub struct ItemEdit {
    #[schema(format = "code", max_length = 64)]
    pub sku: Option<String>,
    #[schema(format = "line", max_length = 200)]
    pub name: Option<String>,
    #[schema(format = "opt-line", max_length = 100)]
    pub brand: Option<String>,
    #[schema(format = "opt-line", max_length = 100)]
    pub category: Option<String>,
    #[schema(pattern = r"^\s*([0-9]{8}|[0-9]{12,14})?\s*$")]
    pub gtin: Option<String>,
    #[schema(format = "code")]
    pub barcodes: Option<Vec<String>>,
    pub dimensions: Option<Dimensions>,
    /// Grams, 1 to 1000000.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub weight_g: Option<i64>,
    pub prices: Option<Vec<Price>>,
    pub links: Option<Vec<PublicationLink>>,
    pub locations: Option<Vec<BinLocation>>,
    pub lot_tracked: Option<bool>,
}

/// A checked item, ready to store.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemFields {
    pub sku: String,
    pub name: String,
    pub brand: Option<String>,
    pub category: Option<String>,
    pub gtin: Option<Gtin>,
    pub barcodes: Vec<Barcode>,
    pub dimensions: Option<Dimensions>,
    pub weight_g: Option<i64>,
    pub prices: Vec<Price>,
    pub links: Vec<PublicationLink>,
    pub locations: Vec<BinLocation>,
    pub lot_tracked: bool,
}

impl ItemCreate {
    pub fn parse(self) -> Result<ItemFields, Vec<FieldError>> {
        let mut c = Check::new();
        let sku = c.code("sku", &self.sku, MAX_SKU);
        let name = c.text("name", &self.name, MAX_NAME);
        let brand = c.opt_text("brand", self.brand.as_deref(), MAX_LABEL);
        let category = c.opt_text("category", self.category.as_deref(), MAX_LABEL);
        let gtin = parse_gtin(&mut c, self.gtin.as_deref());
        let barcodes = parse_barcodes(&mut c, self.barcodes.unwrap_or_default());
        check_dimensions(&mut c, self.dimensions.as_ref());
        check_weight(&mut c, self.weight_g);
        let prices = parse_prices(&mut c, self.prices.unwrap_or_default());
        let links = parse_links(&mut c, self.links.unwrap_or_default());
        let locations = parse_locations(&mut c, self.locations.unwrap_or_default());
        c.finish(ItemFields {
            sku,
            name,
            brand,
            category,
            gtin,
            barcodes,
            dimensions: self.dimensions,
            weight_g: self.weight_g,
            prices,
            links,
            locations,
            lot_tracked: self.lot_tracked.unwrap_or(false),
        })
    }
}

impl ItemEdit {
    /// Applies the edit to the item's current fields and checks the result.
    pub fn apply(self, current: ItemFields) -> Result<ItemFields, Vec<FieldError>> {
        let mut c = Check::new();
        let sku = match self.sku {
            Some(s) => c.code("sku", &s, MAX_SKU),
            None => current.sku,
        };
        let name = match self.name {
            Some(s) => c.text("name", &s, MAX_NAME),
            None => current.name,
        };
        let brand = match self.brand {
            Some(s) => c.opt_text("brand", Some(&s), MAX_LABEL),
            None => current.brand,
        };
        let category = match self.category {
            Some(s) => c.opt_text("category", Some(&s), MAX_LABEL),
            None => current.category,
        };
        let gtin = match self.gtin {
            Some(s) => parse_gtin(&mut c, Some(&s)),
            None => current.gtin,
        };
        let barcodes = match self.barcodes {
            Some(b) => parse_barcodes(&mut c, b),
            None => current.barcodes,
        };
        let dimensions = self.dimensions.or(current.dimensions);
        check_dimensions(&mut c, self.dimensions.as_ref());
        let weight_g = self.weight_g.or(current.weight_g);
        check_weight(&mut c, self.weight_g);
        let prices = match self.prices {
            Some(p) => parse_prices(&mut c, p),
            None => current.prices,
        };
        let links = match self.links {
            Some(l) => parse_links(&mut c, l),
            None => current.links,
        };
        let locations = match self.locations {
            Some(l) => parse_locations(&mut c, l),
            None => current.locations,
        };
        let lot_tracked = self.lot_tracked.unwrap_or(current.lot_tracked);
        c.finish(ItemFields {
            sku,
            name,
            brand,
            category,
            gtin,
            barcodes,
            dimensions,
            weight_g,
            prices,
            links,
            locations,
            lot_tracked,
        })
    }
}

fn parse_gtin(c: &mut Check, raw: Option<&str>) -> Option<Gtin> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
    match Gtin::parse(raw) {
        Ok(g) => Some(g),
        Err(e) => {
            c.fail("gtin", e.to_string());
            None
        }
    }
}

fn parse_barcodes(c: &mut Check, raw: Vec<String>) -> Vec<Barcode> {
    c.bounded("barcodes", &raw, MAX_LIST);
    let mut out: Vec<Barcode> = Vec::new();
    for (i, b) in raw.iter().enumerate() {
        match Barcode::parse(b) {
            Ok(b) if out.contains(&b) => c.fail(format!("barcodes[{i}]"), "is listed twice"),
            Ok(b) => out.push(b),
            Err(e) => c.fail(format!("barcodes[{i}]"), e.to_string()),
        }
    }
    out
}

fn check_dimensions(c: &mut Check, d: Option<&Dimensions>) {
    if let Some(d) = d {
        c.positive("dimensions.length_mm", d.length_mm, MAX_DIMENSION_MM);
        c.positive("dimensions.width_mm", d.width_mm, MAX_DIMENSION_MM);
        c.positive("dimensions.height_mm", d.height_mm, MAX_DIMENSION_MM);
    }
}

fn check_weight(c: &mut Check, w: Option<i64>) {
    if let Some(w) = w {
        c.positive("weight_g", w, MAX_WEIGHT_G);
    }
}

fn parse_prices(c: &mut Check, raw: Vec<Price>) -> Vec<Price> {
    c.bounded("prices", &raw, MAX_LIST);
    let mut out: Vec<Price> = Vec::new();
    for (i, p) in raw.into_iter().enumerate() {
        if !(1..=crate::MAX_ID).contains(&p.price_list_id.0) {
            c.fail(
                format!("prices[{i}].price_list_id"),
                format!("must be from 1 to {}", crate::MAX_ID),
            );
        }
        if p.amount.cents() < 0 {
            c.fail(format!("prices[{i}].amount"), "must not be negative");
        }
        let currency = c.currency(&format!("prices[{i}].currency"), &p.currency);
        if out.iter().any(|o| o.price_list_id == p.price_list_id) {
            c.fail(format!("prices[{i}].price_list_id"), "is listed twice");
        }
        out.push(Price { currency, ..p });
    }
    out
}

fn parse_links(c: &mut Check, raw: Vec<PublicationLink>) -> Vec<PublicationLink> {
    c.bounded("links", &raw, MAX_LIST);
    raw.into_iter()
        .enumerate()
        .map(|(i, l)| {
            let channel = c.code(&format!("links[{i}].channel"), &l.channel, MAX_LABEL);
            let url = c.code(&format!("links[{i}].url"), &l.url, MAX_URL);
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                c.fail(format!("links[{i}].url"), "must be an http(s) URL");
            }
            PublicationLink { channel, url }
        })
        .collect()
}

fn parse_locations(c: &mut Check, raw: Vec<BinLocation>) -> Vec<BinLocation> {
    c.bounded("locations", &raw, MAX_LIST);
    let mut out: Vec<BinLocation> = Vec::new();
    for (i, l) in raw.into_iter().enumerate() {
        let location = c.code(
            &format!("locations[{i}].location"),
            &l.location,
            MAX_LOCATION,
        );
        if out.iter().any(|o| o.warehouse_id == l.warehouse_id) {
            c.fail(format!("locations[{i}].warehouse_id"), "is listed twice");
        }
        out.push(BinLocation {
            warehouse_id: l.warehouse_id,
            location,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(json: serde_json::Value) -> Result<ItemFields, Vec<FieldError>> {
        let raw: ItemCreate = serde_json::from_value(json)
            .map_err(|e| vec![FieldError::new("body", e.to_string())])?;
        raw.parse()
    }

    #[test]
    fn minimal_item() {
        let f = create(serde_json::json!({"sku": "SKU-1", "name": "Widget"}));
        assert_eq!(
            f.map(|f| (f.sku, f.name)),
            Ok(("SKU-1".into(), "Widget".into()))
        );
    }

    #[test]
    fn a_price_list_id_is_one_a_json_reader_holds_exactly() {
        let with = |id: i64| {
            create(serde_json::json!({"sku": "S", "name": "N",
                "prices": [{"price_list_id": id, "amount": "1.00", "currency": "EUR"}]}))
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect::<Vec<_>>()
        };
        assert!(with(crate::MAX_ID).is_empty());
        for id in [0, crate::MAX_ID + 1, i64::MAX] {
            assert_eq!(with(id), ["prices[0].price_list_id"], "{id}");
        }
    }

    #[test]
    fn every_bad_field_is_reported() {
        let errors = create(serde_json::json!({
            "sku": "has space",
            "name": "",
            "gtin": "4006381333932",
            "barcodes": ["ok-1", "ok-1", "4006381333932"],
            "dimensions": {"length_mm": 0, "width_mm": 10, "height_mm": 10},
            "weight_g": -5,
            "prices": [{"price_list_id": 1, "amount": "-1.00", "currency": "eu"}],
            "links": [{"channel": "shop", "url": "ftp://x"}],
            "locations": [{"warehouse_id": 1, "location": "A-1"}, {"warehouse_id": 1, "location": "B-1"}]
        }))
        .err()
        .unwrap_or_default();
        let names: Vec<_> = errors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "sku",
                "name",
                "gtin",
                "barcodes[1]",
                "barcodes[2]",
                "dimensions.length_mm",
                "weight_g",
                "prices[0].amount",
                "prices[0].currency",
                "links[0].url",
                "locations[1].warehouse_id"
            ]
        );
    }

    #[test]
    fn edit_keeps_what_is_absent_and_clears_blank() {
        let current =
            create(serde_json::json!({"sku": "A", "name": "N", "brand": "B", "category": "C"}))
                .ok();
        let Some(current) = current else {
            panic!("valid item refused")
        };
        let edit = ItemEdit {
            brand: Some(String::new()),
            name: Some("New".into()),
            ..Default::default()
        };
        let f = edit.apply(current);
        assert_eq!(
            f.map(|f| (f.sku, f.name, f.brand, f.category)),
            Ok(("A".into(), "New".into(), None, Some("C".into())))
        );
    }

    #[test]
    fn too_long_lists_are_refused() {
        let barcodes: Vec<String> = (0..51).map(|i| format!("C{i}")).collect();
        let errors = create(serde_json::json!({"sku": "A", "name": "N", "barcodes": barcodes}))
            .err()
            .unwrap_or_default();
        assert_eq!(errors.first().map(|e| e.name.as_str()), Some("barcodes"));
    }
}
