//! Buyers, contact forms and CRM threads over HTTP: shapes and types,
//! searches that stay literal and bounded, forms that open threads, limits
//! and the honeypot, other tenants' records, and bad input that writes
//! nothing.
//!
//! `buyers.rs`: who buyers are and the searches over them; `threads.rs`:
//! contact forms, the threads they open and agents' answers.

mod buyers;
mod threads;

use depot_testkit::cloud::{Res, TestCloud};
use serde_json::{Value, json};

fn is_ts(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T')
}

fn error_names(r: &Res) -> Vec<String> {
    depot_testkit::cloud::field_names(&r.body)
}

fn names(r: &Res) -> Vec<String> {
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["name"].as_str().map(str::to_owned))
        .collect()
}

async fn find(app: &TestCloud, query: &str) -> Res {
    app.get(&format!("/v1/buyers/{}/find/{query}", app.a.business))
        .await
}
