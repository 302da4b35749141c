//! Every statement in the stores' source (the engine's, wms/src/store, and
//! the office's, office/src/store) prepares on PostgreSQL, the cloud's
//! second database (DEPOT_TEST_PG_URL; skipped without it), but those the
//! `unportable.txt` beside each lists, each with why: the dialect variants
//! still to write. A new
//! statement that PostgreSQL refuses fails here with its error; a listed
//! one that has become portable fails too, until it leaves the list.

use depot_sql::portability::{self, key};
use depot_testkit::pg;
use depot_wms::database::POSTGRES_MIGRATIONS;
use std::collections::BTreeMap;
use std::path::Path;

/// The statements of `dir` PostgreSQL refuses, by key, against those
/// `list` names; what disagrees, one line each.
fn check(dir: &Path, list: &str) -> Vec<String> {
    let Some(database) = pg::migrated(POSTGRES_MIGRATIONS) else {
        return Vec::new();
    };
    let db = database.connect();
    let statements = portability::statements(dir).expect("the store's source reads");
    assert!(
        statements.found.len() > 10,
        "only {} statements found under {}",
        statements.found.len(),
        dir.display()
    );
    let known: BTreeMap<&str, &str> = list
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(char::is_whitespace))
        .map(|(k, why)| (k, why.trim()))
        .collect();
    let mut refused = BTreeMap::new();
    for found in &statements.found {
        if let Err(e) = db.prepare(&found.sql) {
            let file = found.file.strip_prefix(dir).unwrap_or(&found.file);
            refused.insert(
                key(&found.sql),
                format!("{}:{}: {e}", file.display(), found.line),
            );
        }
    }
    let mut out = Vec::new();
    for (k, where_why) in &refused {
        if !known.contains_key(k.as_str()) {
            out.push(format!("{k}  refused, not listed: {where_why}"));
        }
    }
    for (k, why) in &known {
        if !refused.contains_key(*k) {
            out.push(format!(
                "{k}  listed ({why}) but now prepares, or is gone: take it off the list"
            ));
        }
    }
    eprintln!(
        "{}: {} statements found, {} of them refused by PostgreSQL (listed), {} built at run time (not checked)",
        dir.display(),
        statements.found.len(),
        refused.len(),
        statements.built_at_run_time.len()
    );
    out
}

#[test]
fn the_engines_statements_prepare_on_postgres() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wms/src/store");
    let wrong = check(&dir, include_str!("../../../wms/src/store/unportable.txt"));
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn the_offices_statements_prepare_on_postgres() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../office/src/store");
    let wrong = check(
        &dir,
        include_str!("../../../office/src/store/unportable.txt"),
    );
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}
