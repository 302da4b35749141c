use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;
use crate::scanner::Symbology;
use crate::scanner::sim::encode::{ControlKeys, WedgeEncoding, wedge_reports};

/// Reports as bytes, the way they are recorded off the wire.
fn reports(recorded: &[[u8; 8]]) -> Vec<BootReport> {
    recorded
        .iter()
        .map(|bytes| BootReport::parse(bytes).expect("8-byte report"))
        .collect()
}

/// Feeds reports one millisecond apart; returns every scan they produce.
fn decode(decoder: &mut WedgeDecoder, reports: &[BootReport], start: Instant) -> Vec<Decoded> {
    reports
        .iter()
        .enumerate()
        .filter_map(|(i, report)| decoder.feed(report, start + Duration::from_millis(i as u64)))
        .collect()
}

fn decode_texts(config: WedgeConfig, recorded: &[[u8; 8]]) -> Vec<String> {
    let mut decoder = WedgeDecoder::new(config);
    decode(&mut decoder, &reports(recorded), Instant::now())
        .into_iter()
        .map(|d| d.text)
        .collect()
}

const UP: [u8; 8] = [0; 8];

#[test]
fn decodes_abc_123_with_shift() {
    let recorded = [
        [0x02, 0, 0x04, 0, 0, 0, 0, 0], // Shift+a
        UP,
        [0x02, 0, 0x05, 0, 0, 0, 0, 0], // Shift+b
        UP,
        [0x02, 0, 0, 0, 0, 0, 0, 0], // Shift alone first, as some scanners do
        [0x02, 0, 0x06, 0, 0, 0, 0, 0],
        [0x02, 0, 0, 0, 0, 0, 0, 0],
        UP,
        [0x00, 0, 0x2D, 0, 0, 0, 0, 0], // -
        UP,
        [0x00, 0, 0x1E, 0, 0, 0, 0, 0], // 1
        UP,
        [0x00, 0, 0x1F, 0, 0, 0, 0, 0], // 2
        UP,
        [0x20, 0, 0x20, 0, 0, 0, 0, 0], // right Shift + 3: #
        UP,
        [0x00, 0, 0x28, 0, 0, 0, 0, 0], // Enter
        UP,
    ];
    assert_eq!(decode_texts(WedgeConfig::default(), &recorded), ["ABC-12#"]);
}

#[test]
fn a_held_key_types_once_and_repeats_need_a_release() {
    let held = [
        [0x02, 0, 0x04, 0, 0, 0, 0, 0],
        [0x02, 0, 0x04, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
        UP,
    ];
    assert_eq!(decode_texts(WedgeConfig::default(), &held), ["A"]);
    let released = [
        [0x02, 0, 0x04, 0, 0, 0, 0, 0],
        UP,
        [0x02, 0, 0x04, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
        UP,
    ];
    assert_eq!(decode_texts(WedgeConfig::default(), &released), ["AA"]);
}

#[test]
fn keys_pressed_together_each_type_in_slot_order() {
    let recorded = [
        [0, 0, 0x1E, 0, 0, 0, 0, 0],    // 1
        [0, 0, 0x1E, 0x1F, 0, 0, 0, 0], // 1 held, 2 pressed
        [0, 0, 0x1F, 0x20, 0, 0, 0, 0], // 1 released, 3 pressed
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
    ];
    assert_eq!(decode_texts(WedgeConfig::default(), &recorded), ["123"]);
}

#[test]
fn rollover_reports_are_ignored() {
    let recorded = [
        [0, 0, 0x04, 0, 0, 0, 0, 0],
        [0, 0, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01], // ErrorRollOver
        [0, 0, 0x04, 0, 0, 0, 0, 0],                // still held: not a new press
        UP,
        [0, 0, 0x05, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
    ];
    let mut decoder = WedgeDecoder::new(WedgeConfig::default());
    let scans = decode(&mut decoder, &reports(&recorded), Instant::now());
    assert_eq!(scans[0].text, "ab");
    assert_eq!(decoder.stats().error_reports, 1);
}

#[test]
fn unknown_usages_are_ignored_and_counted() {
    let recorded = [
        [0, 0, 0x3A, 0, 0, 0, 0, 0], // F1
        UP,
        [0, 0, 0x07, 0, 0, 0, 0, 0], // d
        UP,
        [0, 0, 0x29, 0, 0, 0, 0, 0], // Escape
        UP,
        [0x01, 0, 0x3B, 0, 0, 0, 0, 0], // Ctrl+F2
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
    ];
    let mut decoder = WedgeDecoder::new(WedgeConfig::default());
    let scans = decode(&mut decoder, &reports(&recorded), Instant::now());
    assert_eq!(scans[0].text, "d");
    assert_eq!(decoder.stats().unknown_usages, 3);
}

#[test]
fn gs_typed_as_alt_keypad_code() {
    // "01" Alt+0029 "10": the GS1 separator the way Honeywell sends it.
    let recorded = [
        [0, 0, 0x27, 0, 0, 0, 0, 0], // 0
        UP,
        [0, 0, 0x1E, 0, 0, 0, 0, 0], // 1
        UP,
        [0x04, 0, 0, 0, 0, 0, 0, 0], // Alt down
        [0x04, 0, 0x62, 0, 0, 0, 0, 0],
        [0x04, 0, 0, 0, 0, 0, 0, 0],
        [0x04, 0, 0x62, 0, 0, 0, 0, 0],
        [0x04, 0, 0, 0, 0, 0, 0, 0],
        [0x04, 0, 0x5A, 0, 0, 0, 0, 0], // keypad 2
        [0x04, 0, 0, 0, 0, 0, 0, 0],
        [0x04, 0, 0x61, 0, 0, 0, 0, 0], // keypad 9
        [0x04, 0, 0, 0, 0, 0, 0, 0],
        UP, // Alt up: the character is typed
        [0, 0, 0x1E, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x27, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
    ];
    assert_eq!(
        decode_texts(WedgeConfig::default(), &recorded),
        ["01\u{1d}10"]
    );
}

#[test]
fn gs_typed_as_ctrl_close_bracket() {
    let recorded = [
        [0, 0, 0x1E, 0, 0, 0, 0, 0],
        UP,
        [0x01, 0, 0x30, 0, 0, 0, 0, 0], // Ctrl+]
        UP,
        [0x10, 0, 0x30, 0, 0, 0, 0, 0], // right Ctrl+]
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
    ];
    assert_eq!(
        decode_texts(WedgeConfig::default(), &recorded),
        ["1\u{1d}\u{1d}"]
    );
}

#[test]
fn alt_codes_beyond_ascii() {
    let encoding = WedgeEncoding::default();
    let mut decoder = WedgeDecoder::new(WedgeConfig::default());
    let reports = wedge_reports("é", &encoding).expect("Latin-1 is typable");
    let scans = decode(&mut decoder, &reports, Instant::now());
    assert_eq!(scans[0].text, "é");

    // Alt+300 is no character.
    let recorded = [
        [0x04, 0, 0x5B, 0, 0, 0, 0, 0],
        [0x04, 0, 0, 0, 0, 0, 0, 0],
        [0x04, 0, 0x62, 0, 0, 0, 0, 0],
        [0x04, 0, 0, 0, 0, 0, 0, 0],
        [0x04, 0, 0x62, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x04, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
    ];
    let mut decoder = WedgeDecoder::new(WedgeConfig::default());
    let scans = decode(&mut decoder, &self::reports(&recorded), Instant::now());
    assert_eq!(scans[0].text, "a");
    assert_eq!(decoder.stats().bad_alt_codes, 1);
}

#[test]
fn keypad_enter_ends_a_scan_too() {
    let recorded = [
        [0, 0, 0x59, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x58, 0, 0, 0, 0, 0],
        UP,
    ];
    assert_eq!(decode_texts(WedgeConfig::default(), &recorded), ["1"]);
}

#[test]
fn tab_terminator_keeps_enter_as_text() {
    let config = WedgeConfig {
        terminator: Terminator::Tab,
        aim_prefix: false,
    };
    let recorded = [
        [0, 0, 0x04, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x28, 0, 0, 0, 0, 0],
        UP,
        [0, 0, 0x2B, 0, 0, 0, 0, 0],
        UP,
    ];
    assert_eq!(decode_texts(config, &recorded), ["a\r"]);
}

#[test]
fn an_empty_scan_is_no_scan() {
    let recorded = [[0, 0, 0x28, 0, 0, 0, 0, 0], UP, [0, 0, 0x28, 0, 0, 0, 0, 0]];
    assert!(decode_texts(WedgeConfig::default(), &recorded).is_empty());
}

#[test]
fn idle_timeout_ends_a_scan() {
    let config = WedgeConfig {
        terminator: Terminator::Timeout { idle_ms: 50 },
        aim_prefix: false,
    };
    let mut decoder = WedgeDecoder::new(config);
    let encoding = WedgeEncoding {
        terminator: Terminator::Timeout { idle_ms: 50 },
        control: ControlKeys::AltKeypad,
    };
    let start = Instant::now();
    let first = wedge_reports("12", &encoding).expect("typable");
    assert!(decode(&mut decoder, &first, start).is_empty());
    let last_key = start + Duration::from_millis(2); // the press of '2'
    assert_eq!(
        decoder.next_deadline(),
        Some(last_key + Duration::from_millis(50))
    );
    assert_eq!(decoder.poll(last_key + Duration::from_millis(49)), None);
    let scan = decoder
        .poll(last_key + Duration::from_millis(50))
        .expect("idle long enough");
    assert_eq!(scan.text, "12");
    assert_eq!(decoder.next_deadline(), None);

    // Without a poll in between, the next key after the gap still splits.
    let later = start + Duration::from_secs(1);
    assert!(decode(&mut decoder, &first, later).is_empty());
    let second = wedge_reports("3", &encoding).expect("typable");
    let scans = decode(&mut decoder, &second, later + Duration::from_secs(1));
    assert_eq!(
        scans.iter().map(|d| d.text.as_str()).collect::<Vec<_>>(),
        ["12"]
    );
}

#[test]
fn aim_prefix_becomes_the_symbology() {
    let config = WedgeConfig {
        terminator: Terminator::Enter,
        aim_prefix: true,
    };
    let mut decoder = WedgeDecoder::new(config);
    let reports =
        wedge_reports("]d2010950600013435210ABC", &WedgeEncoding::default()).expect("typable");
    let scans = decode(&mut decoder, &reports, Instant::now());
    assert_eq!(scans[0].text, "010950600013435210ABC");
    assert_eq!(scans[0].symbology, Some(Symbology::Gs1DataMatrix));
}

#[test]
fn an_overlong_scan_is_dropped_and_counted() {
    let mut decoder = WedgeDecoder::new(WedgeConfig::default());
    let now = Instant::now();
    for _ in 0..=MAX_SCAN_BYTES {
        assert_eq!(
            decoder.feed(
                &BootReport {
                    modifiers: 0,
                    keys: [0x04, 0, 0, 0, 0, 0]
                },
                now
            ),
            None
        );
        assert_eq!(decoder.feed(&BootReport::default(), now), None);
    }
    let enter = BootReport {
        modifiers: 0,
        keys: [0x28, 0, 0, 0, 0, 0],
    };
    assert_eq!(decoder.feed(&enter, now), None);
    assert_eq!(decoder.stats().overlong_scans, 1);
    assert_eq!(decoder.feed(&BootReport::default(), now), None);
    let a = BootReport {
        modifiers: 0,
        keys: [0x04, 0, 0, 0, 0, 0],
    };
    assert_eq!(decoder.feed(&a, now), None);
    assert_eq!(decoder.feed(&BootReport::default(), now), None);
    assert_eq!(decoder.feed(&enter, now).map(|d| d.text), Some("a".into()));
}

#[test]
fn report_parsing() {
    let numbered = [0x01, 0x02, 0, 0x04, 0, 0, 0, 0, 0];
    assert_eq!(
        BootReport::parse(&numbered),
        Ok(BootReport {
            modifiers: 0x02,
            keys: [0x04, 0, 0, 0, 0, 0]
        })
    );
    assert_eq!(BootReport::parse(&[0; 7]), Err(ReportError::Length(7)));
    assert_eq!(BootReport::parse(&[0; 64]), Err(ReportError::Length(64)));
    let report = BootReport {
        modifiers: 0x22,
        keys: [1, 2, 3, 4, 5, 6],
    };
    assert_eq!(BootReport::parse(&report.to_bytes()), Ok(report));
}

proptest! {
    #[test]
    fn printable_ascii_round_trips(text in "[ -~]{1,64}") {
        let reports = wedge_reports(&text, &WedgeEncoding::default()).expect("printable ASCII");
        let mut decoder = WedgeDecoder::new(WedgeConfig::default());
        let scans = decode(&mut decoder, &reports, Instant::now());
        prop_assert_eq!(scans.len(), 1);
        prop_assert_eq!(&scans[0].text, &text);
        prop_assert_eq!(decoder.stats(), WedgeStats::default());
    }

    #[test]
    fn gs1_text_round_trips_with_either_control_encoding(
        text in "[ -~\u{1d}\u{1e}\u{4}]{1,64}",
        ctrl in any::<bool>(),
        tab in any::<bool>(),
    ) {
        let terminator = if tab { Terminator::Tab } else { Terminator::Enter };
        let encoding = WedgeEncoding {
            terminator: terminator.clone(),
            control: if ctrl { ControlKeys::Ctrl } else { ControlKeys::AltKeypad },
        };
        let reports = wedge_reports(&text, &encoding).expect("typable");
        let mut decoder = WedgeDecoder::new(WedgeConfig { terminator, aim_prefix: false });
        let scans = decode(&mut decoder, &reports, Instant::now());
        prop_assert_eq!(scans.len(), 1);
        prop_assert_eq!(&scans[0].text, &text);
    }

    #[test]
    fn timeout_mode_round_trips(text in "[ -~]{1,32}") {
        let terminator = Terminator::Timeout { idle_ms: 30 };
        let encoding = WedgeEncoding { terminator: terminator.clone(), control: ControlKeys::AltKeypad };
        let reports = wedge_reports(&text, &encoding).expect("typable");
        let mut decoder = WedgeDecoder::new(WedgeConfig { terminator, aim_prefix: false });
        let start = Instant::now();
        prop_assert!(decode(&mut decoder, &reports, start).is_empty());
        let deadline = decoder.next_deadline().expect("a scan in progress");
        let scan = decoder.poll(deadline).expect("ends at its deadline");
        prop_assert_eq!(scan.text, text);
    }

    #[test]
    fn arbitrary_reports_never_panic(
        raw in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..64),
    ) {
        let mut decoder = WedgeDecoder::new(WedgeConfig::default());
        let now = Instant::now();
        for bytes in raw {
            if let Ok(report) = BootReport::parse(&bytes) {
                let _ = decoder.feed(&report, now);
            }
        }
    }
}
