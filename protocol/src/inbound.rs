//! Inbound (purchase) orders and blind, scan-based receiving.

use crate::validate::Check;
use crate::{BusinessId, FieldError, ItemId, MovementId, PutawayTaskId, WarehouseId};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

pub const MAX_INBOUND_LINES: usize = 1000;
pub const MAX_RECEPTION_LINES: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum InboundStatus {
    /// Nothing received yet.
    Open,
    /// Some lines received, some still outstanding.
    PartiallyReceived,
    /// Every expected unit accepted (or more).
    Received,
}

impl InboundStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::PartiallyReceived => "partially_received",
            Self::Received => "received",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Open, Self::PartiallyReceived, Self::Received]
            .into_iter()
            .find(|st| st.as_str() == s)
    }

    /// The status that follows from what the lines have received.
    pub fn from_lines<'a>(lines: impl IntoIterator<Item = &'a InboundLine>) -> Self {
        let (mut any, mut all) = (false, true);
        for l in lines {
            any |= l.accepted > 0 || l.rejected > 0;
            all &= l.accepted >= l.expected;
        }
        match (any, all) {
            (false, _) => Self::Open,
            (true, true) => Self::Received,
            (true, false) => Self::PartiallyReceived,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InboundLine {
    pub line_no: u32,
    pub item_id: ItemId,
    pub sku: String,
    pub name: String,
    pub expected: i64,
    pub accepted: i64,
    pub rejected: i64,
    /// Still to come: expected minus accepted, never below zero.
    pub outstanding: i64,
    /// Accepted beyond what was expected.
    pub over: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InboundOrder {
    pub id: i64,
    pub business_id: BusinessId,
    pub warehouse_id: WarehouseId,
    pub reference: String,
    pub supplier: String,
    pub status: InboundStatus,
    pub expected_at: Option<NaiveDate>,
    pub lines: Vec<InboundLine>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct InboundLineCreate {
    #[schema(format = "code", max_length = 64)]
    pub sku: String,
    /// Units expected, 1 to 1000000000.
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    pub quantity: i64,
}

/// Body of `POST /v1/inbounds/{business_id}/orders/create`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct InboundCreate {
    pub warehouse_id: WarehouseId,
    /// The purchase order number, unique per business.
    #[schema(format = "code", max_length = 64)]
    pub reference: String,
    #[schema(format = "line", max_length = 200)]
    pub supplier: String,
    pub expected_at: Option<NaiveDate>,
    #[schema(min_items = 1)]
    pub lines: Vec<InboundLineCreate>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewInbound {
    pub warehouse_id: WarehouseId,
    pub reference: String,
    pub supplier: String,
    pub expected_at: Option<NaiveDate>,
    pub lines: Vec<(String, i64)>,
}

impl InboundCreate {
    pub fn parse(self) -> Result<NewInbound, Vec<FieldError>> {
        let mut c = Check::new();
        let reference = c.code("reference", &self.reference, 64);
        let supplier = c.text("supplier", &self.supplier, 200);
        if self.lines.is_empty() {
            c.fail("lines", "an inbound order needs at least one line");
        }
        c.bounded("lines", &self.lines, MAX_INBOUND_LINES);
        let mut lines: Vec<(String, i64)> = Vec::new();
        for (i, l) in self.lines.into_iter().enumerate() {
            let sku = c.code(&format!("lines[{i}].sku"), &l.sku, crate::catalog::MAX_SKU);
            let q = c.positive(
                &format!("lines[{i}].quantity"),
                l.quantity,
                crate::stock::MAX_QUANTITY,
            );
            if lines.iter().any(|(s, _)| *s == sku) {
                c.fail(format!("lines[{i}].sku"), "is listed twice");
            }
            lines.push((sku, q));
        }
        c.finish(NewInbound {
            warehouse_id: self.warehouse_id,
            reference,
            supplier,
            expected_at: self.expected_at,
            lines,
        })
    }
}

/// One scan at the receiving dock.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReceptionLine {
    /// What was scanned: a barcode, a GTIN, a SKU, or a GS1-128 / DataMatrix
    /// element string (which may carry lot, expiry, serial and count).
    #[schema(format = "scan", max_length = 200)]
    pub code: String,
    /// Units counted, 1 to 1000000000; defaults to the count in a GS1
    /// string (AI 37), else 1. Without `accepted`/`rejected`, all are
    /// accepted.
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    pub quantity: Option<i64>,
    /// Quality inspection: units accepted into stock, 0 to 1000000000.
    /// What a line has accepted (and rejected) in all, and the on-hand it
    /// books to, stay within 10000000000: a reception beyond is refused.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub accepted: Option<i64>,
    /// Quality inspection: units refused (not stocked), 0 to 1000000000;
    /// needs `reason`.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub rejected: Option<i64>,
    #[schema(format = "opt-line", max_length = 200)]
    pub reason: Option<String>,
    #[schema(format = "opt-line", max_length = 20)]
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
}

/// Body of `POST /v1/inbounds/{business_id}/reception`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReceptionRequest {
    #[schema(minimum = 1)]
    pub inbound_id: i64,
    /// The location accepted units are booked at, by its code: one of the
    /// inbound order's warehouse. Absent or blank: each item's own
    /// location there.
    #[schema(format = "opt-line", max_length = 32)]
    pub location: Option<String>,
    #[schema(min_items = 1)]
    pub lines: Vec<ReceptionLine>,
}

/// A checked reception line; `quantity` is resolved against the scan later
/// (a GS1 count may supply it).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedReception {
    pub code: String,
    pub quantity: Option<i64>,
    pub accepted: Option<i64>,
    pub rejected: Option<i64>,
    pub reason: Option<String>,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
}

impl ReceptionRequest {
    pub fn parse(self) -> Result<(i64, Option<String>, Vec<CheckedReception>), Vec<FieldError>> {
        let mut c = Check::new();
        let location = self
            .location
            .as_deref()
            .filter(|l| !l.trim().is_empty())
            .map(|l| crate::location::check_code(&mut c, "location", l));
        if self.lines.is_empty() {
            c.fail("lines", "scan at least one item");
        }
        c.bounded("lines", &self.lines, MAX_RECEPTION_LINES);
        let mut out = Vec::new();
        for (i, l) in self.lines.into_iter().enumerate() {
            let code = c.scan(&format!("lines[{i}].code"), &l.code, 200);
            for (name, v, min) in [
                ("quantity", l.quantity, 1),
                ("accepted", l.accepted, 0),
                ("rejected", l.rejected, 0),
            ] {
                if let Some(v) = v {
                    if v < min || v > crate::stock::MAX_QUANTITY {
                        c.fail(
                            format!("lines[{i}].{name}"),
                            format!("must be between {min} and {}", crate::stock::MAX_QUANTITY),
                        );
                    }
                }
            }
            if let (Some(q), Some(a), Some(r)) = (l.quantity, l.accepted, l.rejected) {
                if a.checked_add(r) != Some(q) {
                    c.fail(
                        format!("lines[{i}].quantity"),
                        "must equal accepted + rejected",
                    );
                }
            }
            if l.accepted == Some(0) && l.rejected.unwrap_or(0) == 0 {
                c.fail(
                    format!("lines[{i}].accepted"),
                    "nothing accepted or rejected",
                );
            }
            let reason = c.opt_text(&format!("lines[{i}].reason"), l.reason.as_deref(), 200);
            if l.rejected.unwrap_or(0) > 0 && reason.is_none() {
                c.fail(
                    format!("lines[{i}].reason"),
                    "is required when units are rejected",
                );
            }
            let lot = c.opt_text(&format!("lines[{i}].lot"), l.lot.as_deref(), 20);
            out.push(CheckedReception {
                code,
                quantity: l.quantity,
                accepted: l.accepted,
                rejected: l.rejected,
                reason,
                lot,
                expiry: l.expiry,
            });
        }
        c.finish((self.inbound_id, location, out))
    }
}

/// What one scanned line did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReceivedLine {
    pub item_id: ItemId,
    pub sku: String,
    pub accepted: i64,
    pub rejected: i64,
    pub lot: Option<String>,
    pub expiry: Option<NaiveDate>,
    pub serial: Option<String>,
    /// The `received` movement of the accepted units, if any.
    pub movement_id: Option<MovementId>,
    /// The item was not on the inbound order.
    pub unexpected: bool,
    /// The putaway task the accepted units wait on, when they were received
    /// at a dock or staging location.
    #[serde(default)]
    pub putaway_task_id: Option<PutawayTaskId>,
}

/// The answer to a reception: what was booked and where the order stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReceptionResult {
    pub received: Vec<ReceivedLine>,
    pub order: InboundOrder,
    /// Some line has accepted more than expected.
    pub over_receipt: bool,
    /// Some line is still short of what was expected.
    pub under_receipt: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(expected: i64, accepted: i64, rejected: i64) -> InboundLine {
        InboundLine {
            line_no: 1,
            item_id: ItemId(1),
            sku: "A".into(),
            name: "a".into(),
            expected,
            accepted,
            rejected,
            outstanding: 0,
            over: 0,
        }
    }

    #[test]
    fn status_follows_the_lines() {
        assert_eq!(
            InboundStatus::from_lines(&[line(5, 0, 0)]),
            InboundStatus::Open
        );
        assert_eq!(
            InboundStatus::from_lines(&[line(5, 0, 2)]),
            InboundStatus::PartiallyReceived
        );
        assert_eq!(
            InboundStatus::from_lines(&[line(5, 3, 0), line(2, 2, 0)]),
            InboundStatus::PartiallyReceived
        );
        assert_eq!(
            InboundStatus::from_lines(&[line(5, 6, 0), line(2, 2, 1)]),
            InboundStatus::Received
        );
    }

    fn reception(v: serde_json::Value) -> Result<Vec<CheckedReception>, Vec<String>> {
        let r: ReceptionRequest = serde_json::from_value(v).map_err(|e| vec![e.to_string()])?;
        r.parse()
            .map(|(_, _, l)| l)
            .map_err(|e| e.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn rejections_need_a_reason_and_quantities_add_up() {
        let e = reception(
            json!({"inbound_id": 1, "lines": [{"code": "A", "accepted": 2, "rejected": 1}]}),
        );
        assert_eq!(e.err().unwrap_or_default(), ["lines[0].reason"]);
        let e = reception(
            json!({"inbound_id": 1, "lines": [{"code": "A", "quantity": 4, "accepted": 2, "rejected": 1, "reason": "torn"}]}),
        );
        assert_eq!(e.err().unwrap_or_default(), ["lines[0].quantity"]);
        let e = reception(json!({"inbound_id": 1, "lines": [{"code": "A", "quantity": 0}]}));
        assert_eq!(e.err().unwrap_or_default(), ["lines[0].quantity"]);
        assert!(reception(json!({"inbound_id": 1, "lines": [{"code": "A", "accepted": 2, "rejected": 1, "reason": "crushed"}]})).is_ok());
        assert_eq!(
            reception(json!({"inbound_id": 1, "lines": []}))
                .err()
                .unwrap_or_default(),
            ["lines"]
        );
    }

    #[test]
    fn inbound_lines_are_checked() {
        let raw: Result<InboundCreate, _> = serde_json::from_value(
            json!({"warehouse_id": 1, "reference": "PO-1", "supplier": "S",
            "lines": [{"sku": "A", "quantity": 0}, {"sku": "A", "quantity": 1}]}),
        );
        let Ok(raw) = raw else { panic!("shape") };
        let names: Vec<String> = raw
            .parse()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["lines[0].quantity", "lines[1].sku"]);
    }
}
