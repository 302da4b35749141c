//! Cycle counts: made for locations, a zone, items, or the locations not
//! counted lately; counted by scan, location by location; approved, which
//! books each final line's variance as a `cycle_count` movement.
//!
//! How a line moves (`depot_protocol::count`): a scan of goods at a
//! location sets the line's figure and takes what the books hold for it at
//! that moment as `expected`. A scan of the location alone closes it: lines
//! not scanned are counted as 0, and each line settles, final when its
//! variance is within the count's tolerance, else waiting for a recount by
//! another API key than the one that closed the first round. A recount is
//! final whatever it finds. Nothing freezes a location while it is
//! counted: what moves after a line was counted adds to the figure the
//! approval leaves.
//!
//! | status | a count request that |
//! |---|---|
//! | 404 | names a count, or a scan an item, that does not exist |
//! | 409 | scans or approves a count that is not open, counts a location already done, recounts what the same key counted, approves before every location is done, or names a location another open count holds |
//! | 422 | names a location or item outside the count or the warehouse, or an ambiguous lot |

use crate::store::{self, counts as sql, ledger, tenants};
use crate::{Result, Wms, WmsError};
use depot_protocol::count::{
    CheckedCount, Count, CountCreate, CountLine, CountLineStatus, CountPlace, CountPlaceStatus,
    CountScan, CountScanResult, CountScope, CountStatus, CountSummary, MAX_COUNT_LINES, booked,
};
use depot_protocol::event::EventKind;
use depot_protocol::stock::{Movement, MovementReason};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, CountId, FieldError, MovementId, Page, now};
use depot_sql::Db;

mod replica;
mod scanning;

pub(crate) use replica::{apply_closed, apply_created, apply_scanned};
pub use sql::CountFilter;

fn refuse(field: &str, message: String) -> WmsError {
    WmsError::invalid(vec![FieldError::new(field, message)])
}

fn load(conn: &Db, business: BusinessId, id: CountId) -> Result<Count> {
    sql::count(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("count {id} does not exist")))
}

fn open(conn: &Db, business: BusinessId, id: CountId) -> Result<CountSummary> {
    let c = sql::summary_of(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("count {id} does not exist")))?;
    if c.status != CountStatus::Open {
        return Err(WmsError::conflict(format!("count {id} is {}", c.status)));
    }
    Ok(c)
}

/// The locations a scope names, checked against the warehouse.
fn locations_of(conn: &Db, business: BusinessId, c: &CheckedCount) -> Result<Vec<String>> {
    let w = c.warehouse_id;
    let too_many = |field: &str, what: String| {
        refuse(
            field,
            format!(
                "{what} has more than {} locations: count it in parts (a smaller scope, or not_counted_days with limit)",
                c.limit
            ),
        )
    };
    let codes = match &c.scope {
        CountScope::Locations(codes) => {
            for (i, code) in codes.iter().enumerate() {
                if !sql::exists(conn, w, code)? {
                    return Err(refuse(
                        &format!("locations[{i}]"),
                        format!("warehouse {w} has no location {code}"),
                    ));
                }
            }
            codes.clone()
        }
        CountScope::Zone(zone) => {
            let codes = sql::zone(conn, w, zone, c.limit)?;
            if codes.len() as i64 > c.limit {
                return Err(too_many("zone", format!("zone {zone}")));
            }
            if codes.is_empty() {
                return Err(refuse(
                    "zone",
                    format!("warehouse {w} has no location in zone {zone}"),
                ));
            }
            codes
        }
        CountScope::Items(items) => {
            let mut codes = Vec::new();
            for (i, item) in items.iter().enumerate() {
                if store::catalog::item(conn, business, *item)?.is_none() {
                    return Err(refuse(
                        &format!("item_ids[{i}]"),
                        format!("item {item} does not exist"),
                    ));
                }
                codes.extend(sql::holding(conn, w, *item)?);
            }
            codes.sort();
            codes.dedup();
            if codes.len() as i64 > c.limit {
                return Err(too_many("item_ids", "where these items are held".into()));
            }
            if codes.is_empty() {
                return Err(refuse(
                    "item_ids",
                    format!("none of these items is held, or has a location, in warehouse {w}"),
                ));
            }
            codes
        }
        CountScope::NotCountedDays(days) => {
            let since = now() - chrono::Duration::days(*days);
            let codes = sql::not_counted_since(conn, w, &since, c.limit)?;
            if codes.is_empty() {
                return Err(refuse(
                    "not_counted_days",
                    format!(
                        "every location of warehouse {w} was counted in the last {days} days, or is being counted"
                    ),
                ));
            }
            codes
        }
    };
    let busy = sql::in_open_counts(conn, w)?;
    if let Some((code, other)) = busy.iter().find(|(code, _)| codes.contains(code)) {
        return Err(WmsError::field_conflict(
            "locations",
            format!("{code} is being counted by count {other}: approve or cancel it first"),
        ));
    }
    Ok(codes)
}

fn create(conn: &Db, origin: &str, caller: &Caller, c: CheckedCount) -> Result<Count> {
    let business = caller.business_id;
    if tenants::warehouse(conn, business, c.warehouse_id)?.is_none() {
        return Err(refuse(
            "warehouse_id",
            "no such warehouse in this business".into(),
        ));
    }
    let codes = locations_of(conn, business, &c)?;
    let items = match &c.scope {
        CountScope::Items(items) => items.clone(),
        _ => Vec::new(),
    };
    let mut lines = Vec::new();
    for code in &codes {
        for (item_id, sku, lot) in sql::held_at(conn, c.warehouse_id, code)? {
            if items.is_empty() || items.contains(&item_id) {
                lines.push(pending(code, item_id, sku, lot));
            }
        }
        if lines.len() > MAX_COUNT_LINES {
            return Err(refuse(
                "locations",
                format!(
                    "these locations hold more than {MAX_COUNT_LINES} items and lots: count fewer at once"
                ),
            ));
        }
    }
    let at = now();
    let id = CountId(store::ids::allocate(conn, "counts")?);
    let mut count = Count {
        summary: CountSummary {
            id,
            business_id: business,
            warehouse_id: c.warehouse_id,
            status: CountStatus::Open,
            blind: c.blind,
            tolerance_units: c.tolerance_units,
            tolerance_percent: c.tolerance_percent,
            scope: c.scope.describe(),
            item_ids: items,
            reference: c.reference,
            locations_total: 0,
            locations_done: 0,
            lines_total: 0,
            lines_recount: 0,
            created_by: caller.actor(),
            created_at: at,
            updated_at: at,
            approved_by: None,
            approved_at: None,
        },
        locations: codes
            .into_iter()
            .map(|location| CountPlace {
                location,
                status: CountPlaceStatus::Open,
                closed_by: None,
            })
            .collect(),
        lines,
    };
    count.tally();
    insert(conn, &count)?;
    let count = load(conn, business, id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::CountCreated,
        &count,
    )?;
    Ok(count)
}

fn pending(
    location: &str,
    item_id: depot_protocol::ItemId,
    sku: String,
    lot: Option<String>,
) -> CountLine {
    CountLine {
        location: location.to_owned(),
        item_id,
        sku,
        lot,
        status: CountLineStatus::Pending,
        round: 1,
        expected: None,
        counted: None,
        variance: None,
        counted_by: None,
        counted_at: None,
        first_expected: None,
        first_counted: None,
        first_by: None,
    }
}

fn insert(conn: &Db, c: &Count) -> Result<()> {
    sql::insert(conn, &c.summary)?;
    for p in &c.locations {
        sql::put_place(conn, c.summary.id, p)?;
    }
    for l in &c.lines {
        sql::put_line(conn, c.summary.id, l)?;
    }
    Ok(())
}

/// The id of the movement an approval books for a line: the same on every
/// node (from the count, the line and when it was counted), so a count
/// approved on two nodes books each variance once.
fn movement_id(id: CountId, line: &CountLine) -> MovementId {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(format!(
        "count:{id}:{}:{}:{}",
        line.location,
        line.item_id,
        line.lot.as_deref().unwrap_or("")
    ));
    let digest = h.finalize();
    let mut bytes = [0u8; 10];
    bytes.copy_from_slice(&digest[..10]);
    let millis = line
        .counted_at
        .map(|t| u64::try_from(t.timestamp_millis()).unwrap_or(0))
        .unwrap_or(0);
    MovementId(uuid::Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid())
}

fn approve(conn: &Db, origin: &str, caller: &Caller, id: CountId) -> Result<Count> {
    let business = caller.business_id;
    open(conn, business, id)?;
    let count = load(conn, business, id)?;
    let waiting: Vec<String> = count
        .locations
        .iter()
        .filter(|p| p.status != CountPlaceStatus::Done)
        .map(|p| format!("{} ({})", p.location, p.status))
        .collect();
    if !waiting.is_empty() {
        let more = if waiting.len() > 10 {
            format!(" and {} more", waiting.len() - 10)
        } else {
            String::new()
        };
        return Err(WmsError::conflict(format!(
            "count {id} is not counted everywhere yet: {}{more}",
            waiting[..waiting.len().min(10)].join(", ")
        )));
    }
    let at = now();
    let actor = caller.actor();
    for line in &count.lines {
        let Some(delta) = booked(line) else { continue };
        let mut m = Movement {
            id: movement_id(id, line),
            business_id: business,
            item_id: line.item_id,
            warehouse_id: count.summary.warehouse_id,
            location: Some(line.location.clone()),
            delta,
            reason: MovementReason::CycleCount,
            reference: Some(format!("count:{id}")),
            note: None,
            lot: line.lot.clone(),
            expiry: None,
            actor: actor.clone(),
            origin: origin.to_owned(),
            at,
        };
        ledger::record_as(conn, &mut m, "lines")?;
        store::events::append(conn, origin, Some(business), EventKind::StockMoved, &m)?;
    }
    sql::set_status(conn, id, CountStatus::Approved, Some(&actor), &at)?;
    sql::mark_counted(conn, id, count.summary.warehouse_id, &at)?;
    let count = load(conn, business, id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::CountApproved,
        &count.summary,
    )?;
    Ok(count)
}

fn cancel(conn: &Db, origin: &str, caller: &Caller, id: CountId) -> Result<Count> {
    let business = caller.business_id;
    open(conn, business, id)?;
    sql::set_status(conn, id, CountStatus::Cancelled, None, &now())?;
    let count = load(conn, business, id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::CountCancelled,
        &count.summary,
    )?;
    Ok(count)
}

impl Wms {
    pub async fn create_count(&self, caller: Caller, req: CountCreate) -> Result<Count> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            create(conn, &origin, &caller, req).map(Count::answered)
        })
        .await
    }

    pub async fn count_scan(
        &self,
        caller: Caller,
        id: CountId,
        req: CountScan,
    ) -> Result<CountScanResult> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            scanning::count_scan(conn, &origin, &caller, id, req)
        })
        .await
    }

    pub async fn approve_count(&self, caller: Caller, id: CountId) -> Result<Count> {
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            approve(conn, &origin, &caller, id)
        })
        .await
    }

    pub async fn cancel_count(&self, caller: Caller, id: CountId) -> Result<Count> {
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            cancel(conn, &origin, &caller, id).map(Count::answered)
        })
        .await
    }

    pub async fn count(&self, business: BusinessId, id: CountId) -> Result<Count> {
        self.read(move |conn| load(conn, business, id).map(Count::answered))
            .await
    }

    pub async fn counts(
        &self,
        business: BusinessId,
        filter: CountFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<CountSummary>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}
