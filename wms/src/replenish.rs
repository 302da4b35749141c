//! Replenishment: a pick location's min and max of an item
//! (`PUT /v1/replenishment/{b}/levels`); when what leaves it (a dispatch,
//! an adjustment) takes it below its min, a task refills it to its max
//! from reserve, the lot that expires first first (the rules are
//! `depot_protocol::replenish`'s). A scan of the goods and of the pick
//! location's label moves them.
//!
//! | status | a replenishment request that |
//! |---|---|
//! | 404 | names a task or an item that does not exist |
//! | 409 | is for a task already done, more units than are left, or more than the reserve location holds |
//! | 422 | sets a level at a location that is not a pick location of the warehouse, or of another business's item; scans another item or lot than the task's, or another location than its pick location |

use crate::store::{self, replenish as sql, tenants};
use crate::{Result, Wms, WmsError, scan};
use depot_protocol::event::EventKind;
use depot_protocol::location::LocationKind;
use depot_protocol::replenish::{
    LevelSet, ReplenishLevel, ReplenishResult, ReplenishScan, ReplenishStatus, ReplenishTask,
    first_expiring, need,
};
use depot_protocol::stock::Movement;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, ItemId, Page, ReplenishTaskId, WarehouseId, now};
use depot_sql::Db;
use serde::Serialize;

pub use sql::ReplenishFilter;

fn refuse(field: &str, message: String) -> WmsError {
    WmsError::invalid(vec![FieldError::new(field, message)])
}

fn load(conn: &Db, business: BusinessId, id: ReplenishTaskId) -> Result<ReplenishTask> {
    sql::task(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("replenishment task {id} does not exist")))
}

fn set_level(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    req: LevelSet,
) -> Result<ReplenishLevel> {
    let w = req.warehouse_id;
    if tenants::warehouse(conn, business, w)?.is_none() {
        return Err(refuse(
            "warehouse_id",
            "no such warehouse in this business".into(),
        ));
    }
    let place = crate::locations::require(conn, w, &req.location, "location")?;
    if place.kind != LocationKind::Pick {
        return Err(refuse(
            "location",
            format!(
                "{} is a {} location: levels are kept at pick locations",
                place.code, place.kind
            ),
        ));
    }
    if store::catalog::item(conn, business, req.item_id)?.is_none() {
        return Err(refuse(
            "item_id",
            format!("item {} does not exist", req.item_id),
        ));
    }
    let level = ReplenishLevel {
        business_id: business,
        warehouse_id: w,
        location: place.code,
        item_id: req.item_id,
        min: req.min,
        max: req.max,
        updated_at: now(),
    };
    sql::put_level(conn, &level)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::ReplenishLevelSaved,
        &level,
    )?;
    // A face already below its new min is refilled now.
    let face = Face {
        business,
        warehouse: w,
        location: &level.location,
        item: level.item_id,
    };
    check(conn, origin, face, "level", 0)?;
    Ok(level)
}

/// A pick location's stock of one item: what a refill is for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Face<'a> {
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub location: &'a str,
    pub item: ItemId,
}

/// After stock left `location`, or when a wave `wanted` that many units of
/// it there (0: none): if the item's level there says it is below its min,
/// or it holds less than wanted, and no task is open for it, makes one
/// from the reserve lot that expires first, and logs it. Nothing when no
/// reserve holds the item.
pub(crate) fn check(
    conn: &Db,
    origin: &str,
    face: Face,
    reference: &str,
    wanted: i64,
) -> Result<Option<ReplenishTask>> {
    let Face {
        business,
        warehouse,
        location,
        item,
    } = face;
    let Some((min, max)) = sql::level(conn, warehouse, location, item)? else {
        return Ok(None);
    };
    let held = sql::held(conn, warehouse, location, item)?;
    let Some(units) = need(held, min, max, wanted) else {
        return Ok(None);
    };
    if sql::has_open(conn, warehouse, location, item)? {
        return Ok(None);
    }
    let Some((from, quantity)) = first_expiring(&sql::sources(conn, warehouse, item)?, units)
    else {
        return Ok(None);
    };
    let at = now();
    let id = ReplenishTaskId(store::ids::allocate(conn, "replenish_tasks")?);
    let mut task = ReplenishTask {
        id,
        business_id: business,
        warehouse_id: warehouse,
        item_id: item,
        sku: String::new(),
        lot: from.lot,
        expiry: from.expiry,
        from_location: from.location,
        to_location: location.to_owned(),
        quantity,
        moved: 0,
        remaining: quantity,
        status: ReplenishStatus::Open,
        reference: Some(reference.to_owned()),
        created_at: at,
        updated_at: at,
    };
    sql::insert(conn, &task)?;
    task = load(conn, business, id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::ReplenishCreated,
        &task,
    )?;
    Ok(Some(task))
}

/// The `replenishment.scanned` event: the task as it now stands, and the
/// scan.
#[derive(Debug, Clone, Serialize)]
struct Scanned<'a> {
    #[serde(flatten)]
    task: &'a ReplenishTask,
    /// Units this scan moved (`moved` is the task's total).
    units: i64,
}

fn replenish(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    req: ReplenishScan,
) -> Result<ReplenishResult> {
    let business = caller.business_id;
    let task = load(conn, business, req.task_id)?;
    if task.status == ReplenishStatus::Done {
        return Err(WmsError::conflict(format!(
            "replenishment task {} is done: all {} units are at {}",
            task.id, task.quantity, task.to_location
        )));
    }
    let s = scan::resolve(conn, business, &req.code, "code")?;
    if s.item_id != task.item_id {
        return Err(refuse(
            "code",
            format!(
                "{} is not this task's item {}: take it from {}",
                s.sku, task.sku, task.from_location
            ),
        ));
    }
    if let (Some(scanned), Some(lot)) = (&s.lot, &task.lot) {
        if scanned != lot {
            return Err(refuse(
                "code",
                format!("lot {scanned} is not this task's lot {lot}, the first to expire"),
            ));
        }
    }
    if req.location != task.to_location {
        return Err(refuse(
            "location",
            format!(
                "this task refills {}: put the goods there and scan its label",
                task.to_location
            ),
        ));
    }
    let quantity = req.quantity.or(s.count).unwrap_or(task.remaining);
    if quantity > task.remaining {
        return Err(WmsError::conflict(format!(
            "{quantity} units is more than the {} left of replenishment task {}",
            task.remaining, task.id
        )));
    }
    let lot = task.lot.as_deref().unwrap_or("");
    let there = store::ledger::bin_level(
        conn,
        task.item_id,
        task.warehouse_id,
        &task.from_location,
        lot,
    )?;
    if there < quantity {
        return Err(WmsError::conflict(format!(
            "{} holds {there} of {}{}: not the {quantity} scanned",
            task.from_location,
            task.sku,
            task.lot
                .as_ref()
                .map(|l| format!(" lot {l}"))
                .unwrap_or_default()
        )));
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
            to: &task.to_location,
            quantity,
            reference: format!("replenishment:{}", task.id),
            actor: &actor,
            at,
        },
    )?;
    let moved = task.moved.saturating_add(quantity);
    let status = if moved >= task.quantity {
        ReplenishStatus::Done
    } else {
        ReplenishStatus::Open
    };
    sql::set_moved(conn, task.id, moved, status, &at)?;
    let task = load(conn, business, task.id)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::ReplenishScanned,
        &Scanned {
            task: &task,
            units: quantity,
        },
    )?;
    let left = match task.remaining {
        0 => "task done".to_owned(),
        n => format!("{n} left at {}", task.from_location),
    };
    let message = format!(
        "{quantity} × {} from {} to {}; {left}",
        task.sku, task.from_location, task.to_location
    );
    Ok(ReplenishResult {
        task,
        moved: quantity,
        message,
    })
}

/// Applies another node's task as it was made there.
pub(crate) fn apply_created(conn: &Db, t: &ReplenishTask) -> Result<()> {
    sql::insert(conn, t)
}

/// Applies another node's scan: the task's count and status (its
/// movements are events of their own).
pub(crate) fn apply_scanned(conn: &Db, t: &ReplenishTask) -> Result<()> {
    sql::set_moved(conn, t.id, t.moved, t.status, &t.updated_at)
}

impl Wms {
    pub async fn set_replenish_level(
        &self,
        business: BusinessId,
        req: LevelSet,
    ) -> Result<ReplenishLevel> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            set_level(conn, &origin, business, req)
        })
        .await
    }

    pub async fn replenish_levels(
        &self,
        business: BusinessId,
        warehouse: Option<WarehouseId>,
    ) -> Result<Vec<ReplenishLevel>> {
        self.read(move |conn| sql::levels(conn, business, warehouse))
            .await
    }

    pub async fn replenish_scan(
        &self,
        caller: Caller,
        req: ReplenishScan,
    ) -> Result<ReplenishResult> {
        let req = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            replenish(conn, &origin, &caller, req)
        })
        .await
    }

    pub async fn replenish_task(
        &self,
        business: BusinessId,
        id: ReplenishTaskId,
    ) -> Result<ReplenishTask> {
        self.read(move |conn| load(conn, business, id)).await
    }

    pub async fn replenish_tasks(
        &self,
        business: BusinessId,
        filter: ReplenishFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<ReplenishTask>> {
        self.read(move |conn| sql::list(conn, business, &filter, page))
            .await
    }
}

/// The pick location a movement left, if it took stock out of one.
pub(crate) fn left(m: &Movement) -> Option<&str> {
    (m.delta < 0).then_some(m.location.as_deref()).flatten()
}
