//! Code 128 for both backends from one plan.
//!
//! The plan chooses where to use subset C (digit pairs, half the width) and
//! where subset B (printable ASCII). The PDF draws the bars that `barcoders`
//! encodes from it; the ZPL sends the same subsets as explicit invocation
//! codes (`^BC` mode N), so a printed label and its PDF carry the same
//! symbol, and both sides know its width in modules before drawing.

use barcoders::sym::code128::Code128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subset {
    B,
    C,
}

/// An encodable Code 128 symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Symbol {
    /// Bars (1) and spaces (0), one entry per module, start to stop bar.
    pub bits: Vec<u8>,
    /// The same symbol as `^BC` mode N field data (before `^FH` escaping).
    pub zpl: String,
}

impl Symbol {
    pub fn new(data: &str) -> Result<Self, String> {
        let segments = plan(data)?;
        let barcoders_input = barcoders_data(&segments);
        let encoded = Code128::new(&barcoders_input).map_err(|e| format!("{data:?}: {e}"))?;
        Ok(Self {
            bits: encoded.encode(),
            zpl: zpl_data(&segments),
        })
    }

    /// A GS1-128 symbol of an SSCC (application identifier 00 and its 18
    /// digits): FNC1 after the start code marks the data as GS1 element
    /// strings, and the 20 digits go in subset C.
    pub fn sscc(sscc: &str) -> Result<Self, String> {
        if sscc.len() != 18 || !sscc.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{sscc:?} is not an SSCC: 18 digits"));
        }
        let encoded = Code128::new(format!("\u{0106}\u{0179}00{sscc}"))
            .map_err(|e| format!("{sscc:?}: {e}"))?;
        Ok(Self {
            bits: encoded.encode(),
            // `>;` starts in C, `>8` is FNC1.
            zpl: format!(">;>800{sscc}"),
        })
    }

    pub fn modules(&self) -> usize {
        self.bits.len()
    }
}

/// Splits `data` into subset runs. Digit runs go to subset C where that is
/// shorter: at least 4 digits at either end of the data, 6 in the middle
/// (a switch costs a symbol each way), 2 when the data is only digits. An
/// odd digit stays in subset B beside the run.
fn plan(data: &str) -> Result<Vec<(Subset, String)>, String> {
    if data.is_empty() {
        return Err("empty barcode data".into());
    }
    if let Some(bad) = data.chars().find(|c| !(' '..='~').contains(c)) {
        return Err(format!(
            "{data:?}: {bad:?} cannot be encoded in Code 128 (printable ASCII only)"
        ));
    }
    let bytes = data.as_bytes();
    let mut segments: Vec<(Subset, String)> = Vec::new();
    let mut push = |subset: Subset, text: &str| {
        if text.is_empty() {
            return;
        }
        match segments.last_mut() {
            Some((last, s)) if *last == subset => s.push_str(text),
            _ => segments.push((subset, text.to_owned())),
        }
    };
    let mut start = 0;
    while start < bytes.len() {
        let digit = bytes[start].is_ascii_digit();
        let mut end = start;
        while end < bytes.len() && bytes[end].is_ascii_digit() == digit {
            end += 1;
        }
        let run = &data[start..end];
        let at_start = start == 0;
        let at_end = end == bytes.len();
        let threshold = match (at_start, at_end) {
            (true, true) => 2,
            (true, false) | (false, true) => 4,
            (false, false) => 6,
        };
        let odd_whole = at_start && at_end && run.len() % 2 == 1;
        if !digit || run.len() < threshold || (odd_whole && run.len() < 5) {
            push(Subset::B, run);
        } else if run.len() % 2 == 0 {
            push(Subset::C, run);
        } else if at_start {
            // Leading odd run: pairs first, the last digit joins the text
            // after it (or ends the symbol in B), saving a switch.
            let (pairs, rest) = run.split_at(run.len() - 1);
            push(Subset::C, pairs);
            push(Subset::B, rest);
        } else {
            let (first, pairs) = run.split_at(1);
            push(Subset::B, first);
            push(Subset::C, pairs);
        }
        start = end;
    }
    Ok(segments)
}

/// `barcoders` notation: 'Ɓ'/'Ć' first select the start code, later ones
/// switch subsets.
fn barcoders_data(segments: &[(Subset, String)]) -> String {
    let mut out = String::new();
    for (subset, text) in segments {
        out.push(match subset {
            Subset::B => 'Ɓ',
            Subset::C => 'Ć',
        });
        out.push_str(text);
    }
    out
}

/// ZPL `^BC` mode N notation: `>:`/`>;` start B/C, `>6`/`>5` switch to B/C.
/// In subset B, '^', '>' and '~' must be sent as the invocation codes `><`,
/// `>0` and `>=` (ZPL II guide, Code 128 invocation characters).
fn zpl_data(segments: &[(Subset, String)]) -> String {
    let mut out = String::new();
    for (i, (subset, text)) in segments.iter().enumerate() {
        out.push_str(match (i, subset) {
            (0, Subset::B) => ">:",
            (0, Subset::C) => ">;",
            (_, Subset::B) => ">6",
            (_, Subset::C) => ">5",
        });
        for c in text.chars() {
            match c {
                '^' => out.push_str("><"),
                '>' => out.push_str(">0"),
                '~' => out.push_str(">="),
                c => out.push(c),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const START_B: &[u8] = &[1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0];
    const START_C: &[u8] = &[1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0];
    const STOP: &[u8] = &[1, 1, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1];

    fn plan_of(data: &str) -> Vec<(Subset, String)> {
        let Ok(p) = plan(data) else {
            panic!("{data} should plan")
        };
        p
    }

    #[test]
    fn subsets_are_chosen_for_width() {
        use Subset::{B, C};
        assert_eq!(plan_of("123456"), vec![(C, "123456".into())]);
        assert_eq!(plan_of("123"), vec![(B, "123".into())]);
        assert_eq!(plan_of("12345"), vec![(C, "1234".into()), (B, "5".into())]);
        assert_eq!(
            plan_of("1Z999AA10123456784"),
            vec![(B, "1Z999AA1".into()), (C, "0123456784".into())]
        );
        assert_eq!(plan_of("AB1234CD"), vec![(B, "AB1234CD".into())]);
        assert_eq!(
            plan_of("AB123456CD"),
            vec![(B, "AB".into()), (C, "123456".into()), (B, "CD".into())]
        );
    }

    #[test]
    fn symbol_structure() -> Result<(), String> {
        let s = Symbol::new("1Z999AA10123456784")?;
        assert_eq!(s.zpl, ">:1Z999AA1>50123456784");
        // start + 8 B + switch + 5 C + check = 16 symbols of 11, stop 13.
        assert_eq!(s.modules(), 16 * 11 + 13);
        assert_eq!(&s.bits[..11], START_B);
        assert_eq!(&s.bits[s.modules() - 13..], STOP);
        let c = Symbol::new("00340123450000000018")?;
        assert_eq!(&c.bits[..11], START_C);
        assert_eq!(c.zpl, ">;00340123450000000018");
        // GS1-128: start C, FNC1, ten digit pairs, check.
        let g = Symbol::sscc("340123450000000018")?;
        assert_eq!(g.zpl, ">;>800340123450000000018");
        assert_eq!(g.modules(), 13 * 11 + 13);
        assert_eq!(&g.bits[..11], START_C);
        assert_ne!(g.bits, c.bits, "FNC1 makes it a GS1 symbol");
        assert!(Symbol::sscc("12345").is_err());
        Ok(())
    }

    #[test]
    fn zpl_special_characters_use_invocation_codes() -> Result<(), String> {
        let s = Symbol::new("A^B>C~D_E")?;
        assert_eq!(s.zpl, ">:A><B>0C>=D_E");
        assert_eq!(Symbol::new("a>b^c~d")?.zpl, ">:a>0b><c>=d");
        Ok(())
    }

    #[test]
    fn zpl_data_names_its_subsets() -> Result<(), String> {
        assert_eq!(Symbol::new("SKU-42A")?.zpl, ">:SKU-42A");
        assert_eq!(Symbol::new("123456")?.zpl, ">;123456");
        // An odd whole run: pairs first, the last digit in B.
        assert_eq!(Symbol::new("12345")?.zpl, ">;1234>65");
        assert_eq!(Symbol::new("A12B")?.zpl, ">:A12B");
        assert_eq!(Symbol::new("1234AB")?.zpl, ">;1234>6AB");
        Ok(())
    }

    #[test]
    fn unencodable_data_is_an_error() {
        assert!(Symbol::new("").is_err());
        assert!(Symbol::new("ABC\u{e9}").is_err());
        assert!(Symbol::new("A\nB").is_err());
        assert!(Symbol::new("a\tb").is_err());
    }
}
