//! Table-driven cases: valid and invalid element strings, error messages.

use super::*;

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
