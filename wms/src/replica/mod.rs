//! Applying what another node did. Sync carries events; the receiving side
//! logs each one once (by its id: a duplicate is recognized and skipped) and
//! replays its effect here, keeping the other node's ids. Derived state
//! (levels, reservations) is recomputed the same way on both sides; facts
//! (movements) travel as their own events and are never derived twice.
//!
//! What cannot be applied (an illegal transition, a reference to something
//! unknown, a uniqueness clash) is rejected: recorded as a conflict, never
//! blocking what follows. Order statuses merge by the design's rule:
//! cancellation wins over warehouse progress until dispatch; once the goods
//! have left, dispatch stands.

use crate::orders::per_item;
use crate::store::{self, catalog, events, ledger, orders as order_sql, replica as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::catalog::Item;
use depot_protocol::catalogue::Replication;
use depot_protocol::event::{Event, EventKind, RemoteEvent};
use depot_protocol::order::{
    Address, Order, OrderStatus, Split, StatusChange, StockEffect, transition,
};
use depot_protocol::release::{PublishedPayload, ReleaseTranslated};
use depot_protocol::stock::Movement;
use depot_protocol::tenant::{ApiKey, Business, Warehouse};
use depot_protocol::{OrderId, Timestamp, now};
use depot_sql::{Db, params};
use serde::Deserialize;

mod movements;
mod operations;
pub mod ownership;
pub(crate) mod printing;

pub use movements::apply_all;
pub use ownership::{Checker, Sender};

/// What applying one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Applied,
    /// Already in the log: nothing done.
    Duplicate,
    /// Applied, but it clashed with a local change; `resolution` says
    /// what stands.
    Merged {
        reason: String,
        resolution: String,
    },
    /// Not applied; recorded as a conflict.
    Rejected {
        reason: String,
    },
}

enum ApplyError {
    Reject(String),
    /// The apply failed for a reason of this node's that another try would
    /// meet again (a storage error that is no I/O trouble, an overflow, a
    /// bug): the event is refused like a rejected one, so it cannot hold up
    /// the ones after it.
    Failed(String),
    Fatal(WmsError),
}

/// Whether an error is this node's storage being unable to write now (a
/// full disk, an I/O error, a lock): the write is tried again later. Any
/// other failure of one event would fail again on every try.
fn transient(e: &WmsError) -> bool {
    match e {
        WmsError::Full => true,
        WmsError::Storage(e) => e.is_transient(),
        _ => false,
    }
}

/// [`apply_kind`], with a failure that is no fault of this node's storage
/// turned into [`ApplyError::Failed`], a panic included. `settled`: the
/// event's writes sent without waiting are answered before it is judged
/// applied (in a savepoint of its own; a batch reads them at its end).
fn attempt(conn: &Db, e: &RemoteEvent, settled: bool) -> Applied {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let applied = apply_kind(conn, e)?;
        if settled {
            conn.settle()?;
        }
        Ok(applied)
    }))
    .unwrap_or_else(|panic| {
        let what = crate::error::panic_text(panic.as_ref());
        Err(ApplyError::Failed(format!("a bug: {what}")))
    });
    match result {
        Err(ApplyError::Fatal(err)) if !transient(&err) => Err(ApplyError::Failed(err.to_string())),
        other => other,
    }
}

impl From<WmsError> for ApplyError {
    fn from(e: WmsError) -> Self {
        // A uniqueness or reference clash is a property of the event, not a
        // failure of this node: reject it rather than retrying forever.
        match &e {
            WmsError::Storage(e) if e.constraint().is_some() => {
                ApplyError::Reject(format!("constraint: {e}"))
            }
            // One of the event's own writes, sent without waiting for its
            // answer: the event's savepoint holds nothing else.
            WmsError::Storage(depot_sql::Error::Earlier(e)) if e.constraint().is_some() => {
                ApplyError::Reject(format!("constraint: {e}"))
            }
            // What the engine refuses from a request it refuses from another
            // node too: a level that would leave its range, a record that
            // is not there, a state that does not allow it.
            WmsError::Invalid { message, .. }
            | WmsError::Conflict { message, .. }
            | WmsError::Mismatch { message, .. } => ApplyError::Reject(message.clone()),
            WmsError::NotFound(message) => ApplyError::Reject(message.clone()),
            _ => ApplyError::Fatal(e),
        }
    }
}

impl From<depot_sql::Error> for ApplyError {
    fn from(e: depot_sql::Error) -> Self {
        ApplyError::from(WmsError::from(e))
    }
}

fn payload<T: for<'de> Deserialize<'de>>(e: &RemoteEvent) -> std::result::Result<T, ApplyError> {
    serde_json::from_str(e.payload.get())
        .map_err(|err| ApplyError::Reject(format!("malformed {} payload: {err}", e.kind)))
}

#[derive(Deserialize)]
struct KeyCreated {
    key: ApiKey,
    hash: String,
}

#[derive(Deserialize)]
struct StatusChanged {
    order_id: OrderId,
    change: StatusChange,
}

type Applied = std::result::Result<Option<(String, String)>, ApplyError>;

/// A record already here under the id an event gives it. Ids are kept
/// apart by node ranges, and an event is applied once (by its id), so the
/// same record arriving again changes nothing; another record under that id
/// means two nodes numbered alike (a box restored without its cloud, say).
/// That one is rejected, which records it as a conflict the API shows,
/// rather than skipped as if it were already here.
/// `here` and `arriving` describe each record by what tells it apart.
fn already_here(what: &str, here: String, arriving: String) -> Applied {
    if here == arriving {
        return Ok(None);
    }
    Err(ApplyError::Reject(format!(
        "{what} here is another record ({here}) than the one arriving ({arriving})"
    )))
}

fn apply_item(conn: &Db, item: Item) -> Applied {
    // Last writer wins, by the time of the edit.
    if let Some(stored) = sql::item_updated_at(conn, &item)? {
        if stored > store::ts(&item.updated_at) {
            return Ok(None);
        }
    }
    sql::insert_item_row(conn, &item)?;
    catalog::update_item(
        conn,
        item.business_id,
        item.id,
        &catalog::fields(&item),
        &item.updated_at,
    )?;
    Ok(None)
}

fn apply_order(conn: &Db, order: Order) -> Applied {
    if let Some(here) = order_sql::order_any(conn, order.id)? {
        let key = |o: &Order| {
            format!(
                "business {}, warehouse {}, {} reference {:?}",
                o.business_id, o.warehouse_id, o.channel, o.external_ref
            )
        };
        return already_here(&format!("order {}", order.id), key(&here), key(&order));
    }
    order_sql::insert(conn, &order)?;
    for change in &order.history {
        order_sql::add_history(conn, order.id, change)?;
    }
    if order.status.holds_reservation() {
        for (item, qty) in per_item(&order) {
            ledger::reserve(conn, order.business_id, item, order.warehouse_id, qty)?;
        }
    }
    Ok(None)
}

/// Moves reservations and pending units as a transition does, without
/// booking movements: the movements of a dispatch arrive as their own
/// events.
fn reservations(conn: &Db, order: &Order, effect: StockEffect) -> Result<()> {
    crate::orders::hold_for(conn, order, order.status, effect)
}

/// The cloud split a backorder: the order keeps the units that went
/// ahead (its confirmation follows), while it is still pending here. One
/// already moved on here (confirmed by hand on this node before the split
/// arrived) keeps its lines: it goes whole, and the conflict says so.
fn apply_split(conn: &Db, s: Split) -> Applied {
    let order = order_sql::order_any(conn, s.order_id)?
        .ok_or_else(|| ApplyError::Reject(format!("order {} is not known here", s.order_id)))?;
    if order.status != OrderStatus::Pending {
        return Err(ApplyError::Reject(format!(
            "order {} is {} here: it was not split, and goes whole (its rest, order {}, also waits)",
            order.id, order.status, s.backorder_id
        )));
    }
    // What goes ahead is part of what the order holds: each line one of
    // its own, with the same item and at most its units.
    for l in &s.lines {
        let own = order.lines.iter().find(|o| o.line_no == l.line_no);
        if !own.is_some_and(|o| o.item_id == l.item_id && (1..=o.quantity).contains(&l.quantity)) {
            return Err(ApplyError::Reject(format!(
                "the split of order {} names line {} as item {} × {}, which the order does not hold",
                order.id, l.line_no, l.item_id, l.quantity
            )));
        }
    }
    order_sql::set_lines(conn, &order, &s.lines, s.total)?;
    Ok(None)
}

#[derive(Deserialize)]
struct AddressChanged {
    order_id: OrderId,
    shipping_address: Address,
    actor: String,
    at: Timestamp,
}

/// Another node corrected an address: taken while the order is not packed
/// here; once packed, the label here has the old one, and that stands.
fn apply_address(conn: &Db, a: AddressChanged) -> Applied {
    let order = order_sql::order_any(conn, a.order_id)?
        .ok_or_else(|| ApplyError::Reject(format!("order {} is not known here", a.order_id)))?;
    if matches!(
        order.status,
        OrderStatus::Pending | OrderStatus::Confirmed | OrderStatus::Picking
    ) {
        order_sql::set_address(conn, order.id, &a.shipping_address, &a.at)?;
        return Ok(None);
    }
    Ok(Some((
        format!(
            "order {} was already {} here when {} corrected its address",
            order.id, order.status, a.actor
        ),
        "the address on the printed label stands".to_owned(),
    )))
}

fn apply_status(conn: &Db, s: StatusChanged) -> Applied {
    let order = order_sql::order_any(conn, s.order_id)?
        .ok_or_else(|| ApplyError::Reject(format!("order {} is not known here", s.order_id)))?;
    let to = s.change.to;
    let at = s.change.at;
    match transition(order.status, to) {
        Ok(t) if t.is_noop() => Ok(None),
        Ok(t) => {
            reservations(conn, &order, t.effect)?;
            order_sql::set_status(conn, order.id, to, &at)?;
            order_sql::add_history(
                conn,
                order.id,
                &StatusChange {
                    from: Some(order.status),
                    ..s.change
                },
            )?;
            Ok(None)
        }
        Err(_)
            if order.status == OrderStatus::Cancelled
                && matches!(to, OrderStatus::Dispatched | OrderStatus::Delivered) =>
        {
            // The goods left before the cancellation could stop them: the
            // dispatch stands. The cancellation already released the
            // reservation, so nothing is released again.
            order_sql::set_status(conn, order.id, to, &at)?;
            let reason = format!(
                "order {} was cancelled here but {to} at {}",
                order.id, s.change.actor
            );
            let note = Some(
                "the warehouse dispatched before the cancellation reached it: dispatch stands"
                    .to_owned(),
            );
            order_sql::add_history(
                conn,
                order.id,
                &StatusChange {
                    from: Some(order.status),
                    note,
                    ..s.change
                },
            )?;
            Ok(Some((reason, format!("{to} stands"))))
        }
        Err(e) => Err(ApplyError::Reject(format!("order {}: {e}", order.id))),
    }
}

fn apply_kind(conn: &Db, e: &RemoteEvent) -> Applied {
    let not_replicated = || {
        Err(ApplyError::Reject(format!(
            "events of kind {} are not replicated",
            e.kind
        )))
    };
    let Some(kind) = EventKind::parse(&e.kind) else {
        return not_replicated();
    };
    match kind.entry().replication {
        Replication::Everywhere | Replication::ToCloud => {}
        Replication::Recorded => return Ok(None),
        Replication::Local => return not_replicated(),
    }
    use EventKind as K;
    match kind {
        K::BusinessCreated | K::BusinessUpdated => {
            sql::upsert_business(conn, &payload::<Business>(e)?)?;
            Ok(None)
        }
        K::WarehouseCreated | K::WarehouseUpdated => {
            sql::upsert_warehouse(conn, &payload::<Warehouse>(e)?)?;
            Ok(None)
        }
        K::SsccBlockGranted => operations::sscc_block(conn, e, payload(e)?),
        K::PackageLoaded => operations::loaded(conn, e, payload(e)?),
        K::KeyCreated => {
            let k: KeyCreated = payload(e)?;
            let hash = hex::decode(&k.hash)
                .map_err(|err| ApplyError::Reject(format!("bad key hash: {err}")))?;
            sql::upsert_key(conn, &k.key, &hash)?;
            Ok(None)
        }
        K::KeyRevoked => {
            sql::revoke_key(conn, &payload::<ApiKey>(e)?)?;
            Ok(None)
        }
        K::ItemCreated | K::ItemUpdated => apply_item(conn, payload(e)?),
        K::LocationSaved => {
            store::locations::save_replica(conn, &payload(e)?)?;
            Ok(None)
        }
        K::OrderCreated => apply_order(conn, payload(e)?),
        K::OrderStatusChanged => apply_status(conn, payload(e)?),
        K::OrderAddressChanged => apply_address(conn, payload(e)?),
        K::OrderSplit => apply_split(conn, payload(e)?),
        K::ChannelSaved => {
            store::channels::save_replica(conn, &payload(e)?)?;
            Ok(None)
        }
        K::StockMoved => {
            let mut m: Movement = payload(e)?;
            // A movement already booked here (the same count approved on
            // two nodes names its movements alike) is not booked twice.
            ledger::record_once(conn, &mut m)?;
            Ok(None)
        }
        K::InboundCreated => operations::inbound(conn, payload(e)?),
        K::InboundReceived => operations::received(conn, e, payload(e)?),
        K::WaveCreated => operations::wave(conn, payload(e)?),
        K::PickScanned => operations::pick(conn, payload(e)?),
        K::ShipmentPacked => operations::shipment(conn, payload(e)?),
        K::ShipmentMilestone => operations::milestone(conn, e, payload(e)?),
        K::DispatchRunClosed => operations::run_closed(conn, payload(e)?),
        K::PutawayCreated => {
            store::putaway::insert_replica(conn, &payload(e)?)?;
            Ok(None)
        }
        K::PutawayScanned => {
            crate::putaway::apply_scanned(conn, &payload(e)?)?;
            Ok(None)
        }
        K::CountCreated => {
            crate::counts::apply_created(conn, &payload(e)?)?;
            Ok(None)
        }
        K::CountScanned => {
            crate::counts::apply_scanned(conn, &payload(e)?)?;
            Ok(None)
        }
        K::ReplenishLevelSaved => {
            store::replenish::put_level(conn, &payload(e)?)?;
            Ok(None)
        }
        K::ReplenishCreated => {
            crate::replenish::apply_created(conn, &payload(e)?)?;
            Ok(None)
        }
        K::ReturnCreated => {
            crate::returns::apply_created(conn, &payload(e)?)?;
            Ok(None)
        }
        K::ReturnCancelled => {
            crate::returns::apply_cancelled(conn, &payload(e)?)?;
            Ok(None)
        }
        K::ReturnReceived => {
            crate::returns::apply_received(conn, &payload(e)?)?;
            Ok(None)
        }
        K::ReplenishScanned => {
            crate::replenish::apply_scanned(conn, &payload(e)?)?;
            Ok(None)
        }
        K::CountApproved | K::CountCancelled => {
            crate::counts::apply_closed(conn, &payload(e)?)?;
            Ok(None)
        }
        K::PrinterSaved => operations::printer(conn, payload(e)?),
        K::PrintJobCreated => printing::created(conn, e, payload(e)?),
        K::PrintJobUpdated => printing::updated(conn, payload(e)?),
        K::PrinterStateChanged | K::PrinterSeen => printing::state_changed(conn, &payload(e)?),
        K::ReleasePublished => {
            let r = payload::<PublishedPayload>(e)?.into_release();
            store::releases::insert_replica(conn, &r)?;
            Ok(None)
        }
        K::ReleaseTranslated => {
            let t: ReleaseTranslated = payload(e)?;
            store::releases::insert_note(conn, t.release_id, &t.locale, &t.note)?;
            store::releases::touch(conn, t.release_id, &t.updated_at)?;
            Ok(None)
        }
        // The catalogue says these are not applied (returned above); a
        // kind moved to applied without an arm here is a bug, refused as
        // one.
        K::PickLineCompleted
        | K::WaveCompleted
        | K::ShipmentEstimatedDeliveryChanged
        | K::StationScanned
        | K::ScaleWeighed
        | K::DocumentAttached
        | K::CrmDepartmentSaved
        | K::CrmFormSaved
        | K::CrmThreadOpened
        | K::CrmMessagePosted
        | K::PricingRulesChanged
        | K::PricingJobExecuted
        | K::ChannelAvailabilityChanged
        | K::OrderOversold
        | K::SyncConflict
        | K::EdgeOnline
        | K::EdgeOffline
        | K::SyncBacklog => Err(ApplyError::Failed(format!(
            "the catalogue has {kind} applied, but nothing here applies it"
        ))),
    }
}

/// How the writes of one applied event are kept apart from the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guard {
    /// In a savepoint of its own: a refused event is undone alone.
    Event,
    /// Not at all: a refused event answers `None`, and the caller undoes its
    /// whole batch and applies it again with [`Guard::Event`] (see
    /// [`optimistic`]).
    Batch,
}

/// Runs `body` over a batch of events without a savepoint per event (one
/// costs about as much as a small event's own writes, and refusals are
/// rare); if it answers `None`, an event was refused after writing, so all
/// it wrote is undone and it runs again with a savepoint per event.
pub fn optimistic<T>(
    conn: &Db,
    mut body: impl FnMut(&Db, Guard) -> Result<Option<T>>,
) -> Result<T> {
    conn.execute("SAVEPOINT optimistic", params![])?;
    // The batch's writes sent without waiting for their answers are read
    // here: one of them failing is an event refused (which one, the run
    // with a savepoint per event tells).
    let batch = body(conn, Guard::Batch).and_then(|done| {
        conn.settle()?;
        Ok(done)
    });
    let first = match batch {
        Err(WmsError::Storage(depot_sql::Error::Earlier(e))) => {
            tracing::debug!(error = %e, "a write of a batch's event failed: applied again event by event");
            Ok(None)
        }
        first => first,
    };
    if !matches!(first, Ok(Some(_))) {
        conn.execute("ROLLBACK TO optimistic", params![])?;
    }
    conn.execute("RELEASE optimistic", params![])?;
    match first? {
        Some(done) => Ok(done),
        None => body(conn, Guard::Event)?.ok_or_else(|| {
            WmsError::Internal("a batch was refused with a savepoint per event".into())
        }),
    }
}

/// Applies one event made elsewhere, inside the caller's transaction.
pub fn apply(conn: &Db, e: &RemoteEvent) -> Result<Outcome> {
    apply_guarded(conn, e, Guard::Event, None)?
        .ok_or_else(|| WmsError::Internal("an event escaped its savepoint".into()))
}

/// [`apply`], isolated as `guard` says: `None` when the event was refused
/// under [`Guard::Batch`]. With a `checker`, the event is first held to
/// its sender's business (see [`ownership`]): an event naming what is not
/// the sender's is refused before anything of it is applied.
pub fn apply_guarded(
    conn: &Db,
    e: &RemoteEvent,
    guard: Guard,
    checker: Option<&mut Checker<'_>>,
) -> Result<Option<Outcome>> {
    if !events::append_remote(conn, e)? {
        return Ok(Some(Outcome::Duplicate));
    }
    if let Some(checker) = checker {
        if let Some(refused) = check(conn, e, checker)? {
            return Ok(Some(refused));
        }
    }
    let result = match guard {
        Guard::Batch => match attempt(conn, e, false) {
            Err(ApplyError::Reject(_) | ApplyError::Failed(_)) => return Ok(None),
            result => result,
        },
        Guard::Event => {
            // Prepared once: a batch with a refusal runs this per event.
            conn.execute("SAVEPOINT apply", params![])?;
            let result = attempt(conn, e, true);
            if matches!(result, Err(ApplyError::Reject(_) | ApplyError::Failed(_))) {
                conn.execute("ROLLBACK TO apply", params![])?;
            }
            conn.execute("RELEASE apply", params![])?;
            result
        }
    };
    match result {
        Ok(None) => Ok(Some(Outcome::Applied)),
        Ok(Some((reason, resolution))) => {
            sql::record_conflict(conn, e, &reason, &resolution, &now())?;
            Ok(Some(Outcome::Merged { reason, resolution }))
        }
        Err(ApplyError::Reject(reason)) => {
            tracing::warn!(event = %e.id, kind = %e.kind, origin = %e.origin, %reason, "rejected a replicated event");
            refuse(conn, e, &reason, "rejected")?;
            Ok(Some(Outcome::Rejected { reason }))
        }
        Err(ApplyError::Failed(why)) => {
            let reason = format!("could not be applied here: {why}");
            tracing::error!(event = %e.id, kind = %e.kind, origin = %e.origin, %reason, "an event failed to apply: refused, and sync goes on");
            refuse(conn, e, &reason, "failed")?;
            Ok(Some(Outcome::Rejected { reason }))
        }
        Err(ApplyError::Fatal(err)) => Err(err),
    }
}

/// Holds `e` to its sender's business (see [`ownership`]): refused, and
/// recorded so, when it names what is not the sender's.
fn check(conn: &Db, e: &RemoteEvent, checker: &mut Checker<'_>) -> Result<Option<Outcome>> {
    let Some(reason) = checker.refusal(conn, e)? else {
        return Ok(None);
    };
    tracing::warn!(event = %e.id, kind = %e.kind, origin = %e.origin, %reason, "refused a replicated event");
    refuse(conn, e, &reason, "rejected")?;
    Ok(Some(Outcome::Rejected { reason }))
}

/// Records an event as refused here: a conflict of its business, kept in
/// the log but read by nothing as having happened.
pub(crate) fn refuse(conn: &Db, e: &RemoteEvent, reason: &str, resolution: &str) -> Result<()> {
    sql::record_conflict(conn, e, reason, resolution, &now())?;
    events::mark_refused(conn, e.id)
}

impl Wms {
    /// Applies a batch of events from another node in one transaction.
    pub async fn apply_remote(&self, events: Vec<Event>) -> Result<Vec<Outcome>> {
        let events = events
            .into_iter()
            .map(RemoteEvent::from_event)
            .collect::<serde_json::Result<Vec<_>>>()?;
        self.write(move |conn| {
            let events: Vec<&RemoteEvent> = events.iter().collect();
            optimistic(conn, |conn, guard| apply_all(conn, &events, guard, None))
        })
        .await
    }

    /// Conflicts recorded while applying other nodes' events, newest first.
    pub async fn conflicts(
        &self,
        business: Option<depot_protocol::BusinessId>,
        limit: u32,
    ) -> Result<Vec<sql::Conflict>> {
        self.read(move |conn| sql::conflicts(conn, business, limit))
            .await
    }

    /// A page of a business's conflicts, newest first.
    pub async fn conflict_page(
        &self,
        business: depot_protocol::BusinessId,
        filter: sql::ConflictFilter,
        page: depot_protocol::Page,
    ) -> Result<depot_protocol::Listed<sql::Conflict>> {
        self.read(move |conn| sql::conflict_page(conn, business, &filter, page))
            .await
    }

    /// A business's events after log position `after`, oldest first.
    pub async fn business_events(
        &self,
        business: depot_protocol::BusinessId,
        after: i64,
        kind: Option<String>,
        limit: u32,
    ) -> Result<Vec<Event>> {
        self.read(move |conn| events::for_business(conn, business, after, kind.as_deref(), limit))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use depot_protocol::EventId;
    use depot_protocol::catalogue::CATALOGUE;

    /// Every kind is handled as its catalogue entry says: an applied kind
    /// reads its payload (and refuses a malformed one), a recorded kind is
    /// logged as it is, a local one is refused.
    #[test]
    fn kinds_are_applied_as_the_catalogue_says() {
        let conn = crate::store::memory(0).expect("memory");
        for t in CATALOGUE {
            let e = RemoteEvent {
                id: EventId(uuid::Uuid::nil()),
                origin: "edge:test".into(),
                business_id: None,
                kind: t.name().into(),
                payload: serde_json::value::to_raw_value(&"not a payload").expect("raw"),
                at: now(),
                seq: None,
            };
            let got = match apply_kind(&conn, &e) {
                Ok(_) => "recorded".to_owned(),
                Err(ApplyError::Reject(why)) => why,
                Err(ApplyError::Failed(why)) => format!("failed: {why}"),
                Err(ApplyError::Fatal(err)) => format!("fatal: {err}"),
            };
            let expected = match t.replication {
                Replication::Everywhere | Replication::ToCloud => "malformed",
                Replication::Recorded => "recorded",
                Replication::Local => "not replicated",
            };
            assert!(got.contains(expected), "{}: {got}", t.name());
        }
    }
}
