//! The Modbus driver over RTU: a serial line to a minimal RTU device on a
//! pseudo-terminal.

// Inside `mod scale` so that `cargo test -p depot-hardware scale` selects them.
mod scale {
    use std::{
        io::{Read, Write},
        sync::{
            Arc,
            atomic::{AtomicBool, Ordering},
        },
        time::Duration,
    };

    use depot_hardware::scale::{
        self, ScaleConfig, ScaleError, SerialPortConfig, Unit, Weight,
        modbus::{ModbusScaleConfig, RegisterMap, Table, Width, WordOrder},
    };
    use serialport::{SerialPort, TTYPort};

    const WAIT: Duration = Duration::from_secs(10);
    const UNIT_ID: u8 = 7;
    /// Input register 4 holds 1234: 12.34 kg.
    const WEIGHT_REGISTER: u16 = 4;
    const WEIGHT: u16 = 1234;

    /// CRC-16/MODBUS, appended low byte first.
    fn crc(bytes: &[u8]) -> [u8; 2] {
        let mut crc: u16 = 0xffff;
        for byte in bytes {
            crc ^= u16::from(*byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xa001
                } else {
                    crc >> 1
                };
            }
        }
        crc.to_le_bytes()
    }

    /// Answers "read input registers" (8-byte requests) for `UNIT_ID`, with
    /// an illegal-address exception outside register `WEIGHT_REGISTER`.
    fn device(mut port: TTYPort, stop: &AtomicBool) {
        let mut pending = Vec::new();
        let mut buf = [0_u8; 64];
        while !stop.load(Ordering::Relaxed) {
            if let Ok(n) = port.read(&mut buf) {
                pending.extend_from_slice(&buf[..n]);
            }
            while pending.len() >= 8 {
                let request: Vec<u8> = pending.drain(..8).collect();
                if request[0] != UNIT_ID || crc(&request[..6]) != request[6..] {
                    continue;
                }
                let address = u16::from_be_bytes([request[2], request[3]]);
                let count = u16::from_be_bytes([request[4], request[5]]);
                let mut answer = vec![UNIT_ID];
                if request[1] != 4 {
                    answer.extend([request[1] | 0x80, 1]);
                } else if address != WEIGHT_REGISTER || count != 1 {
                    answer.extend([0x84, 2]);
                } else {
                    answer.extend([4, 2]);
                    answer.extend(WEIGHT.to_be_bytes());
                }
                let check = crc(&answer);
                answer.extend(check);
                port.write_all(&answer).expect("answer written");
            }
        }
    }

    fn map(address: u16) -> RegisterMap {
        RegisterMap {
            table: Table::Input,
            address,
            width: Width::U16,
            word_order: WordOrder::HighFirst,
            signed: false,
            decimals: 2,
            unit: Unit::Kilogram,
            stable: None,
        }
    }

    #[tokio::test]
    async fn rtu_weight_and_exception() {
        let (mut port, terminal) = TTYPort::pair().expect("pseudo-terminal");
        let path = terminal.name().expect("terminal path");
        port.set_timeout(Duration::from_millis(20))
            .expect("timeout");
        let stop = Arc::new(AtomicBool::new(false));
        let responder = std::thread::spawn({
            let stop = stop.clone();
            move || {
                let _terminal = terminal;
                device(port, &stop);
            }
        });

        let serial = SerialPortConfig::new(path, 19200);
        let config = ModbusScaleConfig::rtu(serial.clone(), UNIT_ID, map(WEIGHT_REGISTER));
        let scale = scale::spawn(ScaleConfig::Modbus(config)).expect("valid config");
        let reading = scale.weigh_stable(WAIT).await.expect("weight over RTU");
        assert_eq!(reading.weight, "12.34".parse::<Weight>().expect("valid"));
        // The next driver opens the port once this one has closed it.
        let mut latest = scale.latest();
        drop(scale);
        while latest.changed().await.is_ok() {}

        let config = ModbusScaleConfig::rtu(serial, UNIT_ID, map(9));
        let scale = scale::spawn(ScaleConfig::Modbus(config)).expect("valid config");
        let error = scale.weigh_stable(Duration::from_secs(2)).await;
        assert!(
            matches!(&error, Err(ScaleError::ModbusException(text)) if text.contains("address")),
            "{error:?}"
        );

        stop.store(true, Ordering::Relaxed);
        responder.join().expect("device thread");
    }
}
