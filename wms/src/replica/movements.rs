//! A run of replicated movements applied together: an edge's backlog is
//! mostly `stock.moved` events, one after another. Applied one by one,
//! each is logged, checked and booked in statements of its own; here the
//! run is logged in a few statements, its records' owners are looked up
//! together, and its movements are booked together
//! (`store::ledger::record_many_once`). What it does is what applying
//! each in turn does: the same log, the same refusals, the same levels.

use super::{Checker, Guard, Outcome, apply_guarded, check, transient};
use crate::Result;
use crate::store::{events, ledger};
use depot_protocol::event::EventKind;
use depot_protocol::event::RemoteEvent;
use depot_protocol::stock::Movement;
use depot_sql::Db;

/// Applies `run`, every one a `stock.moved` event, in a batch without a
/// savepoint per event (`Guard::Batch`): the outcome of each, or `None`
/// when one was refused after the run wrote (a malformed payload, a level
/// out of range), and the caller undoes the batch and applies it again
/// event by event, which tells which. With a `checker`, an event that
/// names what is not its sender's is refused and the others applied.
fn apply_movements(
    conn: &Db,
    run: &[&RemoteEvent],
    mut checker: Option<&mut Checker<'_>>,
) -> Result<Option<Vec<Outcome>>> {
    let new = events::append_remote_many(conn, run)?;
    let mut outcomes = vec![Outcome::Duplicate; run.len()];
    // On SQLite a read does not wait for a server: the owners are read as
    // each event is checked, and its payload is not parsed twice.
    let together = conn.dialect() == depot_sql::Dialect::Postgres;
    if let Some(checker) = checker.as_deref_mut().filter(|_| together) {
        let fresh: Vec<&RemoteEvent> = run
            .iter()
            .zip(&new)
            .filter_map(|(e, new)| new.then_some(*e))
            .collect();
        checker.look_up(conn, &fresh)?;
    }
    let mut booking = Vec::with_capacity(run.len());
    let mut movements = Vec::with_capacity(run.len());
    for (i, e) in run.iter().enumerate() {
        if !new[i] {
            continue;
        }
        if let Some(checker) = checker.as_deref_mut() {
            if let Some(refused) = check(conn, e, checker)? {
                outcomes[i] = refused;
                continue;
            }
        }
        match serde_json::from_str::<Movement>(e.payload.get()) {
            Ok(m) => {
                booking.push(i);
                movements.push(m);
            }
            Err(_) => return Ok(None),
        }
    }
    match ledger::record_many_once(conn, &mut movements) {
        Ok(_) => {}
        Err(e) if transient(&e) => return Err(e),
        Err(_) => return Ok(None),
    }
    for i in booking {
        outcomes[i] = Outcome::Applied;
    }
    Ok(Some(outcomes))
}

/// Applies `events` in order, each as [`apply_guarded`] does, isolated as
/// `guard` says; under [`Guard::Batch`] each run of movements together
/// ([`apply_movements`]). `None` when one was refused under
/// `Guard::Batch` (see [`super::optimistic`]).
pub fn apply_all(
    conn: &Db,
    events: &[&RemoteEvent],
    guard: Guard,
    mut checker: Option<&mut Checker<'_>>,
) -> Result<Option<Vec<Outcome>>> {
    let moved = EventKind::StockMoved.as_str();
    let mut outcomes = Vec::with_capacity(events.len());
    let mut at = 0;
    while at < events.len() {
        let run = events[at..].iter().take_while(|e| e.kind == moved).count();
        if guard == Guard::Batch && run > 1 {
            let Some(run) = apply_movements(conn, &events[at..at + run], checker.as_deref_mut())?
            else {
                return Ok(None);
            };
            at += run.len();
            outcomes.extend(run);
            continue;
        }
        let Some(outcome) = apply_guarded(conn, events[at], guard, checker.as_deref_mut())? else {
            return Ok(None);
        };
        outcomes.push(outcome);
        at += 1;
    }
    Ok(Some(outcomes))
}
