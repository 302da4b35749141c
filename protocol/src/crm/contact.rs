//! Contact forms: the departments that answer, the forms a business puts on
//! its storefront, and the checks a submission passes before it opens a
//! thread (shape, size, links, the honeypot; the hourly limits need the
//! store and are the engine's).

use super::buyers::phone_key;
use super::{MAX_BODY_CHARS, body_text, is_code};
use crate::FieldError;
use crate::validate::Check;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The largest submission body accepted, in bytes.
pub const MAX_SUBMISSION_BYTES: usize = 32 * 1024;
/// The most fields of its own a form may define.
pub const MAX_FORM_FIELDS: usize = 10;
/// The body key of the honeypot: a field the storefront renders hidden,
/// which people leave empty and form-filling bots do not.
pub const HONEYPOT: &str = "website";
/// Names a form's own fields cannot take: the submission's own keys.
const RESERVED: [&str; 7] = [
    "name", "email", "phone", "subject", "message", "fields", HONEYPOT,
];

/// A department: who answers the threads its forms open. Its `code` is the
/// topic id that `filter_id` takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Department {
    pub id: i64,
    pub code: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// Body of `POST /v1/contact/{business_id}/departments`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct DepartmentCreate {
    /// Lowercase letters, digits, `_` and `-`, starting with a letter
    /// (`support`, `sales-eu`); unique in the business.
    #[schema(pattern = "^\\s*[a-z][a-z0-9_-]{0,63}\\s*$")]
    pub code: String,
    #[schema(format = "line", max_length = 100)]
    pub name: String,
}

/// A checked department.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDepartment {
    pub code: String,
    pub name: String,
}

impl DepartmentCreate {
    pub fn parse(self) -> Result<NewDepartment, Vec<FieldError>> {
        let mut c = Check::new();
        let code = self.code.trim().to_owned();
        if !is_code(&code) {
            c.fail(
                "code",
                "must be 1 to 64 lowercase letters, digits, '_' or '-', starting with a letter",
            );
        }
        let name = c.text("name", &self.name, 100);
        c.finish(NewDepartment { code, name })
    }
}

fn default_max_length() -> i64 {
    200
}

/// A field of its own a form asks for (an order reference, a topic).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FormField {
    /// The key of its value in the submission's `fields`.
    pub name: String,
    pub label: Option<String>,
    #[serde(default)]
    pub required: bool,
    /// Characters its value may have (default 200, 1 to 2000).
    #[serde(default = "default_max_length")]
    #[schema(minimum = 1, maximum = 2000)]
    pub max_length: i64,
}

/// A contact form of a business.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContactForm {
    pub id: i64,
    pub name: String,
    /// The code of the department its threads are assigned to.
    pub department: String,
    pub fields: Vec<FormField>,
    /// Submissions one email may send through it in any hour.
    pub max_per_email_per_hour: i64,
    /// Submissions it takes in any hour, from everyone.
    pub max_per_hour: i64,
    /// Links a submission may hold (`http://…`, `https://…`, `www.…`).
    pub max_links: i64,
    pub created_at: DateTime<Utc>,
}

/// Body of `POST /v1/contact/{business_id}/forms`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct FormCreate {
    #[schema(format = "line", max_length = 100)]
    pub name: String,
    /// The code of an existing department of the business.
    #[schema(pattern = "^\\s*[a-z][a-z0-9_-]{0,63}\\s*$")]
    pub department: String,
    /// Up to 10 fields of its own.
    pub fields: Option<Vec<FormField>>,
    /// 1 to 100 (default 5).
    #[schema(minimum = 1, maximum = 100)]
    pub max_per_email_per_hour: Option<i64>,
    /// 1 to 10000 (default 100).
    #[schema(minimum = 1, maximum = 10_000)]
    pub max_per_hour: Option<i64>,
    /// 0 to 20 (default 2).
    #[schema(minimum = 0, maximum = 20)]
    pub max_links: Option<i64>,
}

/// A checked form; the department is still a code to resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewForm {
    pub name: String,
    pub department: String,
    pub fields: Vec<FormField>,
    pub max_per_email_per_hour: i64,
    pub max_per_hour: i64,
    pub max_links: i64,
}

fn bounded(c: &mut Check, name: &str, v: Option<i64>, default: i64, range: (i64, i64)) -> i64 {
    let v = v.unwrap_or(default);
    if v < range.0 || v > range.1 {
        c.fail(name, format!("must be between {} and {}", range.0, range.1));
    }
    v
}

impl FormCreate {
    pub fn parse(self) -> Result<NewForm, Vec<FieldError>> {
        let mut c = Check::new();
        let name = c.text("name", &self.name, 100);
        let department = self.department.trim().to_owned();
        if !is_code(&department) {
            c.fail("department", "must be a department code");
        }
        let fields = self.fields.unwrap_or_default();
        c.bounded("fields", &fields, MAX_FORM_FIELDS);
        let mut seen = Vec::new();
        let fields = fields
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let name = f.name.trim().to_owned();
                if !is_code(&name) {
                    c.fail(
                        format!("fields[{i}].name"),
                        "must be lowercase letters, digits, '_' or '-', starting with a letter",
                    );
                } else if RESERVED.contains(&name.as_str()) || seen.contains(&name) {
                    c.fail(format!("fields[{i}].name"), "is taken");
                }
                seen.push(name.clone());
                let label = c.opt_text(&format!("fields[{i}].label"), f.label.as_deref(), 100);
                let max_length = bounded(
                    &mut c,
                    &format!("fields[{i}].max_length"),
                    Some(f.max_length),
                    200,
                    (1, 2000),
                );
                FormField {
                    name,
                    label,
                    required: f.required,
                    max_length,
                }
            })
            .collect();
        let max_per_email_per_hour = bounded(
            &mut c,
            "max_per_email_per_hour",
            self.max_per_email_per_hour,
            5,
            (1, 100),
        );
        let max_per_hour = bounded(&mut c, "max_per_hour", self.max_per_hour, 100, (1, 10_000));
        let max_links = bounded(&mut c, "max_links", self.max_links, 2, (0, 20));
        c.finish(NewForm {
            name,
            department,
            fields,
            max_per_email_per_hour,
            max_per_hour,
            max_links,
        })
    }
}

/// Body of `POST /v1/contact/{business_id}/{form_id}`: what a visitor sent
/// through the storefront's form.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ContactSubmission {
    #[schema(format = "line", max_length = 200)]
    pub name: String,
    #[schema(format = "email")]
    pub email: String,
    pub phone: Option<String>,
    #[schema(format = "line", max_length = 200)]
    pub subject: String,
    /// Up to 5000 characters; it may span lines.
    #[schema(format = "body", max_length = 5000)]
    pub message: String,
    /// Values of the form's own fields, by name.
    pub fields: Option<BTreeMap<String, String>>,
    /// The honeypot: must be absent or empty. A submission that fills it
    /// is answered as received and kept nowhere.
    pub website: Option<String>,
}

/// A checked submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSubmission {
    pub name: String,
    /// Lowercase.
    pub email: String,
    pub phone: Option<String>,
    pub subject: String,
    pub message: String,
    pub fields: BTreeMap<String, String>,
}

/// What a submission turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// The honeypot was filled: a bot. Nothing is kept.
    Spam,
    Valid(NewSubmission),
}

/// The answer to a submission: `{"status": "received", "thread_id": 7}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Receipt {
    /// Always `received`.
    pub status: String,
    /// The thread it opened; absent when it was discarded as spam (the
    /// honeypot was filled), so a bot learns nothing from the status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<i64>,
}

impl Receipt {
    pub fn received(thread_id: Option<i64>) -> Self {
        Self {
            status: "received".into(),
            thread_id,
        }
    }
}

/// A mailbox as people type it: `local@domain.tld`, ASCII, the lengths
/// RFC 5321 allows.
pub fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let local_ok = (1..=64).contains(&local.len())
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~.-".contains(&b));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = domain.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            (1..=63).contains(&l.len())
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        && labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && !tld.bytes().all(|b| b.is_ascii_digit()));
    local_ok && domain_ok
}

/// Links in a text: words that hold `://` or start with `www.`.
pub fn links(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| {
            let w = w.to_ascii_lowercase();
            w.contains("://")
                || w.trim_start_matches(['(', '<', '[', '"', '\''])
                    .starts_with("www.")
        })
        .count()
}

impl ContactSubmission {
    /// Checks the submission against the form it was sent to.
    pub fn check(self, form: &ContactForm) -> Result<Checked, Vec<FieldError>> {
        if self
            .website
            .as_deref()
            .is_some_and(|w| !w.trim().is_empty())
        {
            return Ok(Checked::Spam);
        }
        let mut c = Check::new();
        let name = c.text("name", &self.name, 200);
        let email = self.email.trim().to_lowercase();
        if email.is_empty() {
            c.fail("email", "is required");
        } else if email.len() > 254 || !is_email(&email) {
            c.fail("email", "must be an email address");
        }
        let phone = c.opt_text("phone", self.phone.as_deref(), 40);
        if phone.as_deref().is_some_and(|p| {
            phone_key(p).is_none()
                || !p
                    .chars()
                    .all(|ch| ch.is_ascii_digit() || " +-().".contains(ch))
        }) {
            c.fail("phone", "must be a phone number (5 to 20 digits)");
        }
        let subject = c.text("subject", &self.subject, 200);
        let message = body_text(&mut c, "message", &self.message, MAX_BODY_CHARS);
        let given = self.fields.unwrap_or_default();
        let mut fields = BTreeMap::new();
        if given.len() > form.fields.len().max(1) {
            c.fail(
                "fields",
                format!("this form has {} fields", form.fields.len()),
            );
        } else {
            for key in given
                .keys()
                .filter(|k| !form.fields.iter().any(|f| &f.name == *k))
            {
                c.fail(format!("fields.{key}"), "is not a field of this form");
            }
            for f in &form.fields {
                let name = format!("fields.{}", f.name);
                let v = given
                    .get(&f.name)
                    .map(|v| v.trim())
                    .filter(|v| !v.is_empty());
                match v {
                    None if f.required => c.fail(name, "is required"),
                    None => {}
                    Some(v) => {
                        let v = c.text(&name, v, usize::try_from(f.max_length).unwrap_or(0));
                        fields.insert(f.name.clone(), v);
                    }
                }
            }
        }
        let n = [&name, &subject, &message]
            .into_iter()
            .chain(fields.values())
            .map(|t| links(t))
            .sum::<usize>();
        if i64::try_from(n).unwrap_or(i64::MAX) > form.max_links {
            c.fail(
                "message",
                format!("must hold at most {} links", form.max_links),
            );
        }
        c.finish(Checked::Valid(NewSubmission {
            name,
            email,
            phone,
            subject,
            message,
            fields,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> ContactForm {
        ContactForm {
            id: 1,
            name: "Support".into(),
            department: "support".into(),
            fields: vec![
                FormField {
                    name: "order_ref".into(),
                    label: None,
                    required: true,
                    max_length: 10,
                },
                FormField {
                    name: "topic".into(),
                    label: Some("Topic".into()),
                    required: false,
                    max_length: 200,
                },
            ],
            max_per_email_per_hour: 5,
            max_per_hour: 100,
            max_links: 1,
            created_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    fn check(v: serde_json::Value) -> Result<Checked, Vec<String>> {
        let raw: ContactSubmission = serde_json::from_value(v).map_err(|e| vec![e.to_string()])?;
        raw.check(&form())
            .map_err(|e| e.into_iter().map(|e| e.name).collect())
    }

    fn valid() -> serde_json::Value {
        json!({"name": " Ana López ", "email": " Ana@Example.com", "phone": "+34 600 11 22 33",
               "subject": "Where is my order?", "message": "Hello,\nit has not arrived.",
               "fields": {"order_ref": " WS-1001 "}, "website": ""})
    }

    #[test]
    fn a_valid_submission() {
        let Ok(Checked::Valid(s)) = check(valid()) else {
            panic!("refused")
        };
        assert_eq!(s.name, "Ana López");
        assert_eq!(s.email, "ana@example.com");
        assert_eq!(
            s.fields.get("order_ref").map(String::as_str),
            Some("WS-1001")
        );
        assert_eq!(s.message, "Hello,\nit has not arrived.");
    }

    #[test]
    fn the_honeypot_wins_over_everything() {
        assert_eq!(
            check(
                json!({"name": "", "email": "x", "subject": "", "message": "", "website": "http://spam"})
            ),
            Ok(Checked::Spam)
        );
    }

    #[test]
    fn bad_submissions_name_their_fields() {
        let mut v = valid();
        v["email"] = json!("ana@localhost");
        v["phone"] = json!("call me");
        v["subject"] = json!("a\r\nBcc: x@y.z");
        v["message"] = json!(" ");
        v["fields"] = json!({"order_ref": "12345678901", "extra": "x"});
        assert_eq!(
            check(v),
            Err(vec![
                "email",
                "phone",
                "subject",
                "message",
                "fields.extra",
                "fields.order_ref"
            ]
            .into_iter()
            .map(String::from)
            .collect())
        );
        let mut v = valid();
        v["fields"] = json!({});
        assert_eq!(check(v), Err(vec!["fields.order_ref".into()]));
        let mut v = valid();
        let many: serde_json::Map<_, _> = (0..50).map(|i| (format!("f{i}"), json!("x"))).collect();
        v["fields"] = serde_json::Value::Object(many);
        assert_eq!(check(v), Err(vec!["fields".into()]));
    }

    #[test]
    fn links_overflow() {
        assert_eq!(
            links("see https://a.example and (www.b.example) or ftp://c"),
            3
        );
        assert_eq!(links("no links: www dot example"), 0);
        let mut v = valid();
        v["message"] = json!("https://one.example");
        assert!(matches!(check(v), Ok(Checked::Valid(_))));
        let mut v = valid();
        v["message"] = json!("https://one.example www.two.example");
        assert_eq!(check(v), Err(vec!["message".into()]));
    }

    #[test]
    fn emails() {
        for ok in [
            "a@b.co",
            "first.last+tag@sub.example.org",
            "o'brien@example.ie",
            "x@xn--bcher-kva.example",
        ] {
            assert!(is_email(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "@b.co",
            "a@",
            "a@b",
            "a@b.c",
            "a@@b.co",
            "a b@c.co",
            ".a@b.co",
            "a..b@c.co",
            "a@-b.co",
            "a@b..co",
            "a@1.2",
            "ñ@b.co",
            "a@b.co\n",
        ] {
            assert!(!is_email(bad), "{bad:?}");
        }
        assert!(!is_email(&format!("{}@b.co", "a".repeat(65))));
    }

    #[test]
    fn forms_are_checked() {
        let f: FormCreate =
            serde_json::from_value(json!({"name": "Support", "department": "support",
            "fields": [{"name": "order_ref", "required": true}]}))
            .unwrap_or_else(|e| panic!("{e}"));
        let f = f.parse();
        assert!(f.as_ref().is_ok_and(|f| f.max_per_email_per_hour == 5
            && f.max_links == 2
            && f.fields[0].max_length == 200));
        let f: FormCreate = serde_json::from_value(json!({"name": "", "department": "Sales Team",
            "fields": [{"name": "email"}, {"name": "x", "max_length": 0}, {"name": "x"}],
            "max_per_email_per_hour": 0, "max_per_hour": 10001, "max_links": -1}))
        .unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<String> = f
            .parse()
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(
            names,
            [
                "name",
                "department",
                "fields[0].name",
                "fields[1].max_length",
                "fields[2].name",
                "max_per_email_per_hour",
                "max_per_hour",
                "max_links"
            ]
        );
    }

    #[test]
    fn departments_are_checked() {
        let d = DepartmentCreate {
            code: " support ".into(),
            name: "Support".into(),
        }
        .parse();
        assert_eq!(
            d,
            Ok(NewDepartment {
                code: "support".into(),
                name: "Support".into()
            })
        );
        let d = DepartmentCreate {
            code: "Sup port".into(),
            name: " ".into(),
        }
        .parse();
        assert_eq!(d.err().map(|e| e.len()), Some(2));
    }
}
