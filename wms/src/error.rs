//! The engine's one error type. `http::error` maps it to a status and the
//! spec's error body, in one place.

use depot_protocol::FieldError;

#[derive(Debug, thiserror::Error)]
pub enum WmsError {
    /// 400: the request could not be read at all.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no key, an unknown or revoked key, or a key of another business.
    #[error("{0}")]
    Unauthorized(String),
    /// 404: the path names something that does not exist in this business.
    #[error("{0}")]
    NotFound(String),
    /// 409: the request clashes with the current state (a duplicate SKU, an
    /// illegal status transition, stock that is not there).
    #[error("{message}")]
    Conflict {
        message: String,
        errors: Vec<FieldError>,
    },
    /// 412: a scan of the right item whose lot or expiry is not the one the
    /// line requires.
    #[error("{message}")]
    Mismatch {
        message: String,
        errors: Vec<FieldError>,
    },
    /// 422: well-formed JSON whose fields are wrong.
    #[error("{message}")]
    Invalid {
        message: String,
        errors: Vec<FieldError>,
    },
    /// 507: the disk under the database is full. SQLite rolled the write
    /// back, so nothing of it was kept; the same write succeeds once space
    /// is freed.
    #[error(
        "this server's disk is full: nothing of this request was saved; send it again once space has been freed"
    )]
    Full,
    /// A failure of the storage or the engine itself: logged, never shown.
    #[error("storage: {0}")]
    Storage(depot_sql::Error),
    #[error("internal: {0}")]
    Internal(String),
}

impl WmsError {
    pub fn invalid(errors: Vec<FieldError>) -> Self {
        let message = match errors.as_slice() {
            [one] => format!("{}: {}", one.name, one.status),
            _ => format!("{} fields are invalid", errors.len()),
        };
        Self::Invalid { message, errors }
    }

    /// A 422 whose message says what was refused (`what`, such as "order
    /// 7 cannot be confirmed") and then every error, so a person reading
    /// only the message still knows each problem.
    pub fn refused(what: impl std::fmt::Display, errors: Vec<FieldError>) -> Self {
        let detail = errors
            .iter()
            .map(|e| format!("{}: {}", e.name, e.status))
            .collect::<Vec<_>>()
            .join("; ");
        Self::Invalid {
            message: format!("{what}: {detail}"),
            errors,
        }
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::Conflict {
            message: message.into(),
            errors: Vec::new(),
        }
    }

    pub fn field_conflict(name: impl Into<String>, status: impl Into<String>) -> Self {
        let e = FieldError::new(name, status);
        Self::Conflict {
            message: format!("{}: {}", e.name, e.status),
            errors: vec![e],
        }
    }
}

/// A full disk is told apart from the other failures of the database: it
/// is the one a caller can do something about (free space, then send
/// again).
impl From<depot_sql::Error> for WmsError {
    fn from(e: depot_sql::Error) -> Self {
        if e.is_disk_full() {
            Self::Full
        } else {
            Self::Storage(e)
        }
    }
}

/// What only SQLite has (connection setup, backups), as the seam's error.
impl From<rusqlite::Error> for WmsError {
    fn from(e: rusqlite::Error) -> Self {
        depot_sql::Error::from(e).into()
    }
}

impl From<serde_json::Error> for WmsError {
    fn from(e: serde_json::Error) -> Self {
        Self::Internal(format!("json: {e}"))
    }
}

pub type Result<T, E = WmsError> = std::result::Result<T, E>;

/// What a caught panic said, for the log and the error it becomes: its
/// message when it had one (`panic!` with text, `expect`, `unwrap`).
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}
