//! The task that polls a Modbus scale.

use std::{fmt, time::Duration};

use tokio::{
    net::TcpStream,
    sync::{mpsc, watch},
    time::{MissedTickBehavior, timeout},
};
use tokio_modbus::{
    Slave,
    client::{Context, Reader, rtu, tcp},
};

use super::{RegisterMap, Table};
use crate::scale::{
    Backoff, Reading, ScaleError, ScaleState, SerialPortConfig,
    task::{Request, pause, publish},
};

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum ModbusTransport {
    /// `host:port`, resolved at every connection attempt.
    Tcp {
        address: String,
    },
    Rtu {
        port: SerialPortConfig,
    },
}

impl fmt::Display for ModbusTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tcp { address } => write!(f, "Modbus TCP {address}"),
            Self::Rtu { port } => write!(f, "Modbus RTU {}", port.path),
        }
    }
}

/// A scale read over Modbus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModbusScaleConfig {
    pub transport: ModbusTransport,
    /// The unit (slave) id: the device's address on an RTU bus; over TCP,
    /// what the device or gateway expects (often 1, or 255 for "this
    /// device").
    pub unit_id: u8,
    pub map: RegisterMap,
    pub poll_interval: Duration,
    /// For connecting and for each request.
    pub timeout: Duration,
    pub reconnect: Backoff,
}

impl ModbusScaleConfig {
    pub fn tcp(address: impl Into<String>, map: RegisterMap) -> Self {
        Self::with(
            ModbusTransport::Tcp {
                address: address.into(),
            },
            map,
        )
    }

    pub fn rtu(port: SerialPortConfig, unit_id: u8, map: RegisterMap) -> Self {
        Self {
            unit_id,
            ..Self::with(ModbusTransport::Rtu { port }, map)
        }
    }

    fn with(transport: ModbusTransport, map: RegisterMap) -> Self {
        Self {
            transport,
            unit_id: 1,
            map,
            poll_interval: Duration::from_millis(200),
            timeout: Duration::from_secs(1),
            reconnect: Backoff::default(),
        }
    }

    pub fn validate(&self) -> Result<(), ScaleError> {
        self.map.validate()?;
        self.reconnect.validate()?;
        if let ModbusTransport::Rtu { port } = &self.transport {
            port.validate()?;
        }
        if self.poll_interval.is_zero() || self.timeout.is_zero() {
            return Err(ScaleError::Config(
                "Modbus poll interval and timeout must not be zero".into(),
            ));
        }
        Ok(())
    }
}

enum Exit {
    Stop,
    Lost(ScaleError),
}

/// Why a poll produced no reading.
enum Failure {
    /// The device answered, but not with a weight: keep the connection.
    Device(ScaleError),
    /// The connection is broken or out of step: reconnect.
    Link(ScaleError),
}

/// Connects, polls until the connection fails, and reconnects with backoff,
/// until the last handle is dropped.
pub(crate) async fn run(
    config: ModbusScaleConfig,
    state: watch::Sender<ScaleState>,
    mut requests: mpsc::Receiver<Request>,
) {
    let name = config.transport.to_string();
    let mut delay = config.reconnect.initial;
    loop {
        let error = match connect(&config).await {
            Ok(mut context) => {
                tracing::info!(scale = %name, "connected");
                delay = config.reconnect.initial;
                match poll(&mut context, &config, &state, &mut requests, &name).await {
                    Exit::Stop => return,
                    Exit::Lost(error) => error,
                }
            }
            Err(error) => error,
        };
        publish(&state, ScaleState::fault(error.clone()), &name);
        if !pause(&mut requests, delay, &error).await {
            return;
        }
        delay = config.reconnect.next(delay);
    }
}

async fn connect(config: &ModbusScaleConfig) -> Result<Context, ScaleError> {
    let slave = Slave(config.unit_id);
    match &config.transport {
        ModbusTransport::Tcp { address } => {
            let unreachable = |why: String| ScaleError::Disconnected(format!("{address}: {why}"));
            let stream = timeout(config.timeout, TcpStream::connect(address.as_str()))
                .await
                .map_err(|_| unreachable("connection timed out".into()))?
                .map_err(|error| unreachable(error.to_string()))?;
            // Requests are tiny and we wait for each answer.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY not set");
            }
            Ok(tcp::attach_slave(stream, slave))
        }
        ModbusTransport::Rtu { port } => Ok(rtu::attach_slave(port.open()?, slave)),
    }
}

async fn poll(
    context: &mut Context,
    config: &ModbusScaleConfig,
    state: &watch::Sender<ScaleState>,
    requests: &mut mpsc::Receiver<Request>,
    name: &str,
) -> Exit {
    let mut ticks = tokio::time::interval(config.poll_interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => match read(context, config).await {
                Ok(reading) => publish(state, ScaleState::Weight(reading), name),
                Err(Failure::Device(error)) => publish(state, ScaleState::fault(error), name),
                Err(Failure::Link(error)) => return Exit::Lost(error),
            },
            request = requests.recv() => match request {
                // Zero and tare registers are vendor-specific, and writing
                // guessed registers on someone's indicator is not an option.
                Some(request) => {
                    let operation = request.op().name();
                    request.fail(ScaleError::Unsupported { operation, protocol: "Modbus" });
                }
                None => return Exit::Stop,
            },
        }
    }
}

/// Reads the weight, and the status register if the map has one: in one
/// request when they are next to each other, so that the stable bit belongs
/// to the same sample as the weight. (Not across a gap: devices commonly
/// refuse to read registers they do not define.)
async fn read(context: &mut Context, config: &ModbusScaleConfig) -> Result<Reading, Failure> {
    let map = &config.map;
    let words = map.words();
    let at = std::time::SystemTime::now();
    let Some(status) = map.stable else {
        let weight = registers(context, map.table, map.address, words, config.timeout).await?;
        return map.decode(&weight, None, at).map_err(Failure::Device);
    };
    let start = map.address.min(status.address);
    let end = (u32::from(map.address) + u32::from(words)).max(u32::from(status.address) + 1);
    let (weight, status_word) = match u16::try_from(end - u32::from(start)) {
        Ok(count) if status.table == map.table && count <= words + 1 => {
            let block = registers(context, map.table, start, count, config.timeout).await?;
            let offset = |address: u16| usize::from(address - start);
            let weight = block[offset(map.address)..][..usize::from(words)].to_vec();
            (weight, block[offset(status.address)])
        }
        _ => {
            let weight = registers(context, map.table, map.address, words, config.timeout).await?;
            let status_word =
                registers(context, status.table, status.address, 1, config.timeout).await?;
            (weight, status_word[0])
        }
    };
    map.decode(&weight, Some(status_word), at)
        .map_err(Failure::Device)
}

/// Exactly `count` registers, or why not.
async fn registers(
    context: &mut Context,
    table: Table,
    address: u16,
    count: u16,
    limit: Duration,
) -> Result<Vec<u16>, Failure> {
    let call = async {
        match table {
            Table::Holding => context.read_holding_registers(address, count).await,
            Table::Input => context.read_input_registers(address, count).await,
        }
    };
    match timeout(limit, call).await {
        // A late answer would be taken for the next request's: start over.
        Err(_) => Err(Failure::Link(ScaleError::Timeout {
            command: "read registers",
        })),
        Ok(Err(error)) => Err(Failure::Link(ScaleError::Disconnected(error.to_string()))),
        Ok(Ok(Err(exception))) => Err(Failure::Device(ScaleError::ModbusException(
            exception.to_string(),
        ))),
        Ok(Ok(Ok(words))) if words.len() == usize::from(count) => Ok(words),
        Ok(Ok(Ok(words))) => Err(Failure::Device(ScaleError::Malformed(format!(
            "{} registers, asked for {count}",
            words.len()
        )))),
    }
}
