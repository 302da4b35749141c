//! Addresses in every script a European warehouse meets, and hostile ones:
//! the render tests' corpus (issue 26).

use super::{Party, ShippingLabel, fixtures};

/// (script, recipient): one line each of name, street, city, country in
/// the script, with its own punctuation and digits.
pub(crate) fn parties() -> Vec<(&'static str, Party)> {
    let p = |name: &str, line1: &str, city: &str, postal_code: &str, country: &str| Party {
        name: name.into(),
        line1: line1.into(),
        line2: None,
        city: city.into(),
        postal_code: postal_code.into(),
        region: None,
        country: country.into(),
    };
    vec![
        (
            "greek",
            p(
                "Ζωή Παπαδοπούλου",
                "Οδός Ερμού 25, 3ος όροφος",
                "Αθήνα",
                "105 63",
                "Ελλάδα",
            ),
        ),
        (
            "cyrillic",
            p(
                "Анна Каренина",
                "ул. Тверская, д. 7, кв. 12",
                "Москва",
                "125009",
                "Россия",
            ),
        ),
        (
            "polish",
            p(
                "Łukasz Żółkiewski",
                "ul. Świętokrzyska 11/13",
                "Łódź",
                "90-001",
                "Polska",
            ),
        ),
        (
            "turkish",
            p(
                "Şükrü Çağlayan",
                "İstiklal Caddesi No: 42 Beyoğlu",
                "İstanbul",
                "34433",
                "Türkiye",
            ),
        ),
        (
            "chinese",
            p(
                "王小明",
                "朝阳区建国路88号国贸大厦3层",
                "北京市",
                "100022",
                "中国",
            ),
        ),
        (
            "japanese",
            p(
                "山田 太郎",
                "東京都千代田区丸の内1-9-2 グラントウキョウ",
                "東京",
                "100-6590",
                "日本",
            ),
        ),
        (
            "korean",
            p(
                "김민준",
                "서울특별시 중구 세종대로 110",
                "서울",
                "04524",
                "대한민국",
            ),
        ),
        (
            "arabic",
            p(
                "محمد عبد الله",
                "شارع الملك فهد 12، حي العليا",
                "الرياض",
                "12271",
                "السعودية",
            ),
        ),
        (
            "hebrew",
            p(
                "דוד כהן",
                "רחוב הרצל 5, דירה 3",
                "תל אביב",
                "6100000",
                "ישראל",
            ),
        ),
        (
            // Precomposed letters, and marks typed after their base.
            "vietnamese",
            p(
                "Nguyễn Thị Minh Khai",
                "Đường Le\u{302}\u{301} Lợi 12, Phường Bến Nghé",
                "Thành phố Hồ Chí Minh",
                "700000",
                "Việt Nam",
            ),
        ),
        (
            "emoji",
            p(
                "Zoë 😀 Smith",
                "Flat 2 🏠 High St",
                "London",
                "SW1A 1AA",
                "GB",
            ),
        ),
        (
            "zpl",
            p(
                "Mallory^FS^XZ^XA",
                "~JA~JR _5E^FO0,0",
                "Ω^XZ東~JA",
                "^A0",
                "GR~JA",
            ),
        ),
    ]
}

/// The sample label, shipped to `to`.
pub(crate) fn label_to(to: &Party) -> ShippingLabel {
    let mut label = fixtures::label();
    label.ship_to = to.clone();
    label
}

/// What a label in another script costs, beside a Latin one (printed, not
/// asserted: timing depends on the machine). Run in release:
/// `cargo test --release -p depot-labels --lib corpus -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn label_cost() -> Result<(), super::RenderError> {
    use super::{shipping_label_pdf, shipping_label_zpl};
    use std::time::Instant;
    let parties = parties();
    let latin = fixtures::label();
    let pick = |script: &str| {
        parties
            .iter()
            .find(|(s, _)| *s == script)
            .map(|(_, p)| label_to(p))
    };
    let (Some(greek), Some(chinese), Some(arabic)) =
        (pick("greek"), pick("chinese"), pick("arabic"))
    else {
        panic!("corpus scripts missing");
    };
    // The first non-Latin label pays for parsing the fonts once.
    let first = Instant::now();
    let zpl = shipping_label_zpl(&greek);
    println!(
        "first non-Latin label (fonts parsed): {:?}",
        first.elapsed()
    );
    assert!(zpl.contains("^GFA,"));
    assert!(!shipping_label_zpl(&latin).contains("^GF"));
    const N: u32 = 200;
    for (name, label) in [
        ("latin", &latin),
        ("greek", &greek),
        ("chinese", &chinese),
        ("arabic", &arabic),
    ] {
        let start = Instant::now();
        let mut bytes = 0;
        for _ in 0..N {
            bytes += shipping_label_zpl(label).len();
        }
        let zpl = start.elapsed() / N;
        let start = Instant::now();
        let mut pdf_bytes = 0;
        for _ in 0..N {
            pdf_bytes += shipping_label_pdf(label)?.len();
        }
        let pdf = start.elapsed() / N;
        println!(
            "{name:8} ZPL {zpl:>10.1?} ({} bytes)   PDF {pdf:>10.1?} ({} bytes)",
            bytes / N as usize,
            pdf_bytes / N as usize
        );
    }
    Ok(())
}
