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
        let v = value.map(str::trim).filter(|v| !v.is_empty())?;
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
