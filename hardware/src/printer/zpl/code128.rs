//! Code 128 field data for `^BC` in its default mode (N), where the data
//! spells out start codes and subset changes as ZPL invocation codes, and
//! GS1-128 element strings built on it.
//!
//! Invocation codes, from the ZPL II Programming Guide (`^BC`, "Code 128
//! Invocation Characters"): `>:` start subset B, `>;` start subset C, `>5`
//! switch to C (from B), `>6` switch to B (from C), `>8` FNC1, and in subset
//! B `>0` = `>`, `><` = `^`, `>=` = `~` (the characters ZPL cannot carry
//! literally). Subset C packs digit pairs, which halves the width of the long
//! numeric runs carriers and GS1 use.
//!
//! GS1-128 is written as FNC1 in start position (`>;>8`) and explicit
//! separators rather than with `^BC` mode D (UCC/EAN mode, firmware x.11
//! and later), which leaves FNC1 placement and the interpretation line to
//! the printer: mode N works on every ZPL II printer, and what the symbol
//! carries is decided, and tested, here.

use super::ZplError;

/// One symbol to encode: a character, or FNC1 (the GS1 marker and separator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Symbol {
    Char(u8),
    Fnc1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subset {
    B,
    C,
}

/// Encodes printable ASCII as `^BC` mode N field data (before `^FH`
/// escaping, which still has to hex-escape `_`).
pub fn encode(data: &str) -> Result<String, ZplError> {
    if data.is_empty() {
        return Err(ZplError::EmptyBarcode);
    }
    let symbols = data
        .chars()
        .map(|ch| match u8::try_from(ch) {
            Ok(byte) if (0x20..=0x7e).contains(&byte) => Ok(Symbol::Char(byte)),
            _ => Err(ZplError::NotCode128 { ch }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(encode_symbols(&symbols))
}

fn encode_symbols(symbols: &[Symbol]) -> String {
    let mut out = String::with_capacity(symbols.len() + 8);
    let mut subset: Option<Subset> = None;
    let mut i = 0;
    while i < symbols.len() {
        let run = symbols[i..]
            .iter()
            .take_while(|s| matches!(s, Symbol::Char(b) if b.is_ascii_digit()))
            .count();
        match symbols[i] {
            Symbol::Fnc1 => {
                if subset.is_none() {
                    // GS1-128 starts with FNC1 and digits (the first AI).
                    out.push_str(">;");
                    subset = Some(Subset::C);
                }
                out.push_str(">8");
                i += 1;
            }
            Symbol::Char(_) if subset == Some(Subset::C) && run >= 2 => {
                let pairs = run - run % 2;
                push_digits(&mut out, &symbols[i..i + pairs]);
                i += pairs;
            }
            // Four or more digits pay for the switch to C; an odd digit
            // goes out in B first so the rest pairs up.
            Symbol::Char(_) if run >= 4 && run % 2 == 0 => {
                switch(&mut out, &mut subset, Subset::C);
                push_digits(&mut out, &symbols[i..i + run]);
                i += run;
            }
            Symbol::Char(byte) => {
                switch(&mut out, &mut subset, Subset::B);
                match byte {
                    b'>' => out.push_str(">0"),
                    b'^' => out.push_str("><"),
                    b'~' => out.push_str(">="),
                    other => out.push(char::from(other)),
                }
                i += 1;
            }
        }
    }
    out
}

fn switch(out: &mut String, current: &mut Option<Subset>, to: Subset) {
    let code = match (*current, to) {
        (None, Subset::B) => ">:",
        (None, Subset::C) => ">;",
        (Some(Subset::C), Subset::B) => ">6",
        (Some(Subset::B), Subset::C) => ">5",
        (Some(Subset::B), Subset::B) | (Some(Subset::C), Subset::C) => return,
    };
    out.push_str(code);
    *current = Some(to);
}

fn push_digits(out: &mut String, digits: &[Symbol]) {
    for symbol in digits {
        if let Symbol::Char(byte) = symbol {
            out.push(char::from(*byte));
        }
    }
}

/// One GS1 element string: an application identifier and its data, e.g.
/// `("01", "09501101530003")` for a GTIN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gs1Element {
    pub ai: String,
    pub data: String,
}

impl Gs1Element {
    pub fn new(ai: impl Into<String>, data: impl Into<String>) -> Self {
        Self {
            ai: ai.into(),
            data: data.into(),
        }
    }
}

/// The most characters a GS1-128 symbol may carry (GS1 General
/// Specifications: 48 data characters, AIs and separators included).
const GS1_128_MAX_CHARS: usize = 48;

/// Element strings whose length is fixed by the first two digits of the AI
/// never need an FNC1 separator after them (GS1 General Specifications,
/// "element strings with predefined length"). The value is the length of AI
/// plus data.
fn predefined_length(ai: &str) -> Option<usize> {
    let total = match ai.get(..2)? {
        "00" => 20,
        "01" | "02" | "03" | "41" => 16,
        "04" => 18,
        "11" | "12" | "13" | "14" | "15" | "16" | "17" | "18" | "19" => 8,
        "20" => 4,
        "31" | "32" | "33" | "34" | "35" | "36" => 10,
        _ => return None,
    };
    Some(total)
}

/// The AI length a predefined-length prefix requires: `31nn`-`36nn` carry
/// a decimal-point digit, `41n` a location qualifier.
fn predefined_ai_len(ai: &str) -> usize {
    match ai.get(..2) {
        Some("31" | "32" | "33" | "34" | "35" | "36") => 4,
        Some("41") => 3,
        _ => 2,
    }
}

/// The GS1 AI encodable character set 82 (GS1 General Specifications,
/// figure 7.11-1): what an AI's data may contain.
fn is_gs1_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!\"%&'()*+,-./:;<=>?_".contains(&byte)
}

/// GS1 mod-10 check digit over all but the last digit.
fn check_digit_ok(digits: &str) -> bool {
    let bytes = digits.as_bytes();
    let Some((&last, body)) = bytes.split_last() else {
        return false;
    };
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, b)| u32::from(b - b'0') * if i % 2 == 0 { 3 } else { 1 })
        .sum();
    (10 - sum % 10) % 10 == u32::from(last - b'0')
}

fn validate(element: &Gs1Element) -> Result<(), ZplError> {
    let ai = element.ai.as_str();
    let invalid = |reason: String| ZplError::Gs1 {
        ai: ai.to_owned(),
        reason,
    };
    if !(2..=4).contains(&ai.len()) || !ai.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid("an application identifier is 2 to 4 digits".into()));
    }
    if element.data.is_empty() {
        return Err(invalid("empty data".into()));
    }
    if let Some(bad) = element
        .data
        .chars()
        .find(|&c| !u8::try_from(c).is_ok_and(is_gs1_char))
    {
        return Err(invalid(format!("{bad:?} is not in the GS1 character set")));
    }
    if let Some(total) = predefined_length(ai) {
        let ai_len = predefined_ai_len(ai);
        if ai.len() != ai_len {
            return Err(invalid(format!("this AI has {ai_len} digits")));
        }
        let expected = total - ai_len;
        if element.data.len() != expected {
            return Err(invalid(format!("data must be {expected} characters")));
        }
        // Predefined-length data is numeric; SSCC, GTIN and GLN end in a
        // check digit.
        if !element.data.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid("data must be digits".into()));
        }
        let has_check_digit = matches!(&ai[..2], "00" | "01" | "02" | "41");
        if has_check_digit && !check_digit_ok(&element.data) {
            return Err(invalid("wrong check digit".into()));
        }
    }
    Ok(())
}

/// Encodes GS1 element strings as `^BC` mode N field data: FNC1 first, then
/// each AI and its data, with FNC1 after every variable-length element but
/// the last.
pub fn encode_gs1(elements: &[Gs1Element]) -> Result<String, ZplError> {
    if elements.is_empty() {
        return Err(ZplError::EmptyBarcode);
    }
    let mut symbols = vec![Symbol::Fnc1];
    for (i, element) in elements.iter().enumerate() {
        validate(element)?;
        symbols.extend(
            element
                .ai
                .bytes()
                .chain(element.data.bytes())
                .map(Symbol::Char),
        );
        let last = i + 1 == elements.len();
        if !last && predefined_length(&element.ai).is_none() {
            symbols.push(Symbol::Fnc1);
        }
    }
    // The leading FNC1 is the symbology marker, not data.
    let chars = symbols.len() - 1;
    if chars > GS1_128_MAX_CHARS {
        return Err(ZplError::Gs1TooLong { chars });
    }
    Ok(encode_symbols(&symbols))
}

/// The human-readable interpretation: `(01)09501101530003(10)AB12`.
pub fn gs1_human_readable(elements: &[Gs1Element]) -> String {
    elements
        .iter()
        .map(|e| format!("({}){}", e.ai, e.data))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_uses_subset_b() {
        assert_eq!(encode("SKU-42A").expect("encodable"), ">:SKU-42A");
    }

    #[test]
    fn long_even_digit_runs_use_subset_c() {
        assert_eq!(encode("123456").expect("encodable"), ">;123456");
    }

    #[test]
    fn odd_digit_run_sends_one_digit_in_b_first() {
        assert_eq!(encode("12345").expect("encodable"), ">:1>52345");
    }

    #[test]
    fn short_digit_runs_stay_in_b() {
        assert_eq!(encode("A12B").expect("encodable"), ">:A12B");
    }

    #[test]
    fn switches_back_to_b_after_digits() {
        assert_eq!(encode("1234AB").expect("encodable"), ">;1234>6AB");
    }

    #[test]
    fn ups_style_tracking_number() {
        assert_eq!(
            encode("1Z999AA10123456784").expect("encodable"),
            ">:1Z999AA1>50123456784"
        );
    }

    #[test]
    fn zpl_special_characters_use_invocation_codes() {
        assert_eq!(encode("a>b^c~d").expect("encodable"), ">:a>0b><c>=d");
    }

    #[test]
    fn non_ascii_and_control_characters_are_refused() {
        assert_eq!(encode("é"), Err(ZplError::NotCode128 { ch: 'é' }));
        assert_eq!(encode("a\tb"), Err(ZplError::NotCode128 { ch: '\t' }));
        assert_eq!(encode(""), Err(ZplError::EmptyBarcode));
    }

    #[test]
    fn sscc_is_fnc1_then_subset_c() {
        let sscc = Gs1Element::new("00", "106141411234567897");
        assert_eq!(
            encode_gs1(&[sscc]).expect("valid SSCC"),
            ">;>800106141411234567897"
        );
    }

    #[test]
    fn variable_length_element_is_followed_by_fnc1_unless_last() {
        let elements = [
            Gs1Element::new("10", "AB12"),
            Gs1Element::new("01", "09501101530003"),
            Gs1Element::new("21", "7"),
        ];
        assert_eq!(
            encode_gs1(&elements).expect("valid"),
            ">;>810>6AB12>80>5109501101530003217"
        );
        assert_eq!(
            gs1_human_readable(&elements),
            "(10)AB12(01)09501101530003(21)7"
        );
    }

    #[test]
    fn fixed_length_element_needs_no_separator() {
        let elements = [
            Gs1Element::new("01", "09501101530003"),
            Gs1Element::new("17", "261231"),
            Gs1Element::new("10", "LOT7"),
        ];
        assert_eq!(
            encode_gs1(&elements).expect("valid"),
            ">;>801095011015300031726123110>6LOT7"
        );
    }

    #[test]
    fn weight_ai_has_four_digits() {
        let ok = Gs1Element::new("3103", "001250");
        assert!(encode_gs1(&[ok]).is_ok());
        let short_ai = Gs1Element::new("31", "001250");
        assert!(matches!(encode_gs1(&[short_ai]), Err(ZplError::Gs1 { .. })));
    }

    #[test]
    fn gs1_validation_errors() {
        let bad_check = Gs1Element::new("01", "09501101530004");
        let bad_len = Gs1Element::new("01", "0950110153000");
        let bad_ai = Gs1Element::new("1", "x");
        let bad_char = Gs1Element::new("10", "LOT 7");
        let empty = Gs1Element::new("10", "");
        for element in [bad_check, bad_len, bad_ai, bad_char, empty] {
            assert!(
                matches!(
                    encode_gs1(std::slice::from_ref(&element)),
                    Err(ZplError::Gs1 { .. })
                ),
                "{element:?} accepted"
            );
        }
        assert_eq!(encode_gs1(&[]), Err(ZplError::EmptyBarcode));
    }

    #[test]
    fn gs1_length_limit() {
        let long = Gs1Element::new("10", "A".repeat(20));
        let elements = [long.clone(), long.clone(), long];
        assert!(matches!(
            encode_gs1(&elements),
            Err(ZplError::Gs1TooLong { chars: 68 })
        ));
    }

    #[test]
    fn check_digits() {
        assert!(check_digit_ok("09501101530003"));
        assert!(check_digit_ok("106141411234567897"));
        assert!(!check_digit_ok("106141411234567898"));
        assert!(!check_digit_ok(""));
    }
}
