//! Barcode values of catalog items: GTINs (EAN-8, UPC-A, EAN-13, ITF-14 /
//! GTIN-14) with their check digits, UPC-E expansion, and the internal codes
//! warehouses print themselves (Code 128 printable ASCII).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarcodeError {
    #[error("must not be empty")]
    Empty,
    #[error("must be at most {max} characters")]
    TooLong { max: usize },
    #[error("may contain only printable ASCII without spaces")]
    Charset,
    #[error("a GTIN has 8, 12, 13 or 14 digits")]
    GtinLength,
    #[error("check digit is {found}, expected {expected}")]
    CheckDigit { found: u8, expected: u8 },
    #[error("a UPC-E code has 8 digits and starts with 0 or 1")]
    UpcE,
}

/// The GS1 mod-10 check digit for the digits before it.
pub fn gs1_check_digit(digits: &[u8]) -> u8 {
    // Weights 3,1,3,1… from the rightmost data digit.
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| u32::from(*d) * if i % 2 == 0 { 3 } else { 1 })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

/// A GTIN with a verified check digit, kept as written (8, 12, 13 or 14 digits).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Gtin(String);

impl Gtin {
    pub fn parse(s: &str) -> Result<Self, BarcodeError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(BarcodeError::Empty);
        }
        if !s.bytes().all(|b| b.is_ascii_digit()) || ![8, 12, 13, 14].contains(&s.len()) {
            return Err(BarcodeError::GtinLength);
        }
        let digits: Vec<u8> = s.bytes().map(|b| b - b'0').collect();
        let (data, check) = digits.split_at(digits.len() - 1);
        let expected = gs1_check_digit(data);
        if check[0] != expected {
            return Err(BarcodeError::CheckDigit {
                found: check[0],
                expected,
            });
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 14-digit form (left-padded with zeros): one GTIN, one key, however
    /// the label printed it.
    pub fn to_gtin14(&self) -> String {
        format!("{:0>14}", self.0)
    }
}

impl fmt::Display for Gtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Expands an 8-digit UPC-E (number system 0 or 1, check digit last) to the
/// 12-digit UPC-A it abbreviates. The check digit is verified against the
/// expanded form, which is what UPC-E computes it over.
///
/// An 8-digit scan is ambiguous between EAN-8 and UPC-E; nothing here guesses.
/// Call this only when the source says UPC-E (a scanner setting, a supplier).
pub fn upce_to_upca(s: &str) -> Result<String, BarcodeError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(BarcodeError::Empty);
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BarcodeError::UpcE);
    }
    let digits: Vec<u8> = s.bytes().map(|b| b - b'0').collect();
    let &[ns @ (0 | 1), a, b, c, d, e, f, check] = digits.as_slice() else {
        return Err(BarcodeError::UpcE);
    };
    // The last data digit says where the suppressed zeros went in the
    // manufacturer (first five) and product (last five) parts.
    let suppressed: [u8; 10] = match f {
        0..=2 => [a, b, f, 0, 0, 0, 0, c, d, e],
        3 => [a, b, c, 0, 0, 0, 0, 0, d, e],
        4 => [a, b, c, d, 0, 0, 0, 0, 0, e],
        _ => [a, b, c, d, e, 0, 0, 0, 0, f],
    };
    let mut upca = vec![ns];
    upca.extend_from_slice(&suppressed);
    let expected = gs1_check_digit(&upca);
    if check != expected {
        return Err(BarcodeError::CheckDigit {
            found: check,
            expected,
        });
    }
    upca.push(check);
    Ok(upca.iter().map(|d| char::from(b'0' + d)).collect())
}

/// Any barcode an item can carry. All-digit values of a GTIN's length must
/// carry a valid check digit (a mistyped EAN is caught at entry, not at the
/// scanner); other values are internal codes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Barcode(String);

impl Barcode {
    pub const MAX_LEN: usize = 48;

    pub fn parse(s: &str) -> Result<Self, BarcodeError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(BarcodeError::Empty);
        }
        if s.len() > Self::MAX_LEN {
            return Err(BarcodeError::TooLong { max: Self::MAX_LEN });
        }
        if !s.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(BarcodeError::Charset);
        }
        if s.bytes().all(|b| b.is_ascii_digit()) && [8, 12, 13, 14].contains(&s.len()) {
            Gtin::parse(s)?;
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_gtins() {
        for s in [
            "4006381333931",
            "96385074",
            "036000291452",
            "10614141000415",
            "5901234123457",
            "0012345678905",
        ] {
            assert!(Gtin::parse(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn wrong_check_digits_are_named() {
        assert_eq!(
            Gtin::parse("4006381333932"),
            Err(BarcodeError::CheckDigit {
                found: 2,
                expected: 1
            })
        );
        assert_eq!(
            Gtin::parse("96385075"),
            Err(BarcodeError::CheckDigit {
                found: 5,
                expected: 4
            })
        );
    }

    #[test]
    fn gtin_shape() {
        assert_eq!(Gtin::parse(""), Err(BarcodeError::Empty));
        assert_eq!(Gtin::parse("12345"), Err(BarcodeError::GtinLength));
        assert_eq!(Gtin::parse("40063813339A1"), Err(BarcodeError::GtinLength));
    }

    #[test]
    fn gtin14_padding() {
        assert_eq!(
            Gtin::parse("96385074").map(|g| g.to_gtin14()),
            Ok("00000096385074".to_owned())
        );
    }

    #[test]
    fn internal_codes_pass_but_numeric_ones_are_checked() {
        assert!(Barcode::parse("BIN-A-01-3").is_ok());
        assert!(Barcode::parse("12345").is_ok());
        assert!(Barcode::parse("4006381333931").is_ok());
        assert!(Barcode::parse("4006381333932").is_err());
        assert_eq!(Barcode::parse("has space"), Err(BarcodeError::Charset));
        assert_eq!(
            Barcode::parse(&"x".repeat(49)),
            Err(BarcodeError::TooLong { max: 48 })
        );
    }

    #[test]
    fn upce_expands_by_its_last_data_digit() {
        for (upce, upca) in [
            // Last digit 0-2: manufacturer d1 d2 d6 0 0, product 0 0 d3 d4 d5.
            ("01234505", "012000003455"),
            ("04252614", "042100005264"),
            // 3: manufacturer d1 d2 d3 0 0, product 0 0 0 d4 d5.
            ("01234531", "012300000451"),
            // 4: manufacturer d1..d4 0, product 0 0 0 0 d5.
            ("01234543", "012340000053"),
            // 5-9: manufacturer d1..d5, product 0 0 0 0 d6.
            ("01234565", "012345000065"),
            ("12345656", "123456000056"),
        ] {
            assert_eq!(upce_to_upca(upce), Ok(upca.to_owned()), "{upce}");
            assert!(Gtin::parse(upca).is_ok(), "{upca}");
        }
    }

    #[test]
    fn upce_rejects_what_is_not_upce() {
        assert_eq!(upce_to_upca(""), Err(BarcodeError::Empty));
        assert_eq!(upce_to_upca("0123456"), Err(BarcodeError::UpcE));
        assert_eq!(upce_to_upca("012345650"), Err(BarcodeError::UpcE));
        assert_eq!(upce_to_upca("21234565"), Err(BarcodeError::UpcE));
        assert_eq!(upce_to_upca("0123456X"), Err(BarcodeError::UpcE));
        assert_eq!(
            upce_to_upca("01234566"),
            Err(BarcodeError::CheckDigit {
                found: 6,
                expected: 5
            })
        );
    }

    proptest! {
        #[test]
        fn appending_the_check_digit_always_validates(data in proptest::collection::vec(0u8..10, 12)) {
            let check = gs1_check_digit(&data);
            let s: String = data.iter().chain(std::iter::once(&check)).map(|d| char::from(b'0' + d)).collect();
            prop_assert!(Gtin::parse(&s).is_ok());
        }

        #[test]
        fn any_single_digit_error_is_caught(data in proptest::collection::vec(0u8..10, 12), pos in 0usize..13, bump in 1u8..10) {
            let check = gs1_check_digit(&data);
            let mut digits: Vec<u8> = data.clone();
            digits.push(check);
            digits[pos] = (digits[pos] + bump) % 10;
            let s: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
            prop_assert!(Gtin::parse(&s).is_err());
        }
    }
}
