//! Waves, pick lists and pick scans.

use crate::validate::Check;
use crate::{
    BusinessId, FieldError, ItemId, OrderId, OrderStatus, PickLineId, WarehouseId, WaveId,
};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

pub const DEFAULT_WAVE_ORDERS: u32 = 20;
pub const MAX_WAVE_ORDERS: u32 = 200;
/// The most units one pick scan may book.
pub const MAX_SCAN_QUANTITY: i64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaveStatus {
    /// Lines remain to pick.
    Open,
    /// Every line picked.
    Completed,
}

impl WaveStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Completed => "completed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Open, Self::Completed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// Body of `POST /v1/picking/{business_id}/waves/create`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct WaveCreate {
    pub warehouse_id: WarehouseId,
    /// Orders at most in this wave (default 20, at most 200).
    #[schema(minimum = 1, maximum = 200)]
    pub max_orders: Option<u32>,
    /// Only orders shipping with this carrier.
    pub carrier: Option<String>,
    /// Only orders placed before this instant (the carrier's cut-off).
    pub cutoff: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewWave {
    pub warehouse_id: WarehouseId,
    pub max_orders: u32,
    pub carrier: Option<String>,
    pub cutoff: Option<DateTime<Utc>>,
}

impl WaveCreate {
    pub fn parse(self) -> Result<NewWave, Vec<FieldError>> {
        let mut c = Check::new();
        let max_orders = self.max_orders.unwrap_or(DEFAULT_WAVE_ORDERS);
        if !(1..=MAX_WAVE_ORDERS).contains(&max_orders) {
            c.fail(
                "max_orders",
                format!("must be between 1 and {MAX_WAVE_ORDERS}"),
            );
        }
        let carrier = c.opt_text("carrier", self.carrier.as_deref(), 32);
        c.finish(NewWave {
            warehouse_id: self.warehouse_id,
            max_orders,
            carrier,
            cutoff: self.cutoff,
        })
    }
}

/// One thing to pick: an item (and lot) from a location for an order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PickLine {
    pub id: PickLineId,
    pub order_id: OrderId,
    pub item_id: ItemId,
    pub sku: String,
    pub location: Option<String>,
    /// The lot to pick, for lot-tracked items.
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    pub quantity: i64,
    pub picked: i64,
    pub remaining: i64,
    /// Its location waits for a replenishment task (open) to bring what
    /// is left to pick: pick it once the task is done.
    #[serde(default)]
    pub awaiting_replenishment: bool,
}

/// An order's lines within a wave, in walking order (by bin location).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PickList {
    pub order_id: OrderId,
    pub lines: Vec<PickLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Wave {
    pub id: WaveId,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub status: WaveStatus,
    pub carrier: Option<String>,
    pub cutoff: Option<DateTime<Utc>>,
    pub pick_lists: Vec<PickList>,
    pub units_total: i64,
    pub units_picked: i64,
    pub created_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
}

/// Body of `POST /v1/picking/{business_id}/item/scan`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ScanRequest {
    pub wave_id: WaveId,
    /// Restrict the scan to one order's pick list (a station working one
    /// order at a time); otherwise the first open line of the wave that
    /// matches takes it.
    pub order_id: Option<OrderId>,
    /// A barcode, GTIN, SKU, or GS1 element string.
    #[schema(format = "scan", max_length = 200)]
    pub code: String,
    /// Units picked with this scan, 1 to 10000; defaults to a GS1 count,
    /// else 1.
    #[schema(minimum = 1, maximum = 10_000)]
    pub quantity: Option<i64>,
}

impl ScanRequest {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        let code = c.scan("code", &self.code, 200);
        if let Some(q) = self.quantity {
            c.positive("quantity", q, MAX_SCAN_QUANTITY);
        }
        c.finish(Self { code, ..self })
    }
}

/// What a good scan did and what is left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ScanResult {
    pub wave_id: WaveId,
    pub order_id: OrderId,
    pub line_id: PickLineId,
    pub sku: String,
    pub location: Option<String>,
    pub lot: Option<String>,
    pub picked: i64,
    pub quantity: i64,
    /// Left on this line.
    pub remaining: i64,
    /// Left on this order's pick list.
    pub order_remaining: i64,
    /// Left in the whole wave.
    pub wave_remaining: i64,
    pub order_status: OrderStatus,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_limits() {
        let w = |max_orders| {
            WaveCreate {
                warehouse_id: WarehouseId(1),
                max_orders,
                carrier: None,
                cutoff: None,
            }
            .parse()
        };
        assert_eq!(w(None).map(|w| w.max_orders), Ok(DEFAULT_WAVE_ORDERS));
        assert!(w(Some(0)).is_err());
        assert!(w(Some(201)).is_err());
        assert!(w(Some(200)).is_ok());
    }

    #[test]
    fn scans_need_a_code_and_a_positive_quantity() {
        let s = |code: &str, quantity| {
            ScanRequest {
                wave_id: WaveId(1),
                order_id: None,
                code: code.into(),
                quantity,
            }
            .parse()
        };
        assert!(s(" ", None).is_err());
        assert!(s("A", Some(0)).is_err());
        assert_eq!(s(" A ", Some(2)).map(|s| s.code), Ok("A".into()));
    }
}
