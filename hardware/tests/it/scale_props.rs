//! Property tests: no input makes a scale codec panic, and what the
//! simulators format, the decoders read back unchanged.

// Inside `mod scale` so that `cargo test -p depot-hardware scale` selects them.
mod scale {
    use std::time::{Duration, Instant, SystemTime};

    use depot_hardware::scale::{
        MAX_DECIMALS, Unit, Weight, cas,
        modbus::{RegisterMap, StatusBit, Table, Width, WordOrder},
        sics, toledo,
    };
    use proptest::prelude::*;

    fn any_weight() -> impl Strategy<Value = Weight> {
        (any::<i64>(), 0..=MAX_DECIMALS)
            .prop_map(|(value, decimals)| Weight::new(value, decimals).expect("decimals in range"))
    }

    fn any_unit() -> impl Strategy<Value = Unit> {
        prop_oneof![
            Just(Unit::Gram),
            Just(Unit::Kilogram),
            Just(Unit::Pound),
            Just(Unit::Ounce)
        ]
    }

    fn sics_command() -> impl Strategy<Value = sics::Command> {
        use sics::Command::*;
        prop_oneof![
            Just(WeighImmediately),
            Just(WeighStable),
            Just(Zero),
            Just(Tare),
            Just(TareQuery),
            Just(TareClear),
            Just(SerialNumber)
        ]
    }

    /// Bytes in chunks, as reads from a port deliver them; biased towards the
    /// protocols' own delimiters and letters so that frames do form.
    fn chunks() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let byte = prop_oneof![
            any::<u8>(),
            prop::sample::select(b"\x02\r\n SIDZTA+-?.,0123456789gkltGSNTUO".to_vec()),
        ];
        prop::collection::vec(prop::collection::vec(byte, 0..80), 0..20)
    }

    fn register_map() -> impl Strategy<Value = RegisterMap> {
        (
            prop_oneof![Just(Width::U16), Just(Width::U32)],
            prop_oneof![Just(WordOrder::HighFirst), Just(WordOrder::LowFirst)],
            any::<bool>(),
            0..=MAX_DECIMALS,
            any_unit(),
            proptest::option::of((0_u8..16, any::<bool>())),
        )
            .prop_map(
                |(width, word_order, signed, decimals, unit, status)| RegisterMap {
                    table: Table::Holding,
                    address: 0,
                    width,
                    word_order,
                    signed,
                    decimals,
                    unit,
                    stable: status.map(|(bit, invert)| StatusBit {
                        table: Table::Input,
                        address: 0,
                        bit,
                        invert,
                    }),
                },
            )
    }

    proptest! {
        #[test]
        fn weights_print_and_parse_back(weight in any_weight()) {
            let text = weight.to_string();
            let parsed: Weight = text.parse().expect("own output parses");
            prop_assert_eq!(parsed, weight);
            prop_assert_eq!(parsed.decimals(), weight.decimals());
        }

        #[test]
        fn any_text_parses_or_fails_cleanly(text in ".{0,40}") {
            let _ = text.parse::<Weight>();
            let _ = text.parse::<Unit>();
        }

        #[test]
        fn sics_session_survives_any_bytes(command in sics_command(), chunks in chunks()) {
            let now = Instant::now();
            let mut session = sics::Session::new();
            for chunk in &chunks {
                if session.is_idle() {
                    session.request(command, now).expect("idle session takes a command");
                }
                for answer in session.receive(chunk) {
                    prop_assert_eq!(answer.command, command);
                }
                let _ = session.expire(now + Duration::from_secs(1));
                prop_assert!(session.is_idle() || session.deadline().is_some());
            }
        }

        #[test]
        fn sics_decode_survives_any_line(
            command in sics_command(),
            line in prop::collection::vec(any::<u8>(), 0..200),
        ) {
            let _ = sics::decode(command, &line);
        }

        #[test]
        fn sics_weight_lines_round_trip(
            weight in any_weight(),
            unit in any_unit(),
            stable in any::<bool>(),
        ) {
            let line = sics::value_line(if stable { "S S" } else { "S D" }, weight, unit);
            let line = line.strip_suffix(b"\r\n").expect("CR LF");
            let decoded = sics::decode(sics::Command::WeighImmediately, line);
            prop_assert_eq!(decoded, Some(Ok(sics::Response::Weight { weight, unit, stable })));
        }

        #[test]
        fn toledo_session_survives_any_bytes(chunks in chunks()) {
            let now = Instant::now();
            let mut session = toledo::Session::new();
            for chunk in &chunks {
                if session.is_idle() {
                    let request = session.request(toledo::Command::Weigh, now);
                    request.expect("idle session takes a command");
                }
                let _ = session.receive(chunk);
                let _ = session.expire(now + Duration::from_secs(1));
            }
        }

        #[test]
        fn toledo_records_round_trip(
            value in 0_i64..10_000_000,
            decimals in 0_u8..=6,
            status in any::<u8>(),
        ) {
            let weight = Weight::new(value, decimals).expect("decimals in range");
            let frame = toledo::encode_weight(weight).expect("not negative");
            let payload = &frame[1..frame.len() - 1];
            prop_assert_eq!(toledo::decode(payload), Ok(toledo::Response::Weight(weight)));
            let status = toledo::Status::from_flags(status);
            let frame = toledo::encode_status(status);
            prop_assert_eq!(toledo::decode(&frame[1..3]), Ok(toledo::Response::Status(status)));
        }

        #[test]
        fn cas_decoder_survives_any_bytes(chunks in chunks()) {
            let mut decoder = cas::Decoder::new();
            for chunk in &chunks {
                let _ = decoder.push(chunk);
            }
        }

        #[test]
        fn cas_frames_round_trip(
            weight in any_weight(),
            unit in any_unit(),
            header in prop_oneof![
                Just(cas::Header::Stable),
                Just(cas::Header::Unstable),
                Just(cas::Header::Overload)
            ],
            net in any::<bool>(),
        ) {
            let frame = cas::Frame { header, net, weight, unit };
            let mut decoder = cas::Decoder::new();
            // After noise and a truncated frame, to check that the decoder
            // resynchronises.
            let mut bytes = b"\xff\x00garbage\r\nST,GS,+1.0\r\n".to_vec();
            bytes.extend(cas::encode(&frame));
            let decoded: Vec<_> =
                decoder.push(&bytes).into_iter().filter_map(Result::ok).collect();
            prop_assert_eq!(decoded, vec![frame]);
        }

        #[test]
        fn modbus_decode_survives_any_registers(
            map in register_map(),
            words in prop::collection::vec(any::<u16>(), 0..4),
            status in proptest::option::of(any::<u16>()),
        ) {
            let _ = map.decode(&words, status, SystemTime::now());
        }

        #[test]
        fn modbus_registers_round_trip(
            map in register_map(),
            words in prop::collection::vec(any::<u16>(), 2),
            status in any::<u16>(),
        ) {
            let words = &words[..usize::from(map.words())];
            let reading = map.decode(words, Some(status), SystemTime::now());
            let reading = reading.expect("right register count");
            prop_assert_eq!(reading.unit, map.unit);
            prop_assert_eq!(reading.stable, map.stable.is_none_or(|bit| bit.stable(status)));
            let encoded = map.encode(reading.weight).expect("decoded weight fits");
            prop_assert_eq!(encoded, words.to_vec());
        }
    }
}
