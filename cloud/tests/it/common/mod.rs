//! `spawn_app()`: a real server on `127.0.0.1:0` over a fresh database, with
//! two tenants so every test can try to cross between them.
#![allow(dead_code)]

use depot_cloud::settings::{CarrierSettings, RateLimit, Secret, Settings};
use depot_protocol::order::Address;
use depot_protocol::tenant::Caller;
use depot_protocol::{BusinessId, WarehouseId};
use depot_wms::Wms;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// What the test carrier signs its webhooks with.
pub const WEBHOOK_SECRET: &str = "test-carrier-secret";

pub struct Tenant {
    pub business: BusinessId,
    pub warehouses: Vec<WarehouseId>,
    pub key: String,
    pub caller: Caller,
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub wms: Wms,
    pub a: Tenant,
    pub b: Tenant,
    _dir: tempfile::TempDir,
    _stop: oneshot::Sender<()>,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(RateLimit {
        per_second: 100_000,
        burst: 100_000,
    })
    .await
}

async fn tenant(wms: &Wms, name: &str) -> Tenant {
    let b = wms
        .create_business(name, "EUR", "Europe/Madrid")
        .await
        .expect("business");
    let mut warehouses = Vec::new();
    for (code, visible) in [("MAD1", true), ("BCN1", false)] {
        let w = wms
            .create_warehouse(b.id, code, code, Address::default(), visible)
            .await
            .expect("warehouse");
        warehouses.push(w.id);
    }
    let k = wms
        .create_key(b.id, Some("test".into()))
        .await
        .expect("key");
    Tenant {
        business: b.id,
        warehouses,
        caller: Caller {
            key_id: k.key.id,
            business_id: b.id,
        },
        key: k.secret,
    }
}

pub async fn spawn_app_with(rate_limit: RateLimit) -> TestApp {
    spawn_app_configured(|s| s.rate_limit = rate_limit).await
}

/// A server whose settings `configure` adjusts.
pub async fn spawn_app_configured(configure: impl FnOnce(&mut Settings)) -> TestApp {
    let dir = tempfile::tempdir().expect("tempdir");
    let wms = Wms::open(&dir.path().join("cloud.db"), "cloud").expect("open");
    let a = tenant(&wms, "Alpha").await;
    let b = tenant(&wms, "Beta").await;
    let mut settings = Settings {
        rate_limit: RateLimit {
            per_second: 100_000,
            burst: 100_000,
        },
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
    TestApp {
        base,
        client: reqwest::Client::new(),
        wms,
        a,
        b,
        _dir: dir,
        _stop: stop,
    }
}

/// A response reduced to what tests look at.
#[derive(Debug)]
pub struct Res {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl TestApp {
    /// The engine, for the office's operations (CRM, pricing, OAuth).
    pub fn office(&self) -> depot_office::Office {
        depot_office::Office::new(self.wms.clone())
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> Res {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(k) = key {
            req = req.header("X-API-KEY", k);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        send(req).await
    }

    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        key: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Res {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("X-API-KEY", key)
            .body(body);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        send(req).await
    }

    pub async fn get(&self, path: &str) -> Res {
        self.call("GET", path, Some(&self.a.key), None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Res {
        self.call("POST", path, Some(&self.a.key), Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Res {
        self.call("PUT", path, Some(&self.a.key), Some(body)).await
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

/// Sends a request and reduces the answer: JSON when it is JSON.
async fn send(req: reqwest::RequestBuilder) -> Res {
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Res {
        status,
        body,
        headers,
    }
}

/// Asserts the spec's error body with the given status.
pub fn assert_error(r: &Res, status: u16) {
    assert_eq!(r.status, status, "{:?}", r.body);
    assert_eq!(r.body["error"], 1, "{:?}", r.body);
    assert_eq!(r.body["code"], status, "{:?}", r.body);
    assert!(
        r.body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{:?}",
        r.body
    );
}
