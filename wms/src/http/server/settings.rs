//! The `[http]` settings of both daemons: how long a caller may take, and
//! how many connections are served at once.

use std::time::Duration;

/// The `[http]` settings of both daemons.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Seconds a caller has to send a request's line and headers, counted
    /// from the connection's opening (its first request) or from the first
    /// byte of the request (the next ones on a kept-alive connection).
    /// Beyond them the connection is closed without an answer.
    pub header_read_timeout_secs: u64,
    /// Seconds a caller has to send a request's whole body once its headers
    /// are in. Beyond them it is answered 408 with the error body and the
    /// connection is closed.
    pub body_read_timeout_secs: u64,
    /// Seconds a kept-alive connection may wait, after an answer, for its
    /// next request before it is closed.
    pub idle_timeout_secs: u64,
    /// Connections served at once, never more than the process's file limit
    /// less 128 files kept for the database, devices, the broker and
    /// refusals. When all are taken, a new caller takes the place of the
    /// connection that has waited longest without a request in progress;
    /// when every one has a request in progress, it is answered 503 with
    /// the error body and closed.
    pub max_connections: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 30,
            idle_timeout_secs: 60,
            max_connections: 1024,
        }
    }
}

/// The longest any timeout may be: a day.
const MAX_TIMEOUT_SECS: u64 = 86_400;

impl HttpSettings {
    /// Why the settings cannot be used, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        for (name, secs) in [
            ("header_read_timeout_secs", self.header_read_timeout_secs),
            ("body_read_timeout_secs", self.body_read_timeout_secs),
            ("idle_timeout_secs", self.idle_timeout_secs),
        ] {
            if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
                return Err(format!("http.{name} must be 1 to {MAX_TIMEOUT_SECS}"));
            }
        }
        if self.max_connections == 0 {
            return Err("http.max_connections must be at least 1".into());
        }
        Ok(())
    }

    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs(self.header_read_timeout_secs)
    }

    pub fn body_read_timeout(&self) -> Duration {
        Duration::from_secs(self.body_read_timeout_secs)
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_zeros_do_not() {
        assert_eq!(HttpSettings::default().check(), Ok(()));
        let zero = HttpSettings {
            idle_timeout_secs: 0,
            ..HttpSettings::default()
        };
        assert!(zero.check().is_err_and(|e| e.contains("idle_timeout_secs")));
        let none = HttpSettings {
            max_connections: 0,
            ..HttpSettings::default()
        };
        assert!(none.check().is_err_and(|e| e.contains("max_connections")));
    }
}
