//! A count scan: goods counted at a location, or the location closed and
//! its lines settled.

use super::{open, pending, refuse};
use crate::store::{self, counts as sql, ledger};
use crate::{Result, WmsError, scan};
use depot_protocol::count::{
    CountLine, CountLineStatus, CountPlaceStatus, CountScan, CountScanResult, CountScanned,
    CountSummary, MAX_COUNT_LINES, MAX_COUNTED, settle,
};
use depot_protocol::event::EventKind;
use depot_protocol::tenant::Caller;
use depot_protocol::{CountId, Timestamp, now};
use depot_sql::Db;

/// Counts `line` as `counted` now, against what the books hold for it.
fn count_line(
    conn: &Db,
    c: &CountSummary,
    line: &mut CountLine,
    counted: i64,
    actor: &str,
    at: &Timestamp,
) -> Result<()> {
    let expected = ledger::bin_level(
        conn,
        line.item_id,
        c.warehouse_id,
        &line.location,
        line.lot.as_deref().unwrap_or(""),
    )?;
    line.expected = Some(expected);
    line.counted = Some(counted);
    line.variance = counted.checked_sub(expected);
    line.counted_by = Some(actor.to_owned());
    line.counted_at = Some(*at);
    line.status = CountLineStatus::Counted;
    Ok(())
}

pub(super) fn count_scan(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    id: CountId,
    req: CountScan,
) -> Result<CountScanResult> {
    let business = caller.business_id;
    let c = open(conn, business, id)?;
    let actor = caller.actor();
    let Some(mut place) = sql::place_of(conn, id, &req.location)? else {
        return Err(refuse(
            "location",
            format!(
                "{} is not one of count {id}'s locations ({})",
                req.location, c.scope
            ),
        ));
    };
    match place.status {
        CountPlaceStatus::Done => {
            return Err(WmsError::conflict(format!(
                "{} is counted: count {id} has nothing more to count there",
                place.location
            )));
        }
        CountPlaceStatus::Recount if place.closed_by.as_deref() == Some(actor.as_str()) => {
            return Err(WmsError::conflict(format!(
                "{}'s recount must be made by someone else than who counted it first ({actor})",
                place.location
            )));
        }
        _ => {}
    }
    let recounting = place.status == CountPlaceStatus::Recount;
    let mut lines = sql::lines_where(conn, id, Some(&place.location))?;
    let at = now();
    let (changed, line, recount, message) = match &req.code {
        Some(code) => {
            let s = scan::resolve(conn, business, code, "code")?;
            if !c.item_ids.is_empty() && !c.item_ids.contains(&s.item_id) {
                return Err(refuse(
                    "code",
                    format!(
                        "count {id} counts {}; {} is not one of them",
                        c.scope, s.sku
                    ),
                ));
            }
            let same: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].item_id == s.item_id)
                .filter(|&i| s.lot.is_none() || lines[i].lot == s.lot)
                .collect();
            let i = match (same.as_slice(), &s.lot) {
                ([i], _) => *i,
                ([], _) => {
                    if recounting {
                        return Err(recount_only(&place.location, &lines));
                    }
                    if sql::lines_where(conn, id, None)?.len() >= MAX_COUNT_LINES {
                        return Err(WmsError::conflict(format!(
                            "count {id} holds {MAX_COUNT_LINES} lines: no more can be found in it"
                        )));
                    }
                    lines.push(pending(
                        &place.location,
                        s.item_id,
                        s.sku.clone(),
                        s.lot.clone(),
                    ));
                    lines.len() - 1
                }
                (_, _) => {
                    let lots: Vec<String> = same
                        .iter()
                        .map(|&i| lines[i].lot.clone().unwrap_or_else(|| "(none)".into()))
                        .collect();
                    return Err(refuse(
                        "code",
                        format!(
                            "{} holds lots {} of {}: scan the lot (a GS1 code with AI 10)",
                            place.location,
                            lots.join(", "),
                            s.sku
                        ),
                    ));
                }
            };
            let line = &mut lines[i];
            if recounting && line.round < 2 {
                return Err(recount_only(&place.location, &lines));
            }
            let units = req.quantity.or(s.count).unwrap_or(1);
            let counted = match (req.add, line.status, line.counted) {
                (true, CountLineStatus::Counted, Some(had)) => had.saturating_add(units),
                _ => units,
            };
            if counted > MAX_COUNTED {
                return Err(refuse(
                    "quantity",
                    format!("{counted} would be more than {MAX_COUNTED} counted"),
                ));
            }
            count_line(conn, &c, line, counted, &actor, &at)?;
            let message = if c.blind {
                format!(
                    "{}: {counted} × {} counted; scan the location again when it is done",
                    place.location, line.sku
                )
            } else {
                format!(
                    "{}: {counted} × {} counted (the books say {}); scan the location again when it is done",
                    place.location,
                    line.sku,
                    line.expected.unwrap_or(0)
                )
            };
            let line = line.clone();
            (vec![line.clone()], Some(line), Vec::new(), message)
        }
        None => {
            let mut changed = Vec::new();
            for line in &mut lines {
                let waiting = matches!(
                    line.status,
                    CountLineStatus::Pending | CountLineStatus::Recount
                );
                if waiting {
                    count_line(conn, &c, line, 0, &actor, &at)?;
                }
                if line.status != CountLineStatus::Counted {
                    continue;
                }
                let (expected, counted) = (line.expected.unwrap_or(0), line.counted.unwrap_or(0));
                line.status = settle(
                    line.round,
                    expected,
                    counted,
                    c.tolerance_units,
                    c.tolerance_percent,
                );
                if line.status == CountLineStatus::Recount {
                    line.first_expected = line.expected.take();
                    line.first_counted = line.counted.take();
                    line.first_by = line.counted_by.take();
                    line.counted_at = None;
                    line.variance = None;
                    line.round = 2;
                }
                changed.push(line.clone());
            }
            let recount: Vec<String> = changed
                .iter()
                .filter(|l| l.status == CountLineStatus::Recount)
                .map(|l| l.sku.clone())
                .collect();
            // Who closed the first round: the recount must be someone else.
            if !recounting {
                place.closed_by = Some(actor.clone());
            }
            place.status = if recount.is_empty() {
                CountPlaceStatus::Done
            } else {
                CountPlaceStatus::Recount
            };
            let message = if recount.is_empty() {
                format!("{} counted: every line settled", place.location)
            } else {
                format!(
                    "{} counted: {} to be recounted by someone else",
                    place.location,
                    recount.join(", ")
                )
            };
            (changed, None, recount, message)
        }
    };
    for l in &changed {
        sql::put_line(conn, id, l)?;
    }
    sql::put_place(conn, id, &place)?;
    sql::touch(conn, id, &at)?;
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::CountScanned,
        &CountScanned {
            id,
            business_id: business,
            warehouse_id: c.warehouse_id,
            location: place.clone(),
            lines: changed,
            updated_at: at,
        },
    )?;
    let summary = sql::summary_of(conn, business, id)?.unwrap_or(c);
    let blind = summary.blind;
    Ok(CountScanResult {
        count: summary,
        location: place.location,
        location_status: place.status,
        line: line.map(|l| if blind { l.blinded() } else { l }),
        recount,
        message,
    })
}

fn recount_only(location: &str, lines: &[CountLine]) -> WmsError {
    let skus: Vec<&str> = lines
        .iter()
        .filter(|l| l.round >= 2 && l.status != CountLineStatus::Final)
        .map(|l| l.sku.as_str())
        .collect();
    WmsError::conflict(format!(
        "only {} are recounted at {location}",
        skus.join(", ")
    ))
}
