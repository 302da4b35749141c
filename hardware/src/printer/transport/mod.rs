//! Connections to a printer over raw TCP, a serial line or a character
//! device, with one shape for the I/O task: a channel of what the printer
//! sends, and a writer.

mod device;
mod endpoint;

pub use endpoint::{DEFAULT_TCP_PORT, Endpoint, EndpointError, FlowControl, Parity, SerialConfig};

use std::fs::File;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_serial::SerialStream;

use device::Device;

/// What a connection's reader saw.
#[derive(Debug)]
pub(crate) enum Incoming {
    Data(Vec<u8>),
    /// The printer closed its side.
    Eof,
    Error(io::Error),
}

/// Aborts the reader task when the connection is dropped.
pub(crate) struct ReaderTask(JoinHandle<()>);

impl Drop for ReaderTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn spawn_reader<R>(mut reader: R, sink: mpsc::UnboundedSender<Incoming>) -> ReaderTask
where
    R: AsyncRead + Unpin + Send + 'static,
{
    ReaderTask(tokio::spawn(async move {
        let mut buf = vec![0; 4096];
        loop {
            let incoming = match reader.read(&mut buf).await {
                Ok(0) => Incoming::Eof,
                Ok(n) => Incoming::Data(buf[..n].to_vec()),
                Err(error) => Incoming::Error(error),
            };
            let last = !matches!(incoming, Incoming::Data(_));
            if sink.send(incoming).is_err() || last {
                return;
            }
        }
    }))
}

/// An open connection.
pub(crate) struct Link {
    pub incoming: mpsc::UnboundedReceiver<Incoming>,
    pub writer: LinkWriter,
    /// Kept for as long as the connection: dropping it stops the reader.
    pub reader: Option<ReaderTask>,
}

pub(crate) enum LinkWriter {
    Tcp(OwnedWriteHalf),
    Serial(WriteHalf<SerialStream>),
    Device(Arc<File>),
}

impl LinkWriter {
    pub async fn write_all(&mut self, data: Vec<u8>) -> io::Result<()> {
        match self {
            LinkWriter::Tcp(tcp) => tcp.write_all(&data).await,
            LinkWriter::Serial(serial) => {
                serial.write_all(&data).await?;
                serial.flush().await
            }
            LinkWriter::Device(file) => device::write(file, data).await,
        }
    }

    /// Ends the sending side. `Ok(true)`: that is the whole close. `Ok(false)`:
    /// the printer closing its side (an [`Incoming::Eof`]) acknowledges it.
    pub async fn finish(&mut self) -> io::Result<bool> {
        match self {
            // FIN: the printer reads to the end, then closes.
            LinkWriter::Tcp(tcp) => tcp.shutdown().await.map(|()| false),
            // A serial line has no close handshake: drained is all there is.
            LinkWriter::Serial(serial) => serial.flush().await.map(|()| true),
            LinkWriter::Device(_) => Ok(true),
        }
    }
}

fn serial_builder(config: &SerialConfig) -> io::Result<tokio_serial::SerialPortBuilder> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_owned());
    let data_bits = match config.data_bits {
        7 => tokio_serial::DataBits::Seven,
        8 => tokio_serial::DataBits::Eight,
        _ => return Err(invalid("serial data bits must be 7 or 8")),
    };
    let stop_bits = match config.stop_bits {
        1 => tokio_serial::StopBits::One,
        2 => tokio_serial::StopBits::Two,
        _ => return Err(invalid("serial stop bits must be 1 or 2")),
    };
    let parity = match config.parity {
        Parity::None => tokio_serial::Parity::None,
        Parity::Odd => tokio_serial::Parity::Odd,
        Parity::Even => tokio_serial::Parity::Even,
    };
    let flow_control = match config.flow_control {
        FlowControl::None => tokio_serial::FlowControl::None,
        FlowControl::Software => tokio_serial::FlowControl::Software,
        FlowControl::Hardware => tokio_serial::FlowControl::Hardware,
    };
    Ok(tokio_serial::new(&config.path, config.baud_rate)
        .data_bits(data_bits)
        .stop_bits(stop_bits)
        .parity(parity)
        .flow_control(flow_control))
}

pub(crate) type Connecting = Pin<Box<dyn Future<Output = io::Result<Link>> + Send>>;

/// Opens connections to one endpoint.
pub(crate) enum Transport {
    Tcp { host: String, port: u16 },
    Serial(SerialConfig),
    Device(Device),
}

impl Transport {
    pub fn new(endpoint: &Endpoint) -> Self {
        match endpoint {
            Endpoint::Tcp { host, port } => Transport::Tcp {
                host: host.clone(),
                port: *port,
            },
            Endpoint::Serial(config) => Transport::Serial(config.clone()),
            Endpoint::Device { path } => Transport::Device(Device::new(path.clone())),
        }
    }

    pub fn connect(&self) -> Connecting {
        match self {
            Transport::Tcp { host, port } => {
                let (host, port) = (host.clone(), *port);
                Box::pin(async move {
                    let (sink, incoming) = mpsc::unbounded_channel();
                    let stream = TcpStream::connect((host.as_str(), port)).await?;
                    stream.set_nodelay(true)?;
                    let (reader, writer) = stream.into_split();
                    Ok(Link {
                        incoming,
                        writer: LinkWriter::Tcp(writer),
                        reader: Some(spawn_reader(reader, sink)),
                    })
                })
            }
            Transport::Serial(config) => {
                let builder = serial_builder(config);
                Box::pin(async move {
                    let (sink, incoming) = mpsc::unbounded_channel();
                    let stream = SerialStream::open(&builder?).map_err(io::Error::from)?;
                    let (reader, writer) = tokio::io::split(stream);
                    Ok(Link {
                        incoming,
                        writer: LinkWriter::Serial(writer),
                        reader: Some(spawn_reader(reader, sink)),
                    })
                })
            }
            Transport::Device(device) => {
                let device = device.clone();
                Box::pin(async move {
                    let (incoming, file) = device.connect().await?;
                    Ok(Link {
                        incoming,
                        writer: LinkWriter::Device(file),
                        reader: None,
                    })
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_settings_are_checked() {
        let mut config = SerialConfig::new("/dev/ttyS0");
        assert!(serial_builder(&config).is_ok());
        config.data_bits = 5;
        assert!(serial_builder(&config).is_err());
        config.data_bits = 8;
        config.stop_bits = 0;
        assert!(serial_builder(&config).is_err());
    }

    #[tokio::test]
    async fn a_missing_serial_port_is_an_error() {
        let transport = Transport::Serial(SerialConfig::new("/nonexistent/ttyDepot"));
        assert!(transport.connect().await.is_err());
    }

    #[tokio::test]
    async fn tcp_round_trip_and_end_of_stream() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let transport = Transport::Tcp {
            host: "127.0.0.1".into(),
            port,
        };
        let (link, accepted) = tokio::join!(transport.connect(), listener.accept());
        let mut link = link.expect("connects");
        let (mut peer, _) = accepted.expect("accepts");
        link.writer
            .write_all(b"~HS".to_vec())
            .await
            .expect("writes");
        let mut got = [0; 3];
        peer.read_exact(&mut got).await.expect("peer reads");
        assert_eq!(&got, b"~HS");
        peer.write_all(b"answer").await.expect("peer writes");
        assert!(!link.writer.finish().await.expect("shuts down"));
        let mut rest = Vec::new();
        peer.read_to_end(&mut rest).await.expect("sees the end");
        drop(peer);
        let mut data = Vec::new();
        loop {
            match link.incoming.recv().await {
                Some(Incoming::Data(bytes)) => data.extend(bytes),
                Some(Incoming::Eof) => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(data, b"answer");
    }
}
