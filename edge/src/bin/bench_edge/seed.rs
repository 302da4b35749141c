//! The cloud's part, played by the engine itself: a node-0 database with a
//! business, a warehouse, a key and a catalog, an edge registered in it, and
//! the down feed applied at the edge page by page, as the link applies what
//! the cloud sends (only without the broker in between).

use anyhow::{Context, bail};
use depot_bench::{load, sku};
use depot_edge::settings::{Broker, Settings};
use depot_protocol::catalog::{BinLocation, ItemCreate};
use depot_protocol::order::Address;
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, WarehouseId};
use depot_wms::Wms;
use depot_wms::replica::Outcome;
use depot_wms::sync::PageOutcome;
use std::path::Path;

/// Changes per page: what the cloud's sync service sends by default.
const PAGE_SIZE: u32 = 200;

/// A business as the cloud made it, and the edge registered for it.
pub struct Cloud {
    pub wms: Wms,
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub caller: Caller,
    /// The key's secret: stations send it as `X-API-KEY`.
    pub key: String,
    pub edge_id: String,
    pub node: u32,
}

impl Cloud {
    /// Makes the cloud's database at `path` with `items` items (each with a
    /// bin location in the warehouse, so waves have a walking order), and
    /// registers the edge `edge_id`.
    pub async fn create(path: &Path, items: usize, edge_id: &str) -> anyhow::Result<Self> {
        let wms = Wms::open(path, "cloud")?;
        let business = wms.create_business("Bench", "EUR", "UTC").await?.id;
        let warehouse = wms
            .create_warehouse(business, "W1", "Main", Address::default(), false)
            .await?
            .id;
        let key = wms.create_key(business, Some("stations".into())).await?;
        let caller = Caller {
            key_id: key.key.id,
            business_id: business,
        };
        load("catalog (cloud)", items, 64, |i| {
            let wms = wms.clone();
            let item = ItemCreate {
                sku: sku(i as u64),
                name: format!("Bench item {i}"),
                locations: Some(vec![BinLocation {
                    warehouse_id: warehouse,
                    location: format!("A-{:02}-{:03}", i % 40, i / 40),
                }]),
                ..ItemCreate::default()
            };
            async move {
                wms.create_item(business, item).await?;
                Ok(())
            }
        })
        .await?;
        let node = wms
            .register_edge(business, EdgeId::parse(edge_id)?, Some("bench".into()))
            .await?
            .node;
        Ok(Self {
            wms,
            business,
            warehouse,
            caller,
            key: key.secret,
            edge_id: edge_id.to_owned(),
            node,
        })
    }

    /// The edge's settings: its identity from the registration, its
    /// database in `data_dir`, and a broker URL it never gets to use.
    pub fn edge_settings(&self, data_dir: &Path, broker_url: &str) -> Settings {
        Settings {
            business_id: self.business.0,
            edge_id: self.edge_id.clone(),
            node: self.node,
            data_dir: data_dir.to_owned(),
            broker: Broker {
                url: broker_url.to_owned(),
                ..Broker::default()
            },
            log: "warn".into(),
            ..Settings::default()
        }
    }

    /// Applies at `edge` every change for it since its cursor, in the
    /// cloud's pages. Answers how many changes were applied.
    pub async fn replicate_to(&self, edge: &Wms) -> anyhow::Result<usize> {
        let id = EdgeId::parse(&self.edge_id)?;
        let (_, mut cursor) = edge.sync_state().await?;
        let mut applied = 0;
        loop {
            let page = self
                .wms
                .changes_for(self.business, id.clone(), cursor, PAGE_SIZE)
                .await?;
            let more = page.more;
            match edge
                .apply_page(self.business, page)
                .await
                .context("applying a page")?
            {
                PageOutcome::Applied {
                    cursor: next,
                    outcomes,
                } => {
                    if let Some(bad) = outcomes
                        .iter()
                        .find(|o| !matches!(o, Outcome::Applied | Outcome::Duplicate))
                    {
                        bail!("the edge did not apply a change cleanly: {bad:?}");
                    }
                    applied += outcomes.len();
                    cursor = next;
                }
                other => bail!("the edge refused a page at cursor {cursor}: {other:?}"),
            }
            if !more {
                return Ok(applied);
            }
        }
    }
}
