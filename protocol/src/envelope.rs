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
    /// Records matching the filters (the page is a window on these). Exact
    /// up to 1,000; beyond that it may lag the list by a few seconds (see
    /// docs/api-contract.md, "Paging").
    #[serde(rename = "recordsFiltered")]
    pub records_filtered: String,
    /// Where the next page starts: passed back as `cursor`, it reads the
    /// rows after this page's last whatever was written since. Absent when
    /// this page is the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl<T> ListEnvelope<T> {
    pub fn new(data: Vec<T>, total: u64, filtered: u64) -> Self {
        Self {
            data,
            records_total: total.to_string(),
            records_filtered: filtered.to_string(),
            cursor: None,
        }
    }
}

impl<T: AsRef<str>> Listed<T> {
    /// The [`ListEnvelope`] of rows already written as JSON, each put in
    /// as it is: the bytes serde would write for the typed envelope of the
    /// same rows.
    pub fn envelope_json(&self) -> String {
        let rows: usize = self.rows.iter().map(|r| r.as_ref().len() + 1).sum();
        let mut out = String::with_capacity(rows + 96);
        out.push_str("{\"data\":[");
        for (i, row) in self.rows.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(row.as_ref());
        }
        out.push_str("],\"recordsTotal\":\"");
        out.push_str(&self.total.to_string());
        out.push_str("\",\"recordsFiltered\":\"");
        out.push_str(&self.filtered.to_string());
        out.push('"');
        if let Some(c) = &self.cursor {
            out.push_str(",\"cursor\":");
            out.push_str(&serde_json::Value::from(c.as_str()).to_string());
        }
        out.push('}');
        out
    }
}

/// A page of a list as the store reads it: the rows, the counts and the
/// cursor to the next page.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed<T> {
    pub rows: Vec<T>,
    /// Records of the business before filtering.
    pub total: u64,
    /// Records matching the filters.
    pub filtered: u64,
    /// The next page's cursor, when there may be one.
    pub cursor: Option<String>,
}

impl<T> From<Listed<T>> for ListEnvelope<T> {
    fn from(l: Listed<T>) -> Self {
        Self {
            cursor: l.cursor,
            ..Self::new(l.rows, l.total, l.filtered)
        }
    }
}

/// A validated window: `start` rows skipped, at most `length` returned;
/// or, with a `cursor` from the last page's answer, the `length` rows
/// after that page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub start: u64,
    pub length: u64,
    /// Opaque as given: only the list that wrote it can read it.
    pub cursor: Option<String>,
}

impl Page {
    pub const DEFAULT_LENGTH: u64 = 50;
    pub const MAX_LENGTH: u64 = 1000;
    /// Longer than any cursor a list writes.
    pub const MAX_CURSOR: usize = 512;

    /// Parses the `start`/`length` query parameters.
    pub fn parse(start: Option<i64>, length: Option<i64>) -> Result<Self, Vec<FieldError>> {
        Self::parse_with_cursor(start, length, None)
    }

    /// Parses `start`/`length` and `cursor`: a cursor starts where it
    /// says, so a `start` beside it is refused rather than guessed at.
    pub fn parse_with_cursor(
        start: Option<i64>,
        length: Option<i64>,
        cursor: Option<String>,
    ) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        let cursor = cursor.filter(|c| !c.trim().is_empty());
        if let Some(c) = &cursor {
            if start.is_some_and(|s| s != 0) {
                errors.push(FieldError::new(
                    "start",
                    "a cursor says where the page starts: give start or cursor, not both",
                ));
            }
            if c.len() > Self::MAX_CURSOR {
                errors.push(FieldError::new(
                    "cursor",
                    "is not a cursor this list gave (too long)",
                ));
            }
        }
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
            Ok(Self {
                start,
                length,
                cursor,
            })
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
            cursor: None,
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
                length: 50,
                cursor: None
            })
        );
        assert_eq!(
            Page::parse(Some(20), Some(10)),
            Ok(Page {
                start: 20,
                length: 10,
                cursor: None
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

    #[test]
    fn a_cursor_replaces_start() {
        let page = Page::parse_with_cursor(None, Some(10), Some("abc".into()));
        assert_eq!(page.map(|p| p.cursor), Ok(Some("abc".into())));
        // A blank cursor is none; start 0 beside a cursor says nothing.
        assert_eq!(
            Page::parse_with_cursor(Some(0), None, Some(" ".into())).map(|p| p.cursor),
            Ok(None)
        );
        assert!(Page::parse_with_cursor(Some(0), None, Some("abc".into())).is_ok());
        let both = Page::parse_with_cursor(Some(50), None, Some("abc".into()));
        assert_eq!(both.err().map(|e| e[0].name.clone()), Some("start".into()));
        let long = Page::parse_with_cursor(None, None, Some("a".repeat(513)));
        assert_eq!(long.err().map(|e| e[0].name.clone()), Some("cursor".into()));
    }

    #[test]
    fn rows_written_before_make_the_same_envelope_as_serde() {
        let rows = vec![
            serde_json::json!({"id": 1, "name": "Ζωή \"Κ\"", "n": [1, 2]}),
            serde_json::json!({"id": 2, "name": "李"}),
        ];
        for cursor in [None, Some("eyJsIjoib3JkZXJzIn0".to_owned())] {
            for rows in [rows.clone(), Vec::new()] {
                let typed = Listed {
                    rows: rows.clone(),
                    total: 12,
                    filtered: 2,
                    cursor: cursor.clone(),
                };
                let written = Listed {
                    rows: rows.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
                    total: 12,
                    filtered: 2,
                    cursor: cursor.clone(),
                };
                let serde = serde_json::to_string(&ListEnvelope::from(typed)).unwrap_or_default();
                assert_eq!(written.envelope_json(), serde);
            }
        }
    }

    #[test]
    fn the_cursor_is_in_the_answer_only_when_there_is_one() {
        let last: ListEnvelope<i32> = Listed {
            rows: vec![1],
            total: 1,
            filtered: 1,
            cursor: None,
        }
        .into();
        let json = serde_json::to_value(&last).unwrap_or_default();
        assert!(json.get("cursor").is_none());
        let more: ListEnvelope<i32> = Listed {
            rows: vec![1],
            total: 2,
            filtered: 2,
            cursor: Some("next".into()),
        }
        .into();
        let json = serde_json::to_value(&more).unwrap_or_default();
        assert_eq!(json["cursor"], "next");
    }
}
