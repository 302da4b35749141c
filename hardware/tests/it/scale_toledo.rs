//! The Toledo 8217 driver against the simulated scale, over a
//! pseudo-terminal at 9600 7E1.

use crate::common;
// Inside `mod scale` so that `cargo test -p depot-hardware scale` selects them.
mod scale {
    use super::common::*;
    use std::time::Duration;

    use depot_hardware::scale::{
        ScaleError, ScaleHandle, ScaleState, SerialScaleConfig, Unit,
        sim::{SerialScaleSim, SimProtocol},
    };

    fn sim() -> SerialScaleSim {
        SerialScaleSim::start(SimProtocol::Toledo8217, Unit::Pound).expect("pseudo-terminal")
    }

    fn start(path: &str) -> ScaleHandle {
        start_serial(SerialScaleConfig::toledo_8217(path, Unit::Pound))
    }

    #[tokio::test]
    async fn stable_weight_in_the_configured_unit() {
        let sim = sim();
        sim.set_weight(weight("1.234"));
        let scale = start(sim.path());
        let reading = scale.weigh_stable(WAIT).await.expect("stable weight");
        assert_eq!(reading.weight, weight("1.234"));
        assert_eq!(reading.unit, Unit::Pound);
        assert!(reading.stable);
    }

    #[tokio::test]
    async fn motion_then_stable() {
        let sim = sim();
        sim.set_weight(weight("2.5"));
        sim.set_stable(false);
        let scale = start(sim.path());
        wait_for(&scale, |s| matches!(s, ScaleState::Motion { .. })).await;
        // Several more moving readings go by without ending the wait.
        let reading = stable_after(&scale, || sim.set_stable(true)).await;
        assert_eq!(reading.weight, weight("2.5"));
    }

    #[tokio::test]
    async fn overload_and_under_zero_are_errors() {
        let sim = sim();
        sim.set_overload(true);
        let scale = start(sim.path());
        assert_eq!(scale.weigh_stable(FAULT).await, Err(ScaleError::Overload));
        sim.set_overload(false);
        sim.set_weight(weight("-0.5"));
        assert_eq!(scale.weigh_stable(FAULT).await, Err(ScaleError::Underload));
        sim.set_weight(weight("0.5"));
        assert!(scale.weigh_stable(WAIT).await.is_ok());
    }

    #[tokio::test]
    async fn silence_times_out_then_recovers() {
        let sim = sim();
        let scale = start(sim.path());
        scale.weigh_stable(WAIT).await.expect("answering at first");
        sim.set_silent(true);
        assert_eq!(
            scale.weigh_stable(FAULT).await,
            Err(ScaleError::Timeout { command: "W" })
        );
        sim.set_silent(false);
        assert!(scale.weigh_stable(WAIT).await.is_ok());
    }

    #[tokio::test]
    async fn garbage_and_slow_answers() {
        let sim = sim();
        sim.set_garbage(true);
        let scale = start(sim.path());
        assert!(matches!(
            scale.weigh_stable(FAULT).await,
            Err(ScaleError::Malformed(_))
        ));
        sim.set_garbage(false);
        sim.set_delay(Duration::from_millis(600));
        wait_for(&scale, |s| {
            matches!(
                s,
                ScaleState::Fault {
                    error: ScaleError::Timeout { command: "W" },
                    ..
                }
            )
        })
        .await;
        sim.set_delay(Duration::ZERO);
        sim.set_weight(weight("3.5"));
        wait_for(&scale, |s| {
            s.reading().is_some_and(|r| r.weight == weight("3.5"))
        })
        .await;
    }

    #[tokio::test]
    async fn zero_but_no_tare() {
        let sim = sim();
        sim.set_weight(weight("0.02"));
        let scale = start(sim.path());
        wait_for(&scale, |s| s.reading().is_some()).await;
        scale.zero().await.expect("zeroed");
        wait_for(&scale, |s| {
            s.reading().is_some_and(|r| r.weight == weight("0"))
        })
        .await;
        sim.set_stable(false);
        assert_eq!(
            scale.zero().await,
            Err(ScaleError::NotExecutable { command: "Z" })
        );
        assert_eq!(
            scale.tare().await,
            Err(ScaleError::Unsupported {
                operation: "tare",
                protocol: "Toledo 8217"
            })
        );
    }
}
