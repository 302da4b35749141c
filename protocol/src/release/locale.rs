//! Locale tags, BCP 47 in the shape release notes need: a language, then
//! optionally a script, a region and variants (`en`, `pt-BR`, `zh-Hant-TW`,
//! `de-CH-1996`). Extensions and private use are not accepted: no locale a
//! translator works in needs them.

/// The longest tag accepted.
const MAX_TAG: usize = 35;

/// The canonical form of a tag: language lowercase, script titlecase,
/// region uppercase, variants lowercase; `_` is taken for `-` (as in
/// `pt_BR`). `None` when it is not such a tag.
pub fn normalize_locale(tag: &str) -> Option<String> {
    if tag.is_empty() || tag.len() > MAX_TAG || !tag.is_ascii() {
        return None;
    }
    let mut subtags = tag.split(['-', '_']);
    let language = subtags.next()?;
    if !(2..=3).contains(&language.len()) || !language.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let mut out = language.to_ascii_lowercase();
    // Script, region and variants, each at most in that order.
    let mut stage = 0;
    for s in subtags {
        let alpha = s.bytes().all(|b| b.is_ascii_alphabetic());
        let digits = s.bytes().all(|b| b.is_ascii_digit());
        let alnum = s.bytes().all(|b| b.is_ascii_alphanumeric());
        let (next, canonical) = match s.len() {
            4 if alpha && stage < 1 => {
                let (first, rest) = s.split_at(1);
                (1, first.to_ascii_uppercase() + &rest.to_ascii_lowercase())
            }
            2 if alpha && stage < 2 => (2, s.to_ascii_uppercase()),
            3 if digits && stage < 2 => (2, s.to_owned()),
            5..=8 if alnum => (3, s.to_ascii_lowercase()),
            4 if alnum && s.as_bytes()[0].is_ascii_digit() => (3, s.to_ascii_lowercase()),
            _ => return None,
        };
        stage = next;
        out.push('-');
        out.push_str(&canonical);
    }
    Some(out)
}

/// The language subtag of a canonical tag (`pt` of `pt-BR`).
pub fn language(tag: &str) -> &str {
    tag.split('-').next().unwrap_or(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_canonical() {
        for (given, canonical) in [
            ("en", "en"),
            ("EN", "en"),
            ("pt-br", "pt-BR"),
            ("pt_BR", "pt-BR"),
            ("zh-hant-tw", "zh-Hant-TW"),
            ("es-419", "es-419"),
            ("de-CH-1996", "de-CH-1996"),
            ("sl-rozaj", "sl-rozaj"),
        ] {
            assert_eq!(
                normalize_locale(given).as_deref(),
                Some(canonical),
                "{given}"
            );
        }
        for bad in [
            "",
            "e",
            "english",
            "en-",
            "-en",
            "en--US",
            "en-US-Latn",
            "en-x-private",
            "en/../es",
            "é",
            "en US",
            "en-US-US",
        ] {
            assert_eq!(normalize_locale(bad), None, "{bad}");
        }
    }

    #[test]
    fn language_of_a_tag() {
        assert_eq!(language("pt-BR"), "pt");
        assert_eq!(language("en"), "en");
    }
}
