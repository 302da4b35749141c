//! The MT-SICS driver against the simulated balance, over a pseudo-terminal.

use crate::common;
// Inside `mod scale` so that `cargo test -p depot-hardware scale` selects them.
mod scale {
    use super::common::*;
    use std::{path::PathBuf, time::Duration};

    use depot_hardware::scale::{
        self, ScaleConfig, ScaleError, ScaleHandle, ScaleState, SerialScaleConfig, Unit,
        sim::{SerialScaleSim, SimProtocol},
    };

    fn sim() -> SerialScaleSim {
        SerialScaleSim::start(SimProtocol::MtSics, Unit::Gram).expect("pseudo-terminal")
    }

    fn start(path: &str) -> ScaleHandle {
        start_serial(SerialScaleConfig::mt_sics(path))
    }

    #[tokio::test]
    async fn stable_weight() {
        let sim = sim();
        sim.set_weight(weight("100.00"));
        let scale = start(sim.path());
        let reading = scale.weigh_stable(WAIT).await.expect("stable weight");
        assert_eq!(reading.weight, weight("100.00"));
        assert_eq!(reading.unit, Unit::Gram);
        assert!(reading.stable);
        assert_eq!(reading.to_string(), "100.00 g");
    }

    #[tokio::test]
    async fn dynamic_then_stable() {
        let sim = sim();
        sim.set_weight(weight("512.5"));
        sim.set_stable(false);
        let scale = start(sim.path());
        let moving = wait_for(&scale, |s| s.reading().is_some_and(|r| !r.stable)).await;
        assert_eq!(moving.reading().map(|r| r.weight), Some(weight("512.5")));

        // Several more moving readings go by without ending the wait.
        let reading = stable_after(&scale, || sim.set_stable(true)).await;
        assert!(reading.stable);
        assert_eq!(reading.weight, weight("512.5"));
    }

    #[tokio::test]
    async fn overload_is_an_error() {
        let sim = sim();
        sim.set_overload(true);
        let scale = start(sim.path());
        assert_eq!(scale.weigh_stable(FAULT).await, Err(ScaleError::Overload));
        assert!(matches!(
            scale.state(),
            ScaleState::Fault {
                error: ScaleError::Overload,
                ..
            }
        ));
        sim.set_overload(false);
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
            Err(ScaleError::Timeout { command: "SI" })
        );
        sim.set_silent(false);
        sim.set_weight(weight("7.25"));
        let reading = scale.weigh_stable(WAIT).await.expect("answering again");
        assert_eq!(reading.weight, weight("7.25"));
    }

    #[tokio::test]
    async fn garbage_is_a_clear_error_then_recovers() {
        let sim = sim();
        sim.set_garbage(true);
        let scale = start(sim.path());
        let error = scale
            .weigh_stable(FAULT)
            .await
            .expect_err("no weight from garbage");
        assert!(
            matches!(&error, ScaleError::Malformed(text) if text.contains("garbage")),
            "{error}"
        );
        sim.set_garbage(false);
        assert!(scale.weigh_stable(WAIT).await.is_ok());
    }

    #[tokio::test]
    async fn slow_device() {
        let sim = sim();
        sim.set_weight(weight("3.00"));
        // Slower than usual, but within the reply timeout: fine.
        sim.set_delay(Duration::from_millis(100));
        let scale = start(sim.path());
        assert!(scale.weigh_stable(WAIT).await.is_ok());
        // Slower than the timeout: an error. (Some late answers are taken
        // for the next poll's: MT-SICS answers carry no sequence number.)
        sim.set_delay(Duration::from_millis(600));
        wait_for(&scale, |s| {
            matches!(
                s,
                ScaleState::Fault {
                    error: ScaleError::Timeout { command: "SI" },
                    ..
                }
            )
        })
        .await;
        sim.set_delay(Duration::ZERO);
        sim.set_weight(weight("4.00"));
        wait_for(&scale, |s| shows(s, "4.00")).await;
    }

    #[tokio::test]
    async fn zero_and_tare() {
        let sim = sim();
        sim.set_weight(weight("250.00"));
        let scale = start(sim.path());
        wait_for(&scale, |s| shows(s, "250.00")).await;

        let tare = scale.tare().await.expect("tared");
        assert_eq!(tare.weight, weight("250.00"));
        wait_for(&scale, |s| shows(s, "0.00")).await;
        sim.set_weight(weight("300.00"));
        wait_for(&scale, |s| shows(s, "50.00")).await;

        sim.set_stable(false);
        assert_eq!(
            scale.zero().await,
            Err(ScaleError::NotExecutable { command: "Z" })
        );
        assert_eq!(
            scale.tare().await,
            Err(ScaleError::NotExecutable { command: "T" })
        );
        sim.set_stable(true);
        scale.zero().await.expect("zeroed");
        wait_for(&scale, |s| shows(s, "0")).await;
    }

    /// A udev-style symlink to the scale's port, which the test can point at
    /// another device.
    struct Link(PathBuf);

    impl Link {
        fn new() -> Self {
            let path = std::env::temp_dir().join(format!("depot-scale-{}", std::process::id()));
            Self(path)
        }

        /// As udev does when the device is unplugged.
        fn remove(&self) {
            let _ = std::fs::remove_file(&self.0);
        }

        fn point_to(&self, target: &str) {
            let staged = self.0.with_extension("new");
            let _ = std::fs::remove_file(&staged);
            std::os::unix::fs::symlink(target, &staged).expect("symlink");
            std::fs::rename(&staged, &self.0).expect("replace symlink");
        }
    }

    impl Drop for Link {
        fn drop(&mut self) {
            self.remove();
        }
    }

    #[tokio::test]
    async fn reopens_the_port_when_the_scale_comes_back() {
        let link = Link::new();
        let first = sim();
        first.set_weight(weight("1.00"));
        link.point_to(first.path());
        let scale = start(link.0.to_str().expect("UTF-8 temp dir"));
        wait_for(&scale, |s| shows(s, "1.00")).await;

        // Unlinked first: another test may soon get a terminal with the same
        // number.
        link.remove();
        drop(first);
        let unplugged = wait_for(&scale, |s| {
            matches!(
                s,
                ScaleState::Fault {
                    error: ScaleError::Disconnected(_),
                    ..
                }
            )
        })
        .await;
        assert!(matches!(unplugged, ScaleState::Fault { .. }));
        assert!(matches!(
            scale.zero().await,
            Err(ScaleError::Disconnected(_))
        ));

        let second = sim();
        second.set_weight(weight("2.00"));
        link.point_to(second.path());
        wait_for(&scale, |s| shows(s, "2.00")).await;
    }

    #[tokio::test]
    async fn invalid_configuration_is_refused() {
        let mut config = SerialScaleConfig::mt_sics("/dev/ttyUSB0");
        config.port.data_bits = 9;
        assert!(matches!(
            scale::spawn(ScaleConfig::Serial(config)),
            Err(ScaleError::Config(_))
        ));
    }

    #[tokio::test]
    async fn the_driver_stops_with_its_last_handle() {
        let sim = sim();
        let scale = start(sim.path());
        let mut latest = scale.latest();
        let copy = scale.clone();
        drop(scale);
        assert!(copy.weigh_stable(WAIT).await.is_ok());
        drop(copy);
        let ended =
            tokio::time::timeout(WAIT, async { while latest.changed().await.is_ok() {} }).await;
        assert!(ended.is_ok(), "driver still running");
    }
}
