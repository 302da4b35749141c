//! The store's two schemas, SQLite's migrations and PostgreSQL's baseline
//! with what follows it, hold the same tables, columns, keys, indexes and
//! triggers (DEPOT_TEST_PG_URL; skipped without it). A migration written
//! for one database and not the other fails here.

use depot_sql::schema::{describe, differences};
use depot_sql::{Db, params};
use depot_testkit::pg;
use depot_wms::database::{POSTGRES_MIGRATIONS, check_opens};

#[test]
fn sqlite_and_postgres_schemas_agree() -> Result<(), Box<dyn std::error::Error>> {
    let Some(database) = pg::migrated(POSTGRES_MIGRATIONS) else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("store.db");
    check_opens(&path, 1, "schema-test")?;
    let sqlite = Db::sqlite(rusqlite::Connection::open(&path)?);
    let postgres = database.connect();

    // The same version: a SQLite migration without its PostgreSQL twin
    // (or the other way round) is caught before the schemas are compared.
    let sqlite_version: i64 = sqlite.query_value("PRAGMA user_version", params![])?;
    let postgres_version = depot_sql::migrate::version(&postgres)?;
    assert_eq!(
        i64::from(postgres_version),
        sqlite_version,
        "PostgreSQL's migrations end at {postgres_version}, SQLite's at {sqlite_version}"
    );

    let (left, right) = (describe(&sqlite)?, describe(&postgres)?);
    assert!(left.tables.len() > 50, "{} tables", left.tables.len());
    let diff = differences(&left, &right);
    assert!(
        diff.is_empty(),
        "SQLite (left) and PostgreSQL (right) differ:\n{}",
        diff.join("\n")
    );

    // And the same rows seeded (a singleton, a cursor): code that reads
    // one of them finds it on either database. `node` is claimed by
    // whoever opens the database, so it is left out.
    for table in left.tables.keys().filter(|t| *t != "node") {
        let count = format!("SELECT COUNT(*) FROM {table}");
        let (l, r): (i64, i64) = (
            sqlite.query_value(&count, params![])?,
            postgres.query_value(&count, params![])?,
        );
        assert_eq!(l, r, "rows of {table}: {l} on SQLite, {r} on PostgreSQL");
    }
    Ok(())
}
