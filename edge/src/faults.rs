//! Faults the link can be made to inject, for tests: messages duplicated,
//! and held back so they arrive after later ones, in both directions, as
//! QoS 1 across reconnects can do on its own. Off unless asked for.

/// How often each fault happens, per message (0.0 to 1.0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Faults {
    pub duplicate: f64,
    pub delay: f64,
    /// Makes a run repeatable.
    pub seed: u64,
}

impl Faults {
    pub fn is_off(&self) -> bool {
        self.duplicate <= 0.0 && self.delay <= 0.0
    }
}

type Message = (String, Vec<u8>);

pub(crate) struct Injector {
    faults: Faults,
    state: u64,
    held: Vec<Message>,
}

impl Injector {
    pub(crate) fn new(faults: Faults) -> Self {
        Self {
            faults,
            state: faults.seed,
            held: Vec::new(),
        }
    }

    /// splitmix64, as a fraction of 1.
    fn roll(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// What to deliver now for one message: nothing (held back), it, or it
    /// twice.
    pub(crate) fn pass(&mut self, topic: String, payload: Vec<u8>) -> Vec<Message> {
        if self.roll() < self.faults.delay {
            self.held.push((topic, payload));
            return Vec::new();
        }
        if self.roll() < self.faults.duplicate {
            return vec![(topic.clone(), payload.clone()), (topic, payload)];
        }
        vec![(topic, payload)]
    }

    /// What was held back, last first: later than what passed meanwhile,
    /// and out of order among themselves.
    pub(crate) fn release(&mut self) -> Vec<Message> {
        let mut held = std::mem::take(&mut self.held);
        held.reverse();
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_passes_everything_once() {
        let mut i = Injector::new(Faults::default());
        for n in 0..100u8 {
            assert_eq!(i.pass("t".into(), vec![n]), vec![("t".to_owned(), vec![n])]);
        }
        assert!(i.release().is_empty());
    }

    #[test]
    fn faults_happen_at_about_their_rate_and_nothing_is_lost() {
        let mut i = Injector::new(Faults {
            duplicate: 0.2,
            delay: 0.2,
            seed: 7,
        });
        let mut out = Vec::new();
        for n in 0..1000u32 {
            out.extend(i.pass("t".into(), n.to_be_bytes().to_vec()));
        }
        out.extend(i.release());
        let mut seen: Vec<u32> = out
            .iter()
            .map(|(_, p)| u32::from_be_bytes([p[0], p[1], p[2], p[3]]))
            .collect();
        let total = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 1000, "every message arrives at least once");
        assert!(
            (1100..1250).contains(&total),
            "about 16% duplicated: {total}"
        );
    }
}
