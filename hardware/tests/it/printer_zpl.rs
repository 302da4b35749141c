//! Properties of the ZPL a printer gets and of the status parsers:
//! operator or customer text never becomes a command, every field reads
//! back as written, and no input makes a parser panic. The labels are made
//! by depot-labels, the stack production prints with, and read back by the
//! simulator's parser, as a printer would read them.

use depot_hardware::printer::sim::{Field, FieldKind, decode_field_hex, read_formats};
use depot_hardware::printer::status::{ExtendedStatus, PrinterStatus};
use depot_labels::{ItemLabel, PackageInfo, Party, ShippingLabel, escape_field};
use proptest::prelude::*;

fn item(name: &str) -> ItemLabel {
    ItemLabel {
        sku: "SKU-1".into(),
        name: name.into(),
        detail: None,
    }
}

fn party(name: &str) -> Party {
    Party {
        name: name.into(),
        line1: "2 Rue Haute".into(),
        line2: None,
        city: "Bruxelles".into(),
        postal_code: "1000".into(),
        region: None,
        country: "BE".into(),
    }
}

fn shipping() -> ShippingLabel {
    ShippingLabel {
        carrier: "UPS".into(),
        service: "Express Saver".into(),
        tracking_number: "1Z999AA10123456784".into(),
        piece_number: "1Z999AA10123456784".into(),
        sscc: None,
        ship_from: party("Depot"),
        ship_to: party("Ada Lovelace"),
        order_ref: "SO-1042".into(),
        package: PackageInfo {
            index: 1,
            count: 1,
            weight_g: 1250,
            dimensions_mm: None,
        },
        shipped_on: chrono::NaiveDate::from_ymd_opt(2025, 3, 14).expect("a date"),
    }
}

/// The fields of the one format `zpl` holds.
fn only_format(zpl: &str) -> Vec<Field> {
    let mut formats = read_formats(zpl.as_bytes());
    assert_eq!(formats.len(), 1, "one format");
    formats.pop().unwrap_or_default()
}

/// The data of the fields of one kind, in order.
fn of_kind(fields: &[Field], kind: &FieldKind) -> Vec<String> {
    fields
        .iter()
        .filter(|f| &f.kind == kind)
        .map(|f| f.data.clone())
        .collect()
}

proptest! {
    #[test]
    fn escaped_field_has_no_command_prefix_and_round_trips(text in any::<String>()) {
        let escaped = escape_field(&text);
        prop_assert!(!escaped.contains('^'));
        prop_assert!(!escaped.contains('~'));
        prop_assert!(escaped.bytes().all(|b| b == b' ' || b.is_ascii_graphic()));
        prop_assert_eq!(decode_field_hex(escaped.as_bytes(), b'_'), text.as_bytes());
    }

    /// Text the printer's resident font draws (Latin-1 and Latin
    /// Extended-A) is sent as text and reads back as the one line the label
    /// prints: runs of spaces are one space, as on every document.
    #[test]
    fn any_resident_font_text_reads_back_as_written(text in "[ -~\u{A0}-\u{17F}]{1,16}") {
        let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        prop_assume!(!line.is_empty());
        let fields = only_format(&depot_labels::item_label_zpl(&item(&text)));
        prop_assert_eq!(of_kind(&fields, &FieldKind::Text), ["SKU-1".to_owned(), line]);
    }

    /// Any text at all (other scripts go as images, which the simulator
    /// does not read) leaves one format whose barcode and other fields are
    /// untouched: nothing in it became a command.
    #[test]
    fn any_text_leaves_one_format_of_our_fields(text in any::<String>()) {
        let zpl = depot_labels::item_label_zpl(&item(&text));
        prop_assert!(zpl.is_ascii() && !zpl.contains('~'));
        let fields = only_format(&zpl);
        prop_assert_eq!(of_kind(&fields, &FieldKind::Code128), ["SKU-1"]);
        let texts = of_kind(&fields, &FieldKind::Text);
        prop_assert_eq!(texts.first().map(String::as_str), Some("SKU-1"));
        prop_assert!(texts.len() <= 2, "{:?}", texts);
        prop_assert!(fields.iter().all(|f| matches!(f.kind, FieldKind::Text | FieldKind::Code128)));
    }

    /// An address line wraps onto as many lines as it needs, one field
    /// each, and every word reads back in order.
    #[test]
    fn any_address_line_reads_back_with_every_word(
        words in proptest::collection::vec("[A-Za-z0-9]{1,12}", 1..12),
    ) {
        let mut label = shipping();
        label.ship_to.line1 = words.join(" ");
        prop_assert!(depot_labels::label_problems(&label).is_empty());
        let fields = only_format(&depot_labels::shipping_label_zpl(&label));
        let all = of_kind(&fields, &FieldKind::Text).join(" ");
        prop_assert!(all.contains(&label.ship_to.line1), "{} in {}", label.ship_to.line1, all);
    }

    /// Printable ASCII short enough for a 4×6 label's width at two dots a
    /// module (31 characters at worst) is a Code 128 symbol that reads back.
    #[test]
    fn any_printable_ascii_code128_reads_back(data in "[ -~]{1,30}") {
        let mut label = shipping();
        label.piece_number = data.clone();
        let fields = only_format(&depot_labels::shipping_label_zpl(&label));
        prop_assert_eq!(of_kind(&fields, &FieldKind::Code128), [data]);
    }

    /// What Code 128 cannot carry is never written as one (it goes as a QR
    /// code, or as text alone), and the label is still one whole format.
    #[test]
    fn non_ascii_is_never_code128(data in ".*[^ -~].*") {
        let mut label = shipping();
        label.piece_number = data;
        let fields = only_format(&depot_labels::shipping_label_zpl(&label));
        prop_assert!(of_kind(&fields, &FieldKind::Code128).is_empty());
        prop_assert!(of_kind(&fields, &FieldKind::Gs1_128).is_empty());
    }

    /// An SSCC is a GS1-128 symbol (FNC1, application identifier 00) that
    /// reads back as the element string a scanner sends.
    #[test]
    fn any_sscc_reads_back_as_gs1_128(sscc in "[0-9]{18}") {
        let mut label = shipping();
        label.sscc = Some(sscc.clone());
        let fields = only_format(&depot_labels::shipping_label_zpl(&label));
        prop_assert_eq!(of_kind(&fields, &FieldKind::Gs1_128), [format!("00{sscc}")]);
        prop_assert_eq!(of_kind(&fields, &FieldKind::Code128), ["1Z999AA10123456784"]);
    }

    #[test]
    fn host_status_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = PrinterStatus::parse(&bytes);
    }

    #[test]
    fn extended_status_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = ExtendedStatus::parse(&bytes);
    }

    #[test]
    fn damaged_host_status_never_panics(
        position in any::<prop::sample::Index>(),
        byte in any::<u8>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut answer = PrinterStatus { paper_out: true, ..PrinterStatus::default() }.encode();
        let at = position.index(answer.len());
        answer[at] = byte;
        answer.truncate(cut.index(answer.len() + 1));
        if let Ok((status, used)) = PrinterStatus::parse(&answer) {
            prop_assert!(used <= answer.len());
            // A parsed answer is self-consistent.
            prop_assert_eq!(status.is_ready(), status.problems().is_empty());
        }
    }

    #[test]
    fn host_status_encoding_round_trips(
        paper_out in any::<bool>(),
        paused in any::<bool>(),
        head_open in any::<bool>(),
        ribbon_out in any::<bool>(),
        thermal_transfer in any::<bool>(),
        formats in 0u32..1000,
        remaining in 0u32..100_000_000,
    ) {
        let status = PrinterStatus {
            paper_out, paused, head_open, ribbon_out, thermal_transfer,
            formats_in_buffer: formats,
            labels_remaining: remaining,
            ..PrinterStatus::default()
        };
        let encoded = status.encode();
        prop_assert_eq!(PrinterStatus::parse(&encoded), Ok((status, encoded.len())));
    }
}

#[test]
fn injected_commands_stay_text() {
    let hostile = "^XZ^XA^FO0,0^FDfake^FS~JA~HS";
    let mut label = shipping();
    label.ship_to.name = hostile.into();
    let zpl = depot_labels::shipping_label_zpl(&label);
    assert_eq!(zpl.matches('~').count(), 0);
    let texts = of_kind(&only_format(&zpl), &FieldKind::Text);
    assert!(texts.iter().any(|t| t == hostile), "{texts:?}");
}
