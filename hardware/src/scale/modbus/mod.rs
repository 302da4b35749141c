//! Scales that publish their weight in Modbus registers: indicators and
//! load-cell transmitters, over TCP or RTU. Every vendor lays out its
//! registers differently, so the layout is configuration: a [`RegisterMap`].

mod client;

use std::time::SystemTime;

pub(crate) use client::run;
pub use client::{ModbusScaleConfig, ModbusTransport};

use super::{MAX_DECIMALS, Reading, ScaleError, Unit, Weight};

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Table {
    /// Holding registers (function code 3).
    Holding,
    /// Input registers (function code 4).
    Input,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Width {
    /// One register.
    U16,
    /// Two consecutive registers.
    U32,
}

/// Which register of a 32-bit pair holds the high 16 bits.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WordOrder {
    /// The first register (Modbus convention, "big-endian").
    HighFirst,
    /// The second register ("word-swapped", common on indicators).
    LowFirst,
}

/// A status bit telling whether the weight is stable.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct StatusBit {
    /// The table the status register is in.
    pub table: Table,
    /// The status register, zero-based as on the wire.
    pub address: u16,
    /// 0 (least significant) to 15.
    pub bit: u8,
    /// The bit is set while the weight moves (a "motion" flag) rather than
    /// when it is stable.
    #[serde(default)]
    pub invert: bool,
}

impl StatusBit {
    /// Whether `word` (the status register) says stable.
    pub fn stable(&self, word: u16) -> bool {
        (word & self.mask() != 0) != self.invert
    }

    /// `word` with the bit set to say `stable`.
    pub fn with_stable(&self, word: u16, stable: bool) -> u16 {
        let mask = self.mask();
        if stable != self.invert {
            word | mask
        } else {
            word & !mask
        }
    }

    /// No bit at all if `bit` is out of range (`validate` rejects that).
    fn mask(&self) -> u16 {
        1_u16.checked_shl(u32::from(self.bit)).unwrap_or(0)
    }
}

/// Where and how a scale publishes its weight.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct RegisterMap {
    /// The table the weight is in.
    pub table: Table,
    /// The first register, zero-based as on the wire (register 40001 of a
    /// manual's holding table is address 0).
    pub address: u16,
    /// How many registers the weight takes.
    pub width: Width,
    /// Only used for `u32`.
    pub word_order: WordOrder,
    /// Two's complement, so that a scale can report below zero.
    pub signed: bool,
    /// The register holds the weight × 10^decimals.
    pub decimals: u8,
    /// The unit of the weight the registers hold.
    pub unit: Unit,
    /// Without one, every reading counts as stable: the scale gives no way
    /// to tell.
    pub stable: Option<StatusBit>,
}

impl RegisterMap {
    pub fn validate(&self) -> Result<(), ScaleError> {
        let invalid = |what: String| Err(ScaleError::Config(format!("register map: {what}")));
        if self.decimals > MAX_DECIMALS {
            return invalid(format!(
                "{} decimals (at most {MAX_DECIMALS})",
                self.decimals
            ));
        }
        if self.address.checked_add(self.words() - 1).is_none() {
            return invalid(format!(
                "weight at {} runs past register 65535",
                self.address
            ));
        }
        if let Some(status) = self.stable.filter(|s| s.bit > 15) {
            return invalid(format!("status bit {} (0 to 15)", status.bit));
        }
        Ok(())
    }

    /// How many registers the weight takes.
    pub const fn words(&self) -> u16 {
        match self.width {
            Width::U16 => 1,
            Width::U32 => 2,
        }
    }

    /// The reading that the weight registers (and the status register, if
    /// the map has one) stand for.
    pub fn decode(
        &self,
        weight: &[u16],
        status: Option<u16>,
        at: SystemTime,
    ) -> Result<Reading, ScaleError> {
        let raw = match (self.width, weight) {
            (Width::U16, [word]) if self.signed => {
                i64::from(i16::from_be_bytes(word.to_be_bytes()))
            }
            (Width::U16, [word]) => i64::from(*word),
            (Width::U32, [first, second]) => {
                let (high, low) = match self.word_order {
                    WordOrder::HighFirst => (first, second),
                    WordOrder::LowFirst => (second, first),
                };
                let bits = (u32::from(*high) << 16) | u32::from(*low);
                if self.signed {
                    i64::from(i32::from_be_bytes(bits.to_be_bytes()))
                } else {
                    i64::from(bits)
                }
            }
            _ => {
                return Err(ScaleError::Malformed(format!(
                    "{} weight registers, expected {}",
                    weight.len(),
                    self.words()
                )));
            }
        };
        let stable = match (&self.stable, status) {
            (None, _) => true,
            (Some(bit), Some(word)) => bit.stable(word),
            (Some(_), None) => {
                return Err(ScaleError::Malformed("no status register".into()));
            }
        };
        Ok(Reading {
            weight: Weight::new(raw, self.decimals)?,
            unit: self.unit,
            stable,
            at,
        })
    }

    /// The weight registers for `weight` (in this map's unit), as a scale
    /// would publish them.
    pub fn encode(&self, weight: Weight) -> Result<Vec<u16>, ScaleError> {
        let invalid = |why: &str| ScaleError::InvalidWeight(format!("{weight}: {why}"));
        let raw = weight
            .rescale(self.decimals)
            .ok_or_else(|| invalid("more decimals than the registers carry"))?
            .value();
        let out_of_range = || invalid("out of the registers' range");
        Ok(match (self.width, self.signed) {
            (Width::U16, true) => {
                let value = i16::try_from(raw).map_err(|_| out_of_range())?;
                vec![u16::from_be_bytes(value.to_be_bytes())]
            }
            (Width::U16, false) => vec![u16::try_from(raw).map_err(|_| out_of_range())?],
            (Width::U32, signed) => {
                let bits = if signed {
                    let value = i32::try_from(raw).map_err(|_| out_of_range())?;
                    u32::from_be_bytes(value.to_be_bytes())
                } else {
                    u32::try_from(raw).map_err(|_| out_of_range())?
                };
                let [a, b, c, d] = bits.to_be_bytes();
                let (high, low) = (u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d]));
                match self.word_order {
                    WordOrder::HighFirst => vec![high, low],
                    WordOrder::LowFirst => vec![low, high],
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(width: Width, word_order: WordOrder, signed: bool, decimals: u8) -> RegisterMap {
        RegisterMap {
            table: Table::Holding,
            address: 0,
            width,
            word_order,
            signed,
            decimals,
            unit: Unit::Kilogram,
            stable: None,
        }
    }

    fn weight(map: &RegisterMap, words: &[u16]) -> String {
        let reading = map
            .decode(words, None, SystemTime::UNIX_EPOCH)
            .expect("decodes");
        reading.weight.to_string()
    }

    #[test]
    fn sixteen_bit() {
        let unsigned = map(Width::U16, WordOrder::HighFirst, false, 2);
        assert_eq!(weight(&unsigned, &[12345]), "123.45");
        assert_eq!(weight(&unsigned, &[0xffff]), "655.35");
        let signed = map(Width::U16, WordOrder::HighFirst, true, 1);
        assert_eq!(weight(&signed, &[0xffff]), "-0.1");
        assert_eq!(weight(&signed, &[0x8000]), "-3276.8");
        assert_eq!(weight(&signed, &[0x7fff]), "3276.7");
    }

    #[test]
    fn thirty_two_bit_both_word_orders() {
        // 1234567 = 0x0012_D687.
        let high_first = map(Width::U32, WordOrder::HighFirst, false, 3);
        assert_eq!(weight(&high_first, &[0x0012, 0xd687]), "1234.567");
        let low_first = map(Width::U32, WordOrder::LowFirst, false, 3);
        assert_eq!(weight(&low_first, &[0xd687, 0x0012]), "1234.567");
        // -2500 = 0xFFFF_F63C.
        let signed = map(Width::U32, WordOrder::HighFirst, true, 2);
        assert_eq!(weight(&signed, &[0xffff, 0xf63c]), "-25.00");
        let signed_low = map(Width::U32, WordOrder::LowFirst, true, 0);
        assert_eq!(weight(&signed_low, &[0xf63c, 0xffff]), "-2500");
        let unsigned = map(Width::U32, WordOrder::HighFirst, false, 0);
        assert_eq!(weight(&unsigned, &[0xffff, 0xf63c]), "4294964796");
    }

    #[test]
    fn status_bit_and_wrong_counts() {
        let mut m = map(Width::U16, WordOrder::HighFirst, false, 0);
        let bit = StatusBit {
            table: Table::Input,
            address: 10,
            bit: 3,
            invert: false,
        };
        m.stable = Some(bit);
        let at = SystemTime::UNIX_EPOCH;
        assert_eq!(m.decode(&[5], Some(0b1000), at).map(|r| r.stable), Ok(true));
        assert_eq!(
            m.decode(&[5], Some(0b0111), at).map(|r| r.stable),
            Ok(false)
        );
        m.stable = Some(StatusBit {
            invert: true,
            ..bit
        });
        assert_eq!(
            m.decode(&[5], Some(0b1000), at).map(|r| r.stable),
            Ok(false)
        );
        assert!(m.decode(&[5], None, at).is_err());
        assert!(m.decode(&[5, 6], Some(0), at).is_err());
        assert!(m.decode(&[], Some(0), at).is_err());
        assert_eq!(bit.with_stable(0b0001, true), 0b1001);
        assert_eq!(bit.with_stable(0b1001, false), 0b0001);
    }

    #[test]
    fn encode_is_exact_and_bounded() {
        let m = map(Width::U32, WordOrder::LowFirst, true, 2);
        let w = |t: &str| t.parse::<Weight>().expect("valid weight");
        assert_eq!(m.encode(w("-25")), Ok(vec![0xf63c, 0xffff]));
        assert!(m.encode(w("1.005")).is_err());
        let small = map(Width::U16, WordOrder::HighFirst, false, 0);
        assert!(small.encode(w("65536")).is_err());
        assert!(small.encode(w("-1")).is_err());
    }

    #[test]
    fn validation() {
        let mut m = map(Width::U32, WordOrder::HighFirst, false, 0);
        assert!(m.validate().is_ok());
        m.address = u16::MAX;
        assert!(m.validate().is_err());
        m.address = 0;
        m.decimals = MAX_DECIMALS + 1;
        assert!(m.validate().is_err());
    }
}
