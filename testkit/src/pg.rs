//! A PostgreSQL database of its own for each test, on the server
//! `DEPOT_TEST_PG_URL` names (CI starts a throwaway cluster: `.ci/postgres`).
//! Without the variable every helper answers `None` and the test skips, so
//! a machine with only the Rust toolchain still passes.
//!
//! A migrated database is cloned from a template migrated once per schema
//! (`CREATE DATABASE … TEMPLATE`: a file copy, not a migration per test).
//! Each database is dropped when its [`PgDatabase`] is.

use depot_sql::migrate::{self, Migration};
use depot_sql::{Db, params};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};

/// The server tests may use, when one is configured.
pub fn server() -> Option<String> {
    std::env::var("DEPOT_TEST_PG_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
}

/// A database made for one test; dropped with it.
pub struct PgDatabase {
    pub url: String,
    name: String,
    server: String,
}

impl PgDatabase {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn connect(&self) -> Db {
        #[allow(clippy::expect_used)]
        Db::connect_postgres(&self.url).expect("the test's database accepts a connection")
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Ok(admin) = Db::connect_postgres(&self.server) {
            let _ = admin.execute_batch(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// `url` with its database name replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (head, query) = url
        .split_once('?')
        .map_or((url, None), |(h, q)| (h, Some(q)));
    let base = match head.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('/') {
            Some((authority, _)) => format!("{scheme}://{authority}"),
            None => head.to_owned(),
        },
        None => head.to_owned(),
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
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

/// An empty database.
#[allow(clippy::expect_used)]
pub fn empty() -> Option<PgDatabase> {
    let server = server()?;
    let name = unique_name("depot_t");
    // One statement per call: a batch is one transaction, which CREATE
    // DATABASE refuses.
    admin(&server)
        .execute_batch(&format!("CREATE DATABASE {name}"))
        .expect("a database for the test");
    Some(PgDatabase {
        url: with_database(&server, &name),
        name,
        server,
    })
}

/// A database at the last of `migrations`, cloned from a template made
/// once for them (by whichever test process gets there first).
#[allow(clippy::expect_used)]
pub fn migrated(migrations: &[Migration]) -> Option<PgDatabase> {
    let server = server()?;
    let mut hash = DefaultHasher::new();
    for m in migrations {
        (m.version, m.sql).hash(&mut hash);
    }
    let template = format!("depot_template_{:016x}", hash.finish());
    let admin = admin(&server);
    // Test processes run at once: one makes the template, the others wait
    // on the lock and find it made.
    admin
        .execute("SELECT pg_advisory_lock(?1)", params![migrate::LOCK + 1])
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
        .execute("SELECT pg_advisory_unlock(?1)", params![migrate::LOCK + 1])
        .expect("the template lock let go");
    let name = unique_name("depot_t");
    admin
        .execute_batch(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
        .expect("a database cloned from the template");
    Some(PgDatabase {
        url: with_database(&server, &name),
        name,
        server,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_replaced_and_the_options_kept() {
        assert_eq!(
            with_database("postgres://u:p@h:5432/postgres?sslmode=disable", "t1"),
            "postgres://u:p@h:5432/t1?sslmode=disable"
        );
        assert_eq!(with_database("postgres://h", "t1"), "postgres://h/t1");
        assert_eq!(
            with_database("postgresql://h:1/db", "t2"),
            "postgresql://h:1/t2"
        );
    }
}
