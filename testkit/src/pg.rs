//! A PostgreSQL database of its own for each test, on the server
//! `DEPOT_TEST_PG_URL` names (CI starts a throwaway cluster: `.ci/postgres`).
//! Without the variable every helper answers `None` and the test skips, so
//! a machine with only the Rust toolchain still passes.
//!
//! A migrated database is cloned from a template migrated once per schema
//! (`CREATE DATABASE … TEMPLATE`: a file copy, not a migration per test).
//! Each database is dropped when its [`PgDatabase`] is.

use depot_sql::migrate::{self, Migration};
use depot_sql::{Db, params, with_database};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};

/// The server tests may use, when one is configured.
pub fn server() -> Option<String> {
    std::env::var("DEPOT_TEST_PG_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// The advisory lock a test process holds while it makes the template
/// (beside the one migrations hold).
const TEMPLATE_LOCK: i64 = migrate::LOCK + 1;

/// A database made for one test; dropped with it.
pub struct PgDatabase {
    pub url: String,
    name: String,
    server: String,
}

impl PgDatabase {
    pub fn connect(&self) -> Db {
        #[allow(clippy::expect_used)]
        Db::connect_postgres(&self.url).expect("the test's database accepts a connection")
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        off_runtime(|| {
            if let Ok(admin) = Db::connect_postgres(&self.server) {
                let _ = admin.execute_batch(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ));
            }
        });
    }
}

/// Runs `f` on a thread of its own: a `Db` on PostgreSQL drives a runtime
/// of its own in each call, which cannot run on a thread that drives an
/// async runtime (an async test's).
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(t) => t,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

fn unique_name(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

#[allow(clippy::expect_used)]
fn admin(server: &str) -> Db {
    Db::connect_postgres(server).expect("DEPOT_TEST_PG_URL reaches a PostgreSQL server")
}

/// A database at the last of `migrations`, cloned from a template made
/// once for them (by whichever test process gets there first).
#[allow(clippy::expect_used)]
pub fn migrated(migrations: &[Migration]) -> Option<PgDatabase> {
    let server = server()?;
    Some(off_runtime(|| migrated_on(&server, migrations)))
}

#[allow(clippy::expect_used)]
fn migrated_on(server: &str, migrations: &[Migration]) -> PgDatabase {
    let server = server.to_owned();
    let mut hash = DefaultHasher::new();
    for m in migrations {
        (m.version, m.sql).hash(&mut hash);
    }
    let template = format!("depot_template_{:016x}", hash.finish());
    let admin = admin(&server);
    // Test processes run at once: one makes the template, the others wait
    // on the lock and find it made.
    admin
        .execute("SELECT pg_advisory_lock(?1)", params![TEMPLATE_LOCK])
        .expect("the template lock");
    let exists: bool = admin
        .query_value(
            "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = ?1)",
            params![template],
        )
        .expect("pg_database");
    if !exists {
        let building = format!("{template}_building");
        admin
            .execute_batch(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"))
            .and_then(|()| admin.execute_batch(&format!("CREATE DATABASE {building}")))
            .expect("a template database");
        {
            let db = Db::connect_postgres(&with_database(&server, &building))
                .expect("the template accepts a connection");
            migrate::run(&db, migrations).expect("the migrations run on PostgreSQL");
        }
        admin
            .execute_batch(&format!("ALTER DATABASE {building} RENAME TO {template}"))
            .expect("the template renamed");
    }
    admin
        .execute("SELECT pg_advisory_unlock(?1)", params![TEMPLATE_LOCK])
        .expect("the template lock let go");
    let name = unique_name("depot_t");
    admin
        .execute_batch(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
        .expect("a database cloned from the template");
    PgDatabase {
        url: with_database(&server, &name),
        name,
        server,
    }
}

/// Whether the cloud's engine in tests runs on PostgreSQL: when
/// `DEPOT_TEST_DATABASE=postgres` and a server is configured (CI runs the
/// cloud's and the engine's suites once on each database).
pub fn engine_on_postgres() -> bool {
    std::env::var("DEPOT_TEST_DATABASE").is_ok_and(|d| d.trim() == "postgres") && server().is_some()
}

/// A cloud's engine for a test, its files in `dir`: on SQLite
/// (`dir/cloud.db`), or on a PostgreSQL database of its own when
/// [`engine_on_postgres`]; that database lives as long as the guard.
#[allow(clippy::expect_used)]
pub fn cloud_engine(dir: &std::path::Path) -> (depot_wms::Wms, Option<PgDatabase>) {
    if engine_on_postgres() {
        let database = migrated(depot_wms::database::POSTGRES_MIGRATIONS)
            .expect("a PostgreSQL database for the test");
        let wms = depot_wms::Wms::open_postgres(&database.url, dir, "cloud")
            .expect("the engine opens on PostgreSQL");
        (wms, Some(database))
    } else {
        let wms = depot_wms::Wms::open(&dir.join("cloud.db"), "cloud").expect("open");
        (wms, None)
    }
}
