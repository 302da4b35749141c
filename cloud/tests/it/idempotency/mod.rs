//! `Idempotency-Key` on every write: a retry with the key gets exactly the
//! first answer and applies nothing, the key with another request is a
//! 422, keys are per credential and expire, duplicates sent at once apply
//! once; every write of the API takes the header and is described with it;
//! and the key survives SIGKILL: requests whose answer was lost with the
//! process are applied once when sent again after a restart.
//!
//! `replay.rs`: the guarantees, in one process; `routes.rs`: every write
//! route, from the served OpenAPI descriptions; `killed.rs`: the real
//! `depot-cloud` binary, killed under load and made to exit right after a
//! commit.

use crate::common;
mod killed;
use crate::process;
mod replay;
mod routes;

use reqwest::header::HeaderMap;
use serde_json::Value;

/// An answer as it came: status, headers and the exact bytes.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub headers: HeaderMap,
    pub bytes: Vec<u8>,
}

impl Raw {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn replayed(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }

    /// `errors[0].status` of an error body.
    pub fn error_word(&self) -> String {
        self.json()["errors"][0]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

pub async fn raw(req: reqwest::RequestBuilder) -> Raw {
    let r = req.send().await.expect("request");
    Raw {
        status: r.status().as_u16(),
        headers: r.headers().clone(),
        bytes: r.bytes().await.expect("body").to_vec(),
    }
}

/// `method base+path` with `X-API-KEY: api_key`, `Idempotency-Key: key`
/// when given, and a JSON body when given.
pub async fn send(
    client: &reqwest::Client,
    method: &str,
    url: &str,
    api_key: Option<&str>,
    key: Option<&str>,
    body: Option<&Value>,
) -> Raw {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = client.request(method, url);
    if let Some(k) = api_key {
        req = req.header("X-API-KEY", k);
    }
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    raw(req).await
}
