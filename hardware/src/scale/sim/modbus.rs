//! A Modbus TCP scale: serves a register map's registers, weight settable.

use std::{
    collections::HashMap,
    future::{Ready, ready},
    io,
    net::SocketAddr,
    sync::{Arc, Mutex, PoisonError},
};

use tokio::{net::TcpListener, task::JoinHandle};
use tokio_modbus::{
    ExceptionCode, Request, Response,
    server::{
        Service,
        tcp::{Server, accept_tcp_connection},
    },
};

use crate::scale::{
    ScaleError, Weight,
    modbus::{RegisterMap, Table},
};

#[derive(Debug, Default)]
struct Registers {
    words: HashMap<(Table, u16), u16>,
    silent: bool,
}

impl Registers {
    /// Unmapped registers are an illegal address, as on a real device.
    fn read(&self, table: Table, address: u16, count: u16) -> Result<Vec<u16>, ExceptionCode> {
        (0..count)
            .map(|i| {
                let address = address
                    .checked_add(i)
                    .ok_or(ExceptionCode::IllegalDataAddress)?;
                self.words
                    .get(&(table, address))
                    .copied()
                    .ok_or(ExceptionCode::IllegalDataAddress)
            })
            .collect()
    }
}

#[derive(Debug, Clone)]
struct Scale(Arc<Mutex<Registers>>);

impl Scale {
    fn lock(&self) -> std::sync::MutexGuard<'_, Registers> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Service for Scale {
    type Request = Request<'static>;
    // `None` sends nothing back: a silent scale.
    type Response = Option<Response>;
    type Exception = ExceptionCode;
    type Future = Ready<Result<Self::Response, Self::Exception>>;

    fn call(&self, request: Self::Request) -> Self::Future {
        let registers = self.lock();
        if registers.silent {
            return ready(Ok(None));
        }
        ready(match request {
            Request::ReadHoldingRegisters(address, count) => registers
                .read(Table::Holding, address, count)
                .map(|words| Some(Response::ReadHoldingRegisters(words))),
            Request::ReadInputRegisters(address, count) => registers
                .read(Table::Input, address, count)
                .map(|words| Some(Response::ReadInputRegisters(words))),
            _ => Err(ExceptionCode::IllegalFunction),
        })
    }
}

/// A Modbus TCP scale publishing its weight as `map` says. It serves until
/// dropped.
#[derive(Debug)]
pub struct ModbusScaleSim {
    address: SocketAddr,
    map: RegisterMap,
    scale: Scale,
    server: JoinHandle<()>,
}

impl ModbusScaleSim {
    /// Serves on a free port of 127.0.0.1, weighing 0, stable.
    pub async fn start(map: RegisterMap) -> io::Result<Self> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), map).await
    }

    /// Serves on `address`: the same port again simulates a scale that was
    /// switched off and on.
    pub async fn start_on(address: SocketAddr, map: RegisterMap) -> io::Result<Self> {
        map.validate().map_err(io::Error::other)?;
        let listener = TcpListener::bind(address).await?;
        let address = listener.local_addr()?;
        let scale = Scale(Arc::default());
        let sim = Self {
            address,
            map,
            scale: scale.clone(),
            server: tokio::spawn(serve(listener, scale)),
        };
        sim.set_weight(Weight::ZERO).map_err(io::Error::other)?;
        sim.set_stable(true);
        Ok(sim)
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Fails if the weight does not fit the map's registers.
    pub fn set_weight(&self, weight: Weight) -> Result<(), ScaleError> {
        let words = self.map.encode(weight)?;
        let mut registers = self.scale.lock();
        for (address, word) in (self.map.address..).zip(words) {
            registers.words.insert((self.map.table, address), word);
        }
        Ok(())
    }

    /// No effect if the map has no status bit.
    pub fn set_stable(&self, stable: bool) {
        if let Some(bit) = self.map.stable {
            let mut registers = self.scale.lock();
            let word = registers.words.entry((bit.table, bit.address)).or_default();
            *word = bit.with_stable(*word, stable);
        }
    }

    /// Keeps connections open but answers nothing.
    pub fn set_silent(&self, silent: bool) {
        self.scale.lock().silent = silent;
    }
}

impl Drop for ModbusScaleSim {
    fn drop(&mut self) {
        // Aborting the server also ends its connections.
        self.server.abort();
    }
}

async fn serve(listener: TcpListener, scale: Scale) {
    let on_connected = |stream, peer| {
        let scale = scale.clone();
        async move { accept_tcp_connection(stream, peer, |_| Ok(Some(scale.clone()))) }
    };
    let on_error = |error: io::Error| tracing::debug!(%error, "simulated Modbus connection ended");
    if let Err(error) = Server::new(listener).serve(&on_connected, on_error).await {
        tracing::warn!(%error, "simulated Modbus scale stopped");
    }
}
