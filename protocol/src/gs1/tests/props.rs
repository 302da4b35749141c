//! Property tests: parse(render(x)) = x in both forms, plain codes stay
//! plain, no input panics.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

fn check_digited(len: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(0u8..10, len - 1).prop_map(|mut d| {
        d.push(gs1_check_digit(&d));
        d.iter().map(|x| char::from(b'0' + x)).collect()
    })
}

fn any_gtin14() -> impl Strategy<Value = Gtin> {
    check_digited(14).prop_filter_map("valid GTIN", |s| Gtin::parse(&s).ok())
}

fn any_date() -> impl Strategy<Value = NaiveDate> {
    (YEAR - 49..=YEAR + 50, 1u32..=12, 1u32..=31)
        .prop_filter_map("real date", |(y, m, d)| NaiveDate::from_ymd_opt(y, m, d))
}

/// Lots and serials, including ones that read like AIs and ones with `(`.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9!\"%&'()*+,\\-./:;<=>?_]{1,20}",
        "(10|17|21|01|00|37|3103|414)[0-9A-Z]{0,14}",
        "[0-9]{1,20}",
        "[A-Z0-9]{0,6}\\((10|17|21)\\)[A-Z0-9]{0,6}",
    ]
    .prop_filter("no <GS> text", |s| !s.contains("<GS>"))
}

fn any_count() -> impl Strategy<Value = u64> {
    0u64..=99_999_999
}

fn any_measure() -> impl Strategy<Value = Measure> {
    (0u32..=Measure::MAX_VALUE, 0u8..=Measure::MAX_DECIMALS).prop_map(|(v, d)| measure(v, d))
}

fn any_gs1() -> impl Strategy<Value = Gs1> {
    use proptest::option::of;
    let keys = (
        of(check_digited(18)),
        of(any_gtin14()),
        of(any_gtin14()),
        of(check_digited(13)),
        of(check_digited(13)),
        of(check_digited(13)),
        of(check_digited(13)),
        of(check_digited(13)),
    );
    let item = (
        of(any_text()),
        of(any_date()),
        of(any_date()),
        of(any_date()),
        of(any_date()),
        of(any_text()),
        of(any_count()),
        of(any_count()),
    );
    let measures = (
        of(any_measure()),
        of(any_measure()),
        of(any_measure()),
        of(any_measure()),
        of(any_measure()),
        of(any_measure()),
    );
    (keys, item, measures)
        .prop_map(|(k, i, m)| Gs1 {
            sscc: k.0,
            gtin: k.1,
            content: k.2,
            ship_to_gln: k.3,
            bill_to_gln: k.4,
            purchased_from_gln: k.5,
            ship_for_gln: k.6,
            location_gln: k.7,
            lot: i.0,
            production_date: i.1,
            packaging_date: i.2,
            best_before: i.3,
            expiry: i.4,
            serial: i.5,
            variable_count: i.6,
            count: i.7,
            net_weight_kg: m.0,
            length_m: m.1,
            width_m: m.2,
            depth_m: m.3,
            area_m2: m.4,
            net_volume_l: m.5,
        })
        .prop_filter("at least one AI", |g| *g != Gs1::default())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn raw_form_round_trips(g in any_gs1()) {
        prop_assert_eq!(g.validate(), Ok(()));
        let raw = render_element_string(&g);
        prop_assert_eq!(parse_element_string_at(&raw, YEAR), Ok(g.clone()));
        prop_assert_eq!(parse_element_string_at(&format!("]d2{raw}"), YEAR), Ok(g.clone()));
        prop_assert_eq!(classify_at(&format!("]C1{raw}"), YEAR), Ok(Scan::Gs1(g)));
    }

    #[test]
    fn parentheses_form_round_trips(g in any_gs1()) {
        let hri = render_hri(&g);
        prop_assert_eq!(parse_element_string_at(&hri, YEAR), Ok(g.clone()));
        prop_assert_eq!(classify_at(&hri, YEAR), Ok(Scan::Gs1(g)));
    }

    #[test]
    fn plain_codes_are_never_read_as_ais(
        code in "[A-Za-z0-9!\"%&'*+,\\-./:;<=>?_]{1,30}|(10|17|21|01|00)[0-9A-Z]{1,20}"
    ) {
        prop_assume!(!code.contains("<GS>"));
        match classify_at(&code, YEAR) {
            Ok(Scan::Code(c)) => prop_assert_eq!(c, code),
            Ok(Scan::Gtin(g)) => prop_assert_eq!(g.as_str(), code.as_str()),
            other => return Err(TestCaseError::fail(format!("{code:?} became {other:?}"))),
        }
    }

    #[test]
    fn no_input_panics(
        gs1ish in "(\\][CdQeEI][0-9])?[\u{1d}()0-9A-Za-z<>\\\\ ]{0,40}",
        anything in any::<String>(),
    ) {
        for input in [&gs1ish, &anything] {
            let parsed = parse_element_string_at(input, YEAR);
            let classified = classify_at(input, YEAR);
            // A value that parsed must render to something that parses back.
            if let Ok(g) = parsed {
                prop_assert_eq!(parse_element_string_at(&render_hri(&g), YEAR), Ok(g));
            }
            if let Ok(Scan::Gs1(g)) = classified {
                prop_assert_eq!(parse_element_string_at(&render_element_string(&g), YEAR), Ok(g));
            }
        }
    }

    #[test]
    fn years_stay_in_the_window(yy in 0u32..100, now in 1900i32..2300) {
        let year = expand_year(yy, now);
        prop_assert!((-49..=50).contains(&(year - now)), "{yy} in {now} gave {year}");
        prop_assert_eq!(year.rem_euclid(100), yy as i32);
    }
}
