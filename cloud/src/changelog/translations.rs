//! Translation sync: `POST /api/sync-translations` starts a background job
//! that fills the locales releases lack from the translation directory,
//! `<dir>/<locale>/<product>/<version>.md`, whose first line is `# Title`
//! and the rest the Markdown body. `GET /api/sync-translations/{job_id}`
//! follows it.
//!
//! One job runs at a time, across instances (the database allows one
//! running row): asking again while one runs answers that job, 200, where a
//! new one answers 202. Asking is rate-limited per caller (five at once,
//! then two a minute; 429 beyond), so a token cannot start job after job. A translation is only ever added, so a job that
//! stopped half way (its process restarted) is reported failed and the
//! next one simply finds less to do.

use super::{Changelog, Publisher, STALE_AFTER};
use axum::Extension;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use depot_protocol::release::{
    JobError, JobStatus, MAX_NOTES_BYTES, Note, Product, TranslationJob,
};
use depot_protocol::validate::Check;
use depot_protocol::{Timestamp, now};
use depot_wms::WmsError;
use depot_wms::http::error::ApiError;
use depot_wms::http::extract::ApiPath;
use depot_wms::idempotency::{self, Answer};
use depot_wms::releases::{Coverage, JobStart, TranslationStep};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// A file larger than the longest body and a title line is not read.
const MAX_FILE_BYTES: u64 = MAX_NOTES_BYTES as u64 + 1024;

/// The time before which a running job that has not moved is taken for
/// one whose process stopped.
fn stale_before() -> Timestamp {
    now() - chrono::Duration::from_std(STALE_AFTER).unwrap_or(chrono::Duration::MAX)
}

/// Reads a translation file: `# Title` on the first line, then the body.
pub fn parse_file(text: &str) -> Result<Note, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, body) = text.split_once('\n').unwrap_or((text, ""));
    let title = first
        .strip_prefix('#')
        .filter(|t| t.is_empty() || t.starts_with([' ', '\t', '\r']))
        .ok_or("the first line must be the title, written as '# Title'")?;
    let body = body.trim_start_matches(['\n', '\r']);
    let mut c = Check::new();
    let note = Note::check(&mut c, "note", title, body);
    c.finish(note).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("{} {}", e.name.trim_start_matches("note."), e.status))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The translation of a release into `locale`, if the source has one.
fn read(dir: &Path, locale: &str, product: Product, version: &str) -> Result<Option<Note>, String> {
    // Locales, products and versions are checked tags and semantic
    // versions: no separators, no `..`, so the path stays inside `dir`.
    let path = dir
        .join(locale)
        .join(product.as_str())
        .join(format!("{version}.md"));
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read the file: {}", e.kind())),
    };
    if !meta.is_file() {
        return Err("is not a file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("is larger than {MAX_FILE_BYTES} bytes"));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read the file: {}", e.kind()))?;
    let text = String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())?;
    parse_file(&text).map(Some)
}

/// Looks up a release's missing locales in the source.
fn read_release(dir: &Path, release: &Coverage, missing: Vec<String>) -> TranslationStep {
    let mut step = TranslationStep {
        release_id: release.id,
        ..TranslationStep::default()
    };
    for locale in missing {
        match read(dir, &locale, release.product, &release.version) {
            Ok(Some(note)) => {
                step.found.insert(locale, note);
            }
            Ok(None) => step.absent += 1,
            Err(reason) => step.errors.push(JobError {
                product: release.product,
                version: release.version.clone(),
                locale,
                reason,
            }),
        }
    }
    step
}

/// Walks every release's missing locales. `Ok(false)`: the job was ended
/// elsewhere (taken for stale), so this run stops without a word.
async fn sync(cl: &Changelog, job: i64, dir: &Path) -> Result<bool, WmsError> {
    let wms = cl.wms();
    let plan: Vec<_> = wms
        .release_coverage()
        .await?
        .into_iter()
        .map(|c| {
            let missing: Vec<String> = cl
                .inner
                .locales
                .iter()
                .filter(|l| !c.locales.contains(l))
                .cloned()
                .collect();
            (c, missing)
        })
        .filter(|(_, missing)| !missing.is_empty())
        .collect();
    let total = plan.iter().map(|(_, m)| m.len() as u64).sum();
    if !wms.set_translation_total(job, total).await? {
        return Ok(false);
    }
    for (release, missing) in plan {
        let dir = dir.to_owned();
        // Reading files blocks: off the runtime's threads.
        let step = tokio::task::spawn_blocking(move || read_release(&dir, &release, missing))
            .await
            .map_err(|e| WmsError::Internal(format!("reading translations: {e}")))?;
        if !wms.translation_step(job, step).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs a job to its end and records how it ended.
async fn run(cl: Changelog, job: i64, dir: PathBuf) {
    let (status, message) = match sync(&cl, job, &dir).await {
        Ok(true) => (JobStatus::Completed, None),
        Ok(false) => return,
        Err(e) => {
            tracing::error!(job, error = %e, "translation sync failed");
            (
                JobStatus::Failed,
                Some("the sync stopped on an internal error; see the service's log".to_owned()),
            )
        }
    };
    if let Err(e) = cl.wms().finish_translation_job(job, status, message).await {
        tracing::error!(job, error = %e, "cannot record the end of a translation sync");
    }
}

/// 202 with the job started, or 200 with the one already running;
/// `Location` is where to follow it.
fn job_answer(start: &JobStart) -> Answer {
    let (status, job) = match start {
        JobStart::Started(job) => (StatusCode::ACCEPTED, job),
        JobStart::Running(job) => (StatusCode::OK, job),
    };
    Answer::json(status.as_u16(), job)
        .with_location(format!("/api/sync-translations/{}", job.job_id))
}

/// Starts translation sync: a background job that fills the locales the
/// releases lack from the translation directory. 202 with the new job, or
/// 200 with the one already running; `Location` is where to follow it.
#[utoipa::path(post, path = "/api/sync-translations", tag = "releases",
    responses(
        (status = 202, description = "Started", body = TranslationJob),
        (status = 200, description = "A job is running already: that one", body = TranslationJob),
        (status = 401, body = depot_protocol::ErrorBody), (status = 403, body = depot_protocol::ErrorBody),
        (status = 409, description = "No readable translation source is configured", body = depot_protocol::ErrorBody),
        (status = 429, description = "Asked too often: five at once, then two a minute per caller", body = depot_protocol::ErrorBody)),
    security(("oauth2" = ["releases:write"])))]
pub async fn start(
    State(cl): State<Changelog>,
    publisher: Option<Extension<Publisher>>,
) -> Result<Response, ApiError> {
    let by = publisher.map(|Extension(Publisher(p))| p);
    cl.inner
        .job_starts
        .check(&by.clone().unwrap_or_default())
        .map_err(|wait_secs| ApiError::RateLimited { wait_secs })?;
    let Some(dir) = cl.inner.translations_dir.clone() else {
        return Err(WmsError::conflict(
            "no translation source is configured (changelog.translations_dir)",
        )
        .into());
    };
    let probe = dir.clone();
    let is_dir = tokio::task::spawn_blocking(move || probe.is_dir())
        .await
        .unwrap_or(false);
    if !is_dir {
        return Err(WmsError::conflict(
            "the translation source (changelog.translations_dir) is not a readable directory",
        )
        .into());
    }
    idempotency::expect(|s: &JobStart| Some(job_answer(s)));
    let start = cl
        .wms()
        .start_translation_job(by, now(), stale_before())
        .await?;
    if let JobStart::Started(job) = &start {
        tokio::spawn(run(cl.clone(), job.job_id, dir));
    }
    Ok(job_answer(&start).into_response())
}

/// A translation job and how far it got.
#[utoipa::path(get, path = "/api/sync-translations/{job_id}", tag = "releases",
    params(("job_id" = i64, Path, description = "The job")),
    responses((status = 200, body = TranslationJob), (status = 401, body = depot_protocol::ErrorBody),
        (status = 403, body = depot_protocol::ErrorBody), (status = 404, body = depot_protocol::ErrorBody)),
    security(("oauth2" = ["releases:write"])))]
pub async fn status(
    State(cl): State<Changelog>,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<TranslationJob>, ApiError> {
    cl.wms()
        .translation_job(id, stale_before())
        .await?
        .map(Json)
        .ok_or_else(|| WmsError::NotFound(format!("no translation job {id}")).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_a_title_line_and_a_body() {
        assert_eq!(
            parse_file("\u{feff}# Novedades \r\n\r\n- más rápido\n\n"),
            Ok(Note {
                title: "Novedades".into(),
                body: "- más rápido".into()
            })
        );
        assert_eq!(
            parse_file("# Solo el título"),
            Ok(Note {
                title: "Solo el título".into(),
                body: String::new()
            })
        );
        for (bad, says) in [
            ("Novedades\n- x", "first line"),
            ("#Novedades", "first line"),
            ("# \n- x", "title is required"),
            ("# Hola\nbell \u{7}", "body must not contain control"),
        ] {
            let e = parse_file(bad).expect_err(bad);
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let long = format!("# T\n{}", "x".repeat(MAX_NOTES_BYTES + 1));
        assert!(parse_file(&long).is_err());
    }
}
