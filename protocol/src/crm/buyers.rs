//! Buyers: one record per person and business, from the orders they placed
//! and the forms they sent, and the searches over them.
//!
//! A search never reaches the database as text to interpret: a name search
//! is a range of an index (`[prefix, next prefix)`), and a wildcard pattern
//! becomes a range on its literal start (or, reversed, its literal end)
//! plus a LIKE pattern in which every character the caller typed, other
//! than `*` and `?`, is a literal. Both are bound as parameters.
//!
//! The index and the searches are folded alike (see [`fold`]): "munoz"
//! finds Ana Muñoz, however either was typed. Identity is not: a buyer
//! known only by name is "José" or "Jose" as written.

use crate::FieldError;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// The longest `key_id` accepted, in characters.
pub const MAX_KEY: usize = 100;
/// The shortest name prefix searched.
pub const MIN_NAME_CHARS: usize = 2;
/// Literal characters a wildcard pattern needs at its start or its end:
/// what keeps every wildcard search a narrow range of the index.
pub const MIN_ANCHOR: usize = 3;
/// Wildcards one pattern may hold: each `*` multiplies LIKE's work.
pub const MAX_WILDCARDS: usize = 8;
/// Words of a name from which it can be found (`lópez` finds "Ana López").
pub const MAX_NAME_WORDS: usize = 8;
/// The channel recorded for buyers who wrote through a contact form.
pub const CONTACT_CHANNEL: &str = super::CONTACT_FORM;

/// A buyer as the search answers it: the spec's `Item` of buyer search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BuyerItem {
    /// The buyer's id (what `by_id` takes, as a decimal string).
    pub id: i64,
    pub name: Option<String>,
    /// Lowercase.
    pub email: Option<String>,
    /// As last given.
    pub phone: Option<String>,
    /// Orders placed.
    pub order_count: i64,
    /// Threads opened through contact forms.
    pub thread_count: i64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// Sales channels of their orders, and `contact_form` if they wrote.
    pub channels: Vec<String>,
}

/// `{results, recordsTotal, recordsFiltered}`: the buyer search envelope.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BuyerResults {
    pub results: Vec<BuyerItem>,
    /// Buyers of the business.
    #[serde(rename = "recordsTotal")]
    pub records_total: String,
    /// Buyers the search matches (the page is a window on these).
    #[serde(rename = "recordsFiltered")]
    pub records_filtered: String,
}

impl BuyerResults {
    pub fn new(results: Vec<BuyerItem>, total: u64, filtered: u64) -> Self {
        Self {
            results,
            records_total: total.to_string(),
            records_filtered: filtered.to_string(),
        }
    }
}

/// An email as identity: trimmed and lowercased.
pub fn email_key(raw: &str) -> Option<String> {
    Some(raw.trim().to_lowercase()).filter(|e| !e.is_empty())
}

/// A phone as identity: its digits, `+` first when it was international
/// (`+` or `00`). Fewer than 5 or more than 20 digits identify nobody.
pub fn phone_key(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let digits: String = raw.chars().filter(char::is_ascii_digit).collect();
    let (plus, digits) = match digits.strip_prefix("00") {
        Some(rest) if !raw.starts_with('+') => (true, rest.to_owned()),
        _ => (raw.starts_with('+'), digits),
    };
    (5..=20)
        .contains(&digits.len())
        .then(|| if plus { format!("+{digits}") } else { digits })
}

/// A name as searched: lowercase, runs of whitespace made one space.
pub fn name_key(raw: &str) -> Option<String> {
    let key = raw
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    Some(key).filter(|k| !k.is_empty())
}

/// Text as the search index holds it: lowercase, compatibility forms made
/// plain (full-width letters, ligatures), accents and other combining marks
/// dropped, and the letters that carry their mark inside (`ß`, `æ`, `ø`,
/// `ł`, …) written as they are without one; then whitespace as in
/// [`name_key`]. `None` when nothing is left.
pub fn fold(raw: &str) -> Option<String> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    let mut out = String::with_capacity(raw.len());
    for c in raw.nfkd().filter(|c| !is_combining_mark(*c)) {
        match c {
            'ß' | 'ẞ' => out.push_str("ss"),
            'æ' | 'Æ' => out.push_str("ae"),
            'œ' | 'Œ' => out.push_str("oe"),
            'ø' | 'Ø' => out.push('o'),
            'ł' | 'Ł' => out.push('l'),
            'đ' | 'Đ' | 'ð' | 'Ð' => out.push('d'),
            'þ' | 'Þ' => out.push_str("th"),
            'ı' => out.push('i'),
            c => out.extend(c.to_lowercase()),
        }
    }
    name_key(&out)
}

/// Which index entries a term is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermKind {
    /// The name from one of its words on.
    Name,
    /// The email, the phone.
    Contact,
    /// The name, the email and the phone read backwards, for patterns
    /// anchored at their end.
    Reversed,
}

impl TermKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "n",
            Self::Contact => "c",
            Self::Reversed => "r",
        }
    }
}

/// The index entries of a buyer, from its keys (see `name_key`,
/// `email_key`, `phone_key`), folded (see [`fold`]).
pub fn terms(
    name: Option<&str>,
    email: Option<&str>,
    phone: Option<&str>,
) -> Vec<(TermKind, String)> {
    let (name, email) = (name.and_then(fold), email.and_then(fold));
    let (name, email) = (name.as_deref(), email.as_deref());
    let mut out = Vec::new();
    if let Some(name) = name {
        let starts = name
            .char_indices()
            .filter(|&(i, _)| i == 0 || name[..i].ends_with(' '))
            .map(|(i, _)| i)
            .take(MAX_NAME_WORDS);
        out.extend(starts.map(|i| (TermKind::Name, name[i..].to_owned())));
    }
    for contact in [email, phone].into_iter().flatten() {
        out.push((TermKind::Contact, contact.to_owned()));
    }
    for whole in [name, email, phone].into_iter().flatten() {
        out.push((TermKind::Reversed, whole.chars().rev().collect()));
    }
    out.sort_by(|a, b| (a.0.as_str(), &a.1).cmp(&(b.0.as_str(), &b.1)));
    out.dedup();
    out
}

/// The least string greater than every string that starts with `prefix`
/// (byte order, which is SQLite's BINARY order for UTF-8 text); `None`
/// when no string is (the prefix is all U+10FFFF).
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = match last {
            '\u{D7FF}' => Some('\u{E000}'),
            c => char::from_u32(u32::from(c) + 1),
        };
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// A range of index entries: those of `kinds` in `[from, to)` that match
/// `like` (`LIKE ? ESCAPE '\'`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermScan {
    pub kinds: &'static [TermKind],
    pub from: String,
    pub to: String,
    pub like: String,
}

impl TermScan {
    fn prefix(kinds: &'static [TermKind], prefix: String, like: String) -> Result<Self, String> {
        let to = prefix_end(&prefix).ok_or("cannot be searched")?;
        Ok(Self {
            kinds,
            from: prefix,
            to,
            like,
        })
    }
}

/// The LIKE escape character the patterns are written with.
pub const LIKE_ESCAPE: char = '\\';

/// `s` as a LIKE pattern that matches exactly `s`.
pub fn like_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | LIKE_ESCAPE) {
            out.push(LIKE_ESCAPE);
        }
        out.push(c);
    }
    out
}

/// Compiles a wildcard pattern: `*` any run of characters, `?` one
/// character, everything else literal. It matches an entry as a whole, so
/// it needs at least `MIN_ANCHOR` literal characters at its start (scanned
/// forwards) or its end (scanned backwards, over the reversed entries).
pub fn compile_wildcard(raw: &str) -> Result<TermScan, String> {
    let pattern = searchable(raw)?;
    let mut chars: Vec<char> = Vec::with_capacity(pattern.len());
    for c in pattern.chars() {
        if !(c == '*' && chars.last() == Some(&'*')) {
            chars.push(c);
        }
    }
    let wild = |c: &char| matches!(c, '*' | '?');
    if chars.iter().filter(|c| wild(c)).count() > MAX_WILDCARDS {
        return Err(format!("must have at most {MAX_WILDCARDS} wildcards"));
    }
    let head = chars.iter().take_while(|c| !wild(c)).count();
    let tail = chars.iter().rev().take_while(|c| !wild(c)).count();
    let like = |chars: &[char]| -> String {
        chars
            .iter()
            .map(|&c| match c {
                '*' => "%".to_owned(),
                '?' => "_".to_owned(),
                c => like_literal(&c.to_string()),
            })
            .collect()
    };
    if head >= MIN_ANCHOR && head >= tail {
        let anchor = chars[..head].iter().collect();
        TermScan::prefix(&[TermKind::Name, TermKind::Contact], anchor, like(&chars))
    } else if tail >= MIN_ANCHOR {
        chars.reverse();
        let anchor = chars[..tail].iter().collect();
        TermScan::prefix(&[TermKind::Reversed], anchor, like(&chars))
    } else {
        Err(format!(
            "a wildcard pattern needs at least {MIN_ANCHOR} literal characters at its start or its end"
        ))
    }
}

/// A search text as the index holds its entries: folded (see [`fold`]),
/// bounded (as typed), printable.
fn searchable(raw: &str) -> Result<String, String> {
    if raw.chars().any(char::is_control) {
        return Err("must not contain control characters".into());
    }
    let key = name_key(raw).ok_or("is required")?;
    if key.chars().count() > MAX_KEY {
        return Err(format!("must be at most {MAX_KEY} characters"));
    }
    fold(&key).ok_or_else(|| "must hold more than accents and marks".into())
}

/// The path's `key_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    ByName,
    ById,
    ByWildcard,
}

impl KeyType {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "by_name" => Some(Self::ByName),
            "by_id" => Some(Self::ById),
            "by_wildcard" => Some(Self::ByWildcard),
            _ => None,
        }
    }
}

/// The topic `filter_id` narrows a buyer search to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuyerFilter {
    /// `orders`: buyers who placed at least one order.
    Orders,
    /// `crm`: buyers who wrote through a contact form.
    Crm,
    /// `channel:<name>`: buyers seen on that sales channel (or
    /// `channel:contact_form`).
    Channel(String),
}

impl BuyerFilter {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "orders" => Some(Self::Orders),
            "crm" => Some(Self::Crm),
            _ => s
                .strip_prefix("channel:")
                .filter(|c| {
                    !c.is_empty()
                        && c.len() <= 64
                        && !c.chars().any(|ch| ch.is_whitespace() || ch.is_control())
                })
                .map(|c| Self::Channel(c.to_owned())),
        }
    }
}

/// What a buyer search looks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuyerMatch {
    Id(i64),
    Terms(TermScan),
}

/// A checked buyer search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuyerSearch {
    pub by: BuyerMatch,
    pub filter: Option<BuyerFilter>,
}

/// Checks a search: `key_type` from the path, `key_id` and `filter_id`
/// from the query. Every violation is reported, naming its parameter.
pub fn parse_search(
    key_type: &str,
    key_id: Option<&str>,
    filter_id: Option<&str>,
) -> Result<BuyerSearch, Vec<FieldError>> {
    let mut errors = Vec::new();
    let key_type = KeyType::parse(key_type);
    if key_type.is_none() {
        errors.push(FieldError::new(
            "key_type",
            "must be by_name, by_id or by_wildcard",
        ));
    }
    let key_id = key_id.filter(|k| !k.trim().is_empty());
    if key_id.is_none() {
        errors.push(FieldError::new("key_id", "is required"));
    }
    let by = match (key_type, key_id) {
        (Some(t), Some(k)) => match search_by(t, k) {
            Ok(by) => Some(by),
            Err(status) => {
                errors.push(FieldError::new("key_id", status));
                None
            }
        },
        _ => None,
    };
    let filter = filter_id
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .and_then(|f| {
            let parsed = BuyerFilter::parse(f);
            if parsed.is_none() {
                errors.push(FieldError::new(
                    "filter_id",
                    "must be orders, crm or channel:<channel>",
                ));
            }
            parsed
        });
    match by {
        Some(by) if errors.is_empty() => Ok(BuyerSearch { by, filter }),
        _ => Err(errors),
    }
}

fn search_by(t: KeyType, key: &str) -> Result<BuyerMatch, String> {
    match t {
        KeyType::ById => key
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|id| *id > 0)
            .map(BuyerMatch::Id)
            .ok_or_else(|| "must be a buyer id (a positive integer)".into()),
        KeyType::ByName => {
            let q = searchable(key)?;
            if q.chars().count() < MIN_NAME_CHARS {
                return Err(format!("must be at least {MIN_NAME_CHARS} characters"));
            }
            let like = format!("{}%", like_literal(&q));
            TermScan::prefix(&[TermKind::Name], q, like).map(BuyerMatch::Terms)
        }
        KeyType::ByWildcard => compile_wildcard(key).map(BuyerMatch::Terms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// SQLite's LIKE with `ESCAPE '\'`, for text that is already lowercase.
    fn like(pattern: &[char], text: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('%', rest)) => (0..=text.len()).any(|i| like(rest, &text[i..])),
            Some(('_', rest)) => !text.is_empty() && like(rest, &text[1..]),
            Some(('\\', rest)) => match (rest.split_first(), text.split_first()) {
                (Some((p, rest)), Some((t, text))) => p == t && like(rest, text),
                _ => false,
            },
            Some((p, rest)) => text.first() == Some(p) && like(rest, &text[1..]),
        }
    }

    /// Whether a compiled scan finds `entry` (a key as the index holds it).
    fn finds(scan: &TermScan, entry: &str) -> bool {
        let reversed = scan.kinds == [TermKind::Reversed];
        let e: String = if reversed {
            entry.chars().rev().collect()
        } else {
            entry.to_owned()
        };
        let chars: Vec<char> = e.chars().collect();
        e >= scan.from && e < scan.to && like(&scan.like.chars().collect::<Vec<_>>(), &chars)
    }

    fn wildcard(p: &str) -> TermScan {
        compile_wildcard(p).unwrap_or_else(|e| panic!("{p:?} refused: {e}"))
    }

    #[test]
    fn normalizes_identities() {
        assert_eq!(
            email_key("  Ana@Example.COM "),
            Some("ana@example.com".into())
        );
        assert_eq!(email_key("  "), None);
        assert_eq!(phone_key("+34 600-11 22 33"), Some("+34600112233".into()));
        assert_eq!(phone_key("0034 600 112233"), Some("+34600112233".into()));
        assert_eq!(phone_key("(600) 112 233"), Some("600112233".into()));
        assert_eq!(phone_key("12-34"), None);
        assert_eq!(phone_key(&"1".repeat(21)), None);
        assert_eq!(
            name_key("  Ana   María\tLÓPEZ "),
            Some("ana maría lópez".into())
        );
        assert_eq!(name_key(" \t "), None);
    }

    #[test]
    fn terms_cover_name_words_contacts_and_their_ends() {
        let t = terms(Some("ana maría lópez"), Some("ana@x.com"), Some("+34600"));
        let of = |k: TermKind| -> Vec<&str> {
            t.iter()
                .filter(|(kind, _)| *kind == k)
                .map(|(_, s)| s.as_str())
                .collect()
        };
        assert_eq!(
            of(TermKind::Name),
            ["ana maria lopez", "lopez", "maria lopez"]
        );
        assert_eq!(of(TermKind::Contact), ["+34600", "ana@x.com"]);
        assert_eq!(
            of(TermKind::Reversed),
            ["00643+", "moc.x@ana", "zepol airam ana"]
        );
        let long = (0..20)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(terms(Some(&long), None, None).len(), MAX_NAME_WORDS + 1);
        assert!(terms(None, None, None).is_empty());
    }

    #[test]
    fn folding_sets_accents_and_case_aside() {
        for (raw, folded) in [
            ("Ana Muñoz", "ana munoz"),
            ("JOSÉ  PÉREZ", "jose perez"),
            ("François Lefèvre", "francois lefevre"),
            ("Łukasz Dąbrowski", "lukasz dabrowski"),
            ("Søren Kierkegaard", "soren kierkegaard"),
            ("Jörg Straße", "jorg strasse"),
            ("Ærø", "aero"),
            ("Œuvre", "oeuvre"),
            ("Đorđe", "dorde"),
            ("Þór", "thor"),
            ("İstanbul", "istanbul"),
            ("ıspanak", "ispanak"),
            ("Ｍüller", "muller"),
            ("ﬁnn", "finn"),
            ("Nguyễn Thị", "nguyen thi"),
            ("Ελένη", "ελενη"),
            ("Дмитрий Йода", "дмитрии иода"),
            ("ガルシア", "カルシア"),
            ("+34 600", "+34 600"),
            ("josé@Example.com", "jose@example.com"),
        ] {
            assert_eq!(fold(raw).as_deref(), Some(folded), "{raw}");
        }
        assert_eq!(fold("\u{301}\u{308}"), None);
        assert_eq!(fold("  "), None);
    }

    #[test]
    fn searches_find_names_however_accented() {
        let indexed = terms(name_key("Ana Muñoz-Pérez").as_deref(), None, None);
        let found = |s: &BuyerSearch| match &s.by {
            BuyerMatch::Terms(scan) => indexed.iter().any(|(kind, term)| {
                scan.kinds.contains(kind) && scan.from <= *term && *term < scan.to
            }),
            BuyerMatch::Id(_) => false,
        };
        for q in ["munoz", "MUÑOZ", "ana mu", "Añ"] {
            let s = parse_search("by_name", Some(q), None).expect(q);
            assert!(found(&s), "{q}");
        }
        let s = parse_search("by_wildcard", Some("*pérez"), None).expect("pattern");
        let BuyerMatch::Terms(scan) = &s.by else {
            panic!("a term scan");
        };
        assert_eq!(
            (scan.from.as_str(), scan.like.as_str()),
            ("zerep", "zerep%")
        );
        assert!(parse_search("by_name", Some("\u{301}\u{301}"), None).is_err());
    }

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end("ab"), Some("ac".into()));
        assert_eq!(prefix_end("a\u{D7FF}"), Some("a\u{E000}".into()));
        assert_eq!(prefix_end("a\u{10FFFF}"), Some("b".into()));
        assert_eq!(prefix_end("\u{10FFFF}\u{10FFFF}"), None);
        assert_eq!(prefix_end(""), None);
    }

    #[test]
    fn wildcards_anchor_where_the_literals_are() {
        let s = wildcard("Ana*");
        assert_eq!(
            (s.kinds, s.from.as_str(), s.to.as_str()),
            (&[TermKind::Name, TermKind::Contact][..], "ana", "anb")
        );
        assert_eq!(s.like, "ana%");
        let s = wildcard("*@Example.com");
        assert_eq!(
            (s.kinds, s.from.as_str()),
            (&[TermKind::Reversed][..], "moc.elpmaxe@")
        );
        assert_eq!(s.like, "moc.elpmaxe@%");
        assert_eq!(wildcard("an?*lópez").from, "zepol");
        assert_eq!(wildcard("ana").like, "ana");
        assert_eq!(wildcard("a**b**cde").like, "edc%b%a");
    }

    #[test]
    fn wildcards_find_what_they_say() {
        assert!(finds(&wildcard("ana*"), "ana lópez"));
        assert!(finds(&wildcard("ana*"), "ana@x.com"));
        assert!(!finds(&wildcard("ana*"), "juana"));
        assert!(finds(&wildcard("*@x.com"), "ana@x.com"));
        assert!(!finds(&wildcard("*@x.com"), "ana@x.company"));
        assert!(finds(&wildcard("+34600*"), "+34600112233"));
        assert!(finds(&wildcard("ana@?.com"), "ana@x.com"));
        assert!(!finds(&wildcard("ana@?.com"), "ana@xy.com"));
        assert!(finds(&wildcard("ana l*z"), "ana lópez"));
    }

    #[test]
    fn like_metacharacters_are_literals() {
        let s = wildcard("50%_off\\*");
        assert_eq!(s.like, "50\\%\\_off\\\\%");
        assert!(finds(&s, "50%_off\\ forever"));
        assert!(!finds(&s, "50xxoff\\ forever"));
        assert!(!finds(&wildcard("a_c"), "abc"));
        assert!(finds(&wildcard("a_c"), "a_c"));
        assert!(!finds(&wildcard("ab%"), "abc"));
        let q = wildcard("o'brien'; drop table buyers; --");
        assert!(finds(&q, "o'brien'; drop table buyers; --"));
        assert!(!finds(&q, "o'brien"));
    }

    #[test]
    fn patterns_without_anchors_or_with_too_much_are_refused() {
        for bad in [
            "", "  ", "*", "**", "ab*", "*ab", "a*b", "?ab?", "*abc*", "a?c",
        ] {
            assert!(compile_wildcard(bad).is_err(), "{bad:?}");
        }
        assert!(compile_wildcard(&"a".repeat(MAX_KEY + 1)).is_err());
        assert!(compile_wildcard(&format!("abc{}", "?".repeat(MAX_WILDCARDS + 1))).is_err());
        assert!(compile_wildcard(&format!("abc{}", "?".repeat(MAX_WILDCARDS))).is_ok());
        assert!(compile_wildcard("abc\u{0}*").is_err());
        assert!(compile_wildcard("abc*******").is_ok(), "runs of * are one");
    }

    #[test]
    fn searches_are_checked_whole() {
        let names = |r: Result<BuyerSearch, Vec<FieldError>>| -> Vec<String> {
            r.err()
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(
            names(parse_search("by_email", None, Some("vip"))),
            ["key_type", "key_id", "filter_id"]
        );
        assert_eq!(names(parse_search("by_id", Some("abc"), None)), ["key_id"]);
        assert_eq!(names(parse_search("by_id", Some("-3"), None)), ["key_id"]);
        assert_eq!(names(parse_search("by_name", Some("a"), None)), ["key_id"]);
        assert_eq!(
            names(parse_search("by_wildcard", Some("*a*"), None)),
            ["key_id"]
        );
        assert_eq!(
            names(parse_search("by_name", Some("an"), Some("channel:"))),
            ["filter_id"]
        );
        let s = parse_search("by_id", Some(" 42 "), Some("channel:webshop"));
        assert_eq!(
            s,
            Ok(BuyerSearch {
                by: BuyerMatch::Id(42),
                filter: Some(BuyerFilter::Channel("webshop".into())),
            })
        );
        let s = parse_search("by_name", Some("  Ana  L"), Some("crm"));
        assert!(s.is_ok_and(|s| s.filter == Some(BuyerFilter::Crm)
            && s.by
                == BuyerMatch::Terms(TermScan {
                    kinds: &[TermKind::Name],
                    from: "ana l".into(),
                    to: "ana m".into(),
                    like: "ana l%".into(),
                })));
        assert!(parse_search("by_name", Some("\u{10FFFF}\u{10FFFF}"), None).is_err());
        assert!(compile_wildcard("\u{10FFFF}\u{10FFFF}\u{10FFFF}*").is_err());
    }

    proptest! {
        #[test]
        fn any_literal_pattern_matches_itself_and_only_itself(s in "[a-z0-9%_\\\\'\";@. -]{3,40}", extra in "[a-z%_]{1,3}") {
            let Some(key) = name_key(&s) else { return Ok(()) };
            prop_assume!(key.chars().count() >= MIN_ANCHOR);
            let scan = compile_wildcard(&s).map_err(TestCaseError::fail)?;
            prop_assert!(finds(&scan, &key));
            let longer = format!("{key}{extra}");
            let prefixed = format!("{extra}{key}");
            prop_assert!(!finds(&scan, &longer));
            prop_assert!(!finds(&scan, &prefixed));
        }

        #[test]
        fn any_input_compiles_to_a_safe_pattern_or_is_refused(s in "\\PC{0,120}") {
            if let Ok(scan) = compile_wildcard(&s) {
                // Unescaped % and _ come only from the caller's * and ?.
                let mut wild = 0;
                let mut chars = scan.like.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => prop_assert!(matches!(chars.next(), Some('%' | '_' | '\\'))),
                        '%' | '_' => wild += 1,
                        _ => {}
                    }
                }
                let asked = name_key(&s).unwrap_or_default().chars().filter(|c| matches!(c, '*' | '?')).count();
                prop_assert!(wild <= asked && wild <= MAX_WILDCARDS);
                prop_assert!(scan.from.chars().count() >= MIN_ANCHOR);
                prop_assert!(!scan.from.contains(['*', '?']));
            }
        }

        #[test]
        fn a_pattern_finds_the_text_it_was_made_from(s in "[a-z@.]{3,10}[*?][a-z@. ]{0,10}[*?]?[a-z@.]{0,10}", fill in "[a-z]{1,4}") {
            let Ok(scan) = compile_wildcard(&s) else { return Ok(()) };
            let text: String = name_key(&s).unwrap_or_default().chars().map(|c| match c {
                '*' => fill.clone(),
                '?' => "x".to_owned(),
                c => c.to_string(),
            }).collect();
            prop_assert!(finds(&scan, &text), "{:?} vs {:?}", scan, text);
        }

        #[test]
        fn the_prefix_range_holds_exactly_the_prefixed(p in "\\PC{1,8}", rest in "\\PC{0,8}", other in "\\PC{0,12}") {
            let to = prefix_end(&p);
            let s = format!("{p}{rest}");
            prop_assert!(s >= p && to.as_deref().is_none_or(|to| s.as_str() < to));
            let in_range = other >= p && to.as_deref().is_none_or(|to| other.as_str() < to);
            prop_assert_eq!(in_range, other.starts_with(&p));
        }
    }
}
