//! PostgreSQL's `numeric` in its binary form, for what the store reads and
//! binds as plain numbers: `SUM` of a `bigint` column is a `numeric` there
//! (an integer in SQLite), and so is a column a migration declared so.
//!
//! The form: digit count, weight (of the first digit, in powers of
//! 10 000), sign, display scale, then the base-10 000 digits.

const POSITIVE: u16 = 0x0000;
const NEGATIVE: u16 = 0x4000;
const NAN: u16 = 0xC000;
const POSITIVE_INFINITY: u16 = 0xD000;
const NEGATIVE_INFINITY: u16 = 0xF000;

/// A number read from a `numeric`: an integer when it is one and fits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Integer(i64),
    Real(f64),
}

fn be16(raw: &[u8], at: usize) -> Result<u16, String> {
    raw.get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| "a numeric cut short".to_owned())
}

/// Reads a `numeric` sent in binary.
pub fn decode(raw: &[u8]) -> Result<Number, String> {
    let ndigits = usize::from(be16(raw, 0)?);
    let weight = i32::from(i16::from_be_bytes(be16(raw, 2)?.to_be_bytes()));
    let sign = be16(raw, 4)?;
    // Bytes 6 and 7 are the display scale: how many decimals to print,
    // which a number read as an integer or a double does not need.
    match sign {
        NAN => return Ok(Number::Real(f64::NAN)),
        POSITIVE_INFINITY => return Ok(Number::Real(f64::INFINITY)),
        NEGATIVE_INFINITY => return Ok(Number::Real(f64::NEG_INFINITY)),
        POSITIVE | NEGATIVE => {}
        other => return Err(format!("a numeric with sign {other:#x}")),
    }
    let mut digits = Vec::with_capacity(ndigits);
    for i in 0..ndigits {
        let d = be16(raw, 8 + 2 * i)?;
        if d >= 10_000 {
            return Err(format!("a numeric digit of {d}"));
        }
        digits.push(d);
    }
    // The decimal text: integer groups, then fraction groups.
    let mut int = String::new();
    let mut frac = String::new();
    for (i, d) in digits.iter().enumerate() {
        let power = weight - i32::try_from(i).map_err(|e| e.to_string())?;
        if power >= 0 {
            if int.is_empty() {
                int.push_str(&d.to_string());
            } else {
                int.push_str(&format!("{d:04}"));
            }
        } else {
            if frac.is_empty() && power < -1 {
                // Zero groups between the point and the first digit.
                for _ in 0..(-power - 1) {
                    frac.push_str("0000");
                }
            }
            frac.push_str(&format!("{d:04}"));
        }
    }
    // Integer groups the digits leave out (trailing zeros: 10000 is one
    // digit of weight 1).
    if !digits.is_empty() && !int.is_empty() {
        let last_int_power = weight - i32::try_from(digits.len()).map_err(|e| e.to_string())? + 1;
        for _ in 0..last_int_power.max(0) {
            int.push_str("0000");
        }
    } else if digits.is_empty() {
        int.push('0');
    }
    if int.is_empty() {
        int.push('0');
    }
    let frac = frac.trim_end_matches('0');
    let negative = sign == NEGATIVE;
    // A whole number, perhaps written with a scale (12.00), that fits.
    if frac.is_empty() {
        let text = if negative {
            format!("-{int}")
        } else {
            int.clone()
        };
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Number::Integer(i));
        }
    }
    let text = format!(
        "{}{int}.{}",
        if negative { "-" } else { "" },
        if frac.is_empty() { "0" } else { frac }
    );
    text.parse::<f64>()
        .map(Number::Real)
        .map_err(|e| format!("numeric {text}: {e}"))
}

/// Writes `value` (decimal text: `-12.50`, `7`) as a binary `numeric`.
pub fn encode(value: &str, out: &mut Vec<u8>) -> Result<(), String> {
    let (negative, body) = match value.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, value.strip_prefix('+').unwrap_or(value)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!("{value:?} is not a decimal number"));
    }
    let dscale = u16::try_from(frac.len()).map_err(|_| "too many decimals".to_owned())?;
    let int = int.trim_start_matches('0');
    // Left-pad the integer part and right-pad the fraction to whole groups.
    let int_pad = (4 - int.len() % 4) % 4;
    let frac_pad = (4 - frac.len() % 4) % 4;
    let int_text = format!("{}{int}", "0".repeat(int_pad));
    let frac_text = format!("{frac}{}", "0".repeat(frac_pad));
    let group = |s: &str| -> Vec<u16> {
        s.as_bytes()
            .chunks(4)
            .map(|c| {
                c.iter()
                    .fold(0_u16, |acc, b| acc * 10 + u16::from(b - b'0'))
            })
            .collect()
    };
    let int_groups = group(&int_text);
    let frac_groups = group(&frac_text);
    let mut weight = i32::try_from(int_groups.len()).map_err(|e| e.to_string())? - 1;
    let mut digits: Vec<u16> = int_groups.into_iter().chain(frac_groups).collect();
    while digits.first() == Some(&0) {
        digits.remove(0);
        weight -= 1;
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.is_empty() {
        weight = 0;
    }
    let ndigits = u16::try_from(digits.len()).map_err(|_| "too many digits".to_owned())?;
    let weight = i16::try_from(weight).map_err(|_| "too large".to_owned())?;
    out.extend_from_slice(&ndigits.to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    let sign = if negative && !digits.is_empty() {
        NEGATIVE
    } else {
        POSITIVE
    };
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&dscale.to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
    Ok(())
}

/// A non-finite real as a `numeric` (PostgreSQL 14 and later read all
/// three).
pub fn encode_special(value: f64, out: &mut Vec<u8>) {
    let sign = if value.is_nan() {
        NAN
    } else if value > 0.0 {
        POSITIVE_INFINITY
    } else {
        NEGATIVE_INFINITY
    };
    out.extend_from_slice(&0_u16.to_be_bytes());
    out.extend_from_slice(&0_u16.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&0_u16.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round(text: &str) -> Number {
        let mut out = Vec::new();
        encode(text, &mut out).expect("a number");
        decode(&out).expect("decodes")
    }

    #[test]
    fn known_forms_read_back() {
        assert_eq!(round("0"), Number::Integer(0));
        assert_eq!(round("10000"), Number::Integer(10_000));
        assert_eq!(round("-123456789"), Number::Integer(-123_456_789));
        assert_eq!(round("12.00"), Number::Integer(12));
        assert_eq!(round("0.0001"), Number::Real(0.0001));
        assert_eq!(round("-0.5"), Number::Real(-0.5));
        assert_eq!(round("123.4567"), Number::Real(123.4567));
        assert_eq!(round("9223372036854775807"), Number::Integer(i64::MAX));
        assert_eq!(round("99999999999999999999"), Number::Real(1e20));
        // PostgreSQL's own bytes for SUM = 20000 (one digit 2, weight 1).
        let raw = [0, 1, 0, 1, 0, 0, 0, 0, 0, 2];
        assert_eq!(decode(&raw), Ok(Number::Integer(20_000)));
        // And for 0.00012 (digits 1, 2000 at weight -1... as 0.0001 2000).
        let raw = [0, 2, 0xff, 0xff, 0, 0, 0, 5, 0, 1, 0x07, 0xd0];
        assert_eq!(decode(&raw), Ok(Number::Real(0.00012)));
        assert!(decode(&[0, 1]).is_err());
        assert!(encode("1e5", &mut Vec::new()).is_err());
    }

    proptest! {
        #[test]
        fn integers_round_trip(i in any::<i64>()) {
            prop_assert_eq!(round(&i.to_string()), Number::Integer(i));
        }

        #[test]
        fn reals_round_trip(f in -1e12_f64..1e12) {
            match round(&f.to_string()) {
                Number::Real(g) => prop_assert_eq!(g, f),
                #[allow(clippy::cast_precision_loss)]
                Number::Integer(i) => prop_assert_eq!(i as f64, f),
            }
        }
    }
}
