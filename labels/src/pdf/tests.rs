use super::super::{
    Manifest, ManifestRow, PackageInfo, Party, RenderError, address_lines, corpus, fixtures,
    manifest_pdf, metrics::one_line, packing_slip_pdf, shipping_label_pdf,
};
use printpdf::lopdf::Document;

fn well_formed(pdf: &[u8]) {
    assert!(pdf.starts_with(b"%PDF-"));
    let end = String::from_utf8_lossy(&pdf[pdf.len().saturating_sub(32)..]).into_owned();
    assert!(end.trim_end().ends_with("%%EOF"), "{end}");
}

fn pages_of(pdf: &[u8]) -> Result<(Document, usize), Box<dyn std::error::Error>> {
    let doc = Document::load_mem(pdf)?;
    let n = doc.get_pages().len();
    Ok((doc, n))
}

fn contains(pdf: &[u8], needle: &str) -> bool {
    pdf.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn label_pdf_is_one_4x6_page_with_text_and_bars() -> Result<(), Box<dyn std::error::Error>> {
    let pdf = shipping_label_pdf(&fixtures::label())?;
    well_formed(&pdf);
    let (doc, n) = pages_of(&pdf)?;
    assert_eq!(n, 1);
    let text = doc.extract_text(&[1])?;
    assert!(text.contains("1Z999AA10123456784-01"), "{text}");
    assert!(text.contains("Ada Lovelace"));
    assert!(contains(&pdf, "(1Z999AA10123456784-01) Tj"));
    let page = doc.get_object(doc.page_iter().next().ok_or("no page")?)?;
    let media_box = page.as_dict()?.get(b"MediaBox")?.as_array()?;
    let size: Vec<f32> = media_box
        .iter()
        .map(|v| v.as_float().or_else(|_| v.as_i64().map(|i| i as f32)))
        .collect::<Result<_, _>>()?;
    assert_eq!(size, [0.0, 0.0, 288.0, 432.0]);
    // Latin text embeds nothing: the built-in Helvetica draws it.
    assert!(!contains(&pdf, "FontFile"));
    assert!(pdf.len() < 8_000, "{}", pdf.len());
    // 16 symbols of 3 bars plus the 4-bar stop: 52 bar rectangles.
    let rects = String::from_utf8_lossy(&pdf).matches(" re\n").count();
    assert!(rects >= 52, "{rects}");
    Ok(())
}

#[test]
fn data_code_128_cannot_carry_does_not_fail_the_pdf() -> Result<(), RenderError> {
    let mut label = fixtures::label();
    label.piece_number = "ÉTÉ".into();
    assert!(shipping_label_pdf(&label)?.starts_with(b"%PDF-"));
    Ok(())
}

/// Every page's text as lopdf reads it back: content stream order,
/// each string through its font's encoding or /ToUnicode CMap.
fn extract(pdf: &[u8]) -> Result<String, Box<dyn std::error::Error>> {
    let doc = lopdf::Document::load_mem(pdf)?;
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    Ok(doc.extract_text(&pages)?)
}

/// `s` without its whitespace: an address line wraps where it must (a
/// space becomes a line break, a CJK line breaks between characters),
/// and every character must still come back, in order.
fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The recipient's lines as the documents print them.
fn lines_of(party: &Party) -> Vec<String> {
    let mut lines = vec![one_line(&party.name)];
    lines.extend(address_lines(party).iter().map(|l| one_line(l)));
    lines
}

#[test]
fn every_script_extracts_as_given() -> Result<(), Box<dyn std::error::Error>> {
    for (script, to) in corpus::parties() {
        let pdf = shipping_label_pdf(&corpus::label_to(&to))?;
        let text = extract(&pdf)?;
        for line in lines_of(&to) {
            assert!(
                squash(&text).contains(&squash(&line)),
                "{script}: {line:?} not in\n{text}"
            );
        }
        // Nothing is replaced: no '?' unless the data has one.
        assert!(!text.contains('?'), "{script}: {text}");
        assert!(pdf.len() < 40_000, "{script}: {} bytes", pdf.len());
    }
    Ok(())
}

#[test]
fn slips_and_manifests_carry_every_script() -> Result<(), Box<dyn std::error::Error>> {
    let parties = corpus::parties();
    for (script, to) in &parties {
        let mut slip = fixtures::slip(3);
        slip.ship_to = to.clone();
        slip.lines[0].name = to.name.clone();
        let text = extract(&packing_slip_pdf(&slip)?)?;
        for line in lines_of(to) {
            assert!(
                squash(&text).contains(&squash(&line)),
                "{script}: {line:?} not in\n{text}"
            );
        }
    }
    let manifest = Manifest {
        packages: parties
            .iter()
            .enumerate()
            .map(|(i, (_, to))| ManifestRow {
                tracking_number: format!("JD{i:016}"),
                piece_number: format!("JD{i:016}"),
                sscc: Some(fixtures::sscc(i)),
                order_ref: format!("SO-{i}"),
                package: PackageInfo {
                    index: 1,
                    count: 1,
                    weight_g: 1000,
                    dimensions_mm: None,
                },
                postal_code: to.postal_code.clone(),
                city: to.city.clone(),
                country: to.country.clone(),
            })
            .collect(),
        ..fixtures::manifest(0)
    };
    let text = extract(&manifest_pdf(&manifest)?)?;
    // What the layout printed is what must come back, and the city,
    // postcode and country of every package are printed whole (wrapped
    // in the narrow columns, never cut).
    for page in super::super::manifest::pages(&manifest) {
        for printed in page.texts() {
            assert!(text.contains(printed), "{printed:?} not in\n{text}");
        }
    }
    for (script, to) in &parties {
        for part in [&to.city, &to.postal_code, &to.country] {
            assert!(
                squash(&text).contains(&squash(&one_line(part))),
                "{script}: {part:?} not in\n{text}"
            );
        }
    }
    Ok(())
}

#[test]
fn fonts_are_subset_cid_fonts() -> Result<(), Box<dyn std::error::Error>> {
    let mut label = fixtures::label();
    label.ship_to.name = "Ζωή 王小明 محمد".into();
    let pdf = shipping_label_pdf(&label)?;
    let doc = Document::load_mem(&pdf)?;
    let mut subtypes = Vec::new();
    for object in doc.objects.values() {
        let Ok(dict) = object.as_dict() else { continue };
        if dict.get(b"Subtype").and_then(|s| s.as_name()).ok() == Some(b"Type0".as_ref()) {
            assert_eq!(dict.get(b"Encoding")?.as_name()?, b"Identity-H");
            assert!(dict.get(b"ToUnicode").is_ok());
            let name = String::from_utf8_lossy(dict.get(b"BaseFont")?.as_name()?).into_owned();
            // A subset's name: six capitals, '+', the font.
            assert_eq!(name.find('+'), Some(6), "{name}");
            let cid =
                doc.get_object(dict.get(b"DescendantFonts")?.as_array()?[0].as_reference()?)?;
            subtypes.push(cid.as_dict()?.get(b"Subtype")?.as_name()?.to_vec());
        }
    }
    subtypes.sort();
    // Noto Sans and Arabic (TrueType) and CJK (CFF), bold: the name.
    assert_eq!(
        subtypes,
        [
            b"CIDFontType0".to_vec(),
            b"CIDFontType2".to_vec(),
            b"CIDFontType2".to_vec()
        ]
    );
    // The CJK font alone is megabytes: subset, the label stays small.
    assert!(pdf.len() < 30_000, "{}", pdf.len());
    Ok(())
}

#[test]
fn latin_beyond_winansi_is_drawn_not_replaced() -> Result<(), Box<dyn std::error::Error>> {
    let mut label = fixtures::label();
    label.ship_to.name = "Łukasz (東京)".into();
    let pdf = shipping_label_pdf(&label)?;
    assert!(!contains(&pdf, "?ukasz"));
    assert!(extract(&pdf)?.contains("Łukasz (東京)"));
    Ok(())
}

/// Characters outside WinAnsi that no vendored font has (emoji) print as
/// an empty box but keep their character in the text layer.
#[test]
fn uncovered_characters_keep_their_text() -> Result<(), Box<dyn std::error::Error>> {
    let mut label = fixtures::label();
    label.ship_to.name = "Ada 😀 🏠 Lovelace".into();
    let text = extract(&shipping_label_pdf(&label)?)?;
    assert!(text.contains("Ada 😀 🏠 Lovelace"), "{text}");
    Ok(())
}

/// With poppler's pdftotext, where it is installed (`apt-get install
/// poppler-utils`): every line comes back as given, except that
/// poppler orders a line by the glyphs' positions. On a page written
/// mostly left to right it wraps right-to-left text in U+202B…U+202C
/// and gives a line mixing right-to-left words with digits or Latin as
/// its runs from left to right, each run in logical order: those lines
/// are checked run by run.
#[test]
fn pdftotext_reads_every_script() -> Result<(), Box<dyn std::error::Error>> {
    let probe = std::process::Command::new("pdftotext").arg("-v").output();
    if probe.is_err() {
        eprintln!("pdftotext not on PATH: skipped");
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    for (script, to) in corpus::parties() {
        let path = dir.path().join(format!("{script}.pdf"));
        std::fs::write(&path, shipping_label_pdf(&corpus::label_to(&to))?)?;
        let out = std::process::Command::new("pdftotext")
            .args(["-enc", "UTF-8"])
            .arg(&path)
            .arg("-")
            .output()?;
        assert!(out.status.success(), "{script}: {out:?}");
        let raw = String::from_utf8(out.stdout)?;
        let text: String = raw
            .chars()
            .filter(|c| !('\u{202A}'..='\u{202E}').contains(c))
            .collect();
        for line in lines_of(&to) {
            if !line.chars().any(is_rtl) {
                assert!(
                    squash(&text).contains(&squash(&line)),
                    "{script}: {line:?} not in\n{raw}"
                );
                continue;
            }
            if script == "arabic" || script == "hebrew" {
                eprintln!("{script}: given {line:?}");
            }
            for run in runs(&line) {
                assert!(
                    squash(&text).contains(&squash(&run)),
                    "{script}: {run:?} of {line:?} not in\n{raw}"
                );
            }
        }
        if script == "arabic" {
            eprintln!("pdftotext, arabic label:\n{raw}");
        }
    }
    Ok(())
}

fn is_rtl(c: char) -> bool {
    matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')
}

/// A line cut where it changes between right-to-left letters and
/// anything else that is not a space or punctuation (digits, Latin),
/// each piece trimmed of spaces and punctuation.
fn runs(line: &str) -> Vec<String> {
    let mut runs: Vec<(bool, String)> = Vec::new();
    for c in line.chars() {
        let neutral = !c.is_alphanumeric();
        match runs.last_mut() {
            Some((_, run)) if neutral => run.push(c),
            Some((rtl, run)) if *rtl == is_rtl(c) => run.push(c),
            _ => runs.push((is_rtl(c), c.to_string())),
        }
    }
    runs.into_iter()
        .map(|(_, r)| r.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .filter(|r| !r.is_empty())
        .collect()
}

#[test]
fn slip_pdf_paginates() -> Result<(), Box<dyn std::error::Error>> {
    let short = packing_slip_pdf(&fixtures::slip(4))?;
    well_formed(&short);
    assert_eq!(pages_of(&short)?.1, 1);
    let long = packing_slip_pdf(&fixtures::slip(100))?;
    well_formed(&long);
    let (doc, n) = pages_of(&long)?;
    assert_eq!(n, 3);
    let last = doc.extract_text(&[3])?;
    assert!(last.contains("Widget 100"), "{last}");
    assert!(last.contains("Page 3 of 3"));
    Ok(())
}

#[test]
fn manifest_pdf_paginates_with_totals() -> Result<(), Box<dyn std::error::Error>> {
    let pdf = manifest_pdf(&fixtures::manifest(70))?;
    well_formed(&pdf);
    let (doc, n) = pages_of(&pdf)?;
    assert!(n >= 7, "140 packages of 38 pt rows: {n} pages");
    let all: Vec<u32> = (1..=n as u32).collect();
    assert!(doc.extract_text(&all)?.contains("70 shipments"));
    let last = doc.extract_text(&[n as u32])?;
    assert!(last.contains("Driver signature"));
    Ok(())
}

/// Writes sample documents for a visual check:
/// `SAMPLES=1 cargo test -p depot-labels --lib pdf::tests::samples`.
#[test]
fn samples() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("SAMPLES").is_none() {
        return Ok(());
    }
    let dir = std::env::temp_dir().join("depot-render");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("label.pdf"),
        shipping_label_pdf(&fixtures::label())?,
    )?;
    std::fs::write(dir.join("slip.pdf"), packing_slip_pdf(&fixtures::slip(60))?)?;
    std::fs::write(
        dir.join("manifest.pdf"),
        manifest_pdf(&fixtures::manifest(70))?,
    )?;
    let mut odd = fixtures::label();
    odd.carrier = "Deutsche Post DHL Parcel International".into();
    odd.service = "Warenpost International Premium Tracked".into();
    odd.ship_to.name = "Zoë Ångström-Łukasiewicz, Müller & Söhne Ltd (東京)".into();
    odd.ship_to.line1 = "Very Long Street Name Number 12345, Building C, Floor 7".into();
    odd.ship_to.region = Some("Île-de-France".into());
    odd.tracking_number = "00340123450000000018".into();
    odd.package.dimensions_mm = Some((1205, 800, 1455));
    std::fs::write(dir.join("label-odd.pdf"), shipping_label_pdf(&odd)?)?;
    let zpl = super::super::shipping_label_zpl(&fixtures::label());
    std::fs::write(dir.join("label.zpl"), zpl)?;
    let item = super::super::ItemLabel {
        sku: "SKU-00042".into(),
        name: "Stainless steel shelf bracket, left hand".into(),
        detail: Some("4006381333931".into()),
    };
    std::fs::write(dir.join("item.pdf"), super::super::item_label_pdf(&item)?)?;
    std::fs::write(dir.join("item.zpl"), super::super::item_label_zpl(&item))?;
    let slip = super::super::packing_slip_zpl(&fixtures::slip(20));
    std::fs::write(dir.join("slip.zpl"), slip)?;
    for (script, to) in super::super::corpus::parties() {
        let label = super::super::corpus::label_to(&to);
        std::fs::write(
            dir.join(format!("label-{script}.pdf")),
            shipping_label_pdf(&label)?,
        )?;
        let zpl = super::super::shipping_label_zpl(&label);
        std::fs::write(dir.join(format!("label-{script}.zpl")), zpl)?;
    }
    Ok(())
}
