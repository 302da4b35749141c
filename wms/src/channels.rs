//! Sales channels as records (cloud only): the warehouses whose stock each
//! may sell and how much of it (`depot_protocol::channel` decides the
//! figure), what each may sell now, a change feed a connector polls by
//! cursor, and the debounced `channel.availability_changed` events.
//!
//! | status | a create or edit that |
//! |---|---|
//! | 404 | edits a channel that does not exist |
//! | 409 | makes a channel whose code another has |
//! | 422 | names a warehouse not of the business, a code a route takes, or changes the code |

use crate::store::{self, channels as sql, tenants};
use crate::{Result, Wms, WmsError};
use depot_protocol::channel::{
    Availability, AvailabilityChanges, Channel, ChannelFields, CheckedChannel, MAX_CHANGES,
};
use depot_protocol::event::EventKind;
use depot_protocol::{BusinessId, FieldError, Page, now};
use depot_sql::Db;

/// Codes the routes take as words: a channel by such a code could not be
/// reached.
const TAKEN: [&str; 2] = ["list", "create"];

fn load(conn: &Db, business: BusinessId, code: &str) -> Result<Channel> {
    sql::by_code(conn, business, code)?
        .ok_or_else(|| WmsError::NotFound(format!("channel {code} does not exist")))
}

fn check_warehouses(conn: &Db, business: BusinessId, c: &CheckedChannel) -> Result<()> {
    for (i, w) in c.warehouse_ids.iter().enumerate() {
        if tenants::warehouse(conn, business, *w)?.is_none() {
            return Err(WmsError::invalid(vec![FieldError::new(
                format!("warehouse_ids[{i}]"),
                format!("warehouse {w} is not one of the business's"),
            )]));
        }
    }
    Ok(())
}

fn saved(conn: &Db, origin: &str, business: BusinessId, code: &str) -> Result<Channel> {
    let c = load(conn, business, code)?;
    sql::refresh_channel(conn, &c)?;
    store::events::append(conn, origin, Some(business), EventKind::ChannelSaved, &c)?;
    Ok(c)
}

fn create(conn: &Db, origin: &str, business: BusinessId, c: CheckedChannel) -> Result<Channel> {
    if TAKEN.contains(&c.code.as_str()) {
        return Err(WmsError::invalid(vec![FieldError::new(
            "code",
            format!("{} is a word of the routes: choose another code", c.code),
        )]));
    }
    check_warehouses(conn, business, &c)?;
    if sql::by_code(conn, business, &c.code)?.is_some() {
        return Err(WmsError::conflict(format!(
            "a channel with code {} exists: edit it instead",
            c.code
        )));
    }
    sql::insert(conn, business, &c, &now())?;
    saved(conn, origin, business, &c.code)
}

fn edit(
    conn: &Db,
    origin: &str,
    business: BusinessId,
    code: &str,
    c: CheckedChannel,
) -> Result<Channel> {
    let before = load(conn, business, code)?;
    if c.code != before.code {
        return Err(WmsError::invalid(vec![FieldError::new(
            "code",
            format!(
                "a channel's code is what its orders carry: it stays {}",
                before.code
            ),
        )]));
    }
    check_warehouses(conn, business, &c)?;
    sql::update(conn, before.id, &c, &now())?;
    saved(conn, origin, business, code)
}

/// Writes a `channel.availability_changed` event per channel and item
/// whose figure changed since the last call, its figure as it stands now
/// (so changes in between come as one), for one business at a time.
/// Answers how many it wrote.
fn announce(conn: &Db, origin: &str, limit: u32) -> Result<usize> {
    let Some((business, changed, upto)) = sql::unannounced(conn, limit)? else {
        return Ok(0);
    };
    for e in &changed {
        store::events::append(
            conn,
            origin,
            Some(business),
            EventKind::ChannelAvailabilityChanged,
            e,
        )?;
    }
    sql::announced(conn, business, upto)?;
    Ok(changed.len())
}

impl Wms {
    pub async fn create_channel(
        &self,
        business: BusinessId,
        fields: ChannelFields,
    ) -> Result<Channel> {
        let c = fields.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| create(conn, &origin, business, c))
            .await
    }

    pub async fn edit_channel(
        &self,
        business: BusinessId,
        code: String,
        fields: ChannelFields,
    ) -> Result<Channel> {
        let c = fields.parse().map_err(WmsError::invalid)?;
        let origin = self.origin().to_owned();
        self.write_for(business, move |conn| {
            edit(conn, &origin, business, &code, c)
        })
        .await
    }

    pub async fn channel(&self, business: BusinessId, code: String) -> Result<Channel> {
        self.read(move |conn| load(conn, business, &code)).await
    }

    pub async fn channels(
        &self,
        business: BusinessId,
        page: Page,
    ) -> Result<depot_protocol::Listed<Channel>> {
        self.read(move |conn| sql::list(conn, business, page)).await
    }

    /// What a channel may sell of each item (of one SKU, with `sku`).
    pub async fn channel_availability(
        &self,
        business: BusinessId,
        code: String,
        sku: Option<String>,
        page: Page,
    ) -> Result<depot_protocol::Listed<Availability>> {
        self.read(move |conn| {
            let c = load(conn, business, &code)?;
            sql::availability(conn, &c, sku.as_deref(), page)
        })
        .await
    }

    /// The items whose figure changed after the cursor `after`.
    pub async fn channel_changes(
        &self,
        business: BusinessId,
        code: String,
        after: i64,
        limit: u32,
    ) -> Result<AvailabilityChanges> {
        let limit = limit.clamp(1, MAX_CHANGES);
        self.read(move |conn| {
            let c = load(conn, business, &code)?;
            let (data, next) = sql::changes(conn, &c, after, limit)?;
            Ok(AvailabilityChanges {
                data,
                next: next.to_string(),
            })
        })
        .await
    }

    /// Where a business's change feed stands: the cursor past its last
    /// change (0 before any).
    pub async fn channel_feed_head(&self, business: BusinessId) -> Result<i64> {
        self.read(move |conn| sql::feed_head(conn, business)).await
    }

    /// Computes every channel's figures again, writing those that differ
    /// (at start: figures of a schema whose rules changed under them, such
    /// as pending orders counting as sold). Answers how many channels.
    pub async fn refresh_all_channels(&self) -> Result<usize> {
        let all = self.read(sql::all_ids).await?;
        for (business, code) in &all {
            let code = code.clone();
            let business = *business;
            self.write_for(business, move |conn| {
                let c = load(conn, business, &code)?;
                sql::refresh_channel(conn, &c)
            })
            .await?;
        }
        Ok(all.len())
    }

    /// Writes the debounced `channel.availability_changed` events of what
    /// changed since the last call, at most `limit` per call.
    pub async fn announce_availability(&self, limit: u32) -> Result<usize> {
        let origin = self.origin().to_owned();
        self.write(move |conn| announce(conn, &origin, limit)).await
    }
}

/// Writes the debounced events every `every`, for as long as it runs:
/// what changes within one period comes as one event per channel and
/// item.
pub async fn announce_every(wms: Wms, every: std::time::Duration) {
    loop {
        tokio::time::sleep(every).await;
        loop {
            match wms.announce_availability(1000).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::error!(error = %e, "announcing channel availability");
                    break;
                }
            }
        }
    }
}
