//! Releases of the software: published in the cloud, synced to every edge.

use crate::FieldError;
use crate::validate::Check;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The longest release notes accepted (Markdown).
pub const MAX_NOTES_BYTES: usize = 64 * 1024;

/// A published release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Release {
    pub id: i64,
    /// Semantic version, e.g. `1.4.0` or `1.5.0-rc.1`.
    pub version: String,
    pub title: String,
    /// What changed, in Markdown.
    pub notes: String,
    pub published_at: DateTime<Utc>,
}

/// What publishing a release takes.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct ReleaseCreate {
    pub version: String,
    pub title: String,
    pub notes: String,
}

/// A checked release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRelease {
    pub version: String,
    pub title: String,
    pub notes: String,
}

/// `MAJOR.MINOR.PATCH`, each a number without leading zeros, with an
/// optional `-prerelease` of dot-separated letters, digits and hyphens.
fn is_semver(v: &str) -> bool {
    let (core, pre) = match v.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (v, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    let number_ok = |n: &&str| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    let pre_ok = pre.is_none_or(|p| {
        p.split('.')
            .all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    });
    numbers.len() == 3 && numbers.iter().all(number_ok) && pre_ok
}

/// Orders two semantic versions by precedence (a pre-release comes before
/// its release; numeric identifiers compare as numbers). `None` when either
/// is not a semantic version.
pub fn compare(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    if !is_semver(a) || !is_semver(b) {
        return None;
    }
    let split = |v: &str| -> (Vec<u64>, Option<String>) {
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c.to_owned(), Some(p.to_owned())),
            None => (v.to_owned(), None),
        };
        (
            core.split('.').filter_map(|n| n.parse().ok()).collect(),
            pre,
        )
    };
    let ((ca, pa), (cb, pb)) = (split(a), split(b));
    let by_core = ca.cmp(&cb);
    if by_core != Ordering::Equal {
        return Some(by_core);
    }
    Some(match (pa, pb) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => {
            let ident = |i: &str| (i.parse::<u64>().ok(), i.to_owned());
            let xs: Vec<_> = x.split('.').map(ident).collect();
            let ys: Vec<_> = y.split('.').map(ident).collect();
            let mut order = xs.len().cmp(&ys.len());
            for (l, r) in xs.iter().zip(&ys) {
                let o = match (l.0, r.0) {
                    (Some(m), Some(n)) => m.cmp(&n),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => l.1.cmp(&r.1),
                };
                if o != Ordering::Equal {
                    order = o;
                    break;
                }
            }
            order
        }
    })
}

impl ReleaseCreate {
    pub fn parse(self) -> Result<NewRelease, Vec<FieldError>> {
        let mut c = Check::new();
        let version = self.version.trim().to_owned();
        if !is_semver(&version) {
            c.fail(
                "version",
                "must be a semantic version such as 1.4.0 or 1.5.0-rc.1",
            );
        }
        let title = self.title.trim().to_owned();
        if title.is_empty() || title.chars().count() > 200 {
            c.fail("title", "must be 1 to 200 characters");
        }
        if self.notes.len() > MAX_NOTES_BYTES {
            c.fail("notes", format!("must be at most {MAX_NOTES_BYTES} bytes"));
        }
        c.finish(NewRelease {
            version,
            title,
            notes: self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in ["0.1.0", "1.4.0", "10.20.30", "1.5.0-rc.1", "2.0.0-alpha-2"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.2.x",
            "1.2.3-",
            "1.2.3-a..b",
            "v1.2.3",
            " 1.2.3",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn precedence() {
        use std::cmp::Ordering::*;
        // The chain from the semver specification, each before the next.
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.2.0",
            "1.10.0",
            "2.0.0",
        ];
        for (i, a) in chain.iter().enumerate() {
            for (j, b) in chain.iter().enumerate() {
                assert_eq!(compare(a, b), Some(i.cmp(&j)), "{a} vs {b}");
            }
        }
        assert_eq!(compare("1.0.0", "1.0.0"), Some(Equal));
        assert_eq!(compare("1.0", "1.0.0"), None);
        assert_eq!(compare("1.0.0", "latest"), None);
        assert_eq!(compare("0.9.0", "0.10.0"), Some(Less));
        assert_eq!(compare("3.0.0", "2.99.99"), Some(Greater));
    }

    #[test]
    fn every_violation_is_named() {
        let e = ReleaseCreate {
            version: "next".into(),
            title: " ".into(),
            notes: "x".repeat(MAX_NOTES_BYTES + 1),
        }
        .parse()
        .expect_err("invalid");
        let names: Vec<&str> = e.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["version", "title", "notes"]);
    }
}
