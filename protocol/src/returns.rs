//! Customer returns: an RMA for units of a dispatched order, received at
//! the warehouse by scan, each unit graded. What a grade does to stock and
//! when a return is done is decided here; nothing here reads a database.

use crate::location::LocationKind;
use crate::validate::Check;
use crate::{BusinessId, FieldError, ItemId, OrderId, PutawayTaskId, ReturnId, WarehouseId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Lines one return may hold: more than any order has.
pub const MAX_RETURN_LINES: usize = 500;
/// Units one receive scan may grade.
pub const MAX_RETURN_SCAN: i64 = 1_000_000;
/// The RMA number's prefix: `RMA-` and the return's id.
pub const RMA_PREFIX: &str = "RMA-";

/// The RMA number of a return: what its label carries and what a returns
/// station scans to find it.
pub fn rma(id: ReturnId) -> String {
    format!("{RMA_PREFIX}{}", id.0)
}

/// The return an RMA number names, if it is one.
pub fn parse_rma(s: &str) -> Option<ReturnId> {
    let digits = s.trim().strip_prefix(RMA_PREFIX)?;
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(ReturnId)
}

/// Why the customer sends a line back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReturnReason {
    /// Arrived damaged.
    Damaged,
    /// Does not work.
    Defective,
    /// Not what was ordered.
    WrongItem,
    NotAsDescribed,
    NoLongerNeeded,
    Other,
}

impl ReturnReason {
    pub const ALL: [Self; 6] = [
        Self::Damaged,
        Self::Defective,
        Self::WrongItem,
        Self::NotAsDescribed,
        Self::NoLongerNeeded,
        Self::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Damaged => "damaged",
            Self::Defective => "defective",
            Self::WrongItem => "wrong_item",
            Self::NotAsDescribed => "not_as_described",
            Self::NoLongerNeeded => "no_longer_needed",
            Self::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// What inspection found a returned unit fit for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    /// As new: into the warehouse's returns location, then put away.
    Restock,
    /// Not to be sold as it is: into quarantine.
    Damaged,
    /// Worthless: thrown away, never in stock.
    Scrap,
}

impl Grade {
    pub const ALL: [Self; 3] = [Self::Restock, Self::Damaged, Self::Scrap];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Restock => "restock",
            Self::Damaged => "damaged",
            Self::Scrap => "scrap",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|g| g.as_str() == s)
    }

    /// The type of location the units go to; `None`: they are not stock.
    pub fn location_kind(self) -> Option<LocationKind> {
        match self {
            Self::Restock => Some(LocationKind::Returns),
            Self::Damaged => Some(LocationKind::Quarantine),
            Self::Scrap => None,
        }
    }
}

impl std::fmt::Display for Grade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReturnStatus {
    /// Authorised; nothing has arrived.
    Open,
    /// Some units are graded, not all.
    Receiving,
    /// Every unit is graded.
    Received,
    /// Called off before anything arrived.
    Cancelled,
}

impl ReturnStatus {
    pub const ALL: [Self; 4] = [Self::Open, Self::Receiving, Self::Received, Self::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Receiving => "receiving",
            Self::Received => "received",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl std::fmt::Display for ReturnStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of a return: units of one order line, and what they were
/// graded so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReturnLine {
    /// The order line's number.
    pub line_no: u32,
    pub item_id: ItemId,
    pub sku: String,
    /// Units the customer sends back.
    pub quantity: i64,
    pub reason: ReturnReason,
    pub note: Option<String>,
    pub restocked: i64,
    pub damaged: i64,
    pub scrapped: i64,
    /// Units not graded yet (never below 0, even when two stations graded
    /// the last unit each while cut off from each other).
    pub remaining: i64,
}

impl ReturnLine {
    pub fn graded(&self) -> i64 {
        self.restocked
            .saturating_add(self.damaged)
            .saturating_add(self.scrapped)
    }

    /// Adds `units` graded `grade`.
    pub fn grade(&mut self, grade: Grade, units: i64) {
        let n = match grade {
            Grade::Restock => &mut self.restocked,
            Grade::Damaged => &mut self.damaged,
            Grade::Scrap => &mut self.scrapped,
        };
        *n = n.saturating_add(units);
        self.remaining = self.quantity.saturating_sub(self.graded()).max(0);
    }
}

/// The status lines in this state give their return.
pub fn status_of(lines: &[ReturnLine]) -> ReturnStatus {
    if lines.iter().all(|l| l.remaining == 0) {
        ReturnStatus::Received
    } else if lines.iter().any(|l| l.graded() > 0) {
        ReturnStatus::Receiving
    } else {
        ReturnStatus::Open
    }
}

/// The line a unit of `item` is graded on: the first of its lines with
/// units left. `Err(true)`: the item is on the return and every unit of
/// it is graded; `Err(false)`: it is not on the return.
pub fn line_for(lines: &[ReturnLine], item: ItemId) -> Result<usize, bool> {
    let mut on_it = false;
    for (i, l) in lines.iter().enumerate() {
        if l.item_id == item {
            on_it = true;
            if l.remaining > 0 {
                return Ok(i);
            }
        }
    }
    Err(on_it)
}

/// A customer return.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Return {
    pub id: ReturnId,
    /// The RMA number (`RMA-` and the id): on the return label, and what a
    /// station scans to open the return.
    pub rma: String,
    pub business_id: BusinessId,
    pub order_id: OrderId,
    /// The order's reference in its channel.
    pub order_ref: String,
    /// Where the goods come back to: the warehouse the order shipped from.
    pub warehouse_id: WarehouseId,
    pub status: ReturnStatus,
    pub lines: Vec<ReturnLine>,
    /// Your reference for it.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The return label in ZPL, for an order the own fleet delivered: from
    /// the customer's address to the warehouse, with the RMA number as its
    /// barcode (the create and detail answers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_zpl: Option<String>,
}

impl Return {
    /// Units the customer sends back, over every line.
    pub fn units(&self) -> i64 {
        self.lines
            .iter()
            .fold(0i64, |n, l| n.saturating_add(l.quantity))
    }
}

/// A return as its order lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReturnSummary {
    pub id: ReturnId,
    pub rma: String,
    pub status: ReturnStatus,
    /// Units on it, and how they were graded so far.
    pub units: i64,
    pub restocked: i64,
    pub damaged: i64,
    pub scrapped: i64,
    pub created_at: DateTime<Utc>,
}

impl From<&Return> for ReturnSummary {
    fn from(r: &Return) -> Self {
        let sum =
            |f: fn(&ReturnLine) -> i64| r.lines.iter().fold(0i64, |n, l| n.saturating_add(f(l)));
        Self {
            id: r.id,
            rma: r.rma.clone(),
            status: r.status,
            units: r.units(),
            restocked: sum(|l| l.restocked),
            damaged: sum(|l| l.damaged),
            scrapped: sum(|l| l.scrapped),
            created_at: r.created_at,
        }
    }
}

/// One line of `POST /v1/returns/{business_id}/create`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReturnLineCreate {
    /// The order line the units are of.
    #[schema(minimum = 1, maximum = 1000000)]
    pub line_no: i64,
    /// Units sent back, 1 to what the line shipped less what other returns
    /// hold of it.
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    pub quantity: i64,
    pub reason: ReturnReason,
    /// What the customer said, up to 500 characters.
    #[schema(max_length = 500)]
    pub note: Option<String>,
}

/// Body of `POST /v1/returns/{business_id}/create`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReturnCreate {
    /// A dispatched or delivered order of the business.
    pub order_id: OrderId,
    /// 1 to 500 lines, each order line at most once.
    #[schema(min_items = 1, max_items = 500)]
    pub lines: Vec<ReturnLineCreate>,
    /// Your reference for it (up to 100 characters).
    #[serde(rename = "ref")]
    #[schema(max_length = 100)]
    pub reference: Option<String>,
}

/// A return line asked for, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedReturnLine {
    pub line_no: u32,
    pub quantity: i64,
    pub reason: ReturnReason,
    pub note: Option<String>,
}

/// A create request, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedReturn {
    pub order_id: OrderId,
    pub lines: Vec<CheckedReturnLine>,
    pub reference: Option<String>,
}

impl ReturnCreate {
    pub fn parse(self) -> Result<CheckedReturn, Vec<FieldError>> {
        let mut c = Check::new();
        if self.lines.is_empty() {
            c.fail("lines", "must have at least 1 entry");
        }
        c.bounded("lines", &self.lines, MAX_RETURN_LINES);
        let mut seen = std::collections::BTreeSet::new();
        let mut lines = Vec::new();
        for (i, l) in self.lines.iter().enumerate() {
            let field = |f: &str| format!("lines[{i}].{f}");
            let line_no = c.range(&field("line_no"), l.line_no, 1, 1_000_000);
            if !seen.insert(line_no) {
                c.fail(field("line_no"), format!("line {line_no} is named twice"));
            }
            let quantity = c.positive(&field("quantity"), l.quantity, crate::stock::MAX_QUANTITY);
            let note = c.note(&field("note"), l.note.as_deref(), crate::stock::MAX_NOTE);
            lines.push(CheckedReturnLine {
                line_no: u32::try_from(line_no).unwrap_or(0),
                quantity,
                reason: l.reason,
                note,
            });
        }
        let reference = c.opt_text("ref", self.reference.as_deref(), crate::stock::MAX_REF);
        c.finish(CheckedReturn {
            order_id: self.order_id,
            lines,
            reference,
        })
    }
}

/// Body of `POST /v1/returns/{business_id}/{return_id}/receive`: one scan
/// at the returns station.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReturnReceive {
    /// The unit, as scanned: a barcode, GTIN, SKU or GS1 element string.
    #[schema(format = "scan", max_length = 200)]
    pub code: String,
    pub grade: Grade,
    /// Units graded with this scan, 1 to 1000000; defaults to a GS1 count,
    /// else 1.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub quantity: Option<i64>,
    /// The lot, where the scan does not carry it (a lot-tracked item's
    /// units going back to stock need one).
    #[schema(max_length = 40)]
    pub lot: Option<String>,
    /// What the inspector saw, up to 500 characters.
    #[schema(max_length = 500)]
    pub note: Option<String>,
}

impl ReturnReceive {
    pub fn parse(self) -> Result<Self, Vec<FieldError>> {
        let mut c = Check::new();
        let code = c.scan("code", &self.code, 200);
        if let Some(q) = self.quantity {
            c.positive("quantity", q, MAX_RETURN_SCAN);
        }
        let lot = c
            .opt_text("lot", self.lot.as_deref(), 40)
            .map(|l| l.to_owned());
        let note = c.note("note", self.note.as_deref(), crate::stock::MAX_NOTE);
        c.finish(Self {
            code,
            lot,
            note,
            ..self
        })
    }
}

/// What one receive scan did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReturnReceiveResult {
    #[serde(rename = "return")]
    pub returned: Return,
    /// The return line the units were graded on.
    pub line_no: u32,
    pub sku: String,
    pub grade: Grade,
    pub units: i64,
    pub lot: Option<String>,
    /// Where they went: the returns location (restock) or quarantine
    /// (damaged); `null` for scrap.
    pub location: Option<String>,
    /// The task that puts restocked units away from the returns location.
    pub putaway_task_id: Option<PutawayTaskId>,
    /// What to tell the inspector.
    pub message: String,
}

/// The `return.received` event: the return as it now stands and what the
/// scan graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReturnReceived {
    #[serde(flatten)]
    pub returned: Return,
    /// The line the units were graded on.
    pub received_line: u32,
    pub grade: Grade,
    pub units: i64,
    pub location: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn line(item: i64, quantity: i64) -> ReturnLine {
        ReturnLine {
            line_no: u32::try_from(item).unwrap_or(0),
            item_id: ItemId(item),
            sku: format!("S{item}"),
            quantity,
            reason: ReturnReason::Other,
            note: None,
            restocked: 0,
            damaged: 0,
            scrapped: 0,
            remaining: quantity,
        }
    }

    #[test]
    fn rma_numbers_read_back_and_nothing_else_does() {
        let id = ReturnId((1 << 40) + 7);
        assert_eq!(parse_rma(&rma(id)), Some(id));
        for bad in [
            "RMA-",
            "RMA-12a",
            "rma-12",
            "12",
            "RMA-99999999999999999",
            "RMA- 1",
        ] {
            assert_eq!(parse_rma(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_return_is_received_when_every_unit_is_graded() {
        let mut lines = vec![line(1, 2), line(2, 1)];
        assert_eq!(status_of(&lines), ReturnStatus::Open);
        lines[0].grade(Grade::Restock, 1);
        assert_eq!(status_of(&lines), ReturnStatus::Receiving);
        lines[0].grade(Grade::Scrap, 1);
        lines[1].grade(Grade::Damaged, 1);
        assert_eq!(status_of(&lines), ReturnStatus::Received);
        assert_eq!((lines[0].restocked, lines[0].scrapped), (1, 1));
    }

    #[test]
    fn units_go_to_the_first_line_of_their_item_with_room() {
        let mut lines = vec![line(1, 1), line(2, 1), line(1, 2)];
        lines[2].line_no = 3;
        assert_eq!(line_for(&lines, ItemId(1)), Ok(0));
        lines[0].grade(Grade::Restock, 1);
        assert_eq!(line_for(&lines, ItemId(1)), Ok(2));
        lines[2].grade(Grade::Restock, 2);
        assert_eq!(line_for(&lines, ItemId(1)), Err(true));
        assert_eq!(line_for(&lines, ItemId(9)), Err(false));
    }

    #[test]
    fn create_names_each_bad_field() {
        let req: ReturnCreate = serde_json::from_value(serde_json::json!({
            "order_id": 1,
            "lines": [
                {"line_no": 1, "quantity": 0, "reason": "damaged"},
                {"line_no": 1, "quantity": 1, "reason": "other", "note": " \u{feff} "},
                {"line_no": 0, "quantity": 1, "reason": "wrong_item"}
            ],
            "ref": "x".repeat(101)
        }))
        .expect("body");
        let names: Vec<String> = req
            .parse()
            .expect_err("bad")
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(
            names,
            [
                "lines[0].quantity",
                "lines[1].line_no",
                "lines[2].line_no",
                "ref"
            ]
        );
    }

    proptest! {
        /// However units are graded, a line never counts more remaining
        /// than it was sent back with, nor below zero, and the graded
        /// units are what was added.
        #[test]
        fn grading_keeps_the_counts_whole(quantity in 1i64..50, grades in proptest::collection::vec((0usize..3, 1i64..10), 0..20)) {
            let mut l = line(1, quantity);
            let mut total = 0i64;
            for (g, n) in grades {
                l.grade(Grade::ALL[g], n);
                total += n;
                prop_assert_eq!(l.graded(), total);
                prop_assert_eq!(l.remaining, (quantity - total).max(0));
            }
        }
    }
}
