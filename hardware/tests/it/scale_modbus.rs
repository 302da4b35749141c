//! The Modbus driver against the simulated Modbus TCP scale.

use crate::common;
// Inside `mod scale` so that `cargo test -p depot-hardware scale` selects them.
mod scale {
    use super::common::*;
    use std::time::Duration;

    use depot_hardware::scale::{
        self, Backoff, ScaleConfig, ScaleError, ScaleHandle, ScaleState, Unit,
        modbus::{ModbusScaleConfig, RegisterMap, StatusBit, Table, Width, WordOrder},
        sim::ModbusScaleSim,
    };

    /// An indicator publishing a signed 32-bit weight in grams × 10 at holding
    /// registers 100-101, with "stable" in bit 3 of the next one (read together).
    fn map() -> RegisterMap {
        RegisterMap {
            table: Table::Holding,
            address: 100,
            width: Width::U32,
            word_order: WordOrder::HighFirst,
            signed: true,
            decimals: 1,
            unit: Unit::Gram,
            stable: Some(StatusBit {
                table: Table::Holding,
                address: 102,
                bit: 3,
                invert: false,
            }),
        }
    }

    fn start(sim: &ModbusScaleSim, map: RegisterMap) -> ScaleHandle {
        let mut config = ModbusScaleConfig::tcp(sim.address().to_string(), map);
        config.poll_interval = Duration::from_millis(50);
        config.timeout = Duration::from_millis(300);
        config.reconnect = Backoff {
            initial: Duration::from_millis(50),
            max: Duration::from_millis(200),
        };
        scale::spawn(ScaleConfig::Modbus(config)).expect("valid config")
    }

    #[tokio::test]
    async fn stable_weight() {
        let sim = ModbusScaleSim::start(map()).await.expect("bound");
        sim.set_weight(weight("12345.6")).expect("fits");
        let scale = start(&sim, map());
        let reading = scale.weigh_stable(WAIT).await.expect("stable weight");
        assert_eq!(reading.weight, weight("12345.6"));
        assert_eq!(reading.unit, Unit::Gram);
    }

    #[tokio::test]
    async fn unstable_then_stable_and_negative() {
        let sim = ModbusScaleSim::start(map()).await.expect("bound");
        sim.set_weight(weight("-25.5")).expect("fits");
        sim.set_stable(false);
        let scale = start(&sim, map());
        let moving = wait_for(&scale, |s| s.reading().is_some_and(|r| !r.stable)).await;
        assert_eq!(moving.reading().map(|r| r.weight), Some(weight("-25.5")));
        // Several more moving readings go by without ending the wait.
        let reading = stable_after(&scale, || sim.set_stable(true)).await;
        assert_eq!(reading.weight, weight("-25.5"));
    }

    #[tokio::test]
    async fn status_in_another_table_and_swapped_words() {
        let map = RegisterMap {
            table: Table::Input,
            address: 0,
            word_order: WordOrder::LowFirst,
            signed: false,
            decimals: 3,
            unit: Unit::Kilogram,
            stable: Some(StatusBit {
                table: Table::Holding,
                address: 7,
                bit: 0,
                invert: true,
            }),
            ..map()
        };
        let sim = ModbusScaleSim::start(map).await.expect("bound");
        sim.set_weight(weight("70.001")).expect("fits");
        let scale = start(&sim, map);
        let reading = scale.weigh_stable(WAIT).await.expect("stable weight");
        assert_eq!(reading.weight, weight("70.001"));
    }

    #[tokio::test]
    async fn status_across_a_gap() {
        // Registers 102-109 are not defined: read separately.
        let map = RegisterMap {
            stable: map().stable.map(|bit| StatusBit {
                address: 110,
                ..bit
            }),
            ..map()
        };
        let sim = ModbusScaleSim::start(map).await.expect("bound");
        sim.set_weight(weight("0.5")).expect("fits");
        let scale = start(&sim, map);
        let reading = scale.weigh_stable(WAIT).await.expect("stable weight");
        assert_eq!(reading.weight, weight("0.5"));
    }

    #[tokio::test]
    async fn wrong_register_map_is_a_clear_error() {
        let sim = ModbusScaleSim::start(map()).await.expect("bound");
        let scale = start(
            &sim,
            RegisterMap {
                address: 300,
                ..map()
            },
        );
        let error = scale.weigh_stable(FAULT).await.expect_err("nothing at 300");
        assert!(
            matches!(&error, ScaleError::ModbusException(text) if text.contains("address")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn silence_times_out_then_recovers() {
        let sim = ModbusScaleSim::start(map()).await.expect("bound");
        let scale = start(&sim, map());
        scale.weigh_stable(WAIT).await.expect("answering at first");
        sim.set_silent(true);
        assert_eq!(
            scale.weigh_stable(FAULT).await,
            Err(ScaleError::Timeout {
                command: "read registers"
            })
        );
        sim.set_silent(false);
        sim.set_weight(weight("1.5")).expect("fits");
        wait_for(&scale, |s| shows(s, "1.5")).await;
    }

    #[tokio::test]
    async fn reconnects_when_the_scale_restarts() {
        let sim = ModbusScaleSim::start(map()).await.expect("bound");
        let address = sim.address();
        sim.set_weight(weight("1.0")).expect("fits");
        let scale = start(&sim, map());
        wait_for(&scale, |s| shows(s, "1.0")).await;
        drop(sim);
        wait_for(&scale, |s| {
            matches!(
                s,
                ScaleState::Fault {
                    error: ScaleError::Disconnected(_),
                    ..
                }
            )
        })
        .await;
        let sim = ModbusScaleSim::start_on(address, map())
            .await
            .expect("same port again");
        sim.set_weight(weight("2.0")).expect("fits");
        wait_for(&scale, |s| shows(s, "2.0")).await;
    }

    #[tokio::test]
    async fn no_zero_or_tare_over_modbus() {
        let sim = ModbusScaleSim::start(map()).await.expect("bound");
        let scale = start(&sim, map());
        assert_eq!(
            scale.zero().await,
            Err(ScaleError::Unsupported {
                operation: "zero",
                protocol: "Modbus"
            })
        );
        assert!(matches!(
            scale.tare().await,
            Err(ScaleError::Unsupported { .. })
        ));
    }
}
