//! Turning raw request values into checked ones while collecting every
//! violation, so a client learns all that is wrong with a request at once.

use crate::FieldError;

/// Collects field violations; each check returns the cleaned value (or a
/// placeholder when it failed) and `finish` decides.
#[derive(Debug, Default)]
pub struct Check {
    errors: Vec<FieldError>,
}

/// Whether a string holds nothing a label, a log line or a ZPL field would
/// choke on.
fn has_control(s: &str) -> bool {
    s.chars().any(|c| c.is_control())
}

/// The text rules below as ECMA-262 patterns, for the API description
/// (a field says which with `#[schema(format = "line")]`). A value is
/// trimmed of whitespace before it is checked, so each pattern allows
/// whitespace around what it checks. Tested against the checks below.
pub mod patterns {
    /// `Check::text`: something besides whitespace, no control character
    /// once trimmed.
    pub const LINE: &str = r"^\s*[^\s\u0000-\u001f\u007f-\u009f](?:[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f])?\s*$";
    /// `Check::scan`: as `LINE`, with the GS1 group separator (ASCII 29).
    pub const SCAN: &str = r"^\s*[^\s\u0000-\u001c\u001e\u001f\u007f-\u009f](?:[^\u0000-\u001c\u001e\u001f\u007f-\u009f]*[^\s\u0000-\u001c\u001e\u001f\u007f-\u009f])?\s*$";
    /// `LINE`, without the characters that print nothing or reorder what
    /// follows (names people type into settings, `printing::invisible`).
    pub const PRINTABLE: &str = r"^\s*[^\s\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff](?:[^\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]*[^\s\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff])?\s*$";
    /// `Check::code`: one word of printable characters.
    pub const CODE: &str = r"^\s*[^\s\u0000-\u001f\u007f-\u009f]+\s*$";
    /// `Check::opt_text`: blank (the same as absent), or `LINE`.
    pub const OPT_LINE: &str = r"^\s*(?:[^\s\u0000-\u001f\u007f-\u009f](?:[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f])?)?\s*$";
    /// `crm::body_text`: a text that may span lines (tabs, line breaks),
    /// with something besides whitespace and no other control character.
    pub const BODY: &str = r"^\s*[^\s\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f](?:[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*[^\s\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f])?\s*$";
    /// `crm::contact::is_email`, a little narrower (a top-level domain
    /// that starts with a letter; bounded parts).
    pub const EMAIL: &str = r"^\s*[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,30}(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,30})?@([A-Za-z0-9]([A-Za-z0-9-]{0,20}[A-Za-z0-9])?\.){1,3}[A-Za-z][A-Za-z0-9-]{0,20}[A-Za-z0-9]\s*$";
    /// `crm::is_code`: a department code or an integration id.
    pub const CRM_CODE: &str = r"^[a-z][a-z0-9_-]{0,63}$";
    /// A required free text that may span lines: something besides
    /// whitespace ([`super::blank`]). Spelled out rather than `\S`: U+0085
    /// is whitespace to Rust and Python but not to ECMA-262, U+FEFF to
    /// ECMA-262 only; the checks take both as blank.
    pub const NOTE: &str = r"[^\s\u0085\ufeff]";
}

impl Check {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn fail(&mut self, name: impl Into<String>, status: impl Into<String>) {
        self.errors.push(FieldError::new(name, status));
    }

    pub fn extend(&mut self, prefix: &str, errors: Vec<FieldError>) {
        for e in errors {
            self.errors
                .push(FieldError::new(format!("{prefix}{}", e.name), e.status));
        }
    }

    /// A required, trimmed, single-line text of at most `max` characters.
    pub fn text(&mut self, name: &str, value: &str, max: usize) -> String {
        let v = value.trim();
        if v.is_empty() {
            self.fail(name, "is required");
        } else if v.chars().count() > max {
            self.fail(name, format!("must be at most {max} characters"));
        } else if has_control(v) {
            self.fail(name, "must not contain control characters");
        }
        v.to_owned()
    }

    /// What a scanner sent: like `text`, but the GS1 group separator (ASCII
    /// 29, FNC1 in a GS1 symbol) is part of the data, not a stray control.
    pub fn scan(&mut self, name: &str, value: &str, max: usize) -> String {
        let v = value.trim();
        if v.is_empty() {
            self.fail(name, "is required");
        } else if v.chars().count() > max {
            self.fail(name, format!("must be at most {max} characters"));
        } else if v.chars().any(|c| c.is_control() && c != '\u{1d}') {
            self.fail(
                name,
                "must not contain control characters other than the GS1 separator",
            );
        }
        v.to_owned()
    }

    /// An optional text: absent or blank becomes `None`.
    pub fn opt_text(&mut self, name: &str, value: Option<&str>, max: usize) -> Option<String> {
        let v = value.map(str::trim).filter(|v| !v.is_empty())?;
        Some(self.text(name, v, max))
    }

    /// A free text that may span lines (notes), bounded in size.
    pub fn note(&mut self, name: &str, value: Option<&str>, max: usize) -> Option<String> {
        let v = value.map(trim_blank).filter(|v| !v.is_empty())?;
        if v.chars().count() > max {
            self.fail(name, format!("must be at most {max} characters"));
        }
        Some(v.to_owned())
    }

    /// An identifier-like token: printable ASCII or letters, no whitespace.
    pub fn code(&mut self, name: &str, value: &str, max: usize) -> String {
        let v = self.text(name, value, max);
        if v.chars().any(char::is_whitespace) {
            self.fail(name, "must not contain spaces");
        }
        v
    }

    /// A quantity that must be strictly positive.
    pub fn positive(&mut self, name: &str, value: i64, max: i64) -> i64 {
        if value <= 0 {
            self.fail(name, "must be greater than 0");
        } else if value > max {
            self.fail(name, format!("must be at most {max}"));
        }
        value
    }

    /// An integer within `min..=max`, the range documented where the field
    /// is declared.
    pub fn range(&mut self, name: &str, value: i64, min: i64, max: i64) -> i64 {
        if !(min..=max).contains(&value) {
            self.fail(name, format!("must be between {min} and {max}"));
        }
        value
    }

    /// An optional integer within `min..=max`.
    pub fn opt_range(&mut self, name: &str, value: Option<i64>, min: i64, max: i64) -> Option<i64> {
        value.map(|v| self.range(name, v, min, max))
    }

    /// An ISO 4217 currency code.
    pub fn currency(&mut self, name: &str, value: &str) -> String {
        let v = value.trim().to_ascii_uppercase();
        if v.len() != 3 || !v.bytes().all(|b| b.is_ascii_uppercase()) {
            self.fail(name, "must be a three-letter ISO 4217 code");
        }
        v
    }

    /// A list of at most `max` entries.
    pub fn bounded<T>(&mut self, name: &str, list: &[T], max: usize) {
        if list.len() > max {
            self.fail(name, format!("must have at most {max} entries"));
        }
    }

    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn finish<T>(self, value: T) -> Result<T, Vec<FieldError>> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(self.errors)
        }
    }
}

/// Whether a text is only whitespace: Unicode's, and the byte-order mark
/// (U+FEFF, which ECMA-262 counts as whitespace and Unicode does not).
pub fn blank(s: &str) -> bool {
    trim_blank(s).is_empty()
}

/// A text without the whitespace around it, as [`blank`] sees it.
pub fn trim_blank(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_every_violation() {
        let mut c = Check::new();
        c.text("name", "  ", 10);
        c.text("brand", "abcdefghijk", 10);
        c.code("sku", "A B", 10);
        c.positive("quantity", 0, 10);
        c.currency("currency", "euro");
        let errors = c.finish(()).err().unwrap_or_default();
        let names: Vec<_> = errors.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["name", "brand", "sku", "quantity", "currency"]);
    }

    #[test]
    fn trims_and_accepts() {
        let mut c = Check::new();
        assert_eq!(c.text("name", "  Widget ", 10), "Widget");
        assert_eq!(c.opt_text("brand", Some(" "), 10), None);
        assert_eq!(c.currency("currency", "eur"), "EUR");
        assert!(c.is_ok());
    }

    #[test]
    fn control_characters_are_refused() {
        let mut c = Check::new();
        c.text("name", "a\u{0}b", 10);
        c.text("name", "a\nb", 10);
        assert_eq!(c.finish(()).err().map(|e| e.len()), Some(2));
    }

    #[test]
    fn scans_keep_the_gs1_separator() {
        let mut c = Check::new();
        assert_eq!(
            c.scan("code", " ]d20109506000134352\u{1d}10AB ", 100),
            "]d20109506000134352\u{1d}10AB"
        );
        assert!(c.is_ok());
        c.scan("code", "A\u{0}B", 100);
        assert!(!c.is_ok());
    }

    #[test]
    fn ranges_hold_at_the_extremes() {
        let mut c = Check::new();
        for v in [i64::MIN, i64::MIN + 1, -1, 0, 11, i64::MAX] {
            c.positive("quantity", v, 10);
            c.range("delta", v, -10, 10);
        }
        for v in [1, 10] {
            c.positive("quantity", v, 10);
        }
        for v in [-10, 0, 10] {
            c.range("delta", v, -10, 10);
        }
        assert_eq!(c.opt_range("counted", None, 0, 1), None);
        assert_eq!(c.finish(()).err().map(|e| e.len()), Some(10));
    }

    #[test]
    fn length_counts_characters_not_bytes() {
        let mut c = Check::new();
        c.text("name", "ääääää", 6);
        assert!(c.is_ok());
    }
}

#[cfg(test)]
mod pattern_tests {
    use super::{Check, patterns};
    use proptest::prelude::*;

    /// Whether `pattern` (ECMA-262 as described; these use only what the
    /// `regex` crate reads the same way) matches `s`.
    fn matches(pattern: &str, s: &str) -> bool {
        regex::Regex::new(pattern).expect("pattern").is_match(s)
    }

    fn passes(check: impl FnOnce(&mut Check)) -> bool {
        let mut c = Check::new();
        check(&mut c);
        c.is_ok()
    }

    /// Text drawn from what a fuzzer sends: letters, spaces of every kind,
    /// control characters, the GS1 separator.
    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just(' '),
                Just('\t'),
                Just('\n'),
                Just('\u{b}'),
                Just('\u{1d}'),
                Just('\u{85}'),
                Just('\u{a0}'),
                Just('\u{3000}'),
                Just('\u{feff}'),
                Just('a'),
                Just('Ж'),
                Just('東'),
                any::<char>(),
            ],
            0..8,
        )
        .prop_map(|cs| cs.into_iter().collect())
    }

    proptest! {
        // The description says what the checks do, for every text: a
        // generator that follows it is never refused, and what it calls
        // invalid is refused.
        #[test]
        fn patterns_say_what_the_checks_do(s in text()) {
            prop_assert_eq!(matches(patterns::LINE, &s), passes(|c| { c.text("f", &s, 100); }), "line {:?}", s);
            prop_assert_eq!(matches(patterns::SCAN, &s), passes(|c| { c.scan("f", &s, 100); }), "scan {:?}", s);
            prop_assert_eq!(matches(patterns::CODE, &s), passes(|c| { c.code("f", &s, 100); }), "code {:?}", s);
            prop_assert_eq!(
                matches(patterns::PRINTABLE, &s),
                crate::printing::PrinterFields { name: Some(s.clone()), ..Default::default() }
                    .apply(None)
                    .err()
                    .is_none_or(|e| e.iter().all(|e| e.name != "name")),
                "printable {:?}", s
            );
            prop_assert_eq!(
                matches(patterns::BODY, &s),
                passes(|c| { crate::crm::body_text(c, "f", &s, 100); }),
                "body {:?}", s
            );
            prop_assert_eq!(matches(patterns::NOTE, &s), !super::blank(&s), "note {:?}", s);
            prop_assert_eq!(
                matches(patterns::OPT_LINE, &s),
                passes(|c| { c.opt_text("f", Some(&s), 100); }),
                "opt-line {:?}", s
            );
        }
    }
}
