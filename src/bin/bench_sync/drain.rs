//! A business with its edge and backlog, and one timed drain of that
//! backlog into the cloud.

use super::Args;
use super::rig::{eventually, start_edge};
use super::uplink::Uplink;
use anyhow::{Context, bail};
use depot_edge::settings::{Broker as EdgeBroker, Settings as EdgeSettings};
use depot_protocol::catalog::ItemCreate;
use depot_protocol::order::Address;
use depot_protocol::stock::{AdjustRequest, MovementReason};
use depot_protocol::sync::EdgeId;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, ItemId, WarehouseId};
use depot_wms::Wms;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// Items the backlog's adjustments are spread over.
const ITEMS: usize = 20;
/// Adjustments in flight while the backlog is made (group commit).
const PARALLEL: usize = 512;
const EDGE_ID: &str = "bench-sync";

/// One business with its own edge and backlog: the drains of the
/// comparison do not share a business, so no drain pages another's events
/// down to its edge while it is timed.
pub struct Tenant {
    pub label: String,
    pub business: BusinessId,
    pub warehouse: WarehouseId,
    pub items: Vec<ItemId>,
    pub edge_id: EdgeId,
    pub edge: Wms,
    pub settings: EdgeSettings,
    /// The edge's outbox: acknowledged through `acked`, made through `head`.
    pub acked: i64,
    pub head: i64,
}

/// A business of the cloud: its catalog (the same `ITEMS` items in
/// each), a key, and warehouses for its edges.
pub struct Business {
    pub id: BusinessId,
    pub warehouses: Vec<WarehouseId>,
    pub items: Vec<ItemId>,
    pub caller: Caller,
    pub secret: String,
}

/// What an edge is offered: the broker, its window, and the events it
/// makes with its link down.
pub struct Offered<'a> {
    pub url: &'a str,
    pub window: i64,
    pub events: usize,
}

/// A business, its catalog and key, and its edge, which goes online once
/// for the catalog and the key, then makes its backlog with the link down.
pub async fn tenant(
    args: &Args,
    dir: &Path,
    url: &str,
    cloud: &Wms,
    n: usize,
    label: &'static str,
) -> anyhow::Result<Tenant> {
    let b = business(cloud, &format!("Bench {n}"), 1).await?;
    let warehouse = *b.warehouses.first().context("no warehouse")?;
    let offered = Offered {
        url,
        window: args.window,
        events: args.events(),
    };
    let edge_id = EdgeId::parse(&format!("{EDGE_ID}-{n}"))?;
    let (t, took) = edge(
        cloud,
        &b,
        &offered,
        edge_id,
        warehouse,
        dir.join(format!("edge-{n}")),
        label.to_owned(),
    )
    .await?;
    eprintln!(
        "{label}: edge {} of business {} made {} adjustments in {:.1} s with its link down; outbox {}..{}",
        t.edge_id,
        t.business,
        args.events(),
        took.as_secs_f64(),
        t.acked,
        t.head
    );
    Ok(t)
}

/// A business with `warehouses` warehouses (W1, W2, …), a key, and the
/// catalog its edges adjust.
pub async fn business(cloud: &Wms, name: &str, warehouses: usize) -> anyhow::Result<Business> {
    let id = cloud.create_business(name, "EUR", "UTC").await?.id;
    let mut made = Vec::with_capacity(warehouses);
    for w in 1..=warehouses {
        let code = format!("W{w}");
        made.push(
            cloud
                .create_warehouse(id, &code, &format!("Site {w}"), Address::default(), false)
                .await?
                .id,
        );
    }
    let key = cloud.create_key(id, None).await?;
    let caller = Caller {
        key_id: key.key.id,
        business_id: id,
    };
    let mut items: Vec<ItemId> = Vec::new();
    for i in 0..ITEMS {
        let item = ItemCreate {
            sku: format!("SYNC-{i:02}"),
            name: format!("Sync item {i}"),
            ..ItemCreate::default()
        };
        items.push(cloud.create_item(id, item).await?.id);
    }
    Ok(Business {
        id,
        warehouses: made,
        items,
        caller,
        secret: key.secret,
    })
}

/// Registers an edge of `b` serving `warehouse`, which goes online once
/// for the catalog and the key, then makes `offered.events` adjustments
/// in that warehouse with its link down; answers it with the time its
/// backlog took to make.
pub async fn edge(
    cloud: &Wms,
    b: &Business,
    offered: &Offered<'_>,
    edge_id: EdgeId,
    warehouse: WarehouseId,
    data_dir: PathBuf,
    label: String,
) -> anyhow::Result<(Tenant, Duration)> {
    let business = b.id;
    let node = cloud
        .register_edge(business, edge_id.clone(), None)
        .await?
        .node;
    if b.warehouses.len() > 1 {
        // An edge of a business with several sites serves its own.
        cloud
            .set_edge_warehouses(business, edge_id.clone(), vec![warehouse])
            .await?;
    }
    let settings = EdgeSettings {
        business_id: business.0,
        edge_id: edge_id.to_string(),
        node,
        data_dir,
        broker: EdgeBroker {
            url: offered.url.to_owned(),
            window: offered.window,
            ..EdgeBroker::default()
        },
        log: "warn".into(),
        ..EdgeSettings::default()
    };
    let edge = depot_edge::open(&settings)?;
    let online = start_edge(&edge, &settings, TcpListener::bind("127.0.0.1:0").await?);
    let last = b.items.last().copied().context("no items")?;
    eventually("the catalog at the edge", || async {
        edge.item(business, last).await.is_ok()
    })
    .await?;
    eventually("the key at the edge", || async {
        matches!(edge.authenticate(&b.secret).await, Ok(Some(_)))
    })
    .await?;
    online.stop().await?;

    let started = Instant::now();
    let mut set = JoinSet::new();
    let mut made = 0;
    let mut next = 0;
    let caller = b.caller;
    while made < offered.events {
        while next < offered.events && set.len() < PARALLEL {
            let (edge, req) = (edge.clone(), adjustment(warehouse, next));
            set.spawn(async move { edge.adjust(caller, req).await });
            next += 1;
        }
        let Some(done) = set.join_next().await else {
            break;
        };
        done.context("an adjustment task panicked")??;
        made += 1;
    }
    let took = started.elapsed();
    let head = edge.outgoing_head().await?;
    let (acked, _) = edge.sync_state().await?;
    Ok((
        Tenant {
            label,
            business,
            warehouse,
            items: b.items.clone(),
            edge_id,
            edge,
            settings,
            acked,
            head,
        },
        took,
    ))
}

/// What one drain took.
pub struct Drained {
    pub secs: f64,
    pub first_ack: Option<(Duration, i64)>,
    pub jobs: u64,
    pub commits: u64,
}

/// Starts the tenant's edge link and times until the cloud has applied
/// its whole backlog; then checks that the books agree and nothing was
/// refused.
pub async fn drain(args: &Args, cloud: &Wms, t: &Tenant, checked: bool) -> anyhow::Result<Drained> {
    cloud.set_ownership_checks(checked);
    eprintln!(
        "draining {} events of {} into the cloud (ownership checks {})",
        t.head - t.acked,
        t.edge_id,
        if checked { "on" } else { "off" }
    );
    let before = (
        cloud.writer_stats().jobs.load(Ordering::Relaxed),
        cloud.writer_stats().commits.load(Ordering::Relaxed),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    // Started behind its uplink, down; timed from the uplink's coming back
    // (see `uplink.rs`).
    let uplink = Uplink::for_edges(&t.settings).await?;
    let draining = match &uplink {
        Some(uplink) => {
            let draining = start_edge(&t.edge, &uplink.route(&t.settings), listener);
            uplink.wait_for(1).await;
            draining
        }
        None => start_edge(&t.edge, &t.settings, listener),
    };
    let started = Instant::now();
    if let Some(uplink) = &uplink {
        uplink.up();
    }
    let limit = Duration::from_secs(args.timeout);
    let mut first_ack = None;
    let mut reported = Instant::now();
    let drained = loop {
        let cursor = cloud
            .edge(t.business, t.edge_id.clone())
            .await?
            .map_or(0, |r| r.up_cursor);
        if cursor > t.acked && first_ack.is_none() {
            first_ack = Some((started.elapsed(), cursor));
        }
        if cursor >= t.head {
            break started.elapsed();
        }
        if started.elapsed() > limit {
            bail!(
                "the drain did not finish in {} s: the cloud has {cursor} of {}",
                limit.as_secs(),
                t.head
            );
        }
        if reported.elapsed() >= Duration::from_secs(2) {
            reported = Instant::now();
            eprintln!(
                "  {:.0} s: the cloud has {cursor} of {}",
                started.elapsed().as_secs_f64(),
                t.head
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let after = (
        cloud.writer_stats().jobs.load(Ordering::Relaxed),
        cloud.writer_stats().commits.load(Ordering::Relaxed),
    );
    cloud.set_ownership_checks(true);
    eventually("the edge to record the acknowledgement", || async {
        t.edge.sync_snapshot().await.is_ok_and(|s| s.depth == 0)
    })
    .await?;
    draining.stop().await?;
    // Every event applied, none refused: the books agree.
    for &item in &t.items {
        let (c, e) = (
            cloud.stock_level(item, t.warehouse).await?,
            t.edge.stock_level(item, t.warehouse).await?,
        );
        if c != e {
            bail!("item {item}: the cloud has {c:?}, the edge {e:?}");
        }
    }
    let conflicts = cloud.conflicts(Some(t.business), 5).await?;
    if !conflicts.is_empty() {
        bail!("the cloud recorded conflicts: {conflicts:?}");
    }
    Ok(Drained {
        secs: drained.as_secs_f64(),
        first_ack,
        jobs: after.0 - before.0,
        commits: after.1 - before.1,
    })
}

/// The on-hand quantity of each item (in the order of `Tenant::items`)
/// once `events` adjustments of [`adjustment`] are applied, each once.
pub fn expected_on_hand(events: usize) -> Vec<i64> {
    let mut on_hand = vec![0; ITEMS];
    for i in 0..events {
        on_hand[i % ITEMS] += delta(i);
    }
    on_hand
}

fn delta(i: usize) -> i64 {
    if i % 2 == 0 { 3 } else { -1 }
}

fn adjustment(warehouse: WarehouseId, i: usize) -> AdjustRequest {
    AdjustRequest {
        warehouse_id: warehouse,
        item_id: None,
        sku: Some(format!("SYNC-{:02}", i % ITEMS)),
        reason: MovementReason::Adjusted,
        quantity: None,
        delta: Some(delta(i)),
        counted: None,
        to_warehouse_id: None,
        to_location: None,
        location: None,
        reference: None,
        note: None,
    }
}
