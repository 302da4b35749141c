//! Packing, shipments, labels, tracking milestones and dispatch runs.

use crate::catalog::{Dimensions, MAX_DIMENSION_MM, MAX_WEIGHT_G};
use crate::validate::Check;
use crate::{BusinessId, DispatchRunId, FieldError, OrderId, OrderStatus, ShipmentId, WarehouseId};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

pub const MAX_PACKAGES: usize = 50;
/// The most units one packed item entry may count.
pub const MAX_PACK_QUANTITY: i64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShipmentStatus {
    Packed,
    Dispatched,
    Delivered,
}

impl ShipmentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Packed => "packed",
            Self::Dispatched => "dispatched",
            Self::Delivered => "delivered",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Packed, Self::Dispatched, Self::Delivered]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Package {
    /// 1-based.
    pub index: u32,
    pub weight_g: i64,
    pub dimensions: Option<Dimensions>,
    /// Its Serial Shipping Container Code (GS1 AI 00, 18 digits), from the
    /// business's GS1 company prefix; none when the business has no prefix.
    #[serde(default)]
    pub sscc: Option<String>,
    /// When it was scanned onto its dispatch run's vehicle.
    #[serde(default)]
    pub loaded_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Shipment {
    pub id: ShipmentId,
    pub business_id: BusinessId,
    pub order_id: OrderId,
    pub warehouse_id: WarehouseId,
    pub carrier: String,
    pub service: String,
    pub tracking_number: String,
    pub status: ShipmentStatus,
    pub dispatch_run_id: Option<DispatchRunId>,
    pub estimated_delivery: Option<NaiveDate>,
    pub packages: Vec<Package>,
    pub packed_at: DateTime<Utc>,
    pub dispatched_at: Option<DateTime<Utc>>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// One scanned unit (or several) at the packing station.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct PackItem {
    /// A barcode, GTIN, SKU or GS1 element string.
    #[schema(format = "scan", max_length = 200)]
    pub code: String,
    /// 1 to 1000000; defaults to a GS1 count, else 1.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub quantity: Option<i64>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct PackageIn {
    /// Grams, 1 to 1000000.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub weight_g: i64,
    /// Millimetres, 1 to 10000; the three dimensions come together or not
    /// at all.
    #[schema(minimum = 1, maximum = 10_000)]
    pub length_mm: Option<i64>,
    #[schema(minimum = 1, maximum = 10_000)]
    pub width_mm: Option<i64>,
    #[schema(minimum = 1, maximum = 10_000)]
    pub height_mm: Option<i64>,
}

/// Body of `POST /v1/packing/{business_id}/pack-order`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct PackRequest {
    pub order_id: OrderId,
    /// Everything put in the boxes; must match the order exactly.
    #[schema(min_items = 1)]
    pub items: Vec<PackItem>,
    #[schema(min_items = 1)]
    pub packages: Vec<PackageIn>,
}

impl PackRequest {
    pub fn parse(self) -> Result<(OrderId, Vec<PackItem>, Vec<Package>), Vec<FieldError>> {
        let mut c = Check::new();
        if self.items.is_empty() {
            c.fail("items", "scan the items being packed");
        }
        c.bounded("items", &self.items, 1000);
        let items = self
            .items
            .into_iter()
            .enumerate()
            .map(|(i, it)| {
                let code = c.scan(&format!("items[{i}].code"), &it.code, 200);
                if let Some(q) = it.quantity {
                    c.positive(&format!("items[{i}].quantity"), q, MAX_PACK_QUANTITY);
                }
                PackItem {
                    code,
                    quantity: it.quantity,
                }
            })
            .collect();
        if self.packages.is_empty() {
            c.fail("packages", "at least one package is required");
        }
        c.bounded("packages", &self.packages, MAX_PACKAGES);
        let packages = self
            .packages
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                c.positive(&format!("packages[{i}].weight_g"), p.weight_g, MAX_WEIGHT_G);
                let dims = match (p.length_mm, p.width_mm, p.height_mm) {
                    (None, None, None) => None,
                    (Some(l), Some(w), Some(h)) => {
                        c.positive(&format!("packages[{i}].length_mm"), l, MAX_DIMENSION_MM);
                        c.positive(&format!("packages[{i}].width_mm"), w, MAX_DIMENSION_MM);
                        c.positive(&format!("packages[{i}].height_mm"), h, MAX_DIMENSION_MM);
                        Some(Dimensions {
                            length_mm: l,
                            width_mm: w,
                            height_mm: h,
                        })
                    }
                    _ => {
                        c.fail(
                            format!("packages[{i}]"),
                            "give length_mm, width_mm and height_mm together",
                        );
                        None
                    }
                };
                Package {
                    sscc: None,
                    loaded_at: None,
                    index: (i + 1) as u32,
                    weight_g: p.weight_g,
                    dimensions: dims,
                }
            })
            .collect();
        c.finish((self.order_id, items, packages))
    }
}

/// The answer to pack-order.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PackResult {
    pub shipment: Shipment,
    pub order_status: OrderStatus,
    /// The packing slip for a 4×6 in thermal printer.
    pub packing_slip_zpl: String,
    /// The packing slip as PDF, base64-encoded.
    pub packing_slip_pdf: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum LabelFormat {
    Zpl,
    Pdf,
}

/// Body of `POST /v1/shipments/{business_id}/generate-label`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct LabelRequest {
    pub shipment_id: ShipmentId,
    pub format: LabelFormat,
    /// 1-based package (1 to 50, at most the shipment's packages); all
    /// packages when absent.
    #[schema(minimum = 1, maximum = 50)]
    pub package: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Milestone {
    LabelCreated,
    Dispatched,
    InTransit,
    OutForDelivery,
    Delivered,
    Exception,
}

impl Milestone {
    pub const ALL: [Milestone; 6] = [
        Self::LabelCreated,
        Self::Dispatched,
        Self::InTransit,
        Self::OutForDelivery,
        Self::Delivered,
        Self::Exception,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::LabelCreated => "label_created",
            Self::Dispatched => "dispatched",
            Self::InTransit => "in_transit",
            Self::OutForDelivery => "out_for_delivery",
            Self::Delivered => "delivered",
            Self::Exception => "exception",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Self::LabelCreated => "Shipping label created",
            Self::Dispatched => "Handed over to the carrier",
            Self::InTransit => "In transit",
            Self::OutForDelivery => "Out for delivery",
            Self::Delivered => "Delivered",
            Self::Exception => "Delivery exception",
        }
    }
}

/// A public tracking milestone: nothing private in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TrackingEvent {
    pub milestone: Milestone,
    pub description: String,
    pub city: Option<String>,
    pub at: DateTime<Utc>,
}

/// `GET /v1/tracking/{tracking_number}`: public, so only the carrier, the
/// milestones, the estimate and the destination city.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Tracking {
    pub tracking_number: String,
    pub carrier: String,
    pub status: ShipmentStatus,
    pub estimated_delivery: Option<NaiveDate>,
    pub destination_city: Option<String>,
    pub destination_country: Option<String>,
    pub milestones: Vec<TrackingEvent>,
}

/// A carrier's webhook notification.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct CarrierEvent {
    /// The carrier's id for this event: a repeated delivery is ignored.
    pub event_id: String,
    pub tracking_number: String,
    pub milestone: Milestone,
    pub at: DateTime<Utc>,
    pub city: Option<String>,
    pub description: Option<String>,
    /// The carrier's own estimate, when it gives one: it replaces ours.
    #[serde(default)]
    pub estimated_delivery: Option<NaiveDate>,
}

impl CarrierEvent {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        let event_id = c.code("event_id", &self.event_id, 128);
        let tracking_number = c.code("tracking_number", &self.tracking_number, 64);
        let city = c.opt_text("city", self.city.as_deref(), 100);
        let description = c.opt_text("description", self.description.as_deref(), 200);
        c.finish(Self {
            event_id,
            tracking_number,
            city,
            description,
            ..self
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Open,
    Closed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Open, Self::Closed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RunShipment {
    pub shipment_id: ShipmentId,
    pub order_id: OrderId,
    pub tracking_number: String,
    pub packages: u32,
    /// Of them, scanned onto the vehicle.
    #[serde(default)]
    pub loaded: u32,
    pub weight_g: i64,
}

/// Packed shipments of one carrier from one warehouse, handed over together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DispatchRun {
    pub id: DispatchRunId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub carrier: String,
    pub status: RunStatus,
    pub shipments: Vec<RunShipment>,
    pub packages: u32,
    /// Packages scanned onto the vehicle so far (see the run's `load`).
    #[serde(default)]
    pub loaded: u32,
    pub weight_g: i64,
    pub created_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
}

/// A package scanned onto a dispatch run's vehicle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadRequest {
    /// What the scanner read: the package's SSCC (GS1-128 with or without
    /// its symbology identifier, `(00)…`, or the 18 digits) or its piece
    /// number (the tracking number alone for a one-package shipment).
    #[schema(min_length = 1, max_length = 200)]
    pub code: String,
}

/// What loading a package did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LoadResult {
    pub dispatch_run_id: DispatchRunId,
    pub shipment_id: ShipmentId,
    pub order_id: OrderId,
    /// The package's index in its shipment (1-based).
    pub package: u32,
    pub piece_number: String,
    pub sscc: Option<String>,
    pub loaded_at: DateTime<Utc>,
    /// It had been scanned before: nothing changed.
    pub already_loaded: bool,
    /// The run's packages, and of them loaded so far.
    pub packages: u32,
    pub loaded: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pack(v: serde_json::Value) -> Result<Vec<Package>, Vec<String>> {
        let r: PackRequest = serde_json::from_value(v).map_err(|e| vec![e.to_string()])?;
        r.parse()
            .map(|(_, _, p)| p)
            .map_err(|e| e.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn packages_are_checked_and_numbered() {
        let p = pack(
            json!({"order_id": 1, "items": [{"code": "A"}], "packages": [{"weight_g": 500}, {"weight_g": 900, "length_mm": 300, "width_mm": 200, "height_mm": 100}]}),
        );
        assert_eq!(
            p.map(|p| p.iter().map(|p| p.index).collect::<Vec<_>>()),
            Ok(vec![1, 2])
        );
        let e = pack(
            json!({"order_id": 1, "items": [], "packages": [{"weight_g": 0}, {"weight_g": 1, "length_mm": 3}]}),
        );
        assert_eq!(
            e.err().unwrap_or_default(),
            ["items", "packages[0].weight_g", "packages[1]"]
        );
    }

    #[test]
    fn milestones_round_trip() {
        for m in Milestone::ALL {
            assert_eq!(Milestone::parse(m.as_str()), Some(m));
            assert_eq!(
                serde_json::to_string(&m).unwrap_or_default(),
                format!("\"{}\"", m.as_str())
            );
        }
    }
}
