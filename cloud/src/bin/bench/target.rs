//! The scenarios and how they are sent: what every client worker shares
//! (the instances, the key, the list URL and its cursors), each scenario's
//! request, and the closed- and open-loop runs of them.

use crate::data::{CHANNELS, mix};
use crate::picking;
use depot_bench::closed_loop::requests;
use depot_bench::picking::Walk;
use depot_bench::{OpenRun, Run, Tally, closed_loop, open_loop, sku};
use depot_protocol::WarehouseId;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scenario {
    Hello,
    OrderList,
    /// The same ten pages, each read by the cursor of the page before.
    OrderListCursor,
    OrderCreate,
    Adjust,
}

/// What every client worker shares.
pub struct Target {
    pub client: reqwest::Client,
    /// One per instance: requests go to each in turn.
    pub bases: Vec<String>,
    pub key: String,
    pub business: i64,
    pub warehouse: WarehouseId,
    pub items: u64,
    /// The list URL, filtered by status and the last 60 days; `start` varies.
    pub list: String,
    /// The cursors of the list's first ten pages (the first page has
    /// none), read once before the cursor scenario.
    pub cursors: std::sync::OnceLock<Vec<Option<String>>>,
    pub concurrency: usize,
    /// Makes each created order's reference unique across workers.
    pub seq: AtomicU64,
}

impl Target {
    /// The instance the `n`-th request goes to.
    pub fn base(&self, n: u64) -> &str {
        &self.bases[(n % self.bases.len() as u64) as usize]
    }

    pub fn request(&self, s: Scenario, r: u64) -> reqwest::RequestBuilder {
        let n = self.seq.fetch_add(1, Ordering::Relaxed);
        let (base, b) = (self.base(n), self.business);
        let req = match s {
            Scenario::Hello => return self.client.get(format!("{base}/hello")),
            Scenario::OrderList => self
                .client
                .get(format!("{base}{}&start={}", self.list, (n % 10) * 50)),
            Scenario::OrderListCursor => {
                let cursors = self.cursors.get().map_or(&[][..], Vec::as_slice);
                match cursors.get((n % cursors.len().max(1) as u64) as usize) {
                    Some(Some(c)) => self.client.get(format!("{base}{}&cursor={c}", self.list)),
                    _ => self.client.get(format!("{base}{}", self.list)),
                }
            }
            Scenario::OrderCreate => self
                .client
                .post(format!("{base}/v1/orders/{b}/create"))
                .json(&json!({
                    "channel": CHANNELS[(r % 3) as usize],
                    "external_ref": format!("B-{n}"),
                    "shipping_address": {"name": "Ana García", "line1": "Calle de Alcalá 123", "postal_code": "28009", "city": "Madrid", "region": "Madrid", "country": "ES"},
                    "buyer": {"email": format!("buyer{}@example.com", r % 5000)},
                    "lines": [{"sku": sku(r % self.items), "quantity": 1 + (r >> 32) % 3}],
                })),
            Scenario::Adjust => self
                .client
                .post(format!("{base}/v1/inventory/{b}/adjust"))
                .json(&json!({
                    "warehouse_id": self.warehouse,
                    "sku": sku(r % self.items),
                    "reason": "adjusted",
                    "delta": if r >> 63 == 0 { 1 } else { -1 },
                })),
        };
        req.header("x-api-key", &self.key)
    }
}

/// Runs scenario `s` with `t.concurrency` clients.
pub async fn measure(
    t: &Arc<Target>,
    s: Scenario,
    name: &'static str,
    secs: u64,
) -> anyhow::Result<Run> {
    closed_loop(name, secs, t.concurrency, |w, deadline| {
        let t = t.clone();
        async move {
            let mut r = mix(w as u64 + 1);
            requests(deadline, || {
                r = mix(r);
                t.request(s, r)
            })
            .await
        }
    })
    .await
}

/// Scenario `s` open loop: `rate` requests a second for `secs`, each
/// timed from when it was due.
pub async fn measure_open(
    t: &Arc<Target>,
    s: Scenario,
    name: &'static str,
    rate: f64,
    secs: u64,
) -> OpenRun {
    open_loop(name, rate, secs as f64, |i| {
        depot_bench::open_loop::answered(t.request(s, mix(i as u64 + 1)))
    })
    .await
}

/// The pick-scan scenario: one scanner per wave.
pub async fn measure_picks(t: &Arc<Target>, walks: Vec<Walk>, secs: u64) -> anyhow::Result<Run> {
    let walks = Arc::new(walks);
    closed_loop("pick scan", secs, walks.len(), |w, deadline| {
        let (t, walks) = (t.clone(), walks.clone());
        async move {
            match walks.get(w) {
                Some(walk) => picking::scan(&t, walk, deadline).await,
                None => Tally::default(),
            }
        }
    })
    .await
}
