//! django-oscar with django-oscar-api (`docs/connectors.md`): orders and
//! stock through the REST API with a staff user's token; a dispatch
//! through the staff dashboard, which is where Oscar records shipping
//! events (the API cannot write them): a shipping event `shipped` whose
//! reference is the tracking number, then the order's status `Shipped`.
//!
//! The product's UPC is its SKU; its stock record of the connector's
//! partner gets the figure as `num_in_stock`, with `num_allocated` 0:
//! the figure already counts the orders Depot has not shipped.

use super::platform::{Dispatch, Figure, Incoming, Platform, PlatformError, Result};
use regex::Regex;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::sync::LazyLock;

/// A connection to one Oscar storefront.
pub struct Oscar {
    client: reqwest::Client,
    base: String,
    token: String,
    user: Option<String>,
    password: Option<String>,
    partner: Option<String>,
    /// The partner's URL, once looked up.
    partner_url: Option<String>,
    /// The dashboard's cookies, once logged in: (csrftoken, sessionid).
    session: Option<(String, String)>,
}

impl Oscar {
    pub fn new(client: reqwest::Client, s: &depot_protocol::connector::ConnectorSettings) -> Self {
        Self {
            client,
            base: s.base_url.trim_end_matches('/').to_owned(),
            token: s.token.clone().unwrap_or_default(),
            user: s.user.clone(),
            password: s.password.clone(),
            partner: s.partner.clone(),
            partner_url: None,
            session: None,
        }
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base)
        }
    }

    /// One API call with the token; answers the status and the JSON.
    async fn api(&self, method: Method, path: &str, body: Option<&Value>) -> Result<(u16, Value)> {
        let url = self.url(path);
        // Only the storefront's own links are followed (a `next` page).
        if !url.starts_with(&self.base) {
            return Err(PlatformError::Unexpected(format!(
                "a link outside the storefront: {url}"
            )));
        }
        let mut req = self
            .client
            .request(method.clone(), &url)
            .header("Authorization", format!("Token {}", self.token))
            .header("Accept", "application/json");
        if let Some(b) = body {
            req = req.json(b);
        }
        let r = req
            .send()
            .await
            .map_err(|e| PlatformError::Unreachable(e.to_string()))?;
        let status = r.status().as_u16();
        let text = r
            .text()
            .await
            .map_err(|e| PlatformError::Unreachable(e.to_string()))?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    }

    async fn api_ok(&self, method: Method, path: &str, body: Option<&Value>) -> Result<Value> {
        let (status, value) = self.api(method.clone(), path, body).await?;
        if !(200..300).contains(&status) {
            return Err(refused(&method, path, status, &value));
        }
        Ok(value)
    }

    /// Every row of a paged list, following `next`.
    async fn all(&self, path: &str) -> Result<Vec<Value>> {
        let mut rows = Vec::new();
        let mut next = Some(path.to_owned());
        while let Some(page) = next.take() {
            let v = self.api_ok(Method::GET, &page, None).await?;
            match v {
                Value::Array(a) => rows.extend(a),
                v => {
                    rows.extend(v["results"].as_array().cloned().unwrap_or_default());
                    next = v["next"].as_str().map(str::to_owned);
                }
            }
        }
        Ok(rows)
    }

    async fn partner_url(&mut self) -> Result<String> {
        if let Some(u) = &self.partner_url {
            return Ok(u.clone());
        }
        let partners = self.all("/api/admin/partners/").await?;
        let found = partners
            .iter()
            .find(|p| {
                self.partner
                    .as_deref()
                    .is_none_or(|code| p["code"].as_str() == Some(code))
            })
            .and_then(|p| p["url"].as_str())
            .ok_or_else(|| {
                PlatformError::Unexpected(match &self.partner {
                    Some(code) => format!("the storefront has no partner {code}"),
                    None => "the storefront has no partner to hold stock".into(),
                })
            })?
            .to_owned();
        self.partner_url = Some(found.clone());
        Ok(found)
    }

    /// Logs in to the dashboard: its CSRF and session cookies.
    async fn login(&mut self) -> Result<()> {
        let (Some(user), Some(password)) = (self.user.clone(), self.password.clone()) else {
            return Err(PlatformError::Unexpected(
                "telling Oscar of a dispatch needs the connector's user and password".into(),
            ));
        };
        let login = self.url("/accounts/login/");
        let r = self
            .client
            .get(&login)
            .send()
            .await
            .map_err(|e| PlatformError::Unreachable(e.to_string()))?;
        let csrf = cookie(r.headers(), "csrftoken")
            .ok_or_else(|| PlatformError::Unexpected("the login page set no csrftoken".into()))?;
        let form = [
            ("csrfmiddlewaretoken", csrf.as_str()),
            ("login-username", user.as_str()),
            ("login-password", password.as_str()),
            ("login_submit", "1"),
        ];
        let r = self
            .client
            .post(&login)
            .header("Cookie", format!("csrftoken={csrf}"))
            .header("Referer", &login)
            .form(&form)
            .send()
            .await
            .map_err(|e| PlatformError::Unreachable(e.to_string()))?;
        let session = cookie(r.headers(), "sessionid");
        let csrf = cookie(r.headers(), "csrftoken").unwrap_or(csrf);
        match (r.status(), session) {
            (StatusCode::FOUND, Some(s)) => {
                self.session = Some((csrf, s));
                Ok(())
            }
            (status, _) => Err(PlatformError::Refused {
                call: "the dashboard login".into(),
                status: status.as_u16(),
                body: "the user and password were not taken".into(),
            }),
        }
    }

    /// A dashboard page or form post, logged in (again if the session
    /// ended). Answers the status and the page.
    async fn dashboard(
        &mut self,
        path: &str,
        form: Option<&[(String, String)]>,
    ) -> Result<(u16, String)> {
        for attempt in 0..2 {
            if self.session.is_none() {
                self.login().await?;
            }
            let Some((csrf, session)) = self.session.clone() else {
                continue;
            };
            let url = self.url(path);
            let mut req = match form {
                Some(f) => {
                    let mut f = f.to_vec();
                    f.push(("csrfmiddlewaretoken".into(), csrf.clone()));
                    self.client.post(&url).header("Referer", &url).form(&f)
                }
                None => self.client.get(&url),
            };
            req = req.header("Cookie", format!("csrftoken={csrf}; sessionid={session}"));
            let r = req
                .send()
                .await
                .map_err(|e| PlatformError::Unreachable(e.to_string()))?;
            let status = r.status();
            let to_login = r
                .headers()
                .get("location")
                .and_then(|l| l.to_str().ok())
                .is_some_and(|l| l.contains("/accounts/login/"));
            if to_login && attempt == 0 {
                self.session = None;
                continue;
            }
            let body = r
                .text()
                .await
                .map_err(|e| PlatformError::Unreachable(e.to_string()))?;
            return Ok((status.as_u16(), body));
        }
        Err(PlatformError::Unexpected(
            "the dashboard keeps sending to its login".into(),
        ))
    }

    /// Posts a dashboard form of an order, and reads the order's page
    /// back: an error Oscar shows there fails the call.
    async fn order_form(&mut self, page: &str, form: Vec<(String, String)>) -> Result<String> {
        let (status, body) = self.dashboard(page, Some(&form)).await?;
        if status != 302 {
            return Err(PlatformError::Refused {
                call: format!("POST {page}"),
                status,
                body,
            });
        }
        let (_, html) = self.dashboard(page, None).await?;
        if let Some(m) = ALERT_DANGER.captures(&html) {
            return Err(PlatformError::Refused {
                call: format!("POST {page}"),
                status,
                body: strip_tags(&m[1]),
            });
        }
        Ok(html)
    }
}

fn refused(method: &Method, path: &str, status: u16, body: &Value) -> PlatformError {
    PlatformError::Refused {
        call: format!("{method} {path}"),
        status,
        body: match body {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        },
    }
}

/// A cookie's value from a response's `Set-Cookie` headers.
fn cookie(headers: &reqwest::header::HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| k.trim() == name)
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

static ALERT_DANGER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?s)class="alert alert-danger[^"]*"[^>]*>(.*?)</div>"#).expect("regex")
});
static LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"name="selected_line_qty_(\d+)" value="(\d+)""#).expect("regex"));
static TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<[^>]*>").expect("regex"));

fn strip_tags(html: &str) -> String {
    TAG.replace_all(html, " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The order lines of a dashboard page: (line id, quantity).
fn page_lines(html: &str) -> Vec<(String, String)> {
    LINE.captures_iter(html)
        .map(|c| (c[1].to_owned(), c[2].to_owned()))
        .collect()
}

/// Whether the page's status form offers `Shipped` (an order already
/// shipped has no next status).
fn may_ship(html: &str) -> bool {
    html.contains(r#"id="id_new_status""#) && html.contains(r#"<option value="Shipped">"#)
}

/// The body of Depot's order create for an Oscar order and its lines.
fn order_body(o: &Value, lines: &[Value]) -> std::result::Result<Value, String> {
    let number = o["number"].as_str().ok_or("an order without a number")?;
    let a = &o["shipping_address"];
    let text = |v: &Value| {
        v.as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let name = [text(&a["first_name"]), text(&a["last_name"])]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    // The country is a link: `…/api/countries/GB/`.
    let country = a["country"].as_str().and_then(|u| {
        u.trim_end_matches('/')
            .rsplit('/')
            .next()
            .map(str::to_owned)
    });
    let lines: Vec<Value> = lines
        .iter()
        .map(|l| {
            let sku = text(&l["partner_sku"])
                .or_else(|| text(&l["upc"]))
                .ok_or_else(|| format!("order {number} has a line without a SKU"))?;
            Ok(json!({"sku": sku, "quantity": l["quantity"],
                      "unit_price": l["unit_price_incl_tax"]}))
        })
        .collect::<std::result::Result<_, String>>()?;
    Ok(json!({
        "external_ref": number,
        "ordered_at": o["date_placed"],
        "currency": o["currency"],
        "buyer": {"name": (!name.is_empty()).then_some(&name), "email": text(&o["email"]),
                  "phone": text(&a["phone_number"])},
        "shipping_address": {"name": (!name.is_empty()).then_some(&name), "line1": text(&a["line1"]),
                             "line2": text(&a["line2"]), "city": text(&a["line4"]),
                             "region": text(&a["state"]), "postal_code": text(&a["postcode"]),
                             "country": country},
        "lines": lines,
    }))
}

impl Platform for Oscar {
    async fn newest_order(&mut self) -> Result<String> {
        let v = self
            .api_ok(Method::GET, "/api/admin/orders/?ordering=-id&limit=1", None)
            .await?;
        Ok(v["results"][0]["id"].as_i64().unwrap_or(0).to_string())
    }

    async fn pull_orders(&mut self, cursor: &str, limit: usize) -> Result<Vec<Incoming>> {
        let after: i64 = cursor.parse().unwrap_or(0);
        // Newest first until the cursor: the API has no filter by id.
        let mut new = Vec::new();
        let mut next = Some("/api/admin/orders/?ordering=-id&limit=50".to_owned());
        'pages: while let Some(page) = next.take() {
            let v = self.api_ok(Method::GET, &page, None).await?;
            for o in v["results"].as_array().into_iter().flatten() {
                let id = o["id"].as_i64().ok_or_else(|| {
                    PlatformError::Unexpected(
                        "orders without their id: set OSCARAPI_ORDER_FIELDS to include `id`".into(),
                    )
                })?;
                if id <= after {
                    break 'pages;
                }
                new.push((id, o.clone()));
            }
            next = v["next"].as_str().map(str::to_owned);
        }
        new.reverse();
        new.truncate(limit);
        let mut out = Vec::with_capacity(new.len());
        for (id, o) in new {
            let lines_url = o["lines"].as_str().unwrap_or_default().to_owned();
            let lines = self.all(&lines_url).await?;
            let reference = o["number"].as_str().unwrap_or_default().to_owned();
            let body = order_body(&o, &lines).map_err(PlatformError::Unexpected)?;
            out.push(Incoming {
                position: id.to_string(),
                reference,
                body,
            });
        }
        Ok(out)
    }

    async fn push_figures(&mut self, figures: &[Figure]) -> Result<Vec<String>> {
        let partner = self.partner_url().await?;
        let mut unknown = Vec::new();
        for f in figures {
            let body = json!({"upc": f.sku, "stockrecords": [{"partner": partner,
                "partner_sku": f.sku, "num_in_stock": f.available.max(0), "num_allocated": 0}]});
            let (status, v) = self
                .api(Method::PATCH, "/api/admin/products/", Some(&body))
                .await?;
            match status {
                200..=299 => {}
                404 => unknown.push(f.sku.clone()),
                _ => return Err(refused(&Method::PATCH, "/api/admin/products/", status, &v)),
            }
        }
        Ok(unknown)
    }

    async fn push_dispatch(&mut self, d: &Dispatch) -> Result<()> {
        let page = format!("/dashboard/orders/{}/", urlencode(&d.reference));
        let (status, html) = self.dashboard(&page, None).await?;
        if status != 200 {
            return Err(PlatformError::Refused {
                call: format!("GET {page}"),
                status,
                body: strip_tags(&html).chars().take(200).collect(),
            });
        }
        // Told before (a retry after a part went through): not twice.
        let told =
            !d.tracking_number.is_empty() && html.contains(&format!(">{}<", d.tracking_number));
        let html = if told {
            html
        } else {
            let lines = page_lines(&html);
            if lines.is_empty() {
                return Err(PlatformError::Unexpected(format!(
                    "the dashboard shows no lines of order {}",
                    d.reference
                )));
            }
            let mut form = vec![
                ("line_action".to_owned(), "create_shipping_event".to_owned()),
                ("shipping_event_type".to_owned(), "shipped".to_owned()),
                ("reference".to_owned(), d.tracking_number.clone()),
            ];
            for (id, qty) in lines {
                form.push(("selected_line".into(), id.clone()));
                form.push((format!("selected_line_qty_{id}"), qty));
            }
            self.order_form(&page, form).await?
        };
        if may_ship(&html) {
            let form = vec![
                ("order_action".to_owned(), "change_order_status".to_owned()),
                ("new_status".to_owned(), "Shipped".to_owned()),
            ];
            self.order_form(&page, form).await?;
        }
        Ok(())
    }
}

/// A path segment, percent-encoded.
fn urlencode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oscar_order_becomes_a_depot_order_body() {
        let o = json!({"id": 7, "number": "100007", "currency": "GBP",
            "date_placed": "2026-11-28T02:40:00.123456Z", "email": "ελένη@example.gr",
            "shipping_address": {"first_name": "Ελένη", "last_name": "Παππά", "line1": "Ερμού 12",
                "line2": "", "line4": "Αθήνα", "state": "", "postcode": "105 63",
                "country": "http://shop/api/countries/GR/", "phone_number": "+302101234567"},
            "lines": "http://shop/api/admin/orders/7/lines/"});
        let lines = [json!({"partner_sku": "ΜΕΛΙ-1", "upc": "x", "quantity": 2,
                            "unit_price_incl_tax": "12.50"})];
        let b = order_body(&o, &lines).expect("body");
        assert_eq!(b["external_ref"], "100007");
        assert_eq!(b["shipping_address"]["country"], "GR");
        assert_eq!(b["shipping_address"]["city"], "Αθήνα");
        assert_eq!(b["shipping_address"]["line2"], Value::Null);
        assert_eq!(b["shipping_address"]["name"], "Ελένη Παππά");
        assert_eq!(
            b["lines"][0],
            json!({"sku": "ΜΕΛΙ-1", "quantity": 2, "unit_price": "12.50"})
        );
        assert!(order_body(&o, &[json!({"quantity": 1})]).is_err());
    }

    #[test]
    fn the_dashboard_page_gives_its_lines_and_whether_it_may_ship() {
        let html = r#"<input type="checkbox" name="selected_line" value="3" />
            <input type="text" name="selected_line_qty_3" value="2" size="2" />
            <input type="text" name="selected_line_qty_14" value="1" size="2" />
            <select name="new_status" class="form-control" id="id_new_status">
            <option value="Being processed">Being processed</option>
            <option value="Shipped">Shipped</option></select>"#;
        assert_eq!(
            page_lines(html),
            [("3".into(), "2".into()), ("14".into(), "1".into())]
        );
        assert!(may_ship(html));
        assert!(!may_ship("<select><option>Shipped</option></select>"));
        let alert = r#"<div class="alert alert-danger" role="alert"><a>x</a> Invalid   form</div>"#;
        let m = ALERT_DANGER.captures(alert).expect("an alert");
        assert_eq!(strip_tags(&m[1]), "x Invalid form");
    }

    #[test]
    fn cookies_are_read_from_set_cookie() {
        let mut h = reqwest::header::HeaderMap::new();
        h.append(
            "set-cookie",
            "csrftoken=abc; expires=x; Path=/".parse().expect("h"),
        );
        h.append("set-cookie", "sessionid=s1; HttpOnly".parse().expect("h"));
        assert_eq!(cookie(&h, "csrftoken").as_deref(), Some("abc"));
        assert_eq!(cookie(&h, "sessionid").as_deref(), Some("s1"));
        assert_eq!(cookie(&h, "other"), None);
    }
}
