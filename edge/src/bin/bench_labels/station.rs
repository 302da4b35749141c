//! The edge as a packing station meets it: a cloud database with the
//! catalog, stock, confirmed orders and a label printer attached to the
//! edge, applied to the edge's database as the link applies it; the edge
//! served by `depot_edge::Daemon` (spooler and driver included) with its
//! printer on the simulator; and the three HTTP calls a station makes per
//! order: pack-order, generate-label, print job.

use crate::seed::Cloud;
use anyhow::{Context, bail};
use depot_bench::{load, sku, stock};
use depot_edge::devices::config::PrinterDevice;
use depot_hardware::printer::Endpoint;
use depot_protocol::order::Address;
use depot_protocol::order_request::{OrderCreate, OrderLineCreate};
use depot_protocol::printing::{PrintJob, PrinterFields, PrinterKind};
use depot_protocol::shipping::Shipment;
use depot_protocol::{DataEnvelope, OrderId, OrderStatus};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Catalog items the orders draw from.
const ITEMS: usize = 1_000;
/// The printer's record, and its name in the edge's configuration.
const PRINTER: &str = "Pack labels";
/// How long the edge may take to bind its printer and find it ready.
const READY_LIMIT: Duration = Duration::from_secs(20);
/// How often the device route is asked while waiting on the spooler.
const POLL: Duration = Duration::from_millis(10);

/// An order as the packer sees it: what to scan into the box.
pub struct Order {
    pub id: OrderId,
    pub items: Vec<(String, i64)>,
}

/// Two lines per order, of different items, 1 and 2 units.
fn lines(o: usize) -> Vec<(String, i64)> {
    vec![
        (sku((2 * o % ITEMS) as u64), 1),
        (sku(((2 * o + 1) % ITEMS) as u64), 2),
    ]
}

/// The script of the labels' addresses: Latin labels are text in the
/// printer's resident font; Greek and CJK ones are shaped and sent as
/// graphic fields (`^GFA`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Script {
    Latin,
    Greek,
    Cjk,
}

/// A plausible destination, so the label carries a full address block.
fn address(o: usize, script: Script) -> Address {
    let (name, line1, city, region, postal_code, country) = match script {
        Script::Latin => (
            format!("Customer {o}"),
            format!("{} Havenstraat", 1 + o % 300),
            "Rotterdam",
            None,
            format!("30{:02} AB", o % 100),
            "NL",
        ),
        Script::Greek => (
            format!("Πελάτης {o}"),
            format!("Οδός Ερμού {}", 1 + o % 300),
            "Αθήνα",
            None,
            format!("105 {:02}", o % 100),
            "GR",
        ),
        Script::Cjk => (
            format!("顾客 {o}"),
            format!("东城区东长安街{}号", 1 + o % 300),
            "北京市",
            Some("北京市"),
            format!("1000{:02}", o % 100),
            "CN",
        ),
    };
    Address {
        name: Some(name),
        line1: Some(line1),
        line2: None,
        city: Some(city.into()),
        region: region.map(Into::into),
        postal_code: Some(postal_code),
        country: Some(country.into()),
    }
}

/// The edge's HTTP API with the station's key.
#[derive(Clone)]
pub struct Api {
    client: reqwest::Client,
    base: Arc<str>,
    key: Arc<str>,
    business: i64,
    printer: i64,
}

impl Api {
    /// Sends and reads the whole answer; anything but a 2xx is an error
    /// naming the call and what the edge said.
    async fn call(&self, what: &str, req: reqwest::RequestBuilder) -> anyhow::Result<Vec<u8>> {
        let resp = req
            .header("x-api-key", &*self.key)
            .send()
            .await
            .with_context(|| format!("{what}: no answer"))?;
        let status = resp.status();
        let body = resp
            .bytes()
            .await
            .with_context(|| format!("{what}: answer cut off"))?;
        if !status.is_success() {
            bail!("{what}: {status}: {:.300}", String::from_utf8_lossy(&body));
        }
        Ok(body.to_vec())
    }

    async fn data<T: DeserializeOwned>(
        &self,
        what: &str,
        req: reqwest::RequestBuilder,
    ) -> anyhow::Result<T> {
        let body = self.call(what, req).await?;
        serde_json::from_slice::<DataEnvelope<T>>(&body)
            .map(|e| e.data)
            .with_context(|| format!("{what}: unreadable answer"))
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client.post(format!("{}{path}", self.base))
    }

    /// `POST /v1/packing/{b}/pack-order` with the order's items in one
    /// package: the shipment it made.
    pub async fn pack(&self, order: &Order) -> anyhow::Result<Shipment> {
        #[derive(Deserialize)]
        struct Packed {
            shipment: Shipment,
        }
        let items: Vec<Value> = order
            .items
            .iter()
            .map(|(code, quantity)| json!({"code": code, "quantity": quantity}))
            .collect();
        let body = json!({
            "order_id": order.id,
            "items": items,
            "packages": [{"weight_g": 1200, "length_mm": 300, "width_mm": 200, "height_mm": 150}],
        });
        let what = format!("pack-order for order {}", order.id);
        let req = self
            .post(&format!("/v1/packing/{}/pack-order", self.business))
            .json(&body);
        Ok(self.data::<Packed>(&what, req).await?.shipment)
    }

    /// `POST /v1/shipments/{b}/generate-label`, ZPL: the label's bytes.
    pub async fn label(&self, shipment: i64) -> anyhow::Result<Vec<u8>> {
        let req = self
            .post(&format!("/v1/shipments/{}/generate-label", self.business))
            .json(&json!({"shipment_id": shipment, "format": "zpl"}));
        self.call(&format!("generate-label for shipment {shipment}"), req)
            .await
    }

    /// `POST /v1/printers/jobs/{b}/{printer}`: the job, stored and queued.
    pub async fn print(&self, zpl: Vec<u8>) -> anyhow::Result<PrintJob> {
        let req = self
            .post(&format!(
                "/v1/printers/jobs/{}/{}",
                self.business, self.printer
            ))
            .body(zpl);
        self.data("print job", req).await
    }
}

/// A running edge with the orders to pack.
pub struct Station {
    pub api: Api,
    pub orders: Vec<Order>,
    /// Changes the edge applied from the cloud's feed.
    pub replicated: usize,
    stop: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
}

impl Station {
    /// Seeds the cloud with `orders` confirmed orders, applies it all at
    /// the edge in `dir`, serves the edge with its printer at `printer`,
    /// and waits until the printer is bound and ready.
    pub async fn start(
        dir: &Path,
        orders: usize,
        printer: SocketAddr,
        script: Script,
    ) -> anyhow::Result<Self> {
        let cloud = Cloud::create(&dir.join("cloud.db"), ITEMS, "bench-labels").await?;
        let (wms, caller, warehouse) = (&cloud.wms, cloud.caller, cloud.warehouse);
        // Every item is on at most this many lines of 2 units at most.
        let per_item = 2 * (2 * orders).div_ceil(ITEMS) as i64;
        stock::receive(wms, caller, warehouse, "stock (cloud)", ITEMS, |_| per_item).await?;
        let mut made = load("confirmed orders (cloud)", orders, 64, |o| {
            let wms = wms.clone();
            let items = lines(o);
            let req = OrderCreate {
                channel: "web".into(),
                external_ref: format!("L-{o:06}"),
                warehouse_id: Some(warehouse),
                buyer: None,
                shipping_address: Some(address(o, script)),
                payments: None,
                lines: items
                    .iter()
                    .map(|(sku, quantity)| OrderLineCreate {
                        sku: sku.clone(),
                        quantity: *quantity,
                        unit_price: None,
                    })
                    .collect(),
                currency: None,
                carrier: None,
                service: None,
                ordered_at: None,
            };
            async move {
                let id = wms.create_order(caller, req).await?.0.id;
                wms.set_order_status(caller, id, OrderStatus::Confirmed, None)
                    .await?;
                Ok(Order { id, items })
            }
        })
        .await?;
        made.sort_by_key(|o| o.id);
        let record = wms
            .create_printer(
                cloud.business,
                PrinterFields {
                    name: Some(PRINTER.into()),
                    kind: Some(PrinterKind::Zpl),
                    connection: Some(format!("edge://{}", cloud.edge_id)),
                    station: None,
                },
            )
            .await?;

        // A broker URL on a closed port: the link keeps trying, the edge
        // serves from its own database, as offline.
        let mut settings = cloud.edge_settings(&dir.join("edge"), "mqtt://127.0.0.1:1");
        settings.devices.printers = vec![PrinterDevice::new(
            PRINTER,
            Endpoint::Tcp {
                host: printer.ip().to_string(),
                port: printer.port(),
            },
        )];
        let edge = depot_edge::open(&settings)?;
        let replicated = cloud.replicate_to(&edge).await?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(
            depot_edge::Daemon::new(edge, settings).serve(listener, async {
                let _ = stopped.await;
            }),
        );
        let api = Api {
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .build()?,
            base: base.into(),
            key: cloud.key.as_str().into(),
            business: cloud.business.0,
            printer: record.id.0,
        };
        let station = Self {
            api,
            orders: made,
            replicated,
            stop,
            task,
        };
        station.ready(record.id.0).await?;
        Ok(station)
    }

    /// Until `GET /v1/edge/devices` shows the printer bound to its record
    /// and ready: the spooler found the record and the driver's first
    /// `~HS` was answered.
    async fn ready(&self, record: i64) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_LIMIT;
        let mut last = Value::Null;
        while Instant::now() < deadline {
            let req = self
                .api
                .client
                .get(format!("{}/v1/edge/devices", self.api.base));
            if let Ok(view) = self.api.data::<Value>("device status", req).await {
                let p = &view["printers"][0];
                if p["printer_id"] == record && p["device"]["state"] == "ready" {
                    return Ok(());
                }
                last = view;
            }
            tokio::time::sleep(POLL).await;
        }
        bail!(
            "the edge's printer was not bound and ready after {} s; the edge's devices: {last}",
            READY_LIMIT.as_secs()
        )
    }

    /// Jobs the spooler has handed to the driver and not yet recorded as
    /// printed, as `GET /v1/edge/devices` shows them.
    async fn queued(&self) -> anyhow::Result<usize> {
        let req = self
            .api
            .client
            .get(format!("{}/v1/edge/devices", self.api.base));
        let view = self.api.data::<Value>("device status", req).await?;
        view["printers"][0]["queued"]
            .as_u64()
            .and_then(|q| usize::try_from(q).ok())
            .with_context(|| format!("no printer's queue in the edge's devices: {view}"))
    }

    /// Waits until the spooler has `jobs` jobs queued; answers when that
    /// was seen (within [`POLL`]). Fails if the count stays put for
    /// [`crate::LIMIT`].
    pub async fn until_queued(&self, what: &str, jobs: usize) -> anyhow::Result<Instant> {
        let first = self.queued().await?;
        let progress = depot_bench::progress_bar(what, first.abs_diff(jobs));
        let (mut last, mut moved) = (first, Instant::now());
        loop {
            let now = self.queued().await?;
            if now == jobs {
                progress.finish_and_clear();
                return Ok(Instant::now());
            }
            if now != last {
                (last, moved) = (now, Instant::now());
            } else if moved.elapsed() > crate::LIMIT {
                bail!(
                    "{what}: the edge's printer stayed at {now} jobs queued for {} s, waiting for {jobs}",
                    crate::LIMIT.as_secs()
                );
            }
            progress.set_position(first.abs_diff(now) as u64);
            tokio::time::sleep(POLL).await;
        }
    }

    /// Shuts the edge down: server, spooler, link.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await.context("the edge task failed")?
    }
}
