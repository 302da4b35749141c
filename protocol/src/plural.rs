//! Counts in the words people read: the station's answers, the status
//! lines, a packing slip. "1 units left" reads as a bug to the operator.

use std::fmt::Display;

/// `n` and the noun, singular for exactly one: "1 unit", "0 units",
/// "3 units". For the regular nouns our messages use.
pub fn counted<N: Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn singular_for_one_only() {
        assert_eq!(counted(1u64, "event"), "1 event");
        assert_eq!(counted(0i64, "unit"), "0 units");
        assert_eq!(counted(2usize, "line"), "2 lines");
        assert_eq!(counted(-1i64, "unit"), "-1 units");
        assert_eq!(counted(1_000_001u32, "second"), "1000001 seconds");
    }
}
