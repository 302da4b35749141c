//! Barcode values of catalog items: GTINs (EAN-8, UPC-A, EAN-13, ITF-14 /
//! GTIN-14) with their check digits, and the internal codes warehouses print
//! themselves (Code 128 printable ASCII).

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
