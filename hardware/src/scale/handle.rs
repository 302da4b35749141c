//! What the edge holds: one handle type for every scale protocol.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};

use super::{
    Reading, ScaleError, SerialScaleConfig, driver,
    modbus::{self, ModbusScaleConfig},
    task::{Request, ScaleState},
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScaleConfig {
    Serial(SerialScaleConfig),
    Modbus(ModbusScaleConfig),
}

/// How long to wait before reconnecting: `initial`, doubling up to `max`
/// while the scale stays unreachable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(250),
            max: Duration::from_secs(10),
        }
    }
}

impl Backoff {
    pub(crate) fn validate(&self) -> Result<(), ScaleError> {
        if self.initial.is_zero() || self.max < self.initial {
            return Err(ScaleError::Config(format!(
                "reconnect backoff {:?} to {:?}: needs 0 < initial <= max",
                self.initial, self.max
            )));
        }
        Ok(())
    }

    pub(crate) fn next(&self, delay: Duration) -> Duration {
        delay.saturating_mul(2).min(self.max).max(self.initial)
    }
}

/// Starts the driver task for `config` and returns its handle.
///
/// The task owns the port or socket, reconnects on its own, and stops when
/// the last clone of the handle is dropped. Must be called from within a
/// Tokio runtime.
pub fn spawn(config: ScaleConfig) -> Result<ScaleHandle, ScaleError> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|error| ScaleError::Config(format!("no Tokio runtime: {error}")))?;
    let (state_tx, state) = watch::channel(ScaleState::Connecting);
    let (requests_tx, requests) = mpsc::channel(8);
    match config {
        ScaleConfig::Serial(config) => {
            config.validate()?;
            runtime.spawn(driver::run(config, state_tx, requests));
        }
        ScaleConfig::Modbus(config) => {
            config.validate()?;
            runtime.spawn(modbus::run(config, state_tx, requests));
        }
    }
    Ok(ScaleHandle {
        state,
        requests: requests_tx,
    })
}

/// A scale, whatever its protocol. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ScaleHandle {
    state: watch::Receiver<ScaleState>,
    requests: mpsc::Sender<Request>,
}

impl ScaleHandle {
    /// The scale's state, updated at every poll (or frame, for streaming
    /// scales): for live display.
    pub fn latest(&self) -> watch::Receiver<ScaleState> {
        self.state.clone()
    }

    /// The state right now.
    pub fn state(&self) -> ScaleState {
        self.state.borrow().clone()
    }

    /// Waits up to `timeout` for a stable weight newer than this call, for
    /// packing.
    ///
    /// A fault does not end the wait: an overload while a parcel is dropped
    /// on the pan, or a missed answer, may clear a moment later. If the
    /// scale is still in fault at `timeout`, that fault is the error (a
    /// silent scale gives `Timeout`, an overloaded one `Overload`);
    /// otherwise it is `NotStable`: the weight kept moving.
    pub async fn weigh_stable(&self, timeout: Duration) -> Result<Reading, ScaleError> {
        let mut state = self.state.clone();
        state.borrow_and_update();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match tokio::time::timeout_at(deadline, state.changed()).await {
                Err(_) => break,
                Ok(Err(_)) => return Err(ScaleError::Stopped),
                Ok(Ok(())) => {}
            }
            if let ScaleState::Weight(reading) = &*state.borrow_and_update() {
                if reading.stable {
                    return Ok(reading.clone());
                }
            }
        }
        match &*state.borrow() {
            ScaleState::Fault { error, .. } => Err(error.clone()),
            _ => Err(ScaleError::NotStable(timeout)),
        }
    }

    /// Zeroes the scale (empty pan), where the protocol can.
    pub async fn zero(&self) -> Result<(), ScaleError> {
        let (reply, answer) = oneshot::channel();
        self.send(Request::Zero(reply)).await?;
        answer.await.map_err(|_| ScaleError::Stopped)?
    }

    /// Tares with what is on the pan, where the protocol can; returns the
    /// tare weight the scale stored.
    pub async fn tare(&self) -> Result<Reading, ScaleError> {
        let (reply, answer) = oneshot::channel();
        self.send(Request::Tare(reply)).await?;
        answer.await.map_err(|_| ScaleError::Stopped)?
    }

    async fn send(&self, request: Request) -> Result<(), ScaleError> {
        self.requests
            .send(request)
            .await
            .map_err(|_| ScaleError::Stopped)
    }
}
