//! The connection beneath a [`super::PgConn`]: tokio-postgres's client,
//! the future that moves its bytes, and the single-threaded runtime that
//! polls both on whichever thread calls; TLS by rustls.

use super::PgError;
use crate::error::{Error, Result};
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;

/// A connection's I/O: it moves bytes both ways while polled, and ends
/// when the client is let go or the server goes away.
pub(super) type Moving = Pin<Box<dyn Future<Output = Result<(), PgError>> + Send>>;

/// The client, its connection (the future that moves its bytes both ways)
/// and the single-threaded runtime that polls them, on the thread that
/// calls.
pub(super) struct Link {
    runtime: tokio::runtime::Runtime,
    pub(super) client: Arc<tokio_postgres::Client>,
    /// `None` once it has ended.
    connection: Option<Moving>,
}

impl Link {
    /// Connects to `url` (`postgres://user:password@host:port/db?sslmode=…`)
    /// as [`open`] does, on a runtime of the link's own.
    pub(super) fn connect(url: &str) -> Result<Link> {
        let config: tokio_postgres::Config = url.parse()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Connect(format!("a runtime for the client: {e}")))?;
        let (client, connection) = runtime.block_on(open(&config))?;
        Ok(Link {
            runtime,
            client: Arc::new(client),
            connection: Some(connection),
        })
    }

    /// Runs `work` to its end, moving the connection's bytes meanwhile; a
    /// connection that fails first is the answer.
    pub(super) fn block_on<T>(
        &mut self,
        work: impl Future<Output = Result<T, PgError>>,
    ) -> Result<T, PgError> {
        let mut work = pin!(work);
        let connection = &mut self.connection;
        self.runtime.block_on(poll_fn(|cx| {
            if let Some(moving) = connection {
                if let Poll::Ready(ended) = moving.as_mut().poll(cx) {
                    *connection = None;
                    if let Err(e) = ended {
                        return Poll::Ready(Err(e));
                    }
                }
            }
            work.as_mut().poll(cx)
        }))
    }

    pub(super) fn is_closed(&self) -> bool {
        self.connection.is_none() || self.client.is_closed()
    }

    /// Lets the client go, which tells the server goodbye, and waits for
    /// the connection to end.
    pub(super) fn close(self) -> Result<(), PgError> {
        let Link {
            runtime,
            client,
            connection,
        } = self;
        drop(client);
        match connection {
            Some(moving) => runtime.block_on(moving),
            None => Ok(()),
        }
    }
}

/// Connects by `config`: TLS by rustls with the Mozilla roots when the
/// server offers it (`sslmode=prefer`, the default) or must (`require`).
/// The connection moves no bytes until it is polled.
pub(super) async fn open(
    config: &tokio_postgres::Config,
) -> Result<(tokio_postgres::Client, Moving)> {
    Ok(match config.get_ssl_mode() {
        tokio_postgres::config::SslMode::Disable => {
            let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
            (client, Box::pin(connection))
        }
        _ => {
            let (client, connection) = config.connect(tls()?).await?;
            (client, Box::pin(connection))
        }
    })
}

fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Connect(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}
