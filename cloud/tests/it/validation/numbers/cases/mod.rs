//! The table the field test walks: one numeric field of one write route
//! each, in a body that is otherwise right.

mod floor;
mod office;
mod records;

use super::{Fixture, Takes};
use depot_testkit::cloud::TestCloud;
use serde_json::Value;

/// One numeric field of one write route.
pub(super) struct Case {
    pub method: &'static str,
    pub path: String,
    pub body: Value,
    pub field: &'static str,
    pub takes: Takes,
    /// What a refusal may name instead of `field`: the field a value is
    /// checked against (a quantity that must add up, an item packed).
    pub or_names: &'static str,
}

fn case(
    method: &'static str,
    path: String,
    body: Value,
    field: &'static str,
    takes: Takes,
) -> Case {
    Case {
        method,
        path,
        body,
        field,
        takes,
        or_names: field,
    }
}

pub(super) fn cases(app: &TestCloud, f: &Fixture) -> Vec<Case> {
    let mut all = records::cases(app, f);
    all.extend(floor::cases(app, f));
    all.extend(office::cases(app, f));
    all
}
