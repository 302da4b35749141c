//! GS1 element strings (GS1-128, GS1 DataMatrix, GS1 QR, GS1 DataBar) and
//! what a raw scan is.
//!
//! # Classifying a scan
//!
//! [`classify`] never reads application identifiers into a value that does
//! not say it is GS1. The rules, in order:
//!
//! 1. Spaces, tabs, CR and LF around the scan are dropped (keyboard wedges
//!    append them). The literal text `<GS>` counts as the group separator
//!    (0x1D) everywhere, because some wedge setups substitute it.
//! 2. A GS1 symbology identifier (`]C1` GS1-128, `]d2` GS1 DataMatrix, `]Q3`
//!    GS1 QR, `]e0` GS1 DataBar, `]J1` GS1 DotCode) makes the rest a GS1
//!    element string; an invalid one is an error, not a code.
//! 3. Any other symbology identifier (`]E0` EAN/UPC, `]C0` Code 128, `]I1`
//!    ITF, …) is removed, and the rest is classified by rules 4–6.
//! 4. Text starting with a parenthesised AI such as `(01)`, or containing a
//!    group separator, is a GS1 element string (an error if invalid).
//! 5. 8, 12, 13 or 14 digits with a valid check digit are a [`Gtin`]
//!    (EAN-8, UPC-A, EAN-13, ITF-14), kept as scanned. Eight digits are read
//!    as EAN-8: UPC-E looks the same, so it is never guessed; a caller that
//!    knows a source prints UPC-E expands it with
//!    [`crate::barcode::upce_to_upca`].
//! 6. Anything else is a [`Scan::Code`], verbatim: a SKU, a bin, an internal
//!    barcode. `10D9T` and `0112345` stay codes; they are lot 'D9T' and a
//!    GTIN fragment only behind a GS1 marker.
//!
//! # Raw element strings
//!
//! Fixed-length AIs (00, 01, 02, 11, 13, 15, 17, 310n–315n, 410–414) need no
//! separator. A variable-length field (10, 21: up to 20 characters; 30, 37:
//! up to 8 digits) ends at a group separator, at the end of the data, or at
//! its maximum length, whichever comes first. So when a label omits the
//! separator after a short lot, the lot swallows what follows
//! (`10ABC21XYZ` is lot `ABC21XYZ`): the data cannot tell them apart. Group
//! separators before an AI (a leading FNC1, one after a fixed field, one at
//! the end) are ignored.
//!
//! # Parentheses form
//!
//! `(01)09506000134352(17)201225(10)ABC123`: each value runs to the next
//! `(` that opens 2–4 digits and `)`. Spaces are ignored (GS1 data never
//! contains them, labels print them). A `(` inside a lot or serial that would
//! otherwise open an AI is written `\(`, as the GS1 Barcode Syntax Engine
//! does; [`render_hri`] writes every `(` in data that way.
//!
//! # Dates
//!
//! YYMMDD, with DD = 00 meaning the last day of the month (for every date
//! AI). The century follows GS1 General Specifications 7.12: the year lies
//! within 49 years before and 50 years after the current year
//! ([`expand_year`]). [`parse_element_string`] and [`classify`] take the
//! current year from the clock; the `_at` variants take it as an argument.

mod ai;
pub mod sscc;
#[cfg(test)]
mod tests;

use crate::barcode::Gtin;
use ai::{GS, Len};
use chrono::{Datelike, NaiveDate};
use std::fmt;

/// What a GS1 element string says. A field is `None` when its AI is absent.
///
/// GTINs from AI 01 and 02 are the 14 digits the symbol carries; compare
/// items by [`Gtin::to_gtin14`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gs1 {
    /// (00) Serial Shipping Container Code, 18 digits.
    pub sscc: Option<String>,
    /// (01) the trade item.
    pub gtin: Option<Gtin>,
    /// (02) the trade items contained in a logistic unit (with (37) count).
    pub content: Option<Gtin>,
    /// (10) batch or lot.
    pub lot: Option<String>,
    /// (11)
    pub production_date: Option<NaiveDate>,
    /// (13)
    pub packaging_date: Option<NaiveDate>,
    /// (15)
    pub best_before: Option<NaiveDate>,
    /// (17) expiration date.
    pub expiry: Option<NaiveDate>,
    /// (21)
    pub serial: Option<String>,
    /// (30) count of a variable-measure item.
    pub variable_count: Option<u64>,
    /// (37) count of trade items in a logistic unit.
    pub count: Option<u64>,
    /// (310n) net weight in kilograms.
    pub net_weight_kg: Option<Weight>,
    /// (311n) length or first dimension in metres.
    pub length_m: Option<Measure>,
    /// (312n) width, diameter or second dimension in metres.
    pub width_m: Option<Measure>,
    /// (313n) depth, thickness or height in metres.
    pub depth_m: Option<Measure>,
    /// (314n) area in square metres.
    pub area_m2: Option<Measure>,
    /// (315n) net volume in litres.
    pub net_volume_l: Option<Measure>,
    /// (410) ship to / deliver to GLN.
    pub ship_to_gln: Option<String>,
    /// (411) bill to / invoice to GLN.
    pub bill_to_gln: Option<String>,
    /// (412) purchased from GLN.
    pub purchased_from_gln: Option<String>,
    /// (413) ship for / deliver for / forward to GLN.
    pub ship_for_gln: Option<String>,
    /// (414) identification of a physical location GLN.
    pub location_gln: Option<String>,
}

impl Gs1 {
    /// The trade item the scan is about: the GTIN (01), or for a logistic
    /// unit the GTIN of its contents (02).
    pub fn trade_item(&self) -> Option<&Gtin> {
        self.gtin.as_ref().or(self.content.as_ref())
    }

    /// Whether [`render_element_string`] and [`render_hri`] produce a string
    /// that parses back to this value: values within their AI's length and
    /// character set, check digits of SSCC and GLNs, at least one field.
    /// Rendering does not check; call this before printing a value that was
    /// not itself parsed.
    pub fn validate(&self) -> Result<(), Gs1Error> {
        let elements = ai::elements(self);
        if elements.is_empty() {
            return Err(Gs1Error::Empty);
        }
        let mut scratch = Gs1::default();
        for (ai, data) in elements {
            // Any year does: a `NaiveDate` is a date whatever its century.
            ai::decode(ai, &data, &mut scratch, 2000)?;
        }
        Ok(())
    }
}

/// A GS1 measure with the implied decimal point of its AI kept exactly:
/// `{ value: 1250, decimals: 3 }` is 1.250 and renders as `3103 001250`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Measure {
    /// At most [`Measure::MAX_VALUE`] (six digits).
    pub value: u32,
    /// Digits after the decimal point, at most [`Measure::MAX_DECIMALS`].
    pub decimals: u8,
}

/// A net weight in kilograms (AI 310n).
pub type Weight = Measure;

impl Measure {
    pub const MAX_VALUE: u32 = 999_999;
    pub const MAX_DECIMALS: u8 = 5;

    /// `None` when the value does not fit the six digits of a GS1 measure.
    pub fn new(value: u32, decimals: u8) -> Option<Self> {
        (value <= Self::MAX_VALUE && decimals <= Self::MAX_DECIMALS)
            .then_some(Self { value, decimals })
    }

    /// For display and arithmetic; comparisons should use the exact fields.
    pub fn to_f64(self) -> f64 {
        f64::from(self.value) / 10f64.powi(i32::from(self.decimals))
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = format!(
            "{:0>width$}",
            self.value,
            width = usize::from(self.decimals) + 1
        );
        let (whole, frac) = digits.split_at(digits.len() - usize::from(self.decimals));
        if frac.is_empty() {
            f.write_str(whole)
        } else {
            write!(f, "{whole}.{frac}")
        }
    }
}

/// What a scan is; see the module documentation for the rules.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "a scan is matched once, right away; boxing would only add an allocation"
)]
pub enum Scan {
    Gs1(Gs1),
    Gtin(Gtin),
    /// Any other barcode, SKU or text, trimmed and without a symbology
    /// identifier; match it against item barcodes and SKUs.
    Code(String),
}

/// Messages name the AI and the value so an operator can fix the label or
/// the scanner setup.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Gs1Error {
    #[error("the scan contains no data")]
    Empty,
    #[error("the scan contains {ch:?}; GS1 barcodes carry only ASCII")]
    NonAscii { ch: char },
    #[error(
        "symbology identifier {identifier} is not a GS1 barcode (GS1 ones are ]C1, ]d2, ]Q3, ]e0, ]J1)"
    )]
    NotGs1 { identifier: String },
    #[error("expected an application identifier, found {found:?}")]
    ExpectedAi { found: String },
    #[error("unknown application identifier ({ai})")]
    UnknownAi { ai: String },
    #[error("AI ({ai}) {what} must have {expected} characters, found {found}")]
    Length {
        ai: String,
        what: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("AI ({ai}) {what} must have 1 to {max} characters, found {found}")]
    VarLength {
        ai: String,
        what: &'static str,
        max: usize,
        found: usize,
    },
    #[error("AI ({ai}) {what} {value:?} may contain only digits")]
    NotDigits {
        ai: String,
        what: &'static str,
        value: String,
    },
    #[error(
        "AI ({ai}) {what} contains {ch:?}; GS1 allows only A-Z a-z 0-9 and !\"%&'()*+,-./:;<=>?_"
    )]
    Charset {
        ai: String,
        what: &'static str,
        ch: char,
    },
    #[error("AI ({ai}) {what} contains the text <GS>, which scanners use for the group separator")]
    Placeholder { ai: String, what: &'static str },
    #[error("AI ({ai}) {what} check digit is {found}, expected {expected}")]
    CheckDigit {
        ai: String,
        what: &'static str,
        found: u8,
        expected: u8,
    },
    #[error("AI ({ai}) {what} {value} is not a date")]
    Date {
        ai: String,
        what: &'static str,
        value: String,
    },
    #[error("AI ({ai}) occurs twice with different values: {first} and {second}")]
    Conflict {
        ai: String,
        first: String,
        second: String,
    },
}

/// Symbology identifiers (ISO/IEC 15424) of symbols that carry GS1 element
/// strings.
const GS1_SYMBOLOGIES: [&str; 5] = ["]C1", "]d2", "]Q3", "]e0", "]J1"];

/// The four-digit year of a GS1 two-digit year (General Specifications 7.12):
/// within 49 years before and 50 after `current_year`.
pub fn expand_year(yy: u32, current_year: i32) -> i32 {
    let yy = (yy % 100) as i32;
    let current_yy = current_year.rem_euclid(100);
    let century = current_year - current_yy;
    match yy - current_yy {
        51.. => century - 100 + yy,
        ..=-50 => century + 100 + yy,
        _ => century + yy,
    }
}

fn current_year() -> i32 {
    chrono::Utc::now().year()
}

/// Classifies a scan against the current year; see the module documentation.
pub fn classify(scan: &str) -> Result<Scan, Gs1Error> {
    classify_at(scan, current_year())
}

/// [`classify`] with the year that GS1 dates are expanded around.
pub fn classify_at(scan: &str, current_year: i32) -> Result<Scan, Gs1Error> {
    let text = normalize(scan);
    let body = match split_symbology(&text) {
        Some((id, rest)) if GS1_SYMBOLOGIES.contains(&id) => {
            return parse_body(rest, current_year).map(Scan::Gs1);
        }
        Some((_, rest)) => rest,
        None => &text,
    };
    if body.is_empty() {
        return Err(Gs1Error::Empty);
    }
    if body.contains(GS) || opens_ai(body) {
        return parse_body(body, current_year).map(Scan::Gs1);
    }
    let gtin_shaped =
        body.bytes().all(|b| b.is_ascii_digit()) && [8, 12, 13, 14].contains(&body.len());
    if gtin_shaped {
        if let Ok(gtin) = Gtin::parse(body) {
            return Ok(Scan::Gtin(gtin));
        }
    }
    Ok(Scan::Code(body.to_owned()))
}

/// Parses a GS1 element string (raw, with or without a GS1 symbology
/// identifier, or in parentheses form) against the current year. The caller
/// asserts the input is GS1: "10D9T" here is lot "D9T". Use [`classify`] for
/// scans of unknown kind.
pub fn parse_element_string(input: &str) -> Result<Gs1, Gs1Error> {
    parse_element_string_at(input, current_year())
}

/// [`parse_element_string`] with the year that GS1 dates are expanded around.
pub fn parse_element_string_at(input: &str, current_year: i32) -> Result<Gs1, Gs1Error> {
    let text = normalize(input);
    let body = match split_symbology(&text) {
        Some((id, rest)) if GS1_SYMBOLOGIES.contains(&id) => rest,
        Some((id, _)) => {
            return Err(Gs1Error::NotGs1 {
                identifier: id.to_owned(),
            });
        }
        None => &text,
    };
    parse_body(body, current_year)
}

/// The raw element string a GS1 symbol encodes: fixed-length fields first,
/// then variable-length ones separated by GS (0x1D), without a symbology
/// identifier or a leading FNC1. Assumes a valid value ([`Gs1::validate`]).
pub fn render_element_string(g: &Gs1) -> String {
    let mut out = String::new();
    let mut after_variable = false;
    for (ai, data) in ordered(g) {
        if after_variable {
            out.push(GS);
        }
        out.push_str(&ai.code());
        out.push_str(&data);
        after_variable = matches!(ai.def.len, Len::Var(_));
    }
    out
}

/// The parentheses form printed under a symbol, with `(` in data escaped as
/// `\(` so that it parses back. Same order as [`render_element_string`].
pub fn render_hri(g: &Gs1) -> String {
    ordered(g)
        .into_iter()
        .map(|(ai, data)| format!("({}){}", ai.code(), data.replace('(', "\\(")))
        .collect()
}

/// Fixed-length fields first, so that only variable-length ones need a
/// separator.
fn ordered(g: &Gs1) -> Vec<(ai::Ai, String)> {
    let (mut fixed, variable): (Vec<_>, Vec<_>) = ai::elements(g)
        .into_iter()
        .partition(|(ai, _)| matches!(ai.def.len, Len::Fixed(_)));
    fixed.extend(variable);
    fixed
}

fn normalize(input: &str) -> String {
    input
        .trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'))
        .replace("<GS>", "\u{1d}")
}

/// `]` + symbology letter + modifier, as scanners prefix when configured to.
fn split_symbology(s: &str) -> Option<(&str, &str)> {
    let b = s.as_bytes();
    let is_id =
        b.len() >= 3 && b[0] == b']' && b[1].is_ascii_alphabetic() && b[2].is_ascii_alphanumeric();
    // The first three bytes are ASCII, so 3 is a character boundary.
    is_id.then(|| s.split_at(3))
}

/// Whether `s` starts with `(` 2–4 digits `)`.
fn opens_ai(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('(') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (2..=4).contains(&digits) && rest.as_bytes().get(digits) == Some(&b')')
}

fn parse_body(body: &str, current_year: i32) -> Result<Gs1, Gs1Error> {
    // Everything after this is ASCII, so byte offsets are character offsets.
    if let Some(ch) = body.chars().find(|c| !c.is_ascii()) {
        return Err(Gs1Error::NonAscii { ch });
    }
    let g = if body.starts_with('(') {
        parse_hri(&body.replace(' ', ""), current_year)?
    } else {
        parse_raw(body, current_year)?
    };
    if g == Gs1::default() {
        return Err(Gs1Error::Empty);
    }
    Ok(g)
}

fn parse_raw(body: &str, current_year: i32) -> Result<Gs1, Gs1Error> {
    let mut g = Gs1::default();
    let mut rest = body;
    loop {
        rest = rest.trim_start_matches(GS);
        if rest.is_empty() {
            return Ok(g);
        }
        let (ai, ai_len) = ai::lookup(rest)?;
        rest = &rest[ai_len..];
        let available = rest.find(GS).unwrap_or(rest.len());
        let take = match ai.def.len {
            Len::Fixed(n) | Len::Var(n) => available.min(n),
        };
        let (data, tail) = rest.split_at(take);
        ai::decode(ai, data, &mut g, current_year)?;
        rest = tail;
    }
}

fn parse_hri(body: &str, current_year: i32) -> Result<Gs1, Gs1Error> {
    let mut g = Gs1::default();
    let mut rest = body;
    while !rest.is_empty() {
        if !opens_ai(rest) {
            return Err(Gs1Error::ExpectedAi {
                found: rest.chars().take(8).collect(),
            });
        }
        let close = rest.find(')').unwrap_or(rest.len());
        let code = &rest[1..close];
        let (ai, ai_len) = ai::lookup(code)?;
        if ai_len != code.len() {
            return Err(Gs1Error::UnknownAi {
                ai: code.to_owned(),
            });
        }
        rest = &rest[close + 1..];
        let (data, used) = hri_value(rest);
        ai::decode(ai, &data, &mut g, current_year)?;
        rest = &rest[used..];
    }
    Ok(g)
}

/// The value up to the next AI, unescaping `\(`, and the bytes it used.
fn hri_value(s: &str) -> (String, usize) {
    let mut out = String::new();
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with("\\(") {
            out.push('(');
            i += 2;
            continue;
        }
        if opens_ai(rest) {
            break;
        }
        // ASCII only (checked by the caller): one byte, one character.
        out.push_str(&rest[..1]);
        i += 1;
    }
    (out, i)
}
