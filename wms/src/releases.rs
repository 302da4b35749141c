//! Releases: the cloud publishes them; every edge gets them through sync
//! and shows them beside the version it runs.

use crate::store::{self, releases as sql};
use crate::{Result, Wms, WmsError};
use depot_protocol::event::EventKind;
use depot_protocol::now;
use depot_protocol::release::{Release, ReleaseCreate};

impl Wms {
    /// Publishes a release; a version is published once.
    pub async fn publish_release(&self, req: ReleaseCreate) -> Result<Release> {
        let new = req.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write(move |conn| {
            if sql::by_version(conn, &new.version)?.is_some() {
                return Err(WmsError::field_conflict(
                    "version",
                    format!("release {} is already published", new.version),
                ));
            }
            let at = now();
            sql::insert(conn, &new, &at)?;
            let r = sql::by_version(conn, &new.version)?
                .ok_or_else(|| WmsError::Internal("release vanished".into()))?;
            store::events::append(conn, &origin, None, EventKind::ReleasePublished, &r)?;
            Ok(r)
        })
        .await
    }

    /// Releases, newest first.
    pub async fn releases(&self, limit: u32) -> Result<Vec<Release>> {
        self.read(move |conn| sql::list(conn, limit)).await
    }
}
