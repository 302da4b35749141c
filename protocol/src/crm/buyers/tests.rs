//! Buyer identities, folding, terms and the searches over them.

use super::*;
use proptest::prelude::*;

/// SQLite's LIKE with `ESCAPE '\'`, for text that is already lowercase.
fn like(pattern: &[char], text: &[char]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some(('%', rest)) => (0..=text.len()).any(|i| like(rest, &text[i..])),
        Some(('_', rest)) => !text.is_empty() && like(rest, &text[1..]),
        Some(('\\', rest)) => match (rest.split_first(), text.split_first()) {
            (Some((p, rest)), Some((t, text))) => p == t && like(rest, text),
            _ => false,
        },
        Some((p, rest)) => text.first() == Some(p) && like(rest, &text[1..]),
    }
}

/// Whether a compiled scan finds `entry` (a key as the index holds it).
fn finds(scan: &TermScan, entry: &str) -> bool {
    let reversed = scan.kinds == [TermKind::Reversed];
    let e: String = if reversed {
        entry.chars().rev().collect()
    } else {
        entry.to_owned()
    };
    let chars: Vec<char> = e.chars().collect();
    e >= scan.from && e < scan.to && like(&scan.like.chars().collect::<Vec<_>>(), &chars)
}

fn wildcard(p: &str) -> TermScan {
    compile_wildcard(p).unwrap_or_else(|e| panic!("{p:?} refused: {e}"))
}

#[test]
fn normalizes_identities() {
    assert_eq!(
        email_key("  Ana@Example.COM "),
        Some("ana@example.com".into())
    );
    assert_eq!(email_key("  "), None);
    assert_eq!(phone_key("+34 600-11 22 33"), Some("+34600112233".into()));
    assert_eq!(phone_key("0034 600 112233"), Some("+34600112233".into()));
    assert_eq!(phone_key("(600) 112 233"), Some("600112233".into()));
    assert_eq!(phone_key("12-34"), None);
    assert_eq!(phone_key(&"1".repeat(21)), None);
    assert_eq!(
        name_key("  Ana   María\tLÓPEZ "),
        Some("ana maría lópez".into())
    );
    assert_eq!(name_key(" \t "), None);
}

#[test]
fn terms_cover_name_words_contacts_and_their_ends() {
    let t = terms(Some("ana maría lópez"), Some("ana@x.com"), Some("+34600"));
    let of = |k: TermKind| -> Vec<&str> {
        t.iter()
            .filter(|(kind, _)| *kind == k)
            .map(|(_, s)| s.as_str())
            .collect()
    };
    assert_eq!(
        of(TermKind::Name),
        ["ana maria lopez", "lopez", "maria lopez"]
    );
    assert_eq!(of(TermKind::Contact), ["+34600", "ana@x.com"]);
    assert_eq!(
        of(TermKind::Reversed),
        ["00643+", "moc.x@ana", "zepol airam ana"]
    );
    let long = (0..20)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(terms(Some(&long), None, None).len(), MAX_NAME_WORDS + 1);
    assert!(terms(None, None, None).is_empty());
}

#[test]
fn folding_sets_accents_and_case_aside() {
    for (raw, folded) in [
        ("Ana Muñoz", "ana munoz"),
        ("JOSÉ  PÉREZ", "jose perez"),
        ("François Lefèvre", "francois lefevre"),
        ("Łukasz Dąbrowski", "lukasz dabrowski"),
        ("Søren Kierkegaard", "soren kierkegaard"),
        ("Jörg Straße", "jorg strasse"),
        ("Ærø", "aero"),
        ("Œuvre", "oeuvre"),
        ("Đorđe", "dorde"),
        ("Þór", "thor"),
        ("İstanbul", "istanbul"),
        ("ıspanak", "ispanak"),
        ("Ｍüller", "muller"),
        ("ﬁnn", "finn"),
        ("Nguyễn Thị", "nguyen thi"),
        ("Ελένη", "ελενη"),
        ("Дмитрий Йода", "дмитрии иода"),
        ("ガルシア", "カルシア"),
        ("+34 600", "+34 600"),
        ("josé@Example.com", "jose@example.com"),
    ] {
        assert_eq!(fold(raw).as_deref(), Some(folded), "{raw}");
    }
    // Only what the caller typed as a wildcard is one.
    assert_eq!(fold("a﹖b＊c?*").as_deref(), Some("a﹖b＊c?*"));
    assert_eq!(fold("\u{301}\u{308}"), None);
    assert_eq!(fold("  "), None);
}

#[test]
fn searches_find_names_however_accented() {
    let indexed = terms(name_key("Ana Muñoz-Pérez").as_deref(), None, None);
    let found = |s: &BuyerSearch| match &s.by {
        BuyerMatch::Terms(scan) => indexed
            .iter()
            .any(|(kind, term)| scan.kinds.contains(kind) && scan.from <= *term && *term < scan.to),
        BuyerMatch::Id(_) => false,
    };
    for q in ["munoz", "MUÑOZ", "ana mu", "Añ"] {
        let s = parse_search("by_name", Some(q), None).expect(q);
        assert!(found(&s), "{q}");
    }
    let s = parse_search("by_wildcard", Some("*pérez"), None).expect("pattern");
    let BuyerMatch::Terms(scan) = &s.by else {
        panic!("a term scan");
    };
    assert_eq!(
        (scan.from.as_str(), scan.like.as_str()),
        ("zerep", "zerep%")
    );
    assert!(parse_search("by_name", Some("\u{301}\u{301}"), None).is_err());
}

#[test]
fn prefix_ends() {
    assert_eq!(prefix_end("ab"), Some("ac".into()));
    assert_eq!(prefix_end("a\u{D7FF}"), Some("a\u{E000}".into()));
    assert_eq!(prefix_end("a\u{10FFFF}"), Some("b".into()));
    assert_eq!(prefix_end("\u{10FFFF}\u{10FFFF}"), None);
    assert_eq!(prefix_end(""), None);
}

#[test]
fn wildcards_anchor_where_the_literals_are() {
    let s = wildcard("Ana*");
    assert_eq!(
        (s.kinds, s.from.as_str(), s.to.as_str()),
        (&[TermKind::Name, TermKind::Contact][..], "ana", "anb")
    );
    assert_eq!(s.like, "ana%");
    let s = wildcard("*@Example.com");
    assert_eq!(
        (s.kinds, s.from.as_str()),
        (&[TermKind::Reversed][..], "moc.elpmaxe@")
    );
    assert_eq!(s.like, "moc.elpmaxe@%");
    assert_eq!(wildcard("an?*lópez").from, "zepol");
    assert_eq!(wildcard("ana").like, "ana");
    assert_eq!(wildcard("a**b**cde").like, "edc%b%a");
}

#[test]
fn wildcards_find_what_they_say() {
    assert!(finds(&wildcard("ana*"), "ana lópez"));
    assert!(finds(&wildcard("ana*"), "ana@x.com"));
    assert!(!finds(&wildcard("ana*"), "juana"));
    assert!(finds(&wildcard("*@x.com"), "ana@x.com"));
    assert!(!finds(&wildcard("*@x.com"), "ana@x.company"));
    assert!(finds(&wildcard("+34600*"), "+34600112233"));
    assert!(finds(&wildcard("ana@?.com"), "ana@x.com"));
    assert!(!finds(&wildcard("ana@?.com"), "ana@xy.com"));
    assert!(finds(&wildcard("ana l*z"), "ana lópez"));
}

#[test]
fn like_metacharacters_are_literals() {
    let s = wildcard("50%_off\\*");
    assert_eq!(s.like, "50\\%\\_off\\\\%");
    assert!(finds(&s, "50%_off\\ forever"));
    assert!(!finds(&s, "50xxoff\\ forever"));
    assert!(!finds(&wildcard("a_c"), "abc"));
    assert!(finds(&wildcard("a_c"), "a_c"));
    assert!(!finds(&wildcard("ab%"), "abc"));
    let q = wildcard("o'brien'; drop table buyers; --");
    assert!(finds(&q, "o'brien'; drop table buyers; --"));
    assert!(!finds(&q, "o'brien"));
}

#[test]
fn patterns_without_anchors_or_with_too_much_are_refused() {
    for bad in [
        "", "  ", "*", "**", "ab*", "*ab", "a*b", "?ab?", "*abc*", "a?c",
    ] {
        assert!(compile_wildcard(bad).is_err(), "{bad:?}");
    }
    assert!(compile_wildcard(&"a".repeat(MAX_KEY + 1)).is_err());
    assert!(compile_wildcard(&format!("abc{}", "?".repeat(MAX_WILDCARDS + 1))).is_err());
    assert!(compile_wildcard(&format!("abc{}", "?".repeat(MAX_WILDCARDS))).is_ok());
    assert!(compile_wildcard("abc\u{0}*").is_err());
    assert!(compile_wildcard("abc*******").is_ok(), "runs of * are one");
}

#[test]
fn searches_are_checked_whole() {
    let names = |r: Result<BuyerSearch, Vec<FieldError>>| -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.name)
            .collect()
    };
    assert_eq!(
        names(parse_search("by_email", None, Some("vip"))),
        ["key_type", "key_id", "filter_id"]
    );
    assert_eq!(names(parse_search("by_id", Some("abc"), None)), ["key_id"]);
    assert_eq!(names(parse_search("by_id", Some("-3"), None)), ["key_id"]);
    assert_eq!(names(parse_search("by_name", Some("a"), None)), ["key_id"]);
    assert_eq!(
        names(parse_search("by_wildcard", Some("*a*"), None)),
        ["key_id"]
    );
    assert_eq!(
        names(parse_search("by_name", Some("an"), Some("channel:"))),
        ["filter_id"]
    );
    let s = parse_search("by_id", Some(" 42 "), Some("channel:webshop"));
    assert_eq!(
        s,
        Ok(BuyerSearch {
            by: BuyerMatch::Id(42),
            filter: Some(BuyerFilter::Channel("webshop".into())),
        })
    );
    let s = parse_search("by_name", Some("  Ana  L"), Some("crm"));
    assert!(s.is_ok_and(|s| s.filter == Some(BuyerFilter::Crm)
        && s.by
            == BuyerMatch::Terms(TermScan {
                kinds: &[TermKind::Name],
                from: "ana l".into(),
                to: "ana m".into(),
                like: "ana l%".into(),
            })));
    assert!(parse_search("by_name", Some("\u{10FFFF}\u{10FFFF}"), None).is_err());
    assert!(compile_wildcard("\u{10FFFF}\u{10FFFF}\u{10FFFF}*").is_err());
}

proptest! {
    #[test]
    fn any_literal_pattern_matches_itself_and_only_itself(s in "[a-z0-9%_\\\\'\";@. -]{3,40}", extra in "[a-z%_]{1,3}") {
        let Some(key) = name_key(&s) else { return Ok(()) };
        prop_assume!(key.chars().count() >= MIN_ANCHOR);
        let scan = compile_wildcard(&s).map_err(TestCaseError::fail)?;
        prop_assert!(finds(&scan, &key));
        let longer = format!("{key}{extra}");
        let prefixed = format!("{extra}{key}");
        prop_assert!(!finds(&scan, &longer));
        prop_assert!(!finds(&scan, &prefixed));
    }

    #[test]
    fn any_input_compiles_to_a_safe_pattern_or_is_refused(s in "\\PC{0,120}") {
        if let Ok(scan) = compile_wildcard(&s) {
            // Unescaped % and _ come only from the caller's * and ?.
            let mut wild = 0;
            let mut chars = scan.like.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => prop_assert!(matches!(chars.next(), Some('%' | '_' | '\\'))),
                    '%' | '_' => wild += 1,
                    _ => {}
                }
            }
            let asked = name_key(&s).unwrap_or_default().chars().filter(|c| matches!(c, '*' | '?')).count();
            prop_assert!(wild <= asked && wild <= MAX_WILDCARDS);
            prop_assert!(scan.from.chars().count() >= MIN_ANCHOR);
            prop_assert!(!scan.from.contains(['*', '?']));
        }
    }

    #[test]
    fn a_pattern_finds_the_text_it_was_made_from(s in "[a-z@.]{3,10}[*?][a-z@. ]{0,10}[*?]?[a-z@.]{0,10}", fill in "[a-z]{1,4}") {
        let Ok(scan) = compile_wildcard(&s) else { return Ok(()) };
        let text: String = name_key(&s).unwrap_or_default().chars().map(|c| match c {
            '*' => fill.clone(),
            '?' => "x".to_owned(),
            c => c.to_string(),
        }).collect();
        prop_assert!(finds(&scan, &text), "{:?} vs {:?}", scan, text);
    }

    #[test]
    fn the_prefix_range_holds_exactly_the_prefixed(p in "\\PC{1,8}", rest in "\\PC{0,8}", other in "\\PC{0,12}") {
        let to = prefix_end(&p);
        let s = format!("{p}{rest}");
        prop_assert!(s >= p && to.as_deref().is_none_or(|to| s.as_str() < to));
        let in_range = other >= p && to.as_deref().is_none_or(|to| other.as_str() < to);
        prop_assert_eq!(in_range, other.starts_with(&p));
    }
}
