//! Tests of GS1 parsing and rendering: helpers and focused cases here,
//! the tables of element strings in `cases`, property tests in `props`.

mod cases;
mod props;

use super::*;
use crate::barcode::gs1_check_digit;

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
