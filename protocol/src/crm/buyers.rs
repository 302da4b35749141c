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
    for typed in raw.chars() {
        let plain: String = std::iter::once(typed)
            .nfkd()
            .filter(|c| !is_combining_mark(*c))
            .collect();
        // A wildcard is what the caller typed as one: a small or
        // full-width `?` or `*` stays the character it is.
        if !matches!(typed, '*' | '?') && plain.contains(['*', '?']) {
            out.extend(typed.to_lowercase());
            continue;
        }
        for c in plain.chars() {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, utoipa::ToSchema)]
#[schema(rename_all = "snake_case")]
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
mod tests;
