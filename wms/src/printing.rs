//! Printers and print jobs. Jobs are stored with their bytes and a status
//! (queued, sent, printed, failed) that the device side drives.

use crate::store::{self, printing as sql};
use crate::{Result, Wms, WmsError};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use depot_protocol::event::EventKind;
use depot_protocol::printing::{
    CheckedPrinter, Connection, JobStatus, MAX_EDGE_JOB_BYTES, MAX_JOB_BYTES, PrintJob,
    PrintJobCreated, PrintJobUpdated, Printer, PrinterFields, PrinterKind,
};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, FieldError, PrintJobId, PrinterId, now};
use depot_sql::Db;
use std::collections::HashSet;

fn load(conn: &Db, business: BusinessId, id: PrinterId) -> Result<Printer> {
    sql::printer(conn, business, id)?
        .ok_or_else(|| WmsError::NotFound(format!("printer {id} does not exist")))
}

fn save(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    id: Option<PrinterId>,
    fields: PrinterFields,
) -> Result<Printer> {
    let current = match id {
        Some(id) => {
            let p = load(conn, business, id)?;
            Some(CheckedPrinter {
                name: p.name,
                kind: p.kind,
                connection: p.connection,
                station: p.station,
            })
        }
        None => None,
    };
    let checked = fields.apply(current).map_err(WmsError::invalid)?;
    if sql::name_owner(conn, business, &checked.name)?.is_some_and(|owner| Some(owner) != id) {
        return Err(WmsError::field_conflict(
            "name",
            format!("a printer named {} already exists", checked.name),
        ));
    }
    let at = now();
    let id = match id {
        Some(id) => {
            sql::update(conn, id, &checked, &at)?;
            id
        }
        None => sql::insert(conn, business, &checked, &at)?,
    };
    let p = load(conn, business, id)?;
    store::events::append(conn, origin, Some(business), EventKind::PrinterSaved, &p)?;
    Ok(p)
}

/// Recognizes the job's format from its bytes, so a PDF sent to a label
/// printer is refused instead of printing pages of garbage.
pub fn sniff(data: &[u8]) -> Option<PrinterKind> {
    let start = data
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &data[i..]);
    if start.starts_with(b"%PDF-") {
        Some(PrinterKind::Pdf)
    } else if start.starts_with(b"^XA") || start.starts_with(b"~") || start.starts_with(b"^") {
        Some(PrinterKind::Zpl)
    } else {
        None
    }
}

fn update_job(
    conn: &Db,
    origin: &str,
    job: PrintJobId,
    status: JobStatus,
    error: Option<String>,
) -> Result<PrintJob> {
    let current = sql::job(conn, job)?
        .ok_or_else(|| WmsError::NotFound(format!("print job {job} does not exist")))?;
    let business = sql::printer_business(conn, current.printer_id)?
        .ok_or_else(|| WmsError::Internal("the job's printer vanished".into()))?;
    let at = now();
    sql::set_job_status(conn, job, status, error.as_deref(), &at)?;
    let update = PrintJobUpdated {
        id: job,
        business_id: business,
        printer_id: current.printer_id,
        status,
        error,
        at,
    };
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::PrintJobUpdated,
        &update,
    )?;
    sql::job(conn, job)?.ok_or_else(|| WmsError::Internal("job vanished".into()))
}

/// Stores a raw ZPL or PDF job for a printer, queued, in the caller's
/// transaction: the job and its event, or an error and neither.
pub(crate) fn submit(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    printer: PrinterId,
    data: &[u8],
) -> Result<PrintJob> {
    if data.is_empty() {
        return Err(WmsError::invalid(vec![FieldError::new(
            "body",
            "the print job is empty",
        )]));
    }
    if data.len() > MAX_JOB_BYTES {
        return Err(WmsError::invalid(vec![FieldError::new(
            "body",
            format!("a print job is at most {MAX_JOB_BYTES} bytes"),
        )]));
    }
    let format = sniff(data).ok_or_else(|| {
        WmsError::invalid(vec![FieldError::new(
            "body",
            "not a print job: expected ZPL (^XA…) or PDF (%PDF-…)",
        )])
    })?;
    let business = caller.business_id;
    let p = load(conn, business, printer)?;
    let edge = match Connection::parse(&p.connection) {
        Ok(Connection::Edge { edge_id }) => Some(edge_id),
        _ => None,
    };
    let at_edge = edge.is_some();
    // The bytes travel to the edge that prints them, unless this is
    // that edge.
    let send_bytes = edge.is_some_and(|e| origin != format!("edge:{e}"));
    if at_edge && data.len() > MAX_EDGE_JOB_BYTES {
        return Err(WmsError::invalid(vec![FieldError::new(
            "body",
            format!(
                "printer {} is attached to an edge box: a job for it is at most {MAX_EDGE_JOB_BYTES} bytes",
                p.name
            ),
        )]));
    }
    if p.kind != format {
        return Err(WmsError::invalid(vec![FieldError::new(
            "body",
            format!(
                "printer {} takes {}, this job is {}",
                p.name,
                p.kind.as_str(),
                format.as_str()
            ),
        )]));
    }
    let id = sql::insert_job(
        conn,
        business,
        printer,
        format,
        data,
        &caller.actor(),
        &now(),
    )?;
    let job = sql::job(conn, id)?.ok_or_else(|| WmsError::Internal("job vanished".into()))?;
    let event = PrintJobCreated {
        job,
        business_id: business,
        data_base64: send_bytes.then(|| BASE64.encode(data)),
    };
    store::events::append(
        conn,
        origin,
        Some(business),
        EventKind::PrintJobCreated,
        &event,
    )?;
    Ok(event.job)
}

impl Wms {
    pub async fn create_printer(
        &self,
        business: BusinessId,
        fields: PrinterFields,
    ) -> Result<Printer> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            save(conn, &origin, business, None, fields)
        })
        .await
    }

    pub async fn edit_printer(
        &self,
        business: BusinessId,
        id: PrinterId,
        fields: PrinterFields,
    ) -> Result<Printer> {
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            save(conn, &origin, business, Some(id), fields)
        })
        .await
    }

    /// Edge: the printer record the configured device `device` prints
    /// for. Once found by its name, a device stays bound to the record by
    /// id, so a rename in the cloud keeps it printing; while the bound
    /// record is no longer this edge's, the name decides again. The inner
    /// error says why no record is this device's.
    pub async fn printer_for_device(
        &self,
        business: BusinessId,
        edge_id: &str,
        device: &str,
    ) -> Result<std::result::Result<Printer, String>> {
        let (edge, device) = (edge_id.to_owned(), device.to_owned());
        let here = move |p: &Printer| matches!(Connection::parse(&p.connection), Ok(Connection::Edge { edge_id: at }) if at == edge);
        let (bound, all) = self
            .read({
                let device = device.clone();
                move |conn| {
                    Ok((
                        sql::binding(conn, business, &device)?,
                        sql::list(conn, business)?,
                    ))
                }
            })
            .await?;
        if let Some(p) = bound.and_then(|id| all.iter().find(|p| p.id == id)) {
            if here(p) {
                return Ok(Ok(p.clone()));
            }
        }
        let Some(p) = all.into_iter().find(|p| p.name == device) else {
            return Ok(Err(format!(
                "no printer named {device:?} has reached this edge (it is created in the cloud, with connection edge://{edge_id})"
            )));
        };
        if !here(&p) {
            return Ok(Err(format!(
                "printer {device:?} is connected as {}, not edge://{edge_id}: its jobs are not printed here",
                p.connection
            )));
        }
        if bound != Some(p.id) {
            let id = p.id;
            self.write(move |conn| sql::bind(conn, business, &device, id, &now()))
                .await?;
        }
        Ok(Ok(p))
    }

    pub async fn printers(&self, business: BusinessId) -> Result<Vec<Printer>> {
        self.read(move |conn| sql::list(conn, business)).await
    }

    /// Stores a raw ZPL or PDF job for a printer, queued.
    pub async fn submit_job(
        &self,
        caller: Caller,
        printer: PrinterId,
        data: Vec<u8>,
    ) -> Result<PrintJob> {
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            submit(conn, &origin, &caller, printer, &data)
        })
        .await
    }

    /// Queued jobs of some printers, oldest first, with their bytes, but
    /// for those in `known` (what a spooler already handed its printer): a
    /// spooler asks after every change, and only new jobs' bytes are read.
    pub async fn queued_print_jobs(
        &self,
        printers: Vec<PrinterId>,
        known: HashSet<PrintJobId>,
    ) -> Result<Vec<(PrintJob, Vec<u8>)>> {
        self.read(move |conn| {
            let mut out = Vec::new();
            for id in sql::queued_job_ids(conn, &printers)? {
                if !known.contains(&id) {
                    out.extend(sql::job_with_data(conn, id)?);
                }
            }
            Ok(out)
        })
        .await
    }

    /// What a device did with a job: printed, failed, or queued again with
    /// the reason it waits ("paper out"). Logged as `print_job.updated`, so
    /// the cloud's job list follows the edge's printer.
    pub async fn print_job_update(
        &self,
        job: PrintJobId,
        status: JobStatus,
        error: Option<String>,
    ) -> Result<PrintJob> {
        let origin = self.origin().to_owned();
        self.write(move |conn| update_job(conn, &origin, job, status, error))
            .await
    }

    /// Several outcomes in one transaction: a printer that took a queue
    /// reports faster than one commit per label. An update that cannot be
    /// made (no such job) is logged and leaves the others standing.
    pub async fn print_job_updates(
        &self,
        updates: Vec<(PrintJobId, JobStatus, Option<String>)>,
    ) -> Result<Vec<PrintJob>> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let mut jobs = Vec::with_capacity(updates.len());
            for (job, status, error) in updates {
                match crate::writer::savepoint(conn, |c| update_job(c, &origin, job, status, error))
                {
                    Ok(updated) => jobs.push(updated),
                    Err(e @ WmsError::NotFound(_)) => {
                        tracing::warn!(job = job.0, error = %e, "cannot record a print job's outcome");
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(jobs)
        })
        .await
    }

    pub async fn print_jobs(
        &self,
        business: BusinessId,
        printer: PrinterId,
    ) -> Result<Vec<PrintJob>> {
        self.read(move |conn| {
            load(conn, business, printer)?;
            sql::jobs(conn, printer, 100)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognized() {
        assert_eq!(sniff(b"^XA^FO10,10^FDhi^FS^XZ"), Some(PrinterKind::Zpl));
        assert_eq!(sniff(b"\n  ~HS"), Some(PrinterKind::Zpl));
        assert_eq!(sniff(b"%PDF-1.7\n..."), Some(PrinterKind::Pdf));
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(sniff(b""), None);
    }

    use depot_protocol::order::Address;

    fn fields(v: serde_json::Value) -> PrinterFields {
        serde_json::from_value(v).expect("fields")
    }

    #[tokio::test]
    async fn a_device_follows_its_printer_record_through_a_rename() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wms = Wms::open_node(&dir.path().join("edge.db"), "edge:mad-1", 1).expect("open");
        let b = wms
            .create_business("B", "EUR", "UTC")
            .await
            .expect("business")
            .id;
        wms.create_warehouse(b, "W", "W", Address::default(), false)
            .await
            .expect("warehouse");
        let none = wms
            .printer_for_device(b, "mad-1", "Pack 1")
            .await
            .expect("read");
        assert!(none.is_err_and(|why| why.contains("no printer named \"Pack 1\"")));
        let p = wms
            .create_printer(
                b,
                fields(serde_json::json!({"name": "Pack 1", "kind": "zpl", "connection": "edge://mad-1"})),
            )
            .await
            .expect("printer");
        let found = wms
            .printer_for_device(b, "mad-1", "Pack 1")
            .await
            .expect("read");
        assert_eq!(found.map(|f| f.id), Ok(p.id));
        // Renamed in the cloud: the device keeps printing for it.
        wms.edit_printer(
            b,
            p.id,
            fields(serde_json::json!({"name": "Packing line 1"})),
        )
        .await
        .expect("rename");
        let found = wms
            .printer_for_device(b, "mad-1", "Pack 1")
            .await
            .expect("read");
        assert_eq!(
            found.map(|f| (f.id, f.name)),
            Ok((p.id, "Packing line 1".to_owned()))
        );
        // Moved to another box: no longer this device's.
        wms.edit_printer(
            b,
            p.id,
            fields(serde_json::json!({"connection": "edge://bcn-1"})),
        )
        .await
        .expect("move");
        let found = wms
            .printer_for_device(b, "mad-1", "Pack 1")
            .await
            .expect("read");
        assert!(found.is_err());
        // A new record under the device's name takes it over.
        let q = wms
            .create_printer(
                b,
                fields(serde_json::json!({"name": "Pack 1", "kind": "zpl", "connection": "edge://mad-1"})),
            )
            .await
            .expect("printer");
        let found = wms
            .printer_for_device(b, "mad-1", "Pack 1")
            .await
            .expect("read");
        assert_eq!(found.map(|f| f.id), Ok(q.id));
    }
}
