//! What a scale's task shares with the handles on it: the state it
//! publishes and the commands it answers. The drivers (`driver` for serial
//! lines, `modbus::client`) run the task; `handle` spawns it and talks to
//! it; neither needs the other.

use std::time::{Duration, SystemTime};

use tokio::sync::{mpsc, oneshot, watch};

use super::{
    Reading, ScaleError,
    link::{Op, Outcome},
};

/// What a station screen shows for its scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaleState {
    /// Nothing heard yet since the driver started.
    Connecting,
    Weight(Reading),
    /// Moving, and the protocol gives no weight while it moves (8217).
    Motion {
        at: SystemTime,
    },
    /// The scale is overloaded, silent, unreachable…: the reason is the error.
    Fault {
        error: ScaleError,
        at: SystemTime,
    },
}

impl ScaleState {
    pub(crate) fn fault(error: ScaleError) -> Self {
        Self::Fault {
            error,
            at: SystemTime::now(),
        }
    }

    pub fn reading(&self) -> Option<&Reading> {
        match self {
            Self::Weight(reading) => Some(reading),
            _ => None,
        }
    }
}

/// A command from a handle, with where to send its answer.
#[derive(Debug)]
pub(crate) enum Request {
    Zero(oneshot::Sender<Result<(), ScaleError>>),
    Tare(oneshot::Sender<Result<Reading, ScaleError>>),
}

impl Request {
    pub(crate) fn op(&self) -> Op {
        match self {
            Self::Zero(_) => Op::Zero,
            Self::Tare(_) => Op::Tare,
        }
    }

    // The caller may have given up waiting: a closed reply channel is fine.
    pub(crate) fn fail(self, error: ScaleError) {
        match self {
            Self::Zero(reply) => drop(reply.send(Err(error))),
            Self::Tare(reply) => drop(reply.send(Err(error))),
        }
    }

    pub(crate) fn answer(self, outcome: Outcome) {
        match (self, outcome) {
            (Self::Zero(reply), Outcome::Zero(result)) => drop(reply.send(result)),
            (Self::Tare(reply), Outcome::Tare(result)) => drop(reply.send(result)),
            (request, outcome) => request.fail(ScaleError::Malformed(format!(
                "answer to another command: {outcome:?}"
            ))),
        }
    }
}

/// Publishes a new state, logging when the scale fails or recovers.
pub(crate) fn publish(state: &watch::Sender<ScaleState>, new: ScaleState, scale: &str) {
    let old = state.send_replace(new);
    let new = state.borrow();
    match (&old, &*new) {
        (ScaleState::Fault { error: was, .. }, ScaleState::Fault { error, .. }) if was == error => {
        }
        (_, ScaleState::Fault { error, .. }) => tracing::warn!(scale, %error, "scale fault"),
        (ScaleState::Fault { .. }, _) => tracing::info!(scale, "scale recovered"),
        _ => {}
    }
}

/// Waits out a reconnect delay, answering commands meanwhile (they cannot
/// reach the scale). `false` when every handle is gone.
pub(crate) async fn pause(
    requests: &mut mpsc::Receiver<Request>,
    delay: Duration,
    error: &ScaleError,
) -> bool {
    let until = tokio::time::Instant::now() + delay;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(until) => return true,
            request = requests.recv() => match request {
                Some(request) => request.fail(error.clone()),
                None => return false,
            },
        }
    }
}
