//! Interop: our Modbus scale driver reads a Modbus TCP server that no one
//! here wrote, pymodbus's.
//!
//! Runs only when `DEPOT_TEST_PYMODBUS` names a Python interpreter with
//! pymodbus installed (`python3 -m pip install 'pymodbus==3.16.1'`), e.g.
//! `DEPOT_TEST_PYMODBUS=python3 cargo test -p depot-hardware --test it scale_pymodbus`.

use std::{
    ffi::OsString,
    net::{SocketAddr, TcpListener, TcpStream},
    path::PathBuf,
    process::Stdio,
    time::Duration,
};

use depot_hardware::scale::{
    self, ScaleConfig, ScaleError, ScaleState, Unit, Weight,
    modbus::{ModbusScaleConfig, RegisterMap, StatusBit, Table, Width, WordOrder},
};
use tokio::process::Child;

/// Serves, as device 1: holding registers 100-103 holding the 32-bit
/// integers 1234567 and -2500 (pymodbus's own encoding, high word first),
/// register 110 = 0b1000 (bit 3: stable) and 111 = 0 (not stable).
const SERVER: &str = r#"
import asyncio, sys
from pymodbus.server import StartAsyncTcpServer
from pymodbus.simulator import DataType, SimData, SimDevice

device = SimDevice(id=1, simdata=[
    SimData(address=100, values=[1234567, -2500], datatype=DataType.INT32),
    SimData(address=110, values=[0b1000, 0], datatype=DataType.REGISTERS),
])
asyncio.run(StartAsyncTcpServer(device, address=("127.0.0.1", int(sys.argv[1]))))
"#;

const WAIT: Duration = Duration::from_secs(10);

/// The server script, removed when the test ends however it ends.
struct Script(PathBuf);

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

struct Server {
    child: Child,
    _script: Script,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

async fn start_server(python: OsString) -> (Server, SocketAddr) {
    let port = free_port();
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let name = format!("depot-pymodbus-{}-{port}.py", std::process::id());
    let script = Script(std::env::temp_dir().join(name));
    std::fs::write(&script.0, SERVER).expect("write server script");
    let child = tokio::process::Command::new(python)
        .arg(&script.0)
        .arg(port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Inherited, never piped: a full pipe would stall the server, and
        // its traceback is what to read when this test fails.
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("start the Python interpreter named by DEPOT_TEST_PYMODBUS");
    let mut server = Server {
        child,
        _script: script,
    };
    // Bounded wait for the server to accept.
    for _ in 0..100 {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("pymodbus server exited ({status}) before accepting (its error is above)");
        }
        if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
            return (server, address);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("pymodbus server not accepting on {address} after 100 attempts");
}

fn map(address: u16, decimals: u8, unit: Unit, status: u16) -> RegisterMap {
    RegisterMap {
        table: Table::Holding,
        address,
        width: Width::U32,
        word_order: WordOrder::HighFirst,
        signed: true,
        decimals,
        unit,
        stable: Some(StatusBit {
            table: Table::Holding,
            address: status,
            bit: 3,
            invert: false,
        }),
    }
}

fn start(address: SocketAddr, map: RegisterMap) -> scale::ScaleHandle {
    let mut config = ModbusScaleConfig::tcp(address.to_string(), map);
    config.poll_interval = Duration::from_millis(100);
    scale::spawn(ScaleConfig::Modbus(config)).expect("valid config")
}

#[tokio::test]
async fn scale_read_from_pymodbus_server() {
    let Some(python) = std::env::var_os("DEPOT_TEST_PYMODBUS") else {
        println!(
            "skipped: set DEPOT_TEST_PYMODBUS to a Python interpreter with pymodbus \
             (python3 -m pip install 'pymodbus==3.16.1')"
        );
        return;
    };
    let (_server, address) = start_server(python).await;
    let weight = |text: &str| text.parse::<Weight>().expect("valid weight");

    let kilograms = start(address, map(100, 3, Unit::Kilogram, 110));
    let reading = kilograms.weigh_stable(WAIT).await.expect("stable weight");
    assert_eq!(reading.weight, weight("1234.567"));
    assert_eq!(reading.unit, Unit::Kilogram);
    assert!(reading.stable);

    let negative = start(address, map(102, 2, Unit::Gram, 110));
    let reading = negative.weigh_stable(WAIT).await.expect("stable weight");
    assert_eq!(reading.weight, weight("-25.00"));

    // Bit 3 of register 111 is clear: readings come, never stable.
    let moving = start(address, map(100, 3, Unit::Kilogram, 111));
    let mut latest = moving.latest();
    let state = tokio::time::timeout(
        WAIT,
        latest.wait_for(|s| !matches!(s, ScaleState::Connecting)),
    )
    .await
    .expect("a state in time")
    .expect("driver running")
    .clone();
    assert_eq!(
        state.reading().map(|r| (r.weight, r.stable)),
        Some((weight("1234.567"), false)),
        "{state:?}"
    );
    assert_eq!(
        moving.weigh_stable(Duration::from_millis(500)).await,
        Err(ScaleError::NotStable(Duration::from_millis(500)))
    );
}
