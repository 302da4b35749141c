//! End to end against a real django-oscar storefront (CI starts it with
//! `.ci/storefront/oscar`; `DEPOT_TEST_OSCAR_DIR` names its directory):
//! an order placed in the shop through its own API reaches Depot, is
//! picked, packed and dispatched, and the shop shows it shipped with the
//! tracking number; Depot's stock changes reach the shop's; and the shop
//! going down for a while in the middle loses nothing.

use super::{cloud, shop};
use depot_testkit::cloud::TestCloud;
use depot_testkit::{eventually_seen, eventually_some};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;

/// The running shop, as its script wrote it down.
struct Shop {
    dir: PathBuf,
    base: String,
    port: String,
    env: HashMap<String, String>,
    http: reqwest::Client,
}

impl Shop {
    fn from_env() -> Option<Self> {
        let dir = PathBuf::from(std::env::var_os("DEPOT_TEST_OSCAR_DIR")?);
        let text = std::fs::read_to_string(dir.join("run/env")).expect("the shop's run/env");
        let env: HashMap<String, String> = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let base = env["BASE_URL"].trim_end_matches('/').to_owned();
        let port = base.rsplit(':').next().expect("a port").to_owned();
        Some(Self {
            dir,
            base,
            port,
            env,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        })
    }

    fn script(&self, args: &[&str]) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/storefront/oscar");
        let out = std::process::Command::new(script)
            .args(args)
            .output()
            .expect("the shop's script");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn stop(&self) {
        self.script(&["stop", self.dir.to_str().expect("dir")]);
    }

    fn start(&self) {
        self.script(&[self.dir.to_str().expect("dir"), &self.port]);
    }

    /// An admin API call with the staff token.
    async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let url = if path.starts_with("http") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        };
        let mut req = self.http.request(method, url).header(
            "Authorization",
            format!("Token {}", self.env["ADMIN_TOKEN"]),
        );
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.expect("the shop answers");
        let status = r.status();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// A customer's call, with HTTP basic auth of a registered customer.
    async fn customer(&self, who: (&str, &str), path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let req = match body {
            Some(b) => self.http.post(url).json(&b),
            None => self.http.get(url),
        };
        let r = req
            .basic_auth(who.0, Some(who.1))
            .send()
            .await
            .expect("the shop answers");
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {v}");
        v
    }

    /// What the shop says it has of a product for sale.
    async fn available(&self, product: i64) -> Option<i64> {
        let r = self
            .http
            .get(format!(
                "{}/api/products/{product}/availability/",
                self.base
            ))
            .send()
            .await
            .ok()?;
        r.json::<Value>().await.ok()?["num_available"].as_i64()
    }

    /// An order's page on the staff dashboard, logged in.
    async fn dashboard_page(&self, number: &str) -> String {
        let login = format!("{}/accounts/login/", self.base);
        let r = self.http.get(&login).send().await.expect("login page");
        let csrf = set_cookie(&r, "csrftoken").expect("csrftoken");
        let r = self
            .http
            .post(&login)
            .header("Cookie", format!("csrftoken={csrf}"))
            .header("Referer", &login)
            .form(&[
                ("csrfmiddlewaretoken", csrf.as_str()),
                ("login-username", self.env["ADMIN_EMAIL"].as_str()),
                ("login-password", self.env["ADMIN_PASSWORD"].as_str()),
                ("login_submit", "1"),
            ])
            .send()
            .await
            .expect("login");
        let session = set_cookie(&r, "sessionid").expect("a session");
        self.http
            .get(format!("{}/dashboard/orders/{number}/", self.base))
            .header("Cookie", format!("csrftoken={csrf}; sessionid={session}"))
            .send()
            .await
            .expect("order page")
            .text()
            .await
            .expect("page")
    }
}

fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next()?.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

async fn figure(app: &TestCloud, sku: &str) -> i64 {
    let b = app.a.business;
    let r = app
        .get(&format!("/v1/channels/{b}/shop/availability?sku={sku}"))
        .await;
    r.body["data"][0]["available"].as_i64().expect("a figure")
}

async fn adjust(app: &TestCloud, sku: &str, reason: &str, quantity: i64) {
    let b = app.a.business;
    let w = app.a.warehouses[0].0;
    let r = app
        .post(
            &format!("/v1/inventory/{b}/adjust"),
            json!({"warehouse_id": w, "sku": sku, "reason": reason, "quantity": quantity}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
}

#[tokio::test]
async fn an_order_placed_in_a_real_oscar_shop_is_shipped_and_stock_follows_through_an_outage() {
    let Some(shop_) = Shop::from_env() else {
        eprintln!("DEPOT_TEST_OSCAR_DIR is not set: the Oscar storefront test is skipped");
        return;
    };
    let s = &shop_;
    let run = uuid::Uuid::now_v7().simple().to_string();
    let run = &run[run.len() - 10..];
    // The shop keeps what earlier runs made: this run's names are its own.
    let sku = format!("ΜΕΛΙ-{run}");

    // The shop: a partner holding the stock, a product whose UPC is the SKU.
    let (st, partner) = s
        .admin(
            reqwest::Method::POST,
            "/api/admin/partners/",
            Some(json!({"name": format!("Depot {run}")})),
        )
        .await;
    assert!(st.is_success(), "{st} {partner}");
    let class = format!("depot-item-{run}");
    let (st, v) = s
        .admin(
            reqwest::Method::POST,
            "/api/admin/productclasses/",
            Some(json!({"name": class, "slug": class, "requires_shipping": true, "track_stock": true})),
        )
        .await;
    assert!(st.is_success(), "{st} {v}");
    let (st, product) = s
        .admin(
            reqwest::Method::POST,
            "/api/admin/products/",
            Some(json!({"upc": sku, "title": format!("Μέλι θυμαρίσιο {run}"), "slug": format!("meli-{run}"),
                "structure": "standalone", "product_class": class, "is_public": true,
                "stockrecords": [{"partner": partner["url"], "partner_sku": sku, "price_currency": "GBP",
                                  "price": "12.50", "num_in_stock": 100}]})),
        )
        .await;
    assert!(st.is_success(), "{st} {product}");
    let product_id = product["id"].as_i64().expect("product id");

    // Depot: the item with 5 in stock, a channel, its connector.
    let app = cloud().await;
    let b = app.a.business;
    app.item(&sku).await;
    app.receive(&sku, 5).await;
    shop(&app, "shop").await;
    let path = format!("/v1/channels/{b}/shop/connector");
    let r = app
        .put(
            &path,
            json!({"kind": "oscar", "base_url": s.base, "token": s.env["ADMIN_TOKEN"],
                   "user": s.env["ADMIN_EMAIL"], "password": s.env["ADMIN_PASSWORD"],
                   "partner": partner["code"], "every_secs": 1}),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);

    // Its first run tells the shop what may be sold: 5, not the shop's 100.
    eventually_seen(
        "the shop selling 5",
        || s.available(product_id),
        |n| *n == Some(5),
    )
    .await;

    // A customer buys 2 through the shop's own API.
    let email = format!("eleni-{run}@example.com");
    let who = (email.as_str(), "a-long-customer-pass-1");
    let r = s
        .http
        .post(format!("{}/api/register/", s.base))
        .json(&json!({"email": who.0, "password1": who.1, "password2": who.1}))
        .send()
        .await
        .expect("register");
    assert!(r.status().is_success(), "register: {}", r.status());
    let basket = s.customer(who, "/api/basket/", None).await;
    s.customer(
        who,
        "/api/basket/add-product/",
        Some(json!({"url": format!("{}/api/products/{product_id}/", s.base), "quantity": 2})),
    )
    .await;
    let placed = s
        .customer(
            who,
            "/api/checkout/",
            Some(json!({"basket": basket["url"], "shipping_method_code": "free-shipping",
                "shipping_address": {"first_name": "Ελένη", "last_name": "Παππά", "line1": "221B Baker Street",
                    "line4": "London", "postcode": "NW1 6XE",
                    "country": format!("{}/api/countries/GB/", s.base), "phone_number": "+442079460000"}})),
        )
        .await;
    let number = placed["number"].as_str().expect("order number").to_owned();

    // It reaches Depot as the channel's order, and counts at once.
    let order = eventually_some("the shop's order in Depot", || async {
        let r = app.get(&format!("/v1/orders/{b}/list?channel=shop")).await;
        r.body["data"].as_array().and_then(|rows| {
            rows.iter()
                .find(|o| o["external_ref"] == number.as_str())
                .cloned()
        })
    })
    .await;
    assert_eq!(order["lines"][0]["sku"], sku.as_str());
    assert_eq!(order["lines"][0]["quantity"], 2);
    assert_eq!(order["buyer"]["name"], "Ελένη Παππά");
    assert_eq!(order["shipping_address"]["country"], "GB");
    assert_eq!(order["shipping_address"]["postal_code"], "NW1 6XE");
    assert_eq!(order["oversold"], false);
    assert_eq!(figure(&app, &sku).await, 3);
    eventually_seen(
        "the shop selling 3",
        || s.available(product_id),
        |n| *n == Some(3),
    )
    .await;

    // Picked, packed and dispatched in Depot: the shop shows it shipped,
    // with the tracking number.
    let id = order["id"].as_i64().expect("id");
    assert_eq!(app.set_status(id, "confirmed").await.status, 200);
    let w = app.a.warehouses[0].0;
    let wave = super::ok(
        &app,
        &format!("/v1/picking/{b}/waves/create"),
        json!({"warehouse_id": w}),
    )
    .await;
    let picked = super::ok(
        &app,
        &format!("/v1/picking/{b}/item/scan"),
        json!({"wave_id": wave["id"], "code": sku, "quantity": 2, "order_id": id}),
    )
    .await;
    assert_eq!(picked["order_remaining"], 0);
    let packed = super::ok(
        &app,
        &format!("/v1/packing/{b}/pack-order"),
        json!({"order_id": id, "items": [{"code": sku, "quantity": 2}], "packages": [{"weight_g": 900}]}),
    )
    .await;
    let tracking = packed["shipment"]["tracking_number"]
        .as_str()
        .expect("tracking")
        .to_owned();
    assert_eq!(app.set_status(id, "dispatched").await.status, 200);
    let placed_id = placed["id"].as_i64().expect("shop order id");
    eventually_some("the shop's order shipped", || async {
        let (_, o) = s
            .admin(
                reqwest::Method::GET,
                &format!("/api/admin/orders/{placed_id}/"),
                None,
            )
            .await;
        (o["status"] == "Shipped").then_some(())
    })
    .await;
    let page = s.dashboard_page(&number).await;
    assert!(page.contains(&tracking), "the shop's page shows {tracking}");

    // Stock received in Depot reaches the shop within seconds.
    adjust(&app, &sku, "received", 10).await;
    eventually_seen(
        "the shop selling 13",
        || s.available(product_id),
        |n| *n == Some(13),
    )
    .await;

    // The shop goes down: the connector fails, visibly; Depot goes on.
    s.stop();
    adjust(&app, &sku, "damaged", 4).await;
    let failing = eventually_some("the connector failing", || async {
        let c = app.get(&path).await.body["data"].clone();
        (c["state"] == "failing").then_some(c)
    })
    .await;
    assert!(
        failing["last_error"]
            .as_str()
            .is_some_and(|e| !e.is_empty())
    );

    // Back: what changed meanwhile arrives, nothing is lost or doubled.
    s.start();
    eventually_seen(
        "the shop selling 9",
        || s.available(product_id),
        |n| *n == Some(9),
    )
    .await;
    let c = eventually_some("the connector ok again", || async {
        let c = app.get(&path).await.body["data"].clone();
        (c["state"] == "ok").then_some(c)
    })
    .await;
    assert_eq!(c["orders_in"], 1);
    assert_eq!(c["fulfilments_out"], 1);
    assert_eq!(c["orders_refused"], 0);
    let r = app.get(&format!("/v1/orders/{b}/list?channel=shop")).await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(1));
}
