//! Response envelopes and DataTables-style paging.

use crate::FieldError;
use serde::{Deserialize, Serialize};

/// A single record: `{data: record}`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DataEnvelope<T> {
    pub data: T,
}

/// A page of a list: counts are strings, as the spec types them.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ListEnvelope<T> {
    pub data: Vec<T>,
    /// Records of the business before filtering.
    #[serde(rename = "recordsTotal")]
    pub records_total: String,
    /// Records matching the filters (the page is a window on these).
    #[serde(rename = "recordsFiltered")]
    pub records_filtered: String,
}

impl<T> ListEnvelope<T> {
    pub fn new(data: Vec<T>, total: u64, filtered: u64) -> Self {
        Self {
            data,
            records_total: total.to_string(),
            records_filtered: filtered.to_string(),
        }
    }
}

/// A validated window: `start` rows skipped, at most `length` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub start: u64,
    pub length: u64,
}

impl Page {
    pub const DEFAULT_LENGTH: u64 = 50;
    pub const MAX_LENGTH: u64 = 1000;

    /// Parses the `start`/`length` query parameters.
    pub fn parse(start: Option<i64>, length: Option<i64>) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let start = match start {
            None => 0,
            Some(s) if s >= 0 => s as u64,
            Some(_) => {
                errors.push(FieldError::new("start", "must be 0 or more"));
                0
            }
        };
        let length = match length {
            None => Self::DEFAULT_LENGTH,
            Some(l) if (1..=Self::MAX_LENGTH as i64).contains(&l) => l as u64,
            Some(_) => {
                errors.push(FieldError::new(
                    "length",
                    format!("must be between 1 and {}", Self::MAX_LENGTH),
                ));
                0
            }
        };
        if errors.is_empty() {
            Ok(Self { start, length })
        } else {
            Err(errors)
        }
    }
}

impl Default for Page {
    fn default() -> Self {
        Self {
            start: 0,
            length: Self::DEFAULT_LENGTH,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_strings() {
        let env = ListEnvelope::new(vec![1, 2], 10, 2);
        let json = serde_json::to_value(&env).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"data": [1, 2], "recordsTotal": "10", "recordsFiltered": "2"})
        );
    }

    #[test]
    fn paging_defaults_and_limits() {
        assert_eq!(
            Page::parse(None, None),
            Ok(Page {
                start: 0,
                length: 50
            })
        );
        assert_eq!(
            Page::parse(Some(20), Some(10)),
            Ok(Page {
                start: 20,
                length: 10
            })
        );
        assert!(Page::parse(Some(-1), None).is_err());
        assert!(Page::parse(None, Some(0)).is_err());
        assert!(Page::parse(None, Some(1001)).is_err());
        assert_eq!(
            Page::parse(Some(-1), Some(0)).err().map(|e| e.len()),
            Some(2)
        );
    }
}
