//! Semantic versions: which strings are one, and how two compare.

use std::cmp::Ordering;

/// `MAJOR.MINOR.PATCH`, each a number without leading zeros that fits in a
/// `u64` (0 to 18446744073709551615, so that versions compare as numbers),
/// with an optional `-prerelease` of dot-separated letters, digits and
/// hyphens.
pub fn is_semver(v: &str) -> bool {
    let (core, pre) = match v.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (v, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    let number_ok = |n: &&str| {
        !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
            && n.parse::<u64>().is_ok()
    };
    let pre_ok = pre.is_none_or(|p| {
        p.split('.')
            .all(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    });
    numbers.len() == 3 && numbers.iter().all(number_ok) && pre_ok
}

/// Orders two semantic versions by precedence (a pre-release comes before
/// its release; numeric identifiers compare as numbers). `None` when either
/// is not a semantic version.
pub fn compare(a: &str, b: &str) -> Option<Ordering> {
    if !is_semver(a) || !is_semver(b) {
        return None;
    }
    let split = |v: &str| -> (Vec<u64>, Option<String>) {
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c.to_owned(), Some(p.to_owned())),
            None => (v.to_owned(), None),
        };
        (
            core.split('.').filter_map(|n| n.parse().ok()).collect(),
            pre,
        )
    };
    let ((ca, pa), (cb, pb)) = (split(a), split(b));
    let by_core = ca.cmp(&cb);
    if by_core != Ordering::Equal {
        return Some(by_core);
    }
    Some(match (pa, pb) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => {
            let ident = |i: &str| (i.parse::<u64>().ok(), i.to_owned());
            let xs: Vec<_> = x.split('.').map(ident).collect();
            let ys: Vec<_> = y.split('.').map(ident).collect();
            let mut order = xs.len().cmp(&ys.len());
            for (l, r) in xs.iter().zip(&ys) {
                let o = match (l.0, r.0) {
                    (Some(m), Some(n)) => m.cmp(&n),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => l.1.cmp(&r.1),
                };
                if o != Ordering::Equal {
                    order = o;
                    break;
                }
            }
            order
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in ["0.1.0", "1.4.0", "10.20.30", "1.5.0-rc.1", "2.0.0-alpha-2"] {
            assert!(is_semver(ok), "{ok}");
        }
        for bad in [
            "",
            "1",
            "1.2",
            "1.2.3.4",
            "01.2.3",
            "1.2.x",
            "1.2.3-",
            "1.2.3-a..b",
            "v1.2.3",
            " 1.2.3",
            "1.2.3-../x",
            "18446744073709551616.0.0",
            "1.99999999999999999999.0",
            "-1.0.0",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }

    #[test]
    fn precedence() {
        use std::cmp::Ordering::*;
        // The chain from the semver specification, each before the next.
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
            "1.0.1",
            "1.2.0",
            "1.10.0",
            "2.0.0",
            "18446744073709551615.0.0",
        ];
        for (i, a) in chain.iter().enumerate() {
            for (j, b) in chain.iter().enumerate() {
                assert_eq!(compare(a, b), Some(i.cmp(&j)), "{a} vs {b}");
            }
        }
        assert_eq!(compare("1.0.0", "1.0.0"), Some(Equal));
        assert_eq!(compare("1.0", "1.0.0"), None);
        assert_eq!(compare("1.0.0", "latest"), None);
        assert_eq!(compare("0.9.0", "0.10.0"), Some(Less));
        assert_eq!(compare("3.0.0", "2.99.99"), Some(Greater));
    }
}
