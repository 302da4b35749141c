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
//! - `postgres.rs`, `numeric.rs`: PostgreSQL's client and its binary values;
//! - `migrate.rs`: PostgreSQL's migrations, under an advisory lock;
//! - `portability.rs`: the statements a store's source holds, for a test
//!   that prepares each on PostgreSQL;
//! - `schema.rs`: the tables, columns and indexes either database holds,
//!   so a test can tell that two schemas agree.

mod db;
mod error;
pub mod migrate;
#[cfg(feature = "postgres")]
mod numeric;
pub mod placeholders;
pub mod portability;
#[cfg(feature = "postgres")]
mod postgres;
pub mod schema;
mod value;

pub use db::{Db, Dialect, Row};
pub use error::{Constraint, Error, Result};
pub use value::{FromSql, FromSqlError, ToSql, Value, ValueRef};
