//! Print jobs made on another node. A job is printed by the node whose
//! printer it is: a cloud job for a printer attached to an edge arrives
//! there with its bytes; an edge's jobs and what its printers did with them
//! arrive in the cloud without, so its job list shows them.

use super::{Applied, ApplyError, already_here};
use crate::store::printing as sql;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use depot_protocol::event::RemoteEvent;
use depot_protocol::printing::{PrintJob, PrintJobCreated, PrintJobUpdated};
use depot_protocol::{BusinessId, PrinterId, Timestamp};
use depot_sql::Db;
use serde::Deserialize;

fn check_printer(conn: &Db, printer: PrinterId, business: BusinessId) -> Result<(), ApplyError> {
    match sql::printer_business(conn, printer)? {
        Some(owner) if owner == business => Ok(()),
        Some(_) => Err(ApplyError::Reject(format!(
            "printer {printer} belongs to another business"
        ))),
        None => Err(ApplyError::Reject(format!(
            "printer {printer} is not known here"
        ))),
    }
}

pub(super) fn created(conn: &Db, e: &RemoteEvent, c: PrintJobCreated) -> Applied {
    check_printer(conn, c.job.printer_id, c.business_id)?;
    // Before the bytes are decoded: a job already here needs none of them.
    if let Some(here) = sql::job(conn, c.job.id)? {
        let key = |j: &PrintJob| {
            format!(
                "printer {}, {} bytes of {}",
                j.printer_id,
                j.size,
                j.format.as_str()
            )
        };
        return already_here(&format!("print job {}", c.job.id), key(&here), key(&c.job));
    }
    let data = match &c.data_base64 {
        Some(b64) => BASE64
            .decode(b64)
            .map_err(|err| ApplyError::Reject(format!("the job's bytes are not base64: {err}")))?,
        None => Vec::new(),
    };
    if c.data_base64.is_some() && data.len() as i64 != c.job.size {
        return Err(ApplyError::Reject(format!(
            "the job says {} bytes and carries {}",
            c.job.size,
            data.len()
        )));
    }
    sql::insert_job_replica(conn, c.business_id, &c.job, &data, &e.origin)?;
    Ok(None)
}

pub(super) fn updated(conn: &Db, u: PrintJobUpdated) -> Applied {
    check_printer(conn, u.printer_id, u.business_id)?;
    if !sql::set_job_status(conn, u.id, u.status, u.error.as_deref(), &u.at)? {
        return Err(ApplyError::Reject(format!(
            "print job {} is not known here",
            u.id
        )));
    }
    Ok(None)
}

/// What the record keeps of a `printer.state_changed`.
#[derive(Debug, Deserialize)]
pub(crate) struct StateChanged {
    business_id: BusinessId,
    printer_id: Option<PrinterId>,
    state: String,
    at: Timestamp,
}

/// Sets the status of the printer record a device's state is about:
/// `online` while it answers (ready or faulted: someone can fix paper from
/// there), `offline` when it does not; `last_seen` is the last time it
/// answered and never goes back. A device bound to no record changes
/// nothing. Answers whether a record was there to set.
pub(crate) fn record_state(conn: &Db, s: &StateChanged) -> crate::Result<bool> {
    let Some(id) = s.printer_id else {
        return Ok(true);
    };
    let (status, seen) = match s.state.as_str() {
        "ready" | "faulted" => ("online", Some(crate::store::ts(&s.at))),
        "unreachable" => ("offline", None),
        _ => ("unknown", None),
    };
    sql::set_printer_status(conn, id, s.business_id, status, seen.as_deref())
}

pub(super) fn state_changed(conn: &Db, s: &StateChanged) -> Applied {
    if let Some(id) = s.printer_id {
        check_printer(conn, id, s.business_id)?;
    }
    record_state(conn, s)?;
    Ok(None)
}
