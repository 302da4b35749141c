//! Serial Shipping Container Codes (SSCC-18, GS1 AI 00): one per parcel,
//! from the business's GS1 company prefix.
//!
//! An SSCC is an extension digit, the company prefix (4 to 12 digits), a
//! serial reference filling the rest of 17 digits, and a check digit. Here
//! the extension digit and the serial reference together are one number,
//! the *serial*, with the extension digit as its most significant digit, so
//! a prefix of `p` digits has `10^(17 - p)` serials.
//!
//! Several nodes (the cloud and every warehouse box, offline for days)
//! number parcels of one business at once, so the serials are handed out
//! in *blocks*: aligned ranges of [`CompanyPrefix::block_size`] serials,
//! each granted to one node, which numbers within its own blocks only. A
//! block never spans two extension digits, so its SSCCs are one contiguous
//! run of text too ([`CompanyPrefix::text_bounds`]): the largest used in a
//! block is one index lookup.

use crate::barcode::gs1_check_digit;
use std::fmt;

/// A GS1 company prefix: 4 to 12 digits, as GS1 issued it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CompanyPrefix(String);

impl CompanyPrefix {
    pub const MIN_DIGITS: usize = 4;
    pub const MAX_DIGITS: usize = 12;

    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if !s.bytes().all(|b| b.is_ascii_digit())
            || !(Self::MIN_DIGITS..=Self::MAX_DIGITS).contains(&s.len())
        {
            return Err(format!(
                "a GS1 company prefix is {} to {} digits, as GS1 issued it",
                Self::MIN_DIGITS,
                Self::MAX_DIGITS
            ));
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Digits of the serial reference (after the prefix, before the check
    /// digit).
    fn reference_digits(&self) -> u32 {
        // 16 digits between the extension digit and the check digit.
        16 - self.0.len() as u32
    }

    /// Serials of one extension digit.
    fn per_extension(&self) -> i64 {
        10i64.pow(self.reference_digits())
    }

    /// How many serials this prefix has: every extension digit's.
    pub fn capacity(&self) -> i64 {
        10 * self.per_extension()
    }

    /// Serials per block: a hundredth of an extension digit's, at least 100
    /// and at most 10,000 (more parcels than a box packs offline in days,
    /// and still a thousand blocks for the longest prefixes). A power of
    /// ten, so blocks never straddle two extension digits.
    pub fn block_size(&self) -> i64 {
        (self.per_extension() / 100).clamp(100, 10_000)
    }

    /// How many blocks the prefix has.
    pub fn blocks(&self) -> i64 {
        self.capacity() / self.block_size()
    }

    /// The serials of block `k` (0-based), first and last; `None` past the
    /// prefix's capacity.
    pub fn block(&self, k: i64) -> Option<(i64, i64)> {
        (0..self.blocks()).contains(&k).then(|| {
            let size = self.block_size();
            (k * size, k * size + size - 1)
        })
    }

    /// The 17 digits before the check digit.
    fn body(&self, serial: i64) -> String {
        let per = self.per_extension();
        format!(
            "{}{}{:0w$}",
            serial / per,
            self.0,
            serial % per,
            w = self.reference_digits() as usize
        )
    }

    /// The SSCC of `serial`; `None` outside the prefix's capacity.
    pub fn sscc(&self, serial: i64) -> Option<Sscc> {
        if !(0..self.capacity()).contains(&serial) {
            return None;
        }
        let body = self.body(serial);
        let digits: Vec<u8> = body.bytes().map(|b| b - b'0').collect();
        Some(Sscc(format!("{body}{}", gs1_check_digit(&digits))))
    }

    /// The serial of an SSCC of this prefix; `None` for another prefix's.
    pub fn serial_of(&self, sscc: &Sscc) -> Option<i64> {
        let s = sscc.as_str();
        let n = self.0.len();
        if s.get(1..1 + n)? != self.0 {
            return None;
        }
        let ext: i64 = s.get(..1)?.parse().ok()?;
        let reference: i64 = s.get(1 + n..17)?.parse().ok()?;
        Some(ext * self.per_extension() + reference)
    }

    /// The smallest and largest SSCC text of the serials `first..=last` of
    /// one block: every SSCC of this prefix between them, and no other,
    /// lies in that range of text (as `BETWEEN` compares it).
    pub fn text_bounds(&self, first: i64, last: i64) -> (String, String) {
        (
            format!("{}0", self.body(first)),
            format!("{}9", self.body(last)),
        )
    }
}

impl fmt::Display for CompanyPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An SSCC: 18 digits with a valid check digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sscc(String);

impl Sscc {
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.len() != 18 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err("an SSCC is 18 digits".into());
        }
        let digits: Vec<u8> = s.bytes().map(|b| b - b'0').collect();
        let expected = gs1_check_digit(&digits[..17]);
        if digits[17] != expected {
            return Err(format!(
                "the SSCC's check digit is {}, expected {expected}",
                digits[17]
            ));
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Sscc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prefixes_are_four_to_twelve_digits() {
        assert!(CompanyPrefix::parse("0614141").is_ok());
        assert!(CompanyPrefix::parse(" 4012345 ").is_ok());
        for bad in ["", "123", "1234567890123", "06141a1", "٠٦١٤١٤١"] {
            assert!(CompanyPrefix::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_gs1_example_sscc_comes_out_digit_for_digit() {
        // The GS1 General Specifications' example, (00) 106141412345678908:
        // extension digit 1, prefix 0614141, serial reference 234567890.
        let p = CompanyPrefix::parse("0614141").expect("prefix");
        let s = p.sscc(1_234_567_890).expect("in capacity");
        assert_eq!(s.as_str(), "106141412345678908");
        assert_eq!(p.serial_of(&s), Some(1_234_567_890));
        assert!(Sscc::parse(s.as_str()).is_ok());
        assert!(Sscc::parse("106141412345678907").is_err());
    }

    #[test]
    fn blocks_fit_the_prefix() {
        for (prefix, size, blocks) in [
            ("0614141", 10_000, 1_000_000),
            ("4012345678", 10_000, 1_000),
            ("40123456789", 1_000, 1_000),
            ("401234567890", 100, 1_000),
        ] {
            let p = CompanyPrefix::parse(prefix).expect("prefix");
            assert_eq!(p.block_size(), size, "{prefix}");
            assert_eq!(p.blocks(), blocks, "{prefix}");
            let (_, last) = p.block(blocks - 1).expect("last block");
            assert_eq!(last, p.capacity() - 1);
            assert!(p.block(blocks).is_none());
            assert!(p.sscc(p.capacity()).is_none());
        }
    }

    proptest! {
        #[test]
        fn every_serial_round_trips_and_stays_within_its_blocks_text(
            len in 4usize..=12, seed in any::<u64>(), k in any::<u64>(), at in any::<u64>(),
        ) {
            let digits: String = format!("{seed:020}").chars().take(len).collect();
            let p = CompanyPrefix::parse(&digits).expect("prefix");
            let block = (k % p.blocks() as u64) as i64;
            let (first, last) = p.block(block).expect("block");
            let serial = first + (at % p.block_size() as u64) as i64;
            let s = p.sscc(serial).expect("sscc");
            prop_assert!(Sscc::parse(s.as_str()).is_ok());
            prop_assert_eq!(p.serial_of(&s), Some(serial));
            let (lo, hi) = p.text_bounds(first, last);
            prop_assert!(lo.as_str() <= s.as_str() && s.as_str() <= hi.as_str());
            // The neighbours outside the block fall outside its text.
            for outside in [first - 1, last + 1] {
                if let Some(o) = p.sscc(outside) {
                    prop_assert!(o.as_str() < lo.as_str() || o.as_str() > hi.as_str());
                }
            }
        }
    }
}
