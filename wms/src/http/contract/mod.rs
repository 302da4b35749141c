//! The OpenAPI description as a client generator needs it: every answer
//! the shared layers give documented on every route they guard, and the
//! same description in OpenAPI 3.0.3 for the generators that do not read
//! 3.1 yet.
//!
//! The answers come from the same code that gives them: the extractors
//! (400 for a path or query that is not what it must be; for a JSON body
//! 413, 415 and 422), the key check (401), the rate limiter (429), the
//! router (405). What a route itself answers stays in its own annotation.
//!
//! - `mod.rs`: the shared answers and operation ids, and the two served
//!   documents;
//! - `rules.rs`: the rules the extractors enforce on every route, written
//!   into the schemas (path ids' ranges, bodies closed to unknown fields);
//! - `three_oh.rs`: the 3.0.3 rewrite.

mod fields;
mod rules;
mod three_oh;

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::Value;
pub use three_oh::openapi_3_0;
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, ResponseBuilder};

/// The served description of a daemon's API, in OpenAPI 3.1 and in 3.0.3,
/// made once at start: it never changes while the daemon runs.
#[derive(Clone)]
pub struct Documents {
    pub v3_1: Value,
    pub v3_0: Value,
}

impl Documents {
    /// Completes `openapi` (the shared layers' answers, operation ids, the
    /// extractors' rules) and writes it in both versions. `rate_limited`:
    /// the server limits requests per key (the cloud).
    pub fn new(mut openapi: OpenApi, rate_limited: bool) -> Self {
        super::idempotency::describe(&mut openapi);
        describe(&mut openapi, rate_limited);
        let mut v3_1 = serde_json::to_value(&openapi).unwrap_or_default();
        rules::apply(&mut v3_1);
        let v3_0 = openapi_3_0(v3_1.clone());
        Self { v3_1, v3_0 }
    }

    /// `GET {prefix}/openapi.json` (3.1) and `{prefix}/openapi-3.0.json`,
    /// serialised once.
    pub fn routes<S: Clone + Send + Sync + 'static>(&self, prefix: &str) -> Router<S> {
        let body = |doc: &Value| Bytes::from(serde_json::to_vec(doc).unwrap_or_default());
        let serve = |b: Bytes| {
            get(move || {
                let b = b.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], b).into_response() }
            })
        };
        Router::new()
            .route(&format!("{prefix}/openapi.json"), serve(body(&self.v3_1)))
            .route(
                &format!("{prefix}/openapi-3.0.json"),
                serve(body(&self.v3_0)),
            )
    }
}

/// An answer with the spec's error body.
pub(crate) fn error(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build(),
        )
        .build()
}

/// Adds the shared layers' answers to every operation of `openapi` that
/// does not document them itself. `rate_limited`: the server limits
/// requests per key (the cloud).
fn describe(openapi: &mut OpenApi, rate_limited: bool) {
    operation_ids(openapi);
    for (path, item) in openapi.paths.paths.iter_mut() {
        // The keyless tracking route is limited per client address.
        let public_limit = rate_limited && path.starts_with("/v1/tracking/");
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.patch,
            &mut item.delete,
        ]
        .into_iter()
        .flatten()
        {
            let keyed = op.security.as_ref().is_some_and(|s| !s.is_empty());
            let json_body = op
                .request_body
                .as_ref()
                .is_some_and(|b| b.content.contains_key("application/json"));
            let mut add = |status: &str, description: &str| {
                op.responses
                    .responses
                    .entry(status.to_owned())
                    .or_insert_with(|| error(description).into());
            };
            add(
                "400",
                "A path or query parameter is not what it must be (the message says the rule), \
                 or the body is not well-formed JSON",
            );
            add("405", "The path does not take this method");
            add(
                "503",
                "Every connection place is taken by a request in progress, or the server is \
                 starting or stopping: try again after Retry-After",
            );
            if keyed {
                add(
                    "401",
                    "No credentials (X-API-KEY, or a bearer token where the route says so), \
                     or unknown, expired or revoked ones, or a key of another business",
                );
            }
            if json_body {
                add(
                    "408",
                    "The body did not arrive within the server's body read timeout",
                );
                add("413", "The body is larger than the limit (1 MiB)");
                add(
                    "415",
                    "The body is not uncompressed application/json (UTF-8, or no charset)",
                );
                add(
                    "422",
                    "A field is missing, of the wrong kind, out of its range, or not a field of \
                     this request: errors[] names each",
                );
            }
            if rate_limited && keyed {
                add(
                    "429",
                    "Too many requests with this key: wait the seconds Retry-After says",
                );
            }
            if public_limit {
                add(
                    "429",
                    "Too many lookups from this address: wait the seconds Retry-After says",
                );
            }
        }
    }
}

/// Operation ids a generator can name functions by: unique, as OpenAPI
/// requires. Handlers are named for what they do within their module
/// (`list`, `create`), so the id is the route's tag and that name
/// (`orders_list`), and the method besides where two still meet.
fn operation_ids(openapi: &mut OpenApi) {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let mut ops = Vec::new();
    for item in openapi.paths.paths.values_mut() {
        for (method, op) in [
            ("get", &mut item.get),
            ("post", &mut item.post),
            ("put", &mut item.put),
            ("patch", &mut item.patch),
            ("delete", &mut item.delete),
        ] {
            if let Some(op) = op {
                let tag = op.tags.as_ref().and_then(|t| t.first()).cloned();
                let name = op.operation_id.clone().unwrap_or_else(|| method.to_owned());
                let id = match tag {
                    Some(tag) if !name.starts_with(&tag) => format!("{tag}_{name}"),
                    _ => name,
                };
                *seen.entry(id.clone()).or_default() += 1;
                ops.push((id, method, op));
            }
        }
    }
    for (id, method, op) in ops {
        let id = if seen.get(&id).copied().unwrap_or(0) > 1 {
            format!("{id}_{method}")
        } else {
            id
        };
        op.operation_id = Some(id.replace(['-', ' '], "_"));
    }
}
