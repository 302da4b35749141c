//! The application identifiers Depot reads: their data lengths, how each
//! one's data is checked, and which [`Gs1`] field holds it. Supporting another
//! AI is a row in [`TABLE`], a [`Field`] and a field on [`Gs1`].

use super::{Gs1, Gs1Error, Measure, expand_year};
use crate::barcode::{BarcodeError, Gtin, gs1_check_digit};
use chrono::{Datelike, Months, NaiveDate};
use std::fmt;

/// ASCII group separator: how scanners transmit FNC1 inside the data.
pub(super) const GS: char = '\u{1d}';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Len {
    Fixed(usize),
    /// At most this many characters; ends at GS or end of data.
    Var(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Sscc,
    Gtin,
    Content,
    Lot,
    ProductionDate,
    PackagingDate,
    BestBefore,
    Expiry,
    Serial,
    VariableCount,
    Count,
    NetWeight,
    Length,
    Width,
    Depth,
    Area,
    NetVolume,
    ShipTo,
    BillTo,
    PurchasedFrom,
    ShipFor,
    Location,
}

#[derive(Debug)]
pub(super) struct Def {
    /// The AI, or for 310n–315n its first three digits.
    pub prefix: &'static str,
    pub field: Field,
    /// How an operator would call the value, for error messages.
    pub what: &'static str,
    pub len: Len,
}

const fn def(prefix: &'static str, field: Field, what: &'static str, len: Len) -> Def {
    Def {
        prefix,
        field,
        what,
        len,
    }
}

/// In rendering order. No prefix is a prefix of another, as in GS1 itself,
/// so the first match is the only one.
pub(super) static TABLE: [Def; 22] = [
    def("00", Field::Sscc, "SSCC", Len::Fixed(18)),
    def("01", Field::Gtin, "GTIN", Len::Fixed(14)),
    def("02", Field::Content, "content GTIN", Len::Fixed(14)),
    def(
        "11",
        Field::ProductionDate,
        "production date",
        Len::Fixed(6),
    ),
    def("13", Field::PackagingDate, "packaging date", Len::Fixed(6)),
    def("15", Field::BestBefore, "best-before date", Len::Fixed(6)),
    def("17", Field::Expiry, "expiry", Len::Fixed(6)),
    def("310", Field::NetWeight, "net weight (kg)", Len::Fixed(6)),
    def("311", Field::Length, "length (m)", Len::Fixed(6)),
    def("312", Field::Width, "width (m)", Len::Fixed(6)),
    def("313", Field::Depth, "depth (m)", Len::Fixed(6)),
    def("314", Field::Area, "area (m²)", Len::Fixed(6)),
    def("315", Field::NetVolume, "net volume (l)", Len::Fixed(6)),
    def("410", Field::ShipTo, "ship-to GLN", Len::Fixed(13)),
    def("411", Field::BillTo, "bill-to GLN", Len::Fixed(13)),
    def(
        "412",
        Field::PurchasedFrom,
        "purchased-from GLN",
        Len::Fixed(13),
    ),
    def("413", Field::ShipFor, "ship-for GLN", Len::Fixed(13)),
    def("414", Field::Location, "location GLN", Len::Fixed(13)),
    def("10", Field::Lot, "lot", Len::Var(20)),
    def("21", Field::Serial, "serial", Len::Var(20)),
    def("30", Field::VariableCount, "variable count", Len::Var(8)),
    def("37", Field::Count, "count", Len::Var(8)),
];

/// One AI as it occurs: the table row, plus the decimal count that 310n–315n
/// carry in their last digit.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ai {
    pub def: &'static Def,
    pub decimals: u8,
}

impl Ai {
    pub fn code(&self) -> String {
        if takes_decimals(self.def.field) {
            format!("{}{}", self.def.prefix, self.decimals)
        } else {
            self.def.prefix.to_owned()
        }
    }
}

fn takes_decimals(f: Field) -> bool {
    matches!(
        f,
        Field::NetWeight
            | Field::Length
            | Field::Width
            | Field::Depth
            | Field::Area
            | Field::NetVolume
    )
}

/// Where a field's value lives, typed by how its data is checked. One mapping
/// serves parsing (write) and rendering (read), so the two cannot drift.
pub(super) enum Slot<'a> {
    /// All digits with a GS1 mod-10 check digit (SSCC, GLN).
    Key(&'a mut Option<String>),
    Gtin(&'a mut Option<Gtin>),
    /// GS1 character set 82.
    Text(&'a mut Option<String>),
    Date(&'a mut Option<NaiveDate>),
    Number(&'a mut Option<u64>),
    Measure(&'a mut Option<Measure>),
}

pub(super) fn slot(g: &mut Gs1, f: Field) -> Slot<'_> {
    match f {
        Field::Sscc => Slot::Key(&mut g.sscc),
        Field::Gtin => Slot::Gtin(&mut g.gtin),
        Field::Content => Slot::Gtin(&mut g.content),
        Field::Lot => Slot::Text(&mut g.lot),
        Field::ProductionDate => Slot::Date(&mut g.production_date),
        Field::PackagingDate => Slot::Date(&mut g.packaging_date),
        Field::BestBefore => Slot::Date(&mut g.best_before),
        Field::Expiry => Slot::Date(&mut g.expiry),
        Field::Serial => Slot::Text(&mut g.serial),
        Field::VariableCount => Slot::Number(&mut g.variable_count),
        Field::Count => Slot::Number(&mut g.count),
        Field::NetWeight => Slot::Measure(&mut g.net_weight_kg),
        Field::Length => Slot::Measure(&mut g.length_m),
        Field::Width => Slot::Measure(&mut g.width_m),
        Field::Depth => Slot::Measure(&mut g.depth_m),
        Field::Area => Slot::Measure(&mut g.area_m2),
        Field::NetVolume => Slot::Measure(&mut g.net_volume_l),
        Field::ShipTo => Slot::Key(&mut g.ship_to_gln),
        Field::BillTo => Slot::Key(&mut g.bill_to_gln),
        Field::PurchasedFrom => Slot::Key(&mut g.purchased_from_gln),
        Field::ShipFor => Slot::Key(&mut g.ship_for_gln),
        Field::Location => Slot::Key(&mut g.location_gln),
    }
}

/// The AI at the start of `rest` and how many characters it takes.
pub(super) fn lookup(rest: &str) -> Result<(Ai, usize), Gs1Error> {
    for def in &TABLE {
        let Some(after) = rest.strip_prefix(def.prefix) else {
            continue;
        };
        if !takes_decimals(def.field) {
            return Ok((Ai { def, decimals: 0 }, def.prefix.len()));
        }
        return match after.bytes().next() {
            Some(d @ b'0'..=b'5') => Ok((
                Ai {
                    def,
                    decimals: d - b'0',
                },
                def.prefix.len() + 1,
            )),
            _ => Err(unknown_ai(rest)),
        };
    }
    Err(unknown_ai(rest))
}

/// Names the AI an operator would look up: GS1 fixes an AI's length (2, 3 or
/// 4 digits) by its first two digits, so "4001234" is AI (400), not (40).
fn unknown_ai(rest: &str) -> Gs1Error {
    let digits: String = rest
        .chars()
        .take_while(char::is_ascii_digit)
        .take(4)
        .collect();
    if digits.len() < 2 {
        return Gs1Error::ExpectedAi {
            found: rest.chars().take(8).collect(),
        };
    }
    let len = match &digits[..2] {
        "23" | "24" | "25" | "71" => 3,
        p if p.starts_with('4') => 3,
        "31" | "32" | "33" | "34" | "35" | "36" | "39" | "70" | "72" | "80" | "81" | "82" => 4,
        _ => 2,
    };
    Gs1Error::UnknownAi {
        ai: digits.chars().take(len).collect(),
    }
}

/// Checks one element's data and stores it in `g`.
pub(super) fn decode(ai: Ai, data: &str, g: &mut Gs1, current_year: i32) -> Result<(), Gs1Error> {
    let code = ai.code();
    let what = ai.def.what;
    let found = data.chars().count();
    match ai.def.len {
        Len::Fixed(n) if found != n => {
            return Err(Gs1Error::Length {
                ai: code,
                what,
                expected: n,
                found,
            });
        }
        Len::Var(max) if found == 0 || found > max => {
            return Err(Gs1Error::VarLength {
                ai: code,
                what,
                max,
                found,
            });
        }
        _ => {}
    }
    match slot(g, ai.def.field) {
        Slot::Key(s) => {
            digits_only(&code, what, data)?;
            let digits: Vec<u8> = data.bytes().map(|b| b - b'0').collect();
            if let Some((check, body)) = digits.split_last() {
                let expected = gs1_check_digit(body);
                if *check != expected {
                    return Err(Gs1Error::CheckDigit {
                        ai: code,
                        what,
                        found: *check,
                        expected,
                    });
                }
            }
            store(s, data.to_owned(), &code)
        }
        Slot::Gtin(s) => {
            digits_only(&code, what, data)?;
            let gtin = Gtin::parse(data).map_err(|e| match e {
                BarcodeError::CheckDigit { found, expected } => Gs1Error::CheckDigit {
                    ai: code.clone(),
                    what,
                    found,
                    expected,
                },
                _ => not_digits(&code, what, data),
            })?;
            store(s, gtin, &code)
        }
        Slot::Text(s) => {
            if data.contains("<GS>") {
                return Err(Gs1Error::Placeholder { ai: code, what });
            }
            if let Some(ch) = data.chars().find(|c| !in_set_82(*c)) {
                return Err(Gs1Error::Charset { ai: code, what, ch });
            }
            store(s, data.to_owned(), &code)
        }
        Slot::Date(s) => {
            digits_only(&code, what, data)?;
            let date = gs1_date(data, current_year).ok_or_else(|| Gs1Error::Date {
                ai: code.clone(),
                what,
                value: data.to_owned(),
            })?;
            store(s, date, &code)
        }
        Slot::Number(s) => {
            digits_only(&code, what, data)?;
            let n = data.parse().map_err(|_| not_digits(&code, what, data))?;
            store(s, n, &code)
        }
        Slot::Measure(s) => {
            if ai.decimals > Measure::MAX_DECIMALS {
                return Err(Gs1Error::UnknownAi { ai: code });
            }
            digits_only(&code, what, data)?;
            let value = data.parse().map_err(|_| not_digits(&code, what, data))?;
            let m = Measure {
                value,
                decimals: ai.decimals,
            };
            store(s, m, &code)
        }
    }
}

/// The present fields as (AI, data) in table order: what a label carries.
pub(super) fn elements(g: &Gs1) -> Vec<(Ai, String)> {
    // `slot` hands out `&mut`; a scratch copy lets rendering read through the
    // same mapping the parser writes through.
    let mut g = g.clone();
    let mut out = Vec::new();
    for def in &TABLE {
        let item = match slot(&mut g, def.field) {
            Slot::Key(s) | Slot::Text(s) => s.clone().map(|v| (0, v)),
            Slot::Gtin(s) => s.as_ref().map(|v| (0, v.to_gtin14())),
            Slot::Date(s) => s.map(|d| {
                let yy = d.year().rem_euclid(100);
                (0, format!("{yy:02}{:02}{:02}", d.month(), d.day()))
            }),
            Slot::Number(s) => s.map(|n| (0, n.to_string())),
            Slot::Measure(s) => s.map(|m| (m.decimals, format!("{:06}", m.value))),
        };
        if let Some((decimals, data)) = item {
            out.push((Ai { def, decimals }, data));
        }
    }
    out
}

/// GS1 AI encodable character set 82 (General Specifications, figure 7.11-1).
fn in_set_82(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!\"%&'()*+,-./:;<=>?_".contains(c)
}

fn digits_only(code: &str, what: &'static str, data: &str) -> Result<(), Gs1Error> {
    if data.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(not_digits(code, what, data))
    }
}

fn not_digits(code: &str, what: &'static str, data: &str) -> Gs1Error {
    Gs1Error::NotDigits {
        ai: code.to_owned(),
        what,
        value: data.to_owned(),
    }
}

/// YYMMDD; DD = 00 means the last day of the month.
fn gs1_date(data: &str, current_year: i32) -> Option<NaiveDate> {
    let part = |i: usize| -> Option<u32> { data.get(i..i + 2)?.parse().ok() };
    let (yy, mm, dd) = (part(0)?, part(2)?, part(4)?);
    let year = expand_year(yy, current_year);
    if dd == 0 {
        NaiveDate::from_ymd_opt(year, mm, 1)?
            .checked_add_months(Months::new(1))?
            .pred_opt()
    } else {
        NaiveDate::from_ymd_opt(year, mm, dd)
    }
}

/// A repeated AI is harmless when it repeats the value (labels often print
/// the same data in two symbols); a different value is a label error.
fn store<T: PartialEq + fmt::Display>(
    slot: &mut Option<T>,
    value: T,
    code: &str,
) -> Result<(), Gs1Error> {
    match slot {
        Some(old) if *old != value => Err(Gs1Error::Conflict {
            ai: code.to_owned(),
            first: old.to_string(),
            second: value.to_string(),
        }),
        Some(_) => Ok(()),
        None => {
            *slot = Some(value);
            Ok(())
        }
    }
}
