//! Releases of Depot's products: published in the cloud with notes in one
//! or more locales, translated later, and synced to every edge.

mod job;
mod locale;
mod semver;

pub use job::{JobError, JobStatus, MAX_JOB_ERRORS, TranslationJob};
pub use locale::{language, normalize_locale};
pub use semver::{compare, is_semver};

use crate::validate::Check;
use crate::{FieldError, Timestamp};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The longest body of one locale's notes (Markdown).
pub const MAX_NOTES_BYTES: usize = 64 * 1024;
/// The longest title.
pub const MAX_TITLE_CHARS: usize = 200;
/// What the notes of a release may weigh together when it is published.
/// The release travels to the edges as one sync event, which must stay
/// under `sync::message::MAX_MESSAGE_BYTES` even if JSON escaping doubles
/// it; more locales arrive later as translations, one event each.
pub const MAX_RELEASE_BYTES: usize = 96 * 1024;
/// The most locales one request may carry.
pub const MAX_LOCALES: usize = 32;

/// The products release notes cover.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Product {
    /// The warehouse system: `depot-cloud` and `depot-edge`.
    Wms,
    /// The mobile app.
    App,
    /// The warehouse screens.
    Signage,
}

impl Product {
    pub const ALL: [Product; 3] = [Product::Wms, Product::App, Product::Signage];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wms => "wms",
            Self::App => "app",
            Self::Signage => "signage",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// How pages and feeds name it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Wms => "WMS",
            Self::App => "App",
            Self::Signage => "Signage",
        }
    }
}

/// One locale's notes: a title and a Markdown body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Note {
    pub title: String,
    #[serde(default)]
    pub body: String,
}

impl Note {
    /// A checked note; violations are named `{prefix}.title` and
    /// `{prefix}.body`.
    pub fn check(c: &mut Check, prefix: &str, title: &str, body: &str) -> Note {
        let title = c.text(&format!("{prefix}.title"), title, MAX_TITLE_CHARS);
        if body.len() > MAX_NOTES_BYTES {
            c.fail(
                format!("{prefix}.body"),
                format!("must be at most {MAX_NOTES_BYTES} bytes"),
            );
        } else if body
            .chars()
            .any(|ch| ch.is_control() && !matches!(ch, '\n' | '\r' | '\t'))
        {
            c.fail(
                format!("{prefix}.body"),
                "must not contain control characters other than line breaks and tabs",
            );
        }
        Note {
            title,
            body: body.trim_end().to_owned(),
        }
    }

    fn bytes(&self) -> usize {
        self.title.len() + self.body.len()
    }
}

/// A published release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Release {
    pub id: i64,
    pub product: Product,
    /// Semantic version, unique per product: `1.4.0`, `1.5.0-rc.1`.
    pub version: String,
    /// The release date.
    pub date: NaiveDate,
    /// The locale the release was written in: what a reader gets when
    /// their locale has no translation.
    pub default_locale: String,
    /// Per locale tag.
    pub notes: BTreeMap<String, Note>,
    /// Who published it (the bearer token's subject), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_by: Option<String>,
    pub published_at: DateTime<Utc>,
    /// Moves when a translation is added.
    pub updated_at: DateTime<Utc>,
}

impl Release {
    /// The notes to show a reader of `wanted`, and their locale: that
    /// locale, else one of the same language (`pt` for `pt-BR` and the
    /// other way round), else the release's default locale.
    pub fn note_for(&self, wanted: &str) -> Option<(&str, &Note)> {
        let exact = self.notes.get_key_value(wanted);
        let same_language = || {
            self.notes
                .iter()
                .find(|(tag, _)| language(tag) == language(wanted))
        };
        let default = || self.notes.get_key_value(&self.default_locale);
        exact
            .or_else(same_language)
            .or_else(default)
            .or_else(|| self.notes.iter().next())
            .map(|(tag, note)| (tag.as_str(), note))
    }
}

/// What publishing a release takes. Strings rather than typed values, so
/// that every violation is reported at once, by field.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReleaseCreate {
    /// `wms`, `app` or `signage`.
    #[schema(value_type = Product)]
    pub product: String,
    #[schema(
        pattern = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
    )]
    pub version: String,
    /// `YYYY-MM-DD`; today (UTC) when absent.
    #[serde(default)]
    #[schema(value_type = Option<NaiveDate>)]
    pub date: Option<String>,
    /// Required when `notes` has more than one locale.
    #[serde(default)]
    pub default_locale: Option<String>,
    /// Per locale tag (`en`, `es`, `pt-BR`).
    pub notes: BTreeMap<String, Note>,
}

/// A checked release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRelease {
    pub product: Product,
    pub version: String,
    pub date: NaiveDate,
    pub default_locale: String,
    pub notes: BTreeMap<String, Note>,
}

impl ReleaseCreate {
    /// Checks the request; `today` is the date of a release that gives none.
    pub fn parse(self, today: NaiveDate) -> Result<NewRelease, Vec<FieldError>> {
        let mut c = Check::new();
        let product = Product::parse(self.product.trim()).unwrap_or_else(|| {
            c.fail("product", "must be one of wms, app, signage");
            Product::Wms
        });
        let version = self.version.trim().to_owned();
        if !is_semver(&version) {
            c.fail(
                "version",
                "must be a semantic version such as 1.4.0 or 1.5.0-rc.1",
            );
        }
        let date = match self.date.as_deref().map(str::trim) {
            None | Some("") => today,
            Some(d) => NaiveDate::parse_from_str(d, "%Y-%m-%d").unwrap_or_else(|_| {
                c.fail("date", "must be a date, YYYY-MM-DD");
                today
            }),
        };
        let notes = check_notes(&mut c, self.notes);
        let default_locale = match self.default_locale.as_deref().map(str::trim) {
            Some(tag) if !tag.is_empty() => normalize_locale(tag).unwrap_or_else(|| {
                c.fail("default_locale", "must be a locale tag such as en or pt-BR");
                tag.to_owned()
            }),
            _ if notes.len() == 1 => notes.keys().next().cloned().unwrap_or_default(),
            _ => {
                c.fail(
                    "default_locale",
                    "is required when notes has more than one locale",
                );
                String::new()
            }
        };
        if !default_locale.is_empty() && !notes.is_empty() && !notes.contains_key(&default_locale) {
            c.fail("default_locale", "must be one of the locales of notes");
        }
        c.finish(NewRelease {
            product,
            version,
            date,
            default_locale,
            notes,
        })
    }
}

/// Checks the notes of a request, keyed by their canonical locale tags.
pub fn check_notes(c: &mut Check, given: BTreeMap<String, Note>) -> BTreeMap<String, Note> {
    if given.is_empty() {
        c.fail("notes", "must have the notes of at least one locale");
    }
    if given.len() > MAX_LOCALES {
        c.fail("notes", format!("must have at most {MAX_LOCALES} locales"));
    }
    let mut notes = BTreeMap::new();
    for (tag, note) in given {
        let name = format!("notes.{tag}");
        let Some(locale) = normalize_locale(tag.trim()) else {
            c.fail(name, "must be keyed by a locale tag such as en or pt-BR");
            continue;
        };
        let note = Note::check(c, &name, &note.title, &note.body);
        if notes.insert(locale, note).is_some() {
            c.fail(name, "names a locale given twice");
        }
    }
    let bytes: usize = notes.values().map(Note::bytes).sum();
    if bytes > MAX_RELEASE_BYTES {
        c.fail(
            "notes",
            format!(
                "must total at most {MAX_RELEASE_BYTES} bytes; add more locales as translations"
            ),
        );
    }
    notes
}

/// The `release.translated` event: one locale's notes added to a release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReleaseTranslated {
    pub release_id: i64,
    pub product: Product,
    pub version: String,
    pub locale: String,
    pub note: Note,
    pub updated_at: DateTime<Utc>,
}

/// The payload of a `release.published` event, as any cloud wrote it:
/// before releases had products and locales, an event carried one title
/// and body, which became `wms` notes in `en`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum PublishedPayload {
    Current(Release),
    Legacy {
        id: i64,
        version: String,
        title: String,
        notes: String,
        published_at: Timestamp,
    },
}

/// The locale releases written before locales existed are in.
pub const LEGACY_LOCALE: &str = "en";

impl PublishedPayload {
    pub fn into_release(self) -> Release {
        match self {
            Self::Current(r) => r,
            Self::Legacy {
                id,
                version,
                title,
                notes,
                published_at,
            } => Release {
                id,
                product: Product::Wms,
                version,
                date: published_at.date_naive(),
                default_locale: LEGACY_LOCALE.into(),
                notes: BTreeMap::from([(LEGACY_LOCALE.into(), Note { title, body: notes })]),
                published_by: None,
                published_at,
                updated_at: published_at,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 3, 1).unwrap_or_default()
    }

    fn note(title: &str, body: &str) -> Note {
        Note {
            title: title.into(),
            body: body.into(),
        }
    }

    fn names(e: &[FieldError]) -> Vec<&str> {
        e.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn a_release_in_one_locale_defaults_to_it_and_to_today() {
        let r = ReleaseCreate {
            product: "signage".into(),
            version: "2.0.0".into(),
            date: None,
            default_locale: None,
            notes: BTreeMap::from([("pt-br".into(), note(" Novidades ", "- mais rápido\n\n"))]),
        }
        .parse(today());
        let r = r.expect("valid");
        assert_eq!(r.product, Product::Signage);
        assert_eq!(r.date, today());
        assert_eq!(r.default_locale, "pt-BR");
        assert_eq!(r.notes["pt-BR"], note("Novidades", "- mais rápido"));
    }

    #[test]
    fn every_violation_is_named() {
        let e = ReleaseCreate {
            product: "erp".into(),
            version: "next".into(),
            date: Some("01/02/2025".into()),
            default_locale: Some("fr".into()),
            notes: BTreeMap::from([
                ("en".into(), note(" ", "x")),
                ("es".into(), note("Hola", &"x".repeat(MAX_NOTES_BYTES + 1))),
                ("english".into(), note("Hi", "")),
                ("de".into(), note("Hallo", "bell \u{7}")),
            ]),
        }
        .parse(today())
        .expect_err("invalid");
        assert_eq!(
            names(&e),
            [
                "product",
                "version",
                "date",
                "notes.de.body",
                "notes.en.title",
                "notes.english",
                "notes.es.body",
                "default_locale"
            ]
        );
    }

    #[test]
    fn several_locales_need_a_default_and_a_bounded_size() {
        let two = BTreeMap::from([
            ("en".into(), note("New", "")),
            ("es".into(), note("Nuevo", "")),
        ]);
        let e = ReleaseCreate {
            product: "wms".into(),
            version: "1.0.0".into(),
            date: Some("2025-02-30".into()),
            default_locale: None,
            notes: two,
        }
        .parse(today())
        .expect_err("no default");
        assert_eq!(names(&e), ["date", "default_locale"]);

        let big = "x".repeat(MAX_NOTES_BYTES - 10);
        let e = ReleaseCreate {
            product: "wms".into(),
            version: "1.0.0".into(),
            date: None,
            default_locale: Some("en".into()),
            notes: BTreeMap::from([
                ("en".into(), note("A", &big)),
                ("es".into(), note("B", &big)),
            ]),
        }
        .parse(today())
        .expect_err("too large");
        assert_eq!(names(&e), ["notes"]);

        let e = ReleaseCreate {
            product: "wms".into(),
            version: "1.0.0".into(),
            date: None,
            default_locale: None,
            notes: BTreeMap::new(),
        }
        .parse(today())
        .expect_err("no notes");
        assert_eq!(names(&e), ["notes", "default_locale"]);
    }

    #[test]
    fn a_locale_given_twice_is_refused() {
        let e = ReleaseCreate {
            product: "app".into(),
            version: "1.0.0".into(),
            date: None,
            default_locale: Some("pt-BR".into()),
            notes: BTreeMap::from([
                ("pt-BR".into(), note("A", "")),
                ("pt_br".into(), note("B", "")),
            ]),
        }
        .parse(today())
        .expect_err("twice");
        assert_eq!(names(&e), ["notes.pt_br"]);
    }

    fn release(default: &str, locales: &[&str]) -> Release {
        let at = chrono::DateTime::UNIX_EPOCH;
        Release {
            id: 1,
            product: Product::Wms,
            version: "1.0.0".into(),
            date: today(),
            default_locale: default.into(),
            notes: locales
                .iter()
                .map(|l| ((*l).to_owned(), note(l, "")))
                .collect(),
            published_by: None,
            published_at: at,
            updated_at: at,
        }
    }

    #[test]
    fn notes_fall_back_by_language_then_to_the_default() {
        let r = release("en", &["en", "es", "pt-BR"]);
        let served = |wanted: &str| r.note_for(wanted).map(|(l, _)| l.to_owned());
        assert_eq!(served("es").as_deref(), Some("es"));
        assert_eq!(served("es-MX").as_deref(), Some("es"));
        assert_eq!(served("pt").as_deref(), Some("pt-BR"));
        assert_eq!(served("de").as_deref(), Some("en"));
        assert_eq!(release("xx", &[]).note_for("en"), None);
    }

    #[test]
    fn legacy_payloads_become_wms_releases_in_english() {
        let legacy = serde_json::json!({"id": 7, "version": "1.4.0", "title": "Faster",
            "notes": "- picking", "published_at": "2024-05-01T10:00:00Z"});
        let r = PublishedPayload::deserialize(&legacy)
            .expect("legacy")
            .into_release();
        assert_eq!(
            (r.id, r.product, r.default_locale.as_str()),
            (7, Product::Wms, "en")
        );
        assert_eq!(r.notes["en"], note("Faster", "- picking"));
        assert_eq!(r.date.to_string(), "2024-05-01");

        let current = serde_json::to_value(release("en", &["en"])).expect("json");
        let back = PublishedPayload::deserialize(&current)
            .expect("current")
            .into_release();
        assert_eq!(back, release("en", &["en"]));
    }
}
