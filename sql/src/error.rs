//! One error for both databases, with the few questions the engine asks of
//! one (was it a constraint, a full disk, a missing row) answered the same
//! way whichever database raised it.

use crate::placeholders::Unportable;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which rule a write broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Constraint {
    Unique,
    ForeignKey,
    Check,
    NotNull,
    /// A trigger's refusal (SQLite's `RAISE(ABORT)`, plpgsql's `RAISE`).
    Refused,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A statement expected a row and found none.
    #[error("query returned no rows")]
    NoRows,
    /// A column could not be read as the type asked for.
    #[error("column {column}: {message}")]
    Conversion { column: usize, message: String },
    /// A statement PostgreSQL cannot run as written.
    #[error("not portable: {0}")]
    Unportable(String),
    /// The database's schema is not one this release can work on.
    #[error("{0}")]
    Schema(String),
    /// The database could not be reached as configured.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// `COMMIT` found the transaction aborted by a statement that failed
    /// earlier (an error a caller did not pass on): it was rolled back.
    #[error("the transaction was rolled back, not committed: {0}")]
    RolledBack(String),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[cfg(feature = "postgres")]
    #[error("{}", pg_message(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// A write sent without waiting for its answer ([`crate::Db::execute_later`])
    /// failed; the call that read its answer did not run (its transaction
    /// was aborted). It reads as the write's own error, but names no
    /// constraint: the caller of that call, who may ask, did not make the
    /// write.
    #[error("{0}")]
    Earlier(Box<Error>),
}

impl From<Unportable> for Error {
    fn from(e: Unportable) -> Self {
        Error::Unportable(e.0)
    }
}

impl Error {
    /// A row's column could not be read: for a mapping closure that finds
    /// a stored value it does not know (an unknown status, say).
    pub fn conversion(column: usize, message: impl Into<String>) -> Self {
        Error::Conversion {
            column,
            message: message.into(),
        }
    }

    /// The constraint a write broke, if that is why it failed.
    pub fn constraint(&self) -> Option<Constraint> {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                Some(match f.extended_code {
                    rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => Constraint::Unique,
                    rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Constraint::ForeignKey,
                    rusqlite::ffi::SQLITE_CONSTRAINT_CHECK => Constraint::Check,
                    rusqlite::ffi::SQLITE_CONSTRAINT_NOTNULL => Constraint::NotNull,
                    _ => Constraint::Refused,
                })
            }
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => {
                use tokio_postgres::error::SqlState;
                let code = e.code()?;
                if *code == SqlState::UNIQUE_VIOLATION {
                    Some(Constraint::Unique)
                } else if *code == SqlState::FOREIGN_KEY_VIOLATION {
                    Some(Constraint::ForeignKey)
                } else if *code == SqlState::CHECK_VIOLATION {
                    Some(Constraint::Check)
                } else if *code == SqlState::NOT_NULL_VIOLATION {
                    Some(Constraint::NotNull)
                } else if *code == SqlState::RAISE_EXCEPTION {
                    Some(Constraint::Refused)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Whether the database cannot write now for a reason of its own (a
    /// full disk, an I/O error, a lock, a lost connection, a restart), so
    /// that the same write may succeed later; anything else would fail the
    /// same way on every try.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => {
                use rusqlite::ErrorCode as C;
                matches!(
                    f.code,
                    C::DiskFull
                        | C::SystemIoFailure
                        | C::DatabaseBusy
                        | C::DatabaseLocked
                        | C::ReadOnly
                        | C::CannotOpen
                        | C::OutOfMemory
                        | C::DatabaseCorrupt
                        | C::NotADatabase
                        | C::FileLockingProtocolFailed
                        | C::OperationInterrupted
                )
            }
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => match e.code() {
                // Classes: 08 connection, 40 rollback (serialization,
                // deadlock), 53 resources, 55 object state (lock not
                // available), 57 operator intervention (shutdown), 58
                // system (I/O), XX internal (corruption).
                Some(code) => ["08", "40", "53", "55", "57", "58", "XX"]
                    .iter()
                    .any(|class| code.code().starts_with(class)),
                // No answer from the server at all: the connection is gone.
                None => e.is_closed() || e.as_db_error().is_none(),
            },
            Error::Connect(_) => true,
            Error::Earlier(e) => e.is_transient(),
            _ => false,
        }
    }

    /// Whether the database had no room left to write.
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::Sqlite(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull),
            #[cfg(feature = "postgres")]
            Error::Postgres(e) => e.code() == Some(&tokio_postgres::error::SqlState::DISK_FULL),
            Error::Earlier(e) => e.is_disk_full(),
            _ => false,
        }
    }
}

/// PostgreSQL's own message, with its detail: the `Display` of the
/// client's error is only "db error".
#[cfg(feature = "postgres")]
fn pg_message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}: {} ({detail})", db.severity(), db.message()),
            None => format!("{}: {}", db.severity(), db.message()),
        },
        None => e.to_string(),
    }
}
