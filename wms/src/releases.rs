//! Releases: the cloud publishes them, adds translations, and every edge
//! gets both through sync and shows them beside the version it runs. Also
//! the bookkeeping of translation sync jobs (the cloud reads the files).

use crate::store::{self, releases as sql, translation_jobs as jobs};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::release::{
    JobError, JobStatus, NewRelease, Note, Product, Release, ReleaseTranslated, TranslationJob,
};
use depot_protocol::{Page, Timestamp, now};
use depot_sql::Db;
use std::collections::BTreeMap;

pub use sql::{Coverage, Filter as ReleaseFilter};

/// What a job that stopped moving is marked with.
pub const INTERRUPTED: &str =
    "interrupted: the process running it stopped; a new sync picks up where it left off";

/// The answer to a request for a translation sync.
#[derive(Debug, Clone, PartialEq)]
pub enum JobStart {
    /// A new job: the caller runs it.
    Started(TranslationJob),
    /// One is running already: this one.
    Running(TranslationJob),
}

/// What one step of a job did with one release's missing locales.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TranslationStep {
    pub release_id: i64,
    /// Notes found for missing locales.
    pub found: BTreeMap<String, Note>,
    /// Missing locales the source has nothing for.
    pub absent: u64,
    pub errors: Vec<JobError>,
}

/// Adds the notes of each locale `release` lacks, each logged as a
/// `release.translated` event; answers the locales added.
fn add_notes(
    conn: &Db,
    origin: &str,
    release: &Release,
    notes: &BTreeMap<String, Note>,
    at: &Timestamp,
) -> Result<Vec<String>> {
    let mut added = Vec::new();
    for (locale, note) in notes {
        if !sql::insert_note(conn, release.id, locale, note)? {
            continue;
        }
        let event = ReleaseTranslated {
            release_id: release.id,
            product: release.product,
            version: release.version.clone(),
            locale: locale.clone(),
            note: note.clone(),
            updated_at: *at,
        };
        store::events::append(conn, origin, None, EventKind::ReleaseTranslated, &event)?;
        added.push(locale.clone());
    }
    if !added.is_empty() {
        sql::touch(conn, release.id, at)?;
    }
    Ok(added)
}

impl Wms {
    /// Publishes a release; a version is published once per product.
    pub async fn publish_release(
        &self,
        new: NewRelease,
        published_by: Option<String>,
    ) -> Result<Release> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            if sql::by_version(conn, new.product, &new.version)?.is_some() {
                return Err(WmsError::field_conflict(
                    "version",
                    format!(
                        "{} {} is already published",
                        new.product.as_str(),
                        new.version
                    ),
                ));
            }
            let id = sql::insert(conn, &new, published_by.as_deref(), &now())?;
            let r = sql::by_id(conn, id)?
                .ok_or_else(|| WmsError::Internal("release vanished".into()))?;
            store::events::append(conn, &origin, None, EventKind::ReleasePublished, &r)?;
            Ok(r)
        })
        .await
    }

    /// Adds translations to a published release: 404 if there is no such
    /// release, 409 if it has every one of these locales already (a
    /// translation is added, never replaced).
    pub async fn translate_release(
        &self,
        product: Product,
        version: String,
        notes: BTreeMap<String, Note>,
    ) -> Result<Release> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            let r = sql::by_version(conn, product, &version)?.ok_or_else(|| {
                WmsError::NotFound(format!("no release {} {version}", product.as_str()))
            })?;
            if add_notes(conn, &origin, &r, &notes, &now())?.is_empty() {
                return Err(WmsError::conflict(format!(
                    "{} {version} already has notes in these locales",
                    product.as_str()
                )));
            }
            sql::by_id(conn, r.id)?.ok_or_else(|| WmsError::Internal("release vanished".into()))
        })
        .await
    }

    /// Releases of every product, newest first.
    pub async fn releases(&self, limit: u32) -> Result<Vec<Release>> {
        let page = Page {
            start: 0,
            length: limit.into(),
            cursor: None,
        };
        self.read(move |conn| Ok(sql::page(conn, &ReleaseFilter::default(), page)?.rows))
            .await
    }

    /// A page of the releases `filter` matches, newest first, with the
    /// count of all releases and of the matching ones.
    pub async fn release_page(
        &self,
        filter: ReleaseFilter,
        page: Page,
    ) -> Result<depot_protocol::Listed<Release>> {
        self.read(move |conn| sql::page(conn, &filter, page)).await
    }

    /// Every release and the locales it has.
    pub async fn release_coverage(&self) -> Result<Vec<Coverage>> {
        self.read(sql::coverage).await
    }

    /// Starts a translation sync job unless one is running. A running job
    /// that has not moved since `stale_before` was cut short (its process
    /// stopped): it is marked failed, and a new one starts.
    pub async fn start_translation_job(
        &self,
        requested_by: Option<String>,
        at: Timestamp,
        stale_before: Timestamp,
    ) -> Result<JobStart> {
        self.write(move |conn| {
            jobs::fail_stale(conn, &stale_before, INTERRUPTED, &at)?;
            if let Some(job) = jobs::running(conn)? {
                return Ok(JobStart::Running(job));
            }
            let id = jobs::insert(conn, requested_by.as_deref(), &at)?;
            let job =
                jobs::get(conn, id)?.ok_or_else(|| WmsError::Internal("job vanished".into()))?;
            Ok(JobStart::Started(job))
        })
        .await
    }

    /// A job as it stands. One still marked running that has not moved
    /// since `stale_before` is shown as what it is: failed.
    pub async fn translation_job(
        &self,
        id: i64,
        stale_before: Timestamp,
    ) -> Result<Option<TranslationJob>> {
        let job = self.read(move |conn| jobs::get(conn, id)).await?;
        Ok(job.map(|mut j| {
            if j.status == JobStatus::Running && j.updated_at < stale_before {
                j.status = JobStatus::Failed;
                j.message = Some(INTERRUPTED.into());
            }
            j
        }))
    }

    /// Sets how many missing translations a job will look at; false if the
    /// job is no longer running.
    pub async fn set_translation_total(&self, job: i64, total: u64) -> Result<bool> {
        self.write(move |conn| jobs::set_total(conn, job, total, &now()))
            .await
    }

    /// Applies one step of a job: the notes found are added (a locale
    /// filled meanwhile counts as skipped) and counted, in one transaction.
    /// False, with nothing written, if the job is no longer running.
    pub async fn translation_step(&self, job: i64, step: TranslationStep) -> Result<bool> {
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            if !jobs::is_running(conn, job)? {
                return Ok(false);
            }
            let at = now();
            let release = sql::by_id(conn, step.release_id)?.ok_or_else(|| {
                WmsError::NotFound(format!("no release with id {}", step.release_id))
            })?;
            let filled = add_notes(conn, &origin, &release, &step.found, &at)?.len() as u64;
            let skipped = step.absent + step.found.len() as u64 - filled;
            jobs::record(conn, job, filled, skipped, &step.errors, &at)?;
            Ok(true)
        })
        .await
    }

    /// Ends a job (`message` says why one failed); false if it had ended.
    pub async fn finish_translation_job(
        &self,
        job: i64,
        status: JobStatus,
        message: Option<String>,
    ) -> Result<bool> {
        self.write(move |conn| jobs::finish(conn, job, status, message.as_deref(), &now()))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_migration_moves_old_releases_to_wms_in_english() -> Result<()> {
        let conn = crate::store::memory(8)?;
        conn.execute_batch(
            "INSERT INTO releases (id, version, title, notes, published_at) VALUES
                (4, '1.3.0', 'Labels', '- ZPL', '2024-03-02T09:00:00Z'),
                (5, '1.4.0', 'Faster picking', '', '2024-05-01T10:30:00Z');",
        )?;
        crate::store::migrate(&conn)?;
        let depot_protocol::Listed {
            rows: list,
            total,
            filtered,
            ..
        } = sql::page(&conn, &ReleaseFilter::default(), Page::default())?;
        assert_eq!((total, filtered), (2, 2));
        let shape: Vec<_> = list
            .iter()
            .map(|r| {
                (
                    r.id,
                    r.product,
                    r.version.as_str(),
                    r.date.to_string(),
                    r.default_locale.as_str(),
                    r.notes["en"].title.as_str(),
                    r.updated_at == r.published_at,
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                (
                    5,
                    Product::Wms,
                    "1.4.0",
                    "2024-05-01".into(),
                    "en",
                    "Faster picking",
                    true
                ),
                (
                    4,
                    Product::Wms,
                    "1.3.0",
                    "2024-03-02".into(),
                    "en",
                    "Labels",
                    true
                ),
            ]
        );
        assert_eq!(list[1].notes["en"].body, "- ZPL");
        // The same version of another product is a release of its own.
        conn.execute_batch(
            "INSERT INTO releases (product, version, date, default_locale, published_at, updated_at)
             VALUES ('app', '1.4.0', '2024-05-02', 'en', 'x', 'x')",
        )?;
        Ok(())
    }
}
