//! The seam under Depot's store. The store writes each statement once, in
//! SQL both databases read, with parameters numbered as SQLite numbers
//! them (`?1`); a [`Db`] runs it on SQLite (rusqlite, the edge and the
//! default cloud) or on PostgreSQL (the `postgres` feature, a cloud past
//! one machine). Values cross as SQLite's five storage classes
//! ([`ValueRef`]), converted leniently on PostgreSQL as SQLite would take
//! them; where the dialects truly differ, the store asks [`Db::dialect`]
//! and writes both.
//!
//! - `db.rs`: [`Db`], [`Row`] and the statement calls;
//! - `value.rs`: [`ToSql`], [`FromSql`], [`params!`];
//! - `placeholders.rs`: `?N` as `$N`;
//! - `postgres/`, `numeric.rs`: PostgreSQL's client (pipelined: writes and
//!   reads sent later) and its binary values;
//! - `memo.rs`: [`CountMemo`], list counts reused for a bounded time;
//! - `migrate.rs`: PostgreSQL's migrations, under an advisory lock;
//! - `portability.rs`: the statements a store's source holds, for a test
//!   that prepares each on PostgreSQL;
//! - `schema.rs`: the tables, columns and indexes either database holds,
//!   so a test can tell that two schemas agree.

mod db;
mod error;
mod memo;
pub mod migrate;
#[cfg(feature = "postgres")]
mod numeric;
pub mod placeholders;
pub mod portability;
#[cfg(feature = "postgres")]
mod postgres;
pub mod schema;
mod value;
#[cfg(feature = "postgres")]
mod written;

pub use db::{Db, Dialect, Later, Row};
pub use error::{Constraint, Error, Result};
pub use memo::CountMemo;
#[cfg(feature = "postgres")]
pub use postgres::SharedReads;
pub use value::{FromSql, FromSqlError, ToSql, Value, ValueRef, params_from_iter};

/// Whether `url` is a PostgreSQL URL the client can connect with, and if
/// not, why (a setting is checked when it is read, not at first use).
#[cfg(feature = "postgres")]
pub fn check_postgres_url(url: &str) -> std::result::Result<(), String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err("must start with postgres:// or postgresql://".into());
    }
    url.parse::<::tokio_postgres::Config>()
        .map(|_| ())
        .map_err(|e| format!("not a PostgreSQL URL: {e}"))
}

/// A PostgreSQL URL with its database name replaced by `name` (a test's
/// own database, a migration's target), its options kept.
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

#[cfg(test)]
mod tests {
    use super::with_database;

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
