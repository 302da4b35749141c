//! For tests of TLS to a broker (feature `testing`): a private CA with
//! server and client certificates written as PEM files, and a TLS front
//! that requires a client certificate and passes what it decrypts to a
//! plain broker (the embedded one has no TLS listener); and Mosquitto
//! started for a test ([`mosquitto`]).

pub mod mosquitto;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// PEM files of a test PKI, in a directory of the caller's.
#[derive(Debug, Clone)]
pub struct Pki {
    pub ca: PathBuf,
    /// For `localhost`, `127.0.0.1` and `::1`.
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// A client certificate from another CA, which the front refuses.
    pub stranger_cert: PathBuf,
    pub stranger_key: PathBuf,
    /// That other CA: trusting it instead of `ca` fails the server check.
    pub other_ca: PathBuf,
}

fn ca(name: &str) -> Result<(String, Issuer<'static, KeyPair>), rcgen::Error> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate()?;
    let pem = params.self_signed(&key)?.pem();
    Ok((pem, Issuer::new(params, key)))
}

fn leaf(
    issuer: &Issuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> Result<(String, String), rcgen::Error> {
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())?;
    params.distinguished_name.push(DnType::CommonName, names[0]);
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, issuer)?;
    Ok((cert.pem(), key.serialize_pem()))
}

impl Pki {
    /// Makes a CA, a server certificate, a client certificate, and a second
    /// CA with a client of its own, as PEM files in `dir`.
    pub fn create(dir: &Path) -> Result<Self, Box<dyn std::error::Error>> {
        let (ca_pem, issuer) = ca("Depot test CA")?;
        let (other_pem, other) = ca("Some other CA")?;
        let (server_cert, server_key) = leaf(
            &issuer,
            &["localhost", "127.0.0.1", "::1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        )?;
        let (client_cert, client_key) =
            leaf(&issuer, &["edge-1"], ExtendedKeyUsagePurpose::ClientAuth)?;
        let (stranger_cert, stranger_key) =
            leaf(&other, &["stranger"], ExtendedKeyUsagePurpose::ClientAuth)?;
        let write = |name: &str, pem: &str| -> io::Result<PathBuf> {
            let path = dir.join(name);
            std::fs::write(&path, pem)?;
            Ok(path)
        };
        Ok(Self {
            ca: write("ca.pem", &ca_pem)?,
            server_cert: write("server.pem", &server_cert)?,
            server_key: write("server.key", &server_key)?,
            client_cert: write("client.pem", &client_cert)?,
            client_key: write("client.key", &client_key)?,
            stranger_cert: write("stranger.pem", &stranger_cert)?,
            stranger_key: write("stranger.key", &stranger_key)?,
            other_ca: write("other-ca.pem", &other_pem)?,
        })
    }

    /// What a client that trusts this CA and shows its client certificate
    /// sets.
    pub fn client_files(&self) -> crate::TlsFiles {
        crate::TlsFiles {
            ca_file: Some(self.ca.clone()),
            client_cert_file: Some(self.client_cert.clone()),
            client_key_file: Some(self.client_key.clone()),
        }
    }
}

/// A TLS listener on loopback that requires a client certificate signed by
/// the PKI's CA and relays each connection to `upstream` in plain TCP.
/// Stops when dropped.
pub struct TlsFront {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TlsFront {
    /// On 127.0.0.1.
    pub async fn start(
        pki: &Pki,
        upstream: SocketAddr,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        Self::start_on(IpAddr::from([127, 0, 0, 1]), pki, upstream).await
    }

    /// On `ip` (`::1` for IPv6), on a free port.
    pub async fn start_on(
        ip: IpAddr,
        pki: &Pki,
        upstream: SocketAddr,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from_pem_file(&pki.ca)?)?;
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()?;
        let chain = vec![CertificateDer::from_pem_file(&pki.server_cert)?];
        let key = PrivateKeyDer::from_pem_file(&pki.server_key)?;
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)?;
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind((ip, 0)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A refused handshake ends here: rustls has already
                    // sent the client its alert.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    if let Ok(mut plain) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                    }
                });
            }
        });
        Ok(Self { addr, task })
    }
}
