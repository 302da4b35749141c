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

/// On PostgreSQL a stock movement's item and warehouse are not checked row
/// by row (migration 047: a locking read each); what keeps the ledger
/// whole is that every movement is booked with its level, whose keys are.
/// Those keys must stay, and a level of an item or a warehouse that does
/// not exist must not commit.
#[test]
fn a_movements_item_and_warehouse_stay_checked_through_its_level()
-> Result<(), Box<dyn std::error::Error>> {
    let Some(database) = pg::migrated(POSTGRES_MIGRATIONS) else {
        return Ok(());
    };
    let postgres = database.connect();
    let keys = |table: &str| -> Result<Vec<String>, depot_sql::Error> {
        postgres.query_map(
            "SELECT confrelid::regclass::text FROM pg_constraint
             WHERE contype = 'f' AND conrelid::regclass::text = ?1 ORDER BY 1",
            params![table],
            |r| r.get(0),
        )
    };
    assert_eq!(keys("stock_levels")?, ["items", "warehouses"]);
    assert_eq!(keys("stock_movements")?, Vec::<String>::new());

    postgres.execute_batch(
        "INSERT INTO businesses (id, name, currency, timezone, created_at)
             VALUES (1, 'Βήτα', 'EUR', 'UTC', 'x');
         INSERT INTO warehouses (id, business_id, code, name, address, is_visible_sales, created_at)
             VALUES (1, 1, 'Б', 'Б', '{}', 0, 'x');
         INSERT INTO items (id, business_id, sku, name, created_at, updated_at)
             VALUES (1, 1, 'Ψ-1', 'Ψ', 'x', 'x');",
    )?;
    let level = "INSERT INTO stock_levels (item_id, warehouse_id, business_id, on_hand)
                 VALUES (?1, ?2, 1, 5)";
    for (item, warehouse) in [(999_i64, 1_i64), (1, 999)] {
        let refused = postgres.execute(level, params![item, warehouse]);
        assert_eq!(
            refused
                .as_ref()
                .err()
                .and_then(depot_sql::Error::constraint),
            Some(depot_sql::Constraint::ForeignKey),
            "a level of item {item} in warehouse {warehouse}: {refused:?}"
        );
    }
    postgres.execute(level, params![1_i64, 1_i64])?;
    Ok(())
}
