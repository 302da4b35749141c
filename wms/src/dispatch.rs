//! Loading a dispatch run: each parcel scanned onto the vehicle by its SSCC
//! or its piece number, and a run that will not close with one left on
//! the dock once loading has begun.
//!
//! A dock that does not scan at all closes its runs as before; one that
//! scans is told, at closing, which parcels it has not scanned (unless the
//! closing is forced: the driver left, the parcel is known to be lost).

use crate::carriers;
use crate::store::{self, shipping as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::gs1::sscc::Sscc;
use depot_protocol::gs1::{self, Scan};
use depot_protocol::shipping::{DispatchRun, LoadRequest, LoadResult, RunStatus, Shipment};
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, DispatchRunId, FieldError, now};
use depot_sql::Db;

/// The SSCC a scan carries, if it is one: a GS1 element string with AI 00,
/// the AI and 18 digits as a scanner without symbology identifiers sends
/// GS1-128, or the 18 digits alone.
fn sscc_of(code: &str) -> Option<Sscc> {
    if let Ok(Scan::Gs1(g)) = gs1::classify(code) {
        return g.sscc.and_then(|s| Sscc::parse(&s).ok());
    }
    let digits = code.trim();
    let digits = match digits.len() {
        20 => digits.strip_prefix("00")?,
        _ => digits,
    };
    Sscc::parse(digits).ok()
}

fn not_found(code: &str) -> WmsError {
    WmsError::NotFound(format!(
        "no package of this business has the SSCC or piece number {code:?}"
    ))
}

/// The shipment and package index a scan names.
fn find(conn: &Db, business: BusinessId, code: &str) -> Result<(Shipment, u32)> {
    if let Some(s) = sscc_of(code) {
        let (shipment, index) = sql::package_by_sscc(conn, business, s.as_str())?
            .ok_or_else(|| not_found(s.as_str()))?;
        let found = sql::shipment(conn, business, shipment)?
            .ok_or_else(|| WmsError::Internal("shipment vanished".into()))?;
        return Ok((found, index));
    }
    let code = code.trim();
    let number = carriers::shipment_number(code);
    let s = sql::by_tracking(conn, number)?
        .filter(|s| s.business_id == business)
        .ok_or_else(|| not_found(code))?;
    let count = s.packages.len() as u32;
    let index = match carriers::get(&s.carrier) {
        Some(c) => (1..=count).find(|&i| c.piece_number(number, i, count) == code),
        None => (count == 1 && code == number).then_some(1),
    };
    let index = index.ok_or_else(|| {
        WmsError::refused(
            format_args!("shipment {number} has {count} packages"),
            vec![FieldError::new(
                "code",
                "scan one package's own barcode (its piece number or SSCC), not the shipment's",
            )],
        )
    })?;
    Ok((s, index))
}

fn load(
    conn: &Db,
    origin: &str,
    caller: &Caller,
    run_id: DispatchRunId,
    code: &str,
) -> Result<LoadResult> {
    let business = caller.business_id;
    let run = sql::run(conn, business, run_id)?
        .ok_or_else(|| WmsError::NotFound(format!("dispatch run {run_id} does not exist")))?;
    let (s, index) = find(conn, business, code)?;
    let piece = carriers::piece_of(&s, index);
    if s.dispatch_run_id != Some(run_id) {
        let elsewhere = s.dispatch_run_id.map_or("no dispatch run".to_owned(), |r| {
            format!("dispatch run {r}")
        });
        return Err(WmsError::field_conflict(
            "code",
            format!(
                "package {piece} belongs to {elsewhere}, not to run {run_id}: keep it off this vehicle"
            ),
        ));
    }
    if run.status == RunStatus::Closed {
        return Err(WmsError::conflict(format!(
            "dispatch run {run_id} is closed"
        )));
    }
    let package = s
        .packages
        .iter()
        .find(|p| p.index == index)
        .ok_or_else(|| WmsError::Internal("package vanished".into()))?;
    let at = now();
    let newly = sql::set_loaded(conn, s.id, index, &at)?;
    if newly {
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::PackageLoaded,
            &serde_json::json!({
                "business_id": business, "shipment_id": s.id, "package": index,
                "dispatch_run_id": run_id, "sscc": package.sscc, "piece_number": piece,
                "actor": caller.actor(), "at": at,
            }),
        )?;
    }
    let run = sql::run(conn, business, run_id)?
        .ok_or_else(|| WmsError::Internal("run vanished".into()))?;
    Ok(LoadResult {
        dispatch_run_id: run_id,
        shipment_id: s.id,
        order_id: s.order_id,
        package: index,
        piece_number: piece,
        sscc: package.sscc.clone(),
        loaded_at: package.loaded_at.unwrap_or(at),
        already_loaded: !newly,
        packages: run.packages,
        loaded: run.loaded,
    })
}

/// Refuses to close a run whose loading has begun with parcels still not
/// scanned, naming each; `force` closes it all the same.
pub(crate) fn check_loaded(
    conn: &Db,
    business: BusinessId,
    run: &DispatchRun,
    force: bool,
) -> Result<()> {
    let missing = sql::not_loaded(conn, run.id)?;
    let total = run.packages as usize;
    if force || missing.is_empty() || missing.len() == total {
        return Ok(());
    }
    let mut errors = Vec::with_capacity(missing.len());
    for (shipment, index, sscc) in &missing {
        let s = sql::shipment(conn, business, *shipment)?
            .ok_or_else(|| WmsError::Internal("shipment vanished".into()))?;
        let piece = carriers::piece_of(&s, *index);
        let status = match sscc {
            Some(sscc) => format!("not loaded (order {}, SSCC {sscc})", s.order_id),
            None => format!("not loaded (order {})", s.order_id),
        };
        errors.push(FieldError::new(piece, status));
    }
    Err(WmsError::Conflict {
        message: format!(
            "dispatch run {}: {} of {total} packages not loaded ({}); scan them, or close with force=true",
            run.id,
            missing.len(),
            errors
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        errors,
    })
}

impl Wms {
    /// Scans a package onto its dispatch run's vehicle.
    pub async fn load_package(
        &self,
        caller: Caller,
        run: DispatchRunId,
        req: LoadRequest,
    ) -> Result<LoadResult> {
        let code = req.code.trim().to_owned();
        if code.is_empty() || code.chars().count() > 200 {
            return Err(WmsError::invalid(vec![FieldError::new(
                "code",
                "must be 1 to 200 characters: the package's SSCC or piece number",
            )]));
        }
        let origin = self.origin().to_owned();
        self.write_for(caller.business_id, move |conn| {
            load(conn, &origin, &caller, run, &code)
        })
        .await
    }
}
