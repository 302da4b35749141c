//! What the scale driver tests share: the waits, weights written as text,
//! and a serial scale driven with short timings so faults show quickly.
#![allow(dead_code)]

use depot_hardware::scale::{
    self, Backoff, Reading, ScaleConfig, ScaleHandle, ScaleState, SerialScaleConfig, Weight,
};
use std::time::Duration;

/// Generous: the machine running the tests may be busy.
pub const WAIT: Duration = Duration::from_secs(10);
/// How long to ask a faulty scale for a weight: long enough for several
/// polls to fail, so that the fault is what the driver reports.
pub const FAULT: Duration = Duration::from_secs(2);

pub fn weight(text: &str) -> Weight {
    text.parse().expect("valid weight")
}

/// A serial scale polled every 50 ms, given up on after 300 ms of silence,
/// and reopened within 200 ms.
pub fn start_serial(mut config: SerialScaleConfig) -> ScaleHandle {
    config.poll_interval = Duration::from_millis(50);
    config.reply_timeout = Duration::from_millis(300);
    config.command_timeout = Duration::from_secs(2);
    config.reconnect = Backoff {
        initial: Duration::from_millis(50),
        max: Duration::from_millis(200),
    };
    scale::spawn(ScaleConfig::Serial(config)).expect("valid config")
}

/// The first state the driver reports that `what` accepts.
pub async fn wait_for(scale: &ScaleHandle, what: impl Fn(&ScaleState) -> bool) -> ScaleState {
    let mut latest = scale.latest();
    let state = tokio::time::timeout(WAIT, latest.wait_for(|s| what(s)))
        .await
        .expect("state reached in time")
        .expect("driver running");
    state.clone()
}

pub fn shows(state: &ScaleState, text: &str) -> bool {
    state.reading().is_some_and(|r| r.weight == weight(text))
}

/// Asks a moving scale for a stable weight, checks the request still waits
/// after three more readings, lets the scale settle with `settle`, and
/// returns the answer.
pub async fn stable_after(scale: &ScaleHandle, settle: impl FnOnce()) -> Reading {
    let waiting = tokio::spawn({
        let scale = scale.clone();
        async move { scale.weigh_stable(WAIT).await }
    });
    let mut latest = scale.latest();
    for _ in 0..3 {
        latest.changed().await.expect("driver running");
    }
    assert!(!waiting.is_finished());
    settle();
    waiting.await.expect("task").expect("stable weight")
}
