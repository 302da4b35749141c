//! CRM: buyers, the departments that answer them, contact forms, and the
//! threads of messages a form opens. Wire records and the checks of what
//! callers send; searching and storing are the engine's.

pub mod buyers;
pub mod contact;

use crate::FieldError;
use crate::validate::Check;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `integration_id` of threads opened by a contact form.
pub const CONTACT_FORM: &str = "contact_form";
/// The longest message body accepted, in characters.
pub const MAX_BODY_CHARS: usize = 5000;
/// The longest integration id or department code.
pub const MAX_CODE: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThreadStatus {
    Open,
    Closed,
}

impl ThreadStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Open, Self::Closed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }
}

/// Who a message goes to: from the buyer (`inbound`), to the buyer
/// (`outbound`), or a note between colleagues the buyer never sees
/// (`internal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Inbound,
    Outbound,
    Internal,
}

/// The directions a message posted through the API may take (an inbound
/// one arrives through a contact form): the schema of `MessagePost`.
#[derive(utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // a schema only: the body reads a `Direction` and refuses inbound
pub enum PostedDirection {
    Outbound,
    Internal,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inbound => "inbound",
            Self::Outbound => "outbound",
            Self::Internal => "internal",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Inbound, Self::Outbound, Self::Internal]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// A conversation with a buyer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Thread {
    pub id: i64,
    pub subject: String,
    pub status: ThreadStatus,
    /// The code of the department it is assigned to: the topic id that
    /// `filter_id` takes.
    pub department: Option<String>,
    /// Where it came from: `contact_form`, or a sales channel's name.
    pub integration_id: String,
    /// The form that opened it, when a form did.
    pub form_id: Option<i64>,
    /// The buyer who wrote (see `/v1/buyers/{business_id}/find/by_id`).
    pub buyer_id: Option<i64>,
    pub created_at: DateTime<Utc>,
    /// When a message was last posted or the status last changed.
    pub updated_at: DateTime<Utc>,
    pub message_count: i64,
    pub last_message_at: DateTime<Utc>,
}

/// One message of a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Message {
    pub id: i64,
    pub thread_id: i64,
    pub direction: Direction,
    /// The sender as shown: the buyer's name and email for inbound
    /// messages, the agent for the others.
    pub author: String,
    pub body: String,
    /// The values of the form's own fields, on a form's first message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<BTreeMap<String, String>>,
    pub created_at: DateTime<Utc>,
}

/// Body of `POST /v1/crm/{business_id}/threads/{thread_id}/message`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct MessagePost {
    /// The text, up to 5000 characters; it may span lines.
    #[schema(format = "body", max_length = 5000)]
    pub body: String,
    /// Who writes, as shown in the thread; defaults to the API key
    /// (`key:<id>`).
    #[schema(format = "opt-line", max_length = 200)]
    pub author: Option<String>,
    /// `outbound` (the default: a reply to the buyer) or `internal` (a
    /// note). Inbound messages arrive through a contact form.
    #[schema(value_type = Option<PostedDirection>)]
    pub direction: Option<Direction>,
    /// Sets the thread's status with the message (e.g. reply and close).
    pub status: Option<ThreadStatus>,
}

/// A checked message post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMessage {
    pub body: String,
    pub author: Option<String>,
    pub direction: Direction,
    pub status: Option<ThreadStatus>,
}

/// A free text that may span lines: trimmed, bounded, and free of control
/// characters other than line breaks and tabs (a NUL or an escape sequence
/// has no place in a message an agent reads).
pub(crate) fn body_text(c: &mut Check, name: &str, value: &str, max: usize) -> String {
    let v = value.trim();
    if v.is_empty() {
        c.fail(name, "is required");
    } else if v.chars().count() > max {
        c.fail(name, format!("must be at most {max} characters"));
    } else if v
        .chars()
        .any(|ch| ch.is_control() && !matches!(ch, '\n' | '\r' | '\t'))
    {
        c.fail(name, "must not contain control characters");
    }
    v.to_owned()
}

/// A code-like token (a department code, an integration id): lowercase
/// ASCII letters, digits, `_` and `-`, starting with a letter.
pub fn is_code(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && s.len() <= MAX_CODE
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

impl MessagePost {
    pub fn parse(self) -> Result<NewMessage, Vec<FieldError>> {
        let mut c = Check::new();
        let body = body_text(&mut c, "body", &self.body, MAX_BODY_CHARS);
        let author = c.opt_text("author", self.author.as_deref(), 200);
        let direction = self.direction.unwrap_or(Direction::Outbound);
        if direction == Direction::Inbound {
            c.fail(
                "direction",
                "must be outbound or internal: inbound messages arrive through a contact form",
            );
        }
        c.finish(NewMessage {
            body,
            author,
            direction,
            status: self.status,
        })
    }
}

/// The filters of the thread list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadFilter {
    pub integration_id: Option<String>,
    /// A department code.
    pub department: Option<String>,
    pub status: Option<ThreadStatus>,
}

/// Where a thread is looked for: `integration_id` and `filter_id` given
/// with a message post must be the thread's, or the thread is not there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadScope {
    pub integration_id: Option<String>,
    pub department: Option<String>,
}

impl ThreadScope {
    pub fn admits(&self, t: &Thread) -> bool {
        self.integration_id
            .as_ref()
            .is_none_or(|i| *i == t.integration_id)
            && self
                .department
                .as_ref()
                .is_none_or(|d| t.department.as_ref() == Some(d))
    }
}

/// Parses the optional `integration_id` and `filter_id` query parameters
/// the thread routes share.
pub fn scope(
    c: &mut Check,
    integration_id: Option<&str>,
    filter_id: Option<&str>,
) -> (Option<String>, Option<String>) {
    let mut code = |name: &str, v: Option<&str>| {
        let v = v.map(str::trim).filter(|v| !v.is_empty())?;
        if !is_code(v) {
            c.fail(
                name,
                "must be lowercase letters, digits, '_' or '-', starting with a letter",
            );
        }
        Some(v.to_owned())
    };
    (
        code("integration_id", integration_id),
        code("filter_id", filter_id),
    )
}

/// The answer to a message post: the thread as it now stands and the
/// message posted.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ThreadMessages {
    pub thread: Vec<Thread>,
    pub messages: Vec<Message>,
}

/// A page of a thread's messages, oldest first, with the thread.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MessagesPage {
    pub thread: Vec<Thread>,
    pub messages: Vec<Message>,
    /// Messages of the thread.
    #[serde(rename = "recordsTotal")]
    pub records_total: String,
    /// The same: no filter applies to messages.
    #[serde(rename = "recordsFiltered")]
    pub records_filtered: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn post(v: serde_json::Value) -> Result<NewMessage, Vec<String>> {
        let raw: MessagePost = serde_json::from_value(v).map_err(|e| vec![e.to_string()])?;
        raw.parse()
            .map_err(|e| e.into_iter().map(|e| e.name).collect())
    }

    #[test]
    fn a_reply_defaults_to_outbound() {
        let m = post(json!({"body": "  Hello,\nit ships today.  "}));
        assert_eq!(
            m,
            Ok(NewMessage {
                body: "Hello,\nit ships today.".into(),
                author: None,
                direction: Direction::Outbound,
                status: None,
            })
        );
        let m = post(
            json!({"body": "x", "direction": "internal", "status": "closed", "author": "Marta"}),
        );
        assert!(m.is_ok_and(|m| m.direction == Direction::Internal
            && m.status == Some(ThreadStatus::Closed)
            && m.author.as_deref() == Some("Marta")));
    }

    #[test]
    fn bad_posts_name_their_fields() {
        assert_eq!(post(json!({"body": " "})), Err(vec!["body".into()]));
        assert_eq!(
            post(json!({"body": "a\u{0}b", "author": "x\ny", "direction": "inbound"})),
            Err(vec!["body".into(), "author".into(), "direction".into()])
        );
        assert_eq!(
            post(json!({"body": "x".repeat(MAX_BODY_CHARS + 1)})),
            Err(vec!["body".into()])
        );
        assert!(post(json!({"body": "x", "direction": "sideways"})).is_err());
        assert!(post(json!({"body": "x", "status": "archived"})).is_err());
    }

    #[test]
    fn codes() {
        for ok in ["support", "sales-eu", "contact_form", "a1"] {
            assert!(is_code(ok), "{ok}");
        }
        for bad in ["", "1st", "Support", "a b", "a%", "a'", &"a".repeat(65)] {
            assert!(!is_code(bad), "{bad}");
        }
    }

    #[test]
    fn scope_admits_only_its_threads() {
        let at = chrono::DateTime::UNIX_EPOCH;
        let t = Thread {
            id: 1,
            subject: "s".into(),
            status: ThreadStatus::Open,
            department: Some("support".into()),
            integration_id: CONTACT_FORM.into(),
            form_id: Some(1),
            buyer_id: None,
            created_at: at,
            updated_at: at,
            message_count: 1,
            last_message_at: at,
        };
        let s = |i: Option<&str>, d: Option<&str>| ThreadScope {
            integration_id: i.map(Into::into),
            department: d.map(Into::into),
        };
        assert!(s(None, None).admits(&t));
        assert!(s(Some("contact_form"), Some("support")).admits(&t));
        assert!(!s(Some("webshop"), None).admits(&t));
        assert!(!s(None, Some("sales")).admits(&t));
        let mut c = Check::new();
        assert_eq!(
            scope(&mut c, Some(" contact_form "), Some("")),
            (Some("contact_form".into()), None)
        );
        assert!(c.is_ok());
        scope(&mut c, Some("'; DROP"), Some("50%"));
        assert_eq!(c.finish(()).err().map(|e| e.len()), Some(2));
    }
}
