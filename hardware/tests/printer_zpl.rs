//! Properties of the ZPL builder and the status parsers: operator or
//! customer text never becomes a command, every field reads back as
//! written, and no input makes a parser panic.

use depot_hardware::printer::sim::{FieldKind, decode_field_hex, read_formats};
use depot_hardware::printer::status::{ExtendedStatus, PrinterStatus};
use depot_hardware::printer::zpl::{
    Align, BarStyle, Dpi, Font, Gs1Element, Label, LabelSize, QrEcc, TextBlock, escape_field_data,
};
use proptest::prelude::*;

fn label() -> Label {
    Label::new(LabelSize::four_by_six(Dpi::D203))
}

fn bars() -> BarStyle {
    BarStyle {
        height_dots: 100,
        module_dots: 2,
        human_readable: true,
    }
}

/// The one field of the one format `zpl` holds.
fn only_field(zpl: &[u8]) -> (FieldKind, String) {
    let formats = read_formats(zpl);
    assert_eq!(formats.len(), 1, "one format");
    assert_eq!(formats[0].len(), 1, "one field");
    let field = &formats[0][0];
    (field.kind.clone(), field.data.clone())
}

proptest! {
    #[test]
    fn escaped_field_has_no_command_prefix_and_round_trips(text in any::<String>()) {
        let escaped = escape_field_data(&text);
        prop_assert!(!escaped.contains('^'));
        prop_assert!(!escaped.contains('~'));
        prop_assert!(escaped.bytes().all(|b| b == b' ' || b.is_ascii_graphic()));
        prop_assert_eq!(decode_field_hex(escaped.as_bytes(), b'_'), text.as_bytes());
    }

    #[test]
    fn any_text_reads_back_as_written(text in any::<String>()) {
        let mut label = label();
        label.text(10, 10, Font::SCALABLE, 30, &text).expect("any text is accepted");
        prop_assert_eq!(only_field(&label.to_zpl()), (FieldKind::Text, text));
    }

    #[test]
    fn any_block_text_reads_back_with_its_line_breaks(text in any::<String>()) {
        let block = TextBlock { width_dots: 700, max_lines: 10, align: Align::Left };
        let mut label = label();
        label.text_block(10, 10, Font::SCALABLE, 30, block, &text).expect("any text is accepted");
        // A CR is dropped: the LF it comes with breaks the line.
        prop_assert_eq!(only_field(&label.to_zpl()), (FieldKind::Text, text.replace('\r', "")));
    }

    #[test]
    fn any_printable_ascii_code128_reads_back(data in "[ -~]{1,40}") {
        let mut label = label();
        label.code128(10, 10, bars(), &data).expect("printable ASCII is encodable");
        prop_assert_eq!(only_field(&label.to_zpl()), (FieldKind::Code128, data));
    }

    #[test]
    fn non_ascii_code128_is_refused_without_writing(data in ".*[^ -~].*") {
        let mut label = label();
        prop_assert!(label.code128(10, 10, bars(), &data).is_err());
        prop_assert_eq!(label.to_zpl(), self::label().to_zpl());
    }

    #[test]
    fn gs1_element_strings_read_back(
        lot in "[0-9A-Za-z!%&()*+,./:;<=>?_-]{1,12}",
        serial in "[0-9]{1,10}",
    ) {
        let elements = [
            Gs1Element::new("01", "09501101530003"),
            Gs1Element::new("10", lot.clone()),
            Gs1Element::new("21", serial.clone()),
        ];
        let mut label = label();
        let style = BarStyle { human_readable: false, ..bars() };
        label.gs1_128(10, 10, style, &elements).expect("valid elements");
        let expected = format!("010950110153000310{lot}\u{1d}21{serial}");
        prop_assert_eq!(only_field(&label.to_zpl()), (FieldKind::Gs1_128, expected));
    }

    #[test]
    fn any_qr_data_reads_back(data in any::<String>().prop_filter("non-empty", |s| !s.is_empty())) {
        let mut label = label();
        label.qr(10, 10, 4, QrEcc::L, &data).expect("fits");
        prop_assert_eq!(only_field(&label.to_zpl()), (FieldKind::Qr, data));
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
    let mut label = label();
    label
        .text(0, 0, Font::SCALABLE, 20, hostile)
        .expect("any text is accepted");
    let zpl = label.to_zpl();
    assert_eq!(zpl.iter().filter(|&&b| b == b'~').count(), 0);
    assert_eq!(only_field(&zpl), (FieldKind::Text, hostile.to_owned()));
}
