//! The one HTTP client of the tests: a server's base URL and, perhaps, an
//! API key; every answer reduced to what tests look at ([`Res`]). One
//! helper, so that every test reads a response the same way and a change
//! to how requests are made is made once.
//!
//! Tests that send malformed or half-sent requests on purpose speak raw
//! TCP instead: no client would send those.

use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::Duration;

/// A server's base URL (`http://127.0.0.1:port`), and the API key sent as
/// `X-API-KEY` with every request, if any. Cloning is cheap: clones share
/// their connections.
#[derive(Clone, Debug)]
pub struct Client {
    inner: reqwest::Client,
    base: String,
    key: Option<String>,
}

impl Client {
    /// A client of the server at `base`, with no key.
    pub fn new(base: impl Into<String>) -> Self {
        Self::built(base, reqwest::Client::builder())
    }

    /// A client made by `builder`: for the few tests that need another
    /// kind (redirects shown rather than followed, another source address,
    /// a bound on each request).
    pub fn built(base: impl Into<String>, builder: reqwest::ClientBuilder) -> Self {
        Self {
            inner: builder.build().expect("an HTTP client"),
            base: base.into(),
            key: None,
        }
    }

    /// The same client, sending `key` (or none).
    pub fn with_key<'k>(&self, key: impl Into<Option<&'k str>>) -> Self {
        Self {
            key: key.into().map(str::to_owned),
            ..self.clone()
        }
    }

    /// The same client, for a server at another address (one restarted on
    /// a fresh port).
    pub fn with_base(&self, base: impl Into<String>) -> Self {
        Self {
            base: base.into(),
            ..self.clone()
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `method path`, with a JSON body when given.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Res {
        let req = self.raw(method, path);
        match body {
            Some(b) => req.json(&b).send().await,
            None => req.send().await,
        }
    }

    pub async fn get(&self, path: &str) -> Res {
        self.call("GET", path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Res {
        self.call("POST", path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Res {
        self.call("PUT", path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Res {
        self.call("DELETE", path, None).await
    }

    /// A request to finish by hand: other headers, a body that is not JSON
    /// (or not valid), a form, a bound on how long it may take.
    pub fn raw(&self, method: &str, path: &str) -> Request {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("an HTTP method");
        let mut inner = self.inner.request(method, self.url(path));
        if let Some(k) = &self.key {
            inner = inner.header("X-API-KEY", k);
        }
        Request { inner }
    }
}

/// A request under way: see [`Client::raw`].
pub struct Request {
    inner: reqwest::RequestBuilder,
}

impl Request {
    /// Adds a header; the value as bytes, so that tests may send ones that
    /// are not text.
    pub fn header(self, name: &str, value: impl AsRef<[u8]>) -> Self {
        let value =
            reqwest::header::HeaderValue::from_bytes(value.as_ref()).expect("a header value");
        Self {
            inner: self.inner.header(name, value),
        }
    }

    pub fn json(self, body: &Value) -> Self {
        Self {
            inner: self.inner.json(body),
        }
    }

    /// A body as it is, with no content type unless one is set.
    pub fn body(self, body: impl Into<reqwest::Body>) -> Self {
        Self {
            inner: self.inner.body(body),
        }
    }

    pub fn form(self, fields: &[(&str, &str)]) -> Self {
        Self {
            inner: self.inner.form(fields),
        }
    }

    pub fn basic_auth(self, user: &str, password: Option<&str>) -> Self {
        Self {
            inner: self.inner.basic_auth(user, password),
        }
    }

    pub fn timeout(self, limit: Duration) -> Self {
        Self {
            inner: self.inner.timeout(limit),
        }
    }

    /// Sends it; fails the test if no answer comes.
    pub async fn send(self) -> Res {
        self.try_send().await.expect("an answer")
    }

    /// Sends it, for tests in which the server may be gone (killed, cut
    /// off, out of time) and no answer is one of the outcomes.
    pub async fn try_send(self) -> reqwest::Result<Res> {
        let resp = self.inner.send().await?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await?.to_vec();
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        Ok(Res {
            status,
            body,
            headers,
            bytes,
        })
    }
}

/// An answer reduced to what tests look at.
#[derive(Debug, Clone)]
pub struct Res {
    pub status: u16,
    /// The body as JSON when it is JSON, else as a string.
    pub body: Value,
    pub headers: HeaderMap,
    /// The body exactly as it came (a replayed answer is compared byte for
    /// byte).
    pub bytes: Vec<u8>,
}

impl Res {
    /// A header's value, when it is text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON, or null when it is not JSON (for tests that look
    /// only at JSON answers).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// The names of the fields an error body names, in order: its `errors`,
/// or the `fieldErrors` of the pricing routes' answers.
pub fn field_names(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .or_else(|| body["fieldErrors"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str().map(str::to_owned))
        .collect()
}

/// Asserts the API's error body (`{"error": 1, "code", "message"}`) with
/// the given status.
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
