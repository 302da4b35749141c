use super::*;
use crate::barcode::gs1_check_digit;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Dates in the tables are expanded around this year.
const YEAR: i32 = 2025;

fn gtin(s: &str) -> Gtin {
    Gtin::parse(s).unwrap_or_else(|e| panic!("test GTIN {s}: {e}"))
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or_else(|| panic!("test date {y}-{m}-{d}"))
}

fn measure(value: u32, decimals: u8) -> Measure {
    Measure { value, decimals }
}

fn gs1(fill: impl FnOnce(&mut Gs1)) -> Result<Gs1, Gs1Error> {
    let mut g = Gs1::default();
    fill(&mut g);
    Ok(g)
}

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

/// The GS1 General Specifications' running example: GTIN, expiry, lot.
fn example() -> Result<Gs1, Gs1Error> {
    gs1(|g| {
        g.gtin = Some(gtin("09506000134352"));
        g.expiry = Some(date(2020, 12, 25));
        g.lot = s("ABC123");
    })
}

fn check(cases: Vec<(&str, Result<Gs1, Gs1Error>)>) {
    let failures: Vec<String> = cases
        .into_iter()
        .filter_map(|(input, expected)| {
            let got = parse_element_string_at(input, YEAR);
            (got != expected).then(|| format!("{input:?}\n   got {got:?}\n  want {expected:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn valid_element_strings() {
    check(vec![
        ("(01)09506000134352(17)201225(10)ABC123", example()),
        ("]C101095060001343521720122510ABC123", example()),
        ("]d210ABC123\u{1d}010950600013435217201225", example()),
        ("]Q31720122510ABC123<GS>0109506000134352", example()),
        ("(01) 09506000134352 (17) 201225 (10) ABC123", example()),
        ("  ]C101095060001343521720122510ABC123\r\n", example()),
        // A leading FNC1, one after a fixed field, one at the end.
        (
            "\u{1d}0109506000134352\u{1d}1720122510ABC123\u{1d}",
            example(),
        ),
        (
            "]e00109506000134352",
            gs1(|g| g.gtin = Some(gtin("09506000134352"))),
        ),
        (
            "0109506000134352",
            gs1(|g| g.gtin = Some(gtin("09506000134352"))),
        ),
        // ITF-14 / GTIN-14 with packaging indicator 1.
        (
            "(01)10614141000415",
            gs1(|g| g.gtin = Some(gtin("10614141000415"))),
        ),
        // Logistic unit: SSCC, contents and their count.
        (
            "(00)106141412345678908(02)10614141000415(37)20",
            gs1(|g| {
                g.sscc = s("106141412345678908");
                g.content = Some(gtin("10614141000415"));
                g.count = Some(20);
            }),
        ),
        (
            "]C1001061414123456789080210614141000415\u{1d}3700000020",
            gs1(|g| {
                g.sscc = s("106141412345678908");
                g.content = Some(gtin("10614141000415"));
                g.count = Some(20);
            }),
        ),
        (
            "(01)95012345678903(3103)000123",
            gs1(|g| {
                g.gtin = Some(gtin("95012345678903"));
                g.net_weight_kg = Some(measure(123, 3));
            }),
        ),
        (
            "]C10195012345678903310000001230012",
            gs1(|g| {
                g.gtin = Some(gtin("95012345678903"));
                g.net_weight_kg = Some(measure(12, 0));
                g.variable_count = Some(12);
            }),
        ),
        (
            "(3110)000012(3121)000034(3132)000056(3143)000789(3155)012345",
            gs1(|g| {
                g.length_m = Some(measure(12, 0));
                g.width_m = Some(measure(34, 1));
                g.depth_m = Some(measure(56, 2));
                g.area_m2 = Some(measure(789, 3));
                g.net_volume_l = Some(measure(12345, 5));
            }),
        ),
        (
            "(410)5412345000013(411)9501101530003(412)5412345000013(413)9501101530003(414)9501101530003",
            gs1(|g| {
                g.ship_to_gln = s("5412345000013");
                g.bill_to_gln = s("9501101530003");
                g.purchased_from_gln = s("5412345000013");
                g.ship_for_gln = s("9501101530003");
                g.location_gln = s("9501101530003");
            }),
        ),
        // DD = 00 is the last day of the month, leap years included.
        ("(17)250200", gs1(|g| g.expiry = Some(date(2025, 2, 28)))),
        ("(17)240200", gs1(|g| g.expiry = Some(date(2024, 2, 29)))),
        (
            "(15)251200",
            gs1(|g| g.best_before = Some(date(2025, 12, 31))),
        ),
        // The century window: -49..+50 years around 2025.
        (
            "(11)991231",
            gs1(|g| g.production_date = Some(date(1999, 12, 31))),
        ),
        (
            "(15)751231",
            gs1(|g| g.best_before = Some(date(2075, 12, 31))),
        ),
        (
            "(13)760101",
            gs1(|g| g.packaging_date = Some(date(1976, 1, 1))),
        ),
        // Explicitly GS1, so here "10D9T" is AI (10) lot "D9T".
        ("]C110D9T", gs1(|g| g.lot = s("D9T"))),
        // A lot that looks like AIs, behind its own AI.
        ("(10)17251231", gs1(|g| g.lot = s("17251231"))),
        // Missing GS after a short lot: the lot takes what follows.
        ("]C110ABC21XYZ", gs1(|g| g.lot = s("ABC21XYZ"))),
        // Missing GS after a full-length lot: the lot ends at 20 characters.
        (
            "]C110ABCDEFGHIJKLMNOPQRST17251231",
            gs1(|g| {
                g.lot = s("ABCDEFGHIJKLMNOPQRST");
                g.expiry = Some(date(2025, 12, 31));
            }),
        ),
        (
            "]C110ABC\u{1d}21XYZ",
            gs1(|g| {
                g.lot = s("ABC");
                g.serial = s("XYZ");
            }),
        ),
        (
            "(21)12345678901234567890",
            gs1(|g| g.serial = s("12345678901234567890")),
        ),
        ("(37)00000024", gs1(|g| g.count = Some(24))),
        // Parentheses in data: escaped, or not opening an AI.
        ("(10)A\\(17)B", gs1(|g| g.lot = s("A(17)B"))),
        ("(10)A(B)", gs1(|g| g.lot = s("A(B)"))),
        // The same AI twice with the same value is harmless.
        ("]C110ABC\u{1d}10ABC", gs1(|g| g.lot = s("ABC"))),
        (
            "(10)x-1/2:_%'\"&<=>?",
            gs1(|g| g.lot = s("x-1/2:_%'\"&<=>?")),
        ),
    ]);
}

#[test]
fn invalid_element_strings() {
    let date_err = |ai: &str, what, value: &str| {
        Err(Gs1Error::Date {
            ai: ai.into(),
            what,
            value: value.into(),
        })
    };
    let unknown = |ai: &str| Err(Gs1Error::UnknownAi { ai: ai.into() });
    let expected_ai = |found: &str| {
        Err(Gs1Error::ExpectedAi {
            found: found.into(),
        })
    };
    let gtin_check = |found, expected| {
        Err(Gs1Error::CheckDigit {
            ai: "01".into(),
            what: "GTIN",
            found,
            expected,
        })
    };
    let lot_len = |found| {
        Err(Gs1Error::VarLength {
            ai: "10".into(),
            what: "lot",
            max: 20,
            found,
        })
    };
    let gtin_len = |found| {
        Err(Gs1Error::Length {
            ai: "01".into(),
            what: "GTIN",
            expected: 14,
            found,
        })
    };
    check(vec![
        ("", Err(Gs1Error::Empty)),
        ("]C1", Err(Gs1Error::Empty)),
        ("\u{1d}\u{1d}", Err(Gs1Error::Empty)),
        ("(17)251332", date_err("17", "expiry", "251332")),
        ("(17)250229", date_err("17", "expiry", "250229")),
        ("(17)251300", date_err("17", "expiry", "251300")),
        ("(11)250132", date_err("11", "production date", "250132")),
        ("(01)09506000134353", gtin_check(3, 2)),
        ("]C10109506000134353", gtin_check(3, 2)),
        ("(99)123", unknown("99")),
        ("]C1991234", unknown("99")),
        ("(12)251231", unknown("12")),
        ("]C14001234567890123", unknown("400")),
        ("(3106)000123", unknown("3106")),
        ("]C13109000123", unknown("3109")),
        ("(011)09506000134352", unknown("011")),
        ("(4100)5412345000013", unknown("4100")),
        ("(01)0950600013435", gtin_len(13)),
        ("]C1010950600013435", gtin_len(13)),
        ("]C1010950600013435\u{1d}10A", gtin_len(13)),
        ("(01)09506000134352X", gtin_len(15)),
        (
            "(17)2512",
            Err(Gs1Error::Length {
                ai: "17".into(),
                what: "expiry",
                expected: 6,
                found: 4,
            }),
        ),
        ("(10)", lot_len(0)),
        ("(10)ABCDEFGHIJKLMNOPQRSTU", lot_len(21)),
        (
            "(10)AB#",
            Err(Gs1Error::Charset {
                ai: "10".into(),
                what: "lot",
                ch: '#',
            }),
        ),
        (
            "(21)A\u{1d}",
            Err(Gs1Error::Charset {
                ai: "21".into(),
                what: "serial",
                ch: '\u{1d}',
            }),
        ),
        ("(10)Lötnummer", Err(Gs1Error::NonAscii { ch: 'ö' })),
        (
            "(01)0950600013435A",
            Err(Gs1Error::NotDigits {
                ai: "01".into(),
                what: "GTIN",
                value: "0950600013435A".into(),
            }),
        ),
        (
            "]C137ABC",
            Err(Gs1Error::NotDigits {
                ai: "37".into(),
                what: "count",
                value: "ABC".into(),
            }),
        ),
        (
            "(00)106141412345678907",
            Err(Gs1Error::CheckDigit {
                ai: "00".into(),
                what: "SSCC",
                found: 7,
                expected: 8,
            }),
        ),
        (
            "(414)9501101530004",
            Err(Gs1Error::CheckDigit {
                ai: "414".into(),
                what: "location GLN",
                found: 4,
                expected: 3,
            }),
        ),
        (
            "]C110ABC\u{1d}10ABD",
            Err(Gs1Error::Conflict {
                ai: "10".into(),
                first: "ABC".into(),
                second: "ABD".into(),
            }),
        ),
        (
            "(17)201225(17)201226",
            Err(Gs1Error::Conflict {
                ai: "17".into(),
                first: "2020-12-25".into(),
                second: "2020-12-26".into(),
            }),
        ),
        (
            "(3102)000125(3103)001250",
            Err(Gs1Error::Conflict {
                ai: "3103".into(),
                first: "1.25".into(),
                second: "1.250".into(),
            }),
        ),
        (
            "]E04006381333931",
            Err(Gs1Error::NotGs1 {
                identifier: "]E0".into(),
            }),
        ),
        ("]C1ABC", expected_ai("ABC")),
        ("]C10", expected_ai("0")),
        ("(1)23", expected_ai("(1)23")),
        ("(01", expected_ai("(01")),
        ("01(17)201225", gtin_len(10)),
    ]);
}

#[test]
fn error_messages_say_what_to_fix() {
    let msg = |input: &str| match parse_element_string_at(input, YEAR) {
        Err(e) => e.to_string(),
        Ok(g) => format!("unexpectedly parsed {g:?}"),
    };
    assert_eq!(msg("(17)251332"), "AI (17) expiry 251332 is not a date");
    assert_eq!(
        msg("(01)09506000134353"),
        "AI (01) GTIN check digit is 3, expected 2"
    );
    assert_eq!(msg("(99)1"), "unknown application identifier (99)");
    assert_eq!(
        msg("(01)0950600013435"),
        "AI (01) GTIN must have 14 characters, found 13"
    );
    assert_eq!(
        msg("(10)ABCDEFGHIJKLMNOPQRSTU"),
        "AI (10) lot must have 1 to 20 characters, found 21"
    );
    assert_eq!(
        msg("]C110ABC\u{1d}10ABD"),
        "AI (10) occurs twice with different values: ABC and ABD"
    );
}

#[test]
fn classifying_scans() {
    let code = |c: &str| Ok(Scan::Code(c.to_owned()));
    let gt = |c: &str| Ok(Scan::Gtin(gtin(c)));
    let cases: Vec<(&str, Result<Scan, Gs1Error>)> = vec![
        // Looks like AIs, carries no GS1 marker: stays a code.
        ("10D9T", code("10D9T")),
        ("0112345", code("0112345")),
        ("1012345", code("1012345")),
        ("0109506000134352", code("0109506000134352")),
        (
            "0109506000134352172012251",
            code("0109506000134352172012251"),
        ),
        ("BIN-A-01-3\r\n", code("BIN-A-01-3")),
        ("(A)1", code("(A)1")),
        ("]C0ABC-1", code("ABC-1")),
        ("]C010D9T", code("10D9T")),
        // GTIN-shaped with a bad check digit: an internal code, not a GTIN.
        ("4006381333932", code("4006381333932")),
        ("10614141000416", code("10614141000416")),
        // GTINs of every length, with and without symbology identifiers.
        ("4006381333931", gt("4006381333931")),
        ("]E04006381333931", gt("4006381333931")),
        ("]E496385074", gt("96385074")),
        ("036000291452", gt("036000291452")),
        ("10614141000415", gt("10614141000415")),
        ("]I110614141000415", gt("10614141000415")),
        // Valid as EAN-8 and as UPC-E: read as EAN-8, as documented.
        ("01234565", gt("01234565")),
        // GS1 markers.
        (
            "(01)09506000134352(17)201225(10)ABC123",
            example().map(Scan::Gs1),
        ),
        (
            "]C101095060001343521720122510ABC123",
            example().map(Scan::Gs1),
        ),
        (
            "]d201095060001343521720122510ABC123",
            example().map(Scan::Gs1),
        ),
        (
            "01095060001343521720122510ABC123\u{1d}",
            example().map(Scan::Gs1),
        ),
        (
            "10ABC123<GS>0109506000134352 17201225",
            Err(Gs1Error::ExpectedAi {
                found: " 1720122".into(),
            }),
        ),
        (
            "10ABC123<GS>010950600013435217201225",
            example().map(Scan::Gs1),
        ),
        (
            "]C0(10)D9T",
            Ok(Scan::Gs1(Gs1 {
                lot: s("D9T"),
                ..Gs1::default()
            })),
        ),
        // Invalid GS1 is an error, not silently a code.
        (
            "(17)251332",
            Err(Gs1Error::Date {
                ai: "17".into(),
                what: "expiry",
                value: "251332".into(),
            }),
        ),
        (
            "]C1XYZ",
            Err(Gs1Error::ExpectedAi {
                found: "XYZ".into(),
            }),
        ),
        (
            "ABC\u{1d}DEF",
            Err(Gs1Error::ExpectedAi {
                found: "ABC\u{1d}DEF".into(),
            }),
        ),
        ("", Err(Gs1Error::Empty)),
        (" \r\n", Err(Gs1Error::Empty)),
        ("]E0", Err(Gs1Error::Empty)),
    ];
    let failures: Vec<String> = cases
        .into_iter()
        .filter_map(|(input, expected)| {
            let got = classify_at(input, YEAR);
            (got != expected).then(|| format!("{input:?}\n   got {got:?}\n  want {expected:?}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn itf14_is_a_gtin14() {
    let Ok(itf) = Gtin::parse("10614141000415") else {
        panic!("ITF-14 rejected");
    };
    assert_eq!(itf.to_gtin14(), "10614141000415");
    assert!(matches!(
        Gtin::parse("10614141000416"),
        Err(crate::barcode::BarcodeError::CheckDigit {
            found: 6,
            expected: 5
        })
    ));
}

#[test]
fn rendering_both_forms() {
    let Ok(mut g) = example() else {
        panic!("example");
    };
    g.serial = s("XYZ");
    g.net_weight_kg = Some(measure(123, 3));
    assert_eq!(
        render_element_string(&g),
        "010950600013435217201225310300012310ABC123\u{1d}21XYZ"
    );
    assert_eq!(
        render_hri(&g),
        "(01)09506000134352(17)201225(3103)000123(10)ABC123(21)XYZ"
    );
    let lot_only = Gs1 {
        lot: s("A(17)B"),
        ..Gs1::default()
    };
    assert_eq!(render_element_string(&lot_only), "10A(17)B");
    assert_eq!(render_hri(&lot_only), "(10)A\\(17)B");
}

#[test]
fn short_gtins_render_as_gtin14() {
    let g = Gs1 {
        gtin: Some(gtin("4006381333931")),
        ..Gs1::default()
    };
    assert_eq!(render_hri(&g), "(01)04006381333931");
    let back = parse_element_string_at(&render_element_string(&g), YEAR);
    assert_eq!(
        back.ok().and_then(|b| b.trade_item().map(Gtin::to_gtin14)),
        Some("04006381333931".to_owned())
    );
}

#[test]
fn trade_item_falls_back_to_contents() {
    let pallet = Gs1 {
        content: Some(gtin("10614141000415")),
        count: Some(20),
        ..Gs1::default()
    };
    assert_eq!(pallet.trade_item(), Some(&gtin("10614141000415")));
    assert_eq!(Gs1::default().trade_item(), None);
}

#[test]
fn validate_catches_what_would_not_parse_back() {
    let with = |fill: fn(&mut Gs1)| {
        let mut g = Gs1::default();
        fill(&mut g);
        g.validate()
    };
    assert_eq!(Gs1::default().validate(), Err(Gs1Error::Empty));
    assert_eq!(example().map(|g| g.validate()), Ok(Ok(())));
    assert_eq!(
        with(|g| g.lot = s("A<GS>21B")),
        Err(Gs1Error::Placeholder {
            ai: "10".into(),
            what: "lot"
        })
    );
    assert_eq!(
        with(|g| g.serial = s("has space")),
        Err(Gs1Error::Charset {
            ai: "21".into(),
            what: "serial",
            ch: ' '
        })
    );
    assert_eq!(
        with(|g| g.lot = s("")),
        Err(Gs1Error::VarLength {
            ai: "10".into(),
            what: "lot",
            max: 20,
            found: 0
        })
    );
    assert_eq!(
        with(|g| g.count = Some(100_000_000)),
        Err(Gs1Error::VarLength {
            ai: "37".into(),
            what: "count",
            max: 8,
            found: 9
        })
    );
    assert_eq!(
        with(|g| g.net_weight_kg = Some(measure(1_000_000, 0))),
        Err(Gs1Error::Length {
            ai: "3100".into(),
            what: "net weight (kg)",
            expected: 6,
            found: 7
        })
    );
    assert_eq!(
        with(|g| g.net_weight_kg = Some(measure(1, 6))),
        Err(Gs1Error::UnknownAi { ai: "3106".into() })
    );
    assert_eq!(
        with(|g| g.sscc = s("106141412345678907")),
        Err(Gs1Error::CheckDigit {
            ai: "00".into(),
            what: "SSCC",
            found: 7,
            expected: 8
        })
    );
}

#[test]
fn measures_keep_their_decimals() {
    assert_eq!(measure(1250, 3).to_string(), "1.250");
    assert_eq!(measure(5, 3).to_string(), "0.005");
    assert_eq!(measure(12, 0).to_string(), "12");
    assert_eq!(measure(999_999, 5).to_string(), "9.99999");
    assert!((measure(1250, 3).to_f64() - 1.25).abs() < 1e-9);
    assert_eq!(Measure::new(999_999, 5), Some(measure(999_999, 5)));
    assert_eq!(Measure::new(1_000_000, 0), None);
    assert_eq!(Measure::new(1, 6), None);
}

#[test]
fn two_digit_years() {
    for (yy, now, year) in [
        (25, 2025, 2025),
        (75, 2025, 2075),
        (76, 2025, 1976),
        (0, 2050, 2100),
        (1, 2050, 2001),
        (99, 2000, 1999),
        (50, 2000, 2050),
        (51, 2000, 1951),
    ] {
        assert_eq!(expand_year(yy, now), year, "{yy} in {now}");
    }
}

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
