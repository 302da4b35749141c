//! Putaway: goods received at a dock or staging location become tasks,
//! each with where the rules (`depot_protocol::putaway`) suggest; a scan of
//! the goods and of the location they were put at moves them there.
//!
//! | status | a putaway scan that |
//! |---|---|
//! | 404 | names a task or an item that does not exist |
//! | 409 | is for a task already done, or more units than are left |
//! | 422 | scans another item or lot than the task's, or a location that is not on record, does not take putaway, is full or holds another lot of the item |

use crate::store::{self, locations as location_sql, putaway as sql};
use crate::{Result, Wms, WmsError, scan};
use depot_protocol::event::EventKind;
use depot_protocol::location::LocationKind;
use depot_protocol::putaway::{
    Goods, PutawayResult, PutawayScan, PutawayStatus, PutawayTask, refusal, suggest,
};
use depot_protocol::tenant::Caller;
use depot_protocol::{
    BusinessId, FieldError, ItemId, Page, PutawayTaskId, Timestamp, WarehouseId, now,
};
use depot_sql::Db;
use serde::Serialize;

pub use sql::PutawayFilter;

/// The `putaway.scanned` event: the task as it now stands, and the scan.
#[derive(Debug, Clone, Serialize)]
struct Scanned<'a> {
    #[serde(flatten)]
    task: &'a PutawayTask,
    moved: i64,
    location: &'a str,
}

fn load(conn: &Db, business: BusinessId, id: PutawayTaskId) -> Result<PutawayTask> {
    sql::task(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("putaway task {id} does not exist")))
}

fn goods(conn: &Db, item: ItemId, lot: Option<&str>, units: i64) -> Result<Goods> {
    let (volume_cm3, weight_g) = sql::item_measures(conn, item)?;
    Ok(Goods {
        item_id: item,
        lot: lot.map(str::to_owned),
        units,
        volume_cm3,
        weight_g,
    })
}

/// Where goods received at a location of `kind` wait for putaway: a dock
/// or a staging location.
pub(crate) fn waits_for_putaway(kind: LocationKind) -> bool {
    matches!(kind, LocationKind::Dock | LocationKind::Staging)
}

/// What a reception that put goods at a dock or staging location asks of
/// putaway.
pub(crate) struct Received<'a> {
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub item: ItemId,
    pub lot: Option<&'a str>,
    pub expiry: Option<chrono::NaiveDate>,
    pub at_location: &'a str,
    pub units: i64,
    pub reference: &'a str,
    pub at: &'a Timestamp,
}

/// Makes the task for goods received at a dock or staging location, with
/// where they should go, and logs it.
pub(crate) fn create(conn: &Db, origin: &str, r: &Received) -> Result<PutawayTask> {
    let g = goods(conn, r.item, r.lot, r.units)?;
    let own = location_sql::assigned(conn, r.item, r.warehouse)?;
    let places = sql::places_for(conn, r.warehouse, r.item, own.as_deref())?;
    let own = own.and_then(|code| places.iter().find(|p| p.code == code));
    let suggested = suggest(&g, own, &places);
    let id = sql::insert(
        conn,
        &sql::NewTask {
            business: r.business,
            warehouse: r.warehouse,
            item: r.item,
            lot: r.lot,
            expiry: r.expiry,
            from: r.at_location,
            suggested: suggested.as_deref(),
            quantity: r.units,
            reference: Some(r.reference),
            at: r.at,
        },
    )?;
    let task = load(conn, r.business, id)?;
    store::events::append(
        conn,
        origin,
        Some(r.business),
        EventKind::PutawayCreated,
        &task,
    )?;
    Ok(task)
}

fn refuse(field: &str, message: String) -> WmsError {
    WmsError::invalid(vec![FieldError::new(field, message)])
}

fn put(conn: &Db, origin: &str, caller: &Caller, req: PutawayScan) -> Result<PutawayResult> {
    let business = caller.business_id;
    let task = load(conn, business, req.task_id)?;
    if task.status == PutawayStatus::Done {
        return Err(WmsError::conflict(format!(
            "putaway task {} is done: all {} units are put away",
            task.id, task.quantity
        )));
    }
    let s = scan::resolve(conn, business, &req.code, "code")?;
    if s.item_id != task.item_id {
        return Err(refuse(
            "code",
            format!(
                "{} is not this task's item {}: scan the goods from {}",
                s.sku, task.sku, task.from_location
            ),
        ));
    }
    if let (Some(scanned), Some(lot)) = (&s.lot, &task.lot) {
        if scanned != lot {
            return Err(refuse(
                "code",
                format!("lot {scanned} is not this task's lot {lot}"),
            ));
        }
    }
    let quantity = req.quantity.or(s.count).unwrap_or(task.remaining);
    if quantity > task.remaining {
        return Err(WmsError::conflict(format!(
            "{quantity} units is more than the {} left of putaway task {}",
            task.remaining, task.id
        )));
    }
    let Some(place) = sql::place(conn, task.warehouse_id, task.item_id, &req.location)? else {
        return Err(refuse(
            "location",
            format!(
                "warehouse {} has no location {}",
                task.warehouse_id, req.location
            ),
        ));
    };
    if place.code == task.from_location {
        return Err(refuse(
            "location",
            format!("the goods are at {} already", place.code),
        ));
    }
    let g = goods(conn, task.item_id, task.lot.as_deref(), quantity)?;
    if let Some(why) = refusal(&g, &place) {
        return Err(refuse(
            "location",
            format!("{} cannot take them: {why}", place.code),
        ));
    }
    let at = now();
    let actor = caller.actor();
    crate::ledger::relocate(
        conn,
        origin,
        &crate::ledger::Relocation {
            business,
            warehouse: task.warehouse_id,
            item: task.item_id,
            lot: task.lot.as_deref(),
            expiry: task.expiry,
            from: &task.from_location,
            to: &place.code,
            quantity,
            reference: format!("putaway:{}", task.id),
            actor: &actor,
            at,
        },
    )?;
    let put = task.put.saturating_add(quantity);
    let status = if put >= task.quantity {
        PutawayStatus::Done
    } else {
        PutawayStatus::Open
    };
    sql::set_put(conn, task.id, put, status, &at)?;
    let task = load(conn, business, task.id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::PutawayScanned,
        &Scanned {
            task: &task,
            moved: quantity,
            location: &place.code,
        },
    )?;
    let as_suggested = task.suggested.as_deref() == Some(place.code.as_str());
    let left = match task.remaining {
        0 => "task done".to_owned(),
        n => format!("{n} left at {}", task.from_location),
    };
    let message = match (&task.suggested, as_suggested) {
        (Some(s), false) => format!(
            "{quantity} × {} put at {} (not the suggested {s}); {left}",
            task.sku, place.code
        ),
        _ => format!("{quantity} × {} put at {}; {left}", task.sku, place.code),
    };
    Ok(PutawayResult {
        task,
        moved: quantity,
        location: place.code,
        as_suggested,
        message,
    })
}

/// Applies another node's putaway scan: the task's count and status (its
/// movements are events of their own).
pub(crate) fn apply_scanned(conn: &Db, t: &PutawayTask) -> Result<()> {
    sql::set_put(conn, t.id, t.put, t.status, &t.updated_at)
}

impl Wms {
    pub async fn putaway_scan(&self, caller: Caller, req: PutawayScan) -> Result<PutawayResult> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            put(conn, &origin, &caller, req)
        })
        .await
    }

    pub async fn putaway_task(
        &self,
        business: BusinessId,
        id: PutawayTaskId,
    ) -> Result<PutawayTask> {
        self.read(move |conn| load(conn, business, id)).await
    }

    pub async fn putaway_tasks(
        &self,
        business: BusinessId,
        filter: PutawayFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<PutawayTask>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}
