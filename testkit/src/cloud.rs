//! A cloud to test against: the real server on `127.0.0.1:0` over a fresh
//! database, with two tenants (A and B) so that every test can try to
//! cross between them. Rate limits are out of the way unless a test sets
//! them; the carrier `own` signs its webhooks with [`WEBHOOK_SECRET`].

use crate::http::Client;
pub use crate::http::{Res, assert_error, field_names};
use crate::seed::{self, Tenant};
use depot_cloud::settings::{CarrierSettings, RateLimit, Secret, Settings};
use depot_wms::Wms;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// What the test carrier signs its webhooks with.
pub const WEBHOOK_SECRET: &str = "test-carrier-secret";

/// A cloud serving in this process; it stops when dropped.
pub struct TestCloud {
    pub base: String,
    /// A client of it with no key.
    pub http: Client,
    pub wms: Wms,
    pub a: Tenant,
    pub b: Tenant,
    _stop: oneshot::Sender<()>,
    _dir: tempfile::TempDir,
    _database: Option<crate::pg::PgDatabase>,
}

/// A limit no test reaches by accident.
const UNLIMITED: RateLimit = RateLimit {
    per_second: 100_000,
    burst: 100_000,
};

pub async fn spawn_cloud() -> TestCloud {
    spawn_cloud_configured(|_| {}).await
}

/// A cloud with the given rate limit.
pub async fn spawn_cloud_with(rate_limit: RateLimit) -> TestCloud {
    spawn_cloud_configured(|s| s.rate_limit = rate_limit).await
}

/// A cloud whose settings `configure` adjusts.
pub async fn spawn_cloud_configured(configure: impl FnOnce(&mut Settings)) -> TestCloud {
    crate::logs();
    let dir = tempfile::tempdir().expect("tempdir");
    let (wms, database) = crate::pg::cloud_engine(dir.path());
    let a = tenant("Alpha").seed(&wms).await;
    let b = tenant("Beta").seed(&wms).await;
    let mut settings = Settings {
        rate_limit: UNLIMITED,
        data_dir: dir.path().to_owned(),
        ..Settings::default()
    };
    settings.carriers.insert(
        "own".into(),
        CarrierSettings {
            webhook_secret: Secret(WEBHOOK_SECRET.into()),
        },
    );
    configure(&mut settings);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (stop, stopped) = oneshot::channel::<()>();
    let server_wms = wms.clone();
    tokio::spawn(async move {
        let _ = depot_cloud::Daemon::new(server_wms, settings.clone())
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await;
    });
    TestCloud {
        http: Client::new(&base),
        base,
        wms,
        a,
        b,
        _stop: stop,
        _dir: dir,
        _database: database,
    }
}

/// Each tenant: a visible warehouse and a hidden one (buyers see the
/// stock of the first only), and a key.
fn tenant(name: &str) -> seed::Business {
    seed::business(name)
        .time_zone("Europe/Madrid")
        .warehouses(&[("MAD1", "MAD1", true), ("BCN1", "BCN1", false)])
        .key_label("test")
}

impl TestCloud {
    /// The engine, for the office's operations (CRM, pricing, OAuth).
    pub fn office(&self) -> depot_office::Office {
        depot_office::Office::new(self.wms.clone())
    }

    /// A client of it as tenant A.
    pub fn as_a(&self) -> Client {
        self.http.with_key(self.a.key.as_str())
    }

    /// `method path` with `key` (or none), and a JSON body when given.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Res {
        self.http.with_key(key).call(method, path, body).await
    }

    /// `method path` with `key` and a body that is not JSON (or not
    /// valid), with the content type given.
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        key: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Res {
        let mut req = self.http.with_key(key).raw(method, path).body(body);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        req.send().await
    }

    /// GET as tenant A.
    pub async fn get(&self, path: &str) -> Res {
        self.as_a().get(path).await
    }

    /// POST as tenant A.
    pub async fn post(&self, path: &str, body: Value) -> Res {
        self.as_a().post(path, body).await
    }

    /// PUT as tenant A.
    pub async fn put(&self, path: &str, body: Value) -> Res {
        self.as_a().put(path, body).await
    }

    /// Creates an item in tenant A and answers its id.
    pub async fn item(&self, sku: &str) -> i64 {
        let r = self
            .post(
                &format!("/v1/items/{}/create", self.a.business),
                json!({"sku": sku, "name": format!("Item {sku}"),
            "prices": [{"price_list_id": 1, "amount": "10.00", "currency": "EUR"}]}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        r.body["data"]["id"].as_i64().expect("id")
    }

    /// Receives stock of `sku` into tenant A's first warehouse.
    pub async fn receive(&self, sku: &str, quantity: i64) {
        let r = self.post(&format!("/v1/inventory/{}/adjust", self.a.business),
            json!({"warehouse_id": self.a.warehouses[0].0, "sku": sku, "reason": "received", "quantity": quantity})).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }

    /// Ingests an order in tenant A and answers its id.
    pub async fn order(&self, external_ref: &str, lines: &[(&str, i64)]) -> i64 {
        let lines: Vec<Value> = lines
            .iter()
            .map(|(sku, q)| json!({"sku": sku, "quantity": q}))
            .collect();
        let r = self
            .post(
                &format!("/v1/orders/{}/create", self.a.business),
                json!({"channel": "web", "external_ref": external_ref, "lines": lines,
                       "shipping_address": {"name": "Marta Quiroga", "line1": "Calle de Atocha 27, 3º izq.",
                                            "postal_code": "28012", "city": "Madrid", "region": "Madrid", "country": "ES"}}),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        r.body["data"]["id"].as_i64().expect("id")
    }

    pub async fn set_status(&self, order: i64, status: &str) -> Res {
        self.put(
            &format!("/v1/orders/{}/{order}/status", self.a.business),
            json!({"status": status}),
        )
        .await
    }

    /// (on_hand, reserved, available) of `item` in tenant A's first warehouse.
    pub async fn stock(&self, item: i64) -> (i64, i64, i64) {
        let r = self
            .get(&format!(
                "/v1/inventory/{}/items/list?item_id={item}&warehouse_id={}",
                self.a.business, self.a.warehouses[0].0
            ))
            .await;
        let row = &r.body["data"][0];
        (
            row["on_hand"].as_i64().unwrap_or(0),
            row["reserved"].as_i64().unwrap_or(0),
            row["available"].as_i64().unwrap_or(0),
        )
    }

    /// How many events the log holds: a request that must write nothing
    /// leaves it unchanged.
    pub async fn event_count(&self) -> usize {
        self.wms
            .events_since(0, 1_000_000)
            .await
            .expect("events")
            .len()
    }
}
