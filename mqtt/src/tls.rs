//! What a TLS connection to the broker trusts and shows: the CA
//! certificates that may sign the broker's certificate (the public web
//! roots unless a CA file is given: a broker on a private CA is the
//! common case on a site) and, for brokers that require one, the client's
//! own certificate and key.

use crate::{MqttError, MqttUrl};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the PEM files are, as the settings name them (`broker.ca_file`,
/// `broker.client_cert_file`, `broker.client_key_file`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// CA certificates (one or more PEM blocks) trusted instead of the
    /// public roots.
    pub ca_file: Option<PathBuf>,
    /// This client's certificate, with any intermediates after it.
    pub client_cert_file: Option<PathBuf>,
    /// The private key of `client_cert_file` (PKCS#8, PKCS#1 or SEC1).
    pub client_key_file: Option<PathBuf>,
}

impl TlsFiles {
    pub fn is_empty(&self) -> bool {
        self.ca_file.is_none() && self.client_cert_file.is_none() && self.client_key_file.is_none()
    }
}

/// A loaded TLS client configuration; the files are read once, when it is
/// made, so a bad file fails at startup and not at every reconnect.
/// `Default` trusts the public web roots and shows no certificate.
#[derive(Clone, Default)]
pub struct Tls {
    config: Option<Arc<rustls::ClientConfig>>,
    with_ca_file: bool,
    with_client_cert: bool,
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("ca_file", &self.with_ca_file)
            .field("client_cert", &self.with_client_cert)
            .finish()
    }
}

impl Tls {
    /// Reads `files` for a connection to `url`. Files for a plain `mqtt://`
    /// URL are refused rather than ignored: whoever set them meant TLS.
    pub fn load(url: &MqttUrl, files: &TlsFiles) -> Result<Self, MqttError> {
        if files.is_empty() {
            return Ok(Self::default());
        }
        if !url.tls {
            return Err(file_error(
                "broker.url",
                None,
                "TLS files are set, but the URL is plain mqtt://: use mqtts:// to connect with TLS",
            ));
        }
        let roots = match &files.ca_file {
            Some(path) => ca_roots(path)?,
            None => public_roots(),
        };
        let builder = builder(roots)?;
        let config = match (&files.client_cert_file, &files.client_key_file) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => {
                let chain = certificates("broker.client_cert_file", cert)?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    file_error(
                        "broker.client_key_file",
                        Some(key),
                        &pem_reason(&e, "private key"),
                    )
                })?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    file_error(
                        "broker.client_key_file",
                        files.client_key_file.as_deref(),
                        &format!("does not go with broker.client_cert_file: {e}"),
                    )
                })?
            }
            (Some(_), None) => {
                return Err(file_error(
                    "broker.client_key_file",
                    None,
                    "broker.client_cert_file is set without its key: set both or neither",
                ));
            }
            (None, Some(_)) => {
                return Err(file_error(
                    "broker.client_cert_file",
                    None,
                    "broker.client_key_file is set without its certificate: set both or neither",
                ));
            }
        };
        Ok(Self {
            config: Some(Arc::new(config)),
            with_ca_file: files.ca_file.is_some(),
            with_client_cert: files.client_cert_file.is_some(),
        })
    }

    /// The broker's certificate is checked against `broker.ca_file`
    /// rather than the public roots.
    pub fn with_ca_file(&self) -> bool {
        self.with_ca_file
    }

    /// A client certificate is shown to the broker.
    pub fn with_client_cert(&self) -> bool {
        self.with_client_cert
    }

    /// The configuration a TLS connection uses.
    pub(crate) fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, MqttError> {
        match &self.config {
            Some(config) => Ok(config.clone()),
            None => Ok(Arc::new(builder(public_roots())?.with_no_client_auth())),
        }
    }
}

/// rustls with ring named explicitly: `ClientConfig::builder()` would panic
/// if another crate ever enabled a second provider.
fn builder(
    roots: rustls::RootCertStore,
) -> Result<rustls::ConfigBuilder<rustls::ClientConfig, rustls::client::WantsClientCert>, MqttError>
{
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots))
}

fn public_roots() -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    roots
}

fn ca_roots(path: &Path) -> Result<rustls::RootCertStore, MqttError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in certificates("broker.ca_file", path)? {
        roots.add(cert).map_err(|e| {
            file_error(
                "broker.ca_file",
                Some(path),
                &format!("not a usable CA certificate: {e}"),
            )
        })?;
    }
    Ok(roots)
}

/// Every certificate in a PEM file; at least one.
fn certificates(
    setting: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, MqttError> {
    let fail = |e: &rustls::pki_types::pem::Error| {
        file_error(setting, Some(path), &pem_reason(e, "certificate"))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| fail(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(&e))?;
    if certs.is_empty() {
        return Err(fail(&rustls::pki_types::pem::Error::NoItemsFound));
    }
    Ok(certs)
}

fn pem_reason(e: &rustls::pki_types::pem::Error, what: &str) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => format!("cannot read it: {io}"),
        rustls::pki_types::pem::Error::NoItemsFound => format!(
            "no {what} in it (expected PEM: a -----BEGIN {}----- block)",
            if what == "certificate" {
                "CERTIFICATE"
            } else {
                "PRIVATE KEY"
            }
        ),
        other => format!("not readable as PEM: {other}"),
    }
}

fn file_error(setting: &'static str, path: Option<&Path>, reason: &str) -> MqttError {
    MqttError::TlsFile {
        setting,
        path: path.map(|p| p.display().to_string()),
        reason: reason.to_owned(),
    }
}
