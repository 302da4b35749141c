//! The CAS continuous-output driver against the simulated scale, over a
//! pseudo-terminal.

use crate::common;
// Inside `mod scale` so that `cargo test -p depot-hardware scale` selects them.
mod scale {
    use super::common::*;
    use std::time::Duration;

    use depot_hardware::scale::{
        self, ScaleConfig, ScaleError, ScaleHandle, SerialScaleConfig, Unit,
        sim::{SerialScaleSim, SimProtocol},
    };

    fn sim() -> SerialScaleSim {
        let protocol = SimProtocol::Cas {
            interval: Duration::from_millis(30),
        };
        SerialScaleSim::start(protocol, Unit::Kilogram).expect("pseudo-terminal")
    }

    fn start(path: &str) -> ScaleHandle {
        let mut config = SerialScaleConfig::cas(path);
        config.reply_timeout = Duration::from_millis(300);
        scale::spawn(ScaleConfig::Serial(config)).expect("valid config")
    }

    #[tokio::test]
    async fn unstable_then_stable() {
        let sim = sim();
        sim.set_weight(weight("1.234"));
        sim.set_stable(false);
        let scale = start(sim.path());
        let moving = wait_for(&scale, |s| s.reading().is_some_and(|r| !r.stable)).await;
        assert_eq!(moving.reading().map(|r| r.unit), Some(Unit::Kilogram));
        // Several more moving readings go by without ending the wait.
        let reading = stable_after(&scale, || sim.set_stable(true)).await;
        assert_eq!(reading.weight, weight("1.234"));
    }

    #[tokio::test]
    async fn overload_is_an_error() {
        let sim = sim();
        sim.set_overload(true);
        let scale = start(sim.path());
        assert_eq!(scale.weigh_stable(FAULT).await, Err(ScaleError::Overload));
    }

    #[tokio::test]
    async fn silence_and_garbage_then_recovery() {
        let sim = sim();
        let scale = start(sim.path());
        scale.weigh_stable(WAIT).await.expect("streaming at first");
        sim.set_silent(true);
        assert_eq!(
            scale.weigh_stable(FAULT).await,
            Err(ScaleError::Silent(Duration::from_millis(300)))
        );
        // Noise is skipped, so a scale sending only noise is as good as silent.
        sim.set_garbage(true);
        sim.set_silent(false);
        assert!(matches!(
            scale.weigh_stable(FAULT).await,
            Err(ScaleError::Silent(_))
        ));
        sim.set_garbage(false);
        sim.set_weight(weight("0.5"));
        wait_for(&scale, |s| {
            s.reading().is_some_and(|r| r.weight == weight("0.5"))
        })
        .await;
    }

    #[tokio::test]
    async fn no_commands_on_a_streaming_scale() {
        let sim = sim();
        let scale = start(sim.path());
        wait_for(&scale, |s| s.reading().is_some()).await;
        assert_eq!(
            scale.zero().await,
            Err(ScaleError::Unsupported {
                operation: "zero",
                protocol: "CAS continuous"
            })
        );
        assert!(matches!(
            scale.tare().await,
            Err(ScaleError::Unsupported { .. })
        ));
    }
}
