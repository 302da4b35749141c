//! Why a connection to the broker failed, said so that whoever installs a
//! box knows which setting to look at: rumqttc's errors nest a rustls error
//! in an I/O error in a TLS error, and print as "TLS: I/O: invalid peer
//! certificate: UnknownIssuer".

use crate::{MqttUrl, Tls};
use rumqttc::{
    AsyncClient, ConnectReturnCode, ConnectionError, Event, Outgoing, Packet, QoS, SubAck,
    SubscribeFilter, SubscribeReasonCode,
};
use rustls::{AlertDescription, CertificateError};
use std::io;
use std::time::Duration;

/// One line: what went wrong and what to change, then rumqttc's own words.
pub fn explain(url: &MqttUrl, e: &ConnectionError) -> String {
    let raw = e.to_string();
    match cause(url, e) {
        Some(why) => format!("{why} ({raw})"),
        None => raw,
    }
}

fn cause(url: &MqttUrl, e: &ConnectionError) -> Option<String> {
    let at = format!("{}:{}", url.bracketed_host(), url.port);
    match e {
        ConnectionError::ConnectionRefused(code) => return Some(refused(*code).to_owned()),
        ConnectionError::NetworkTimeout => return Some(format!("no answer from {at}")),
        // A TLS listener's alert, read as an MQTT packet.
        ConnectionError::MqttState(rumqttc::StateError::Deserialization(_)) if !url.tls => {
            return Some(format!(
                "{at} answered with something that is not MQTT: a TLS listener wants mqtts://"
            ));
        }
        _ => {}
    }
    // A refusal of this client's certificate arrives after the handshake
    // (TLS 1.3), as an I/O error while reading the CONNACK: look through the
    // whole chain.
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut first_io = None;
    while let Some(err) = next {
        if let Some(t) = err.downcast_ref::<rustls::Error>() {
            return Some(tls(url, t));
        }
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if let Some(t) = io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                return Some(tls(url, t));
            }
            first_io.get_or_insert(io);
        }
        next = err.source();
    }
    first_io.and_then(|io| network(&at, io, url.tls))
}

fn refused(code: ConnectReturnCode) -> &'static str {
    match code {
        ConnectReturnCode::BadUserNamePassword => {
            "the broker refused the user name or password (the credentials in broker.url)"
        }
        ConnectReturnCode::NotAuthorized => {
            "the broker refused this client: not authorised (the credentials in broker.url, or the broker's access rules)"
        }
        ConnectReturnCode::BadClientId => "the broker refused this client's id",
        ConnectReturnCode::ServiceUnavailable => "the broker is up but not serving clients",
        ConnectReturnCode::RefusedProtocolVersion => "the broker does not speak MQTT 3.1.1",
        ConnectReturnCode::Success => "the broker answered success as a refusal",
    }
}

fn tls(url: &MqttUrl, e: &rustls::Error) -> String {
    match e {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => {
                "the broker's certificate is not signed by a CA this client trusts: set broker.ca_file to the CA certificate that signed it".into()
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => format!(
                "the broker's certificate is not for {:?}: connect by a name or address the certificate lists",
                url.host
            ),
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the broker's certificate has expired, or this machine's clock is wrong".into()
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the broker's certificate is not valid yet: is this machine's clock right?".into()
            }
            _ => "the broker's certificate was not accepted".into(),
        },
        rustls::Error::AlertReceived(alert) => match alert {
            AlertDescription::CertificateRequired => {
                "the broker requires a client certificate: set broker.client_cert_file and broker.client_key_file".into()
            }
            AlertDescription::UnknownCA
            | AlertDescription::BadCertificate
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::AccessDenied
            | AlertDescription::DecryptError => {
                "the broker did not accept this client's certificate (broker.client_cert_file): is it signed by a CA the broker trusts, and still valid?".into()
            }
            AlertDescription::HandshakeFailure => {
                "the broker ended the TLS handshake: it may require a client certificate (broker.client_cert_file) or offer nothing this client speaks".into()
            }
            _ => "the broker ended the TLS connection".into(),
        },
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "the broker does not speak TLS on this port: is it a plain mqtt:// listener?".into()
        }
        _ => "the TLS connection to the broker failed".into(),
    }
}

fn network(at: &str, e: &io::Error, tls: bool) -> Option<String> {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => Some(format!(
            "nothing listens at {at}: is the broker running, and is this its port?"
        )),
        io::ErrorKind::TimedOut => Some(format!("no answer from {at}")),
        io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof if tls => Some(format!(
            "{at} closed the connection during the TLS handshake: is it a TLS listener (a plain one wants mqtt://), and does it require a client certificate?"
        )),
        io::ErrorKind::ConnectionReset | io::ErrorKind::UnexpectedEof => Some(format!(
            "{at} closed the connection: is it an MQTT listener (a TLS one wants mqtts://)?"
        )),
        _ => None,
    }
}

/// What `probe` asks of a broker.
#[derive(Debug, Clone, Copy)]
pub struct Probe<'a> {
    /// Not a daemon's own: a broker drops the older of two connections
    /// with one id.
    pub client_id: &'a str,
    /// Subscribed to (QoS 1) once connected; each must be granted.
    pub filters: &'a [&'a str],
    /// A topic among `filters` whose retained message is waited for after
    /// the SUBACK, and for how long.
    pub retained: Option<(&'a str, Duration)>,
    /// The connection and the subscription must be answered within this.
    pub within: Duration,
}

/// Connects to the broker (clean session), waits for its CONNACK,
/// subscribes and waits for the SUBACK, then, if asked, for a retained
/// message, and disconnects: whether the URL, its credentials and the TLS
/// files work together, and whether the broker's rules let this user
/// subscribe where it must; if not, why. Answers with the retained message
/// if one came: brokers send it right after the SUBACK, unless no one left
/// one there or their rules keep it from this user.
pub async fn probe(url: &MqttUrl, tls: &Tls, asked: Probe<'_>) -> Result<Option<Vec<u8>>, String> {
    let Probe {
        client_id,
        filters,
        retained,
        within,
    } = asked;
    let mut options =
        crate::client_options(url, tls, client_id, within.max(Duration::from_secs(5)))
            .map_err(|e| e.to_string())?;
    options.set_clean_session(true);
    let (client, mut eventloop) = AsyncClient::new(options, 4);
    let mut connected = false;
    let checked = tokio::time::timeout(within, async {
        loop {
            match eventloop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) if filters.is_empty() => {
                    connected = true;
                    return Ok(());
                }
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    connected = true;
                    let asked = filters
                        .iter()
                        .map(|f| SubscribeFilter::new((*f).to_owned(), QoS::AtLeastOnce));
                    // Queued for the event loop, which the next poll sends.
                    client
                        .subscribe_many(asked)
                        .await
                        .map_err(|e| format!("cannot subscribe: {e}"))?;
                }
                Ok(Event::Incoming(Packet::SubAck(ack))) => return granted(filters, &ack),
                Ok(_) => {}
                Err(e) => return Err(explain(url, &e)),
            }
        }
    })
    .await;
    let checked = match checked {
        Ok(checked) => checked,
        Err(_) if connected => Err(format!(
            "connected, but the broker did not answer the subscription to {} within {}s",
            filters.join(" and "),
            within.as_secs_f64()
        )),
        Err(_) => Err(format!(
            "no answer from {}:{} within {}s",
            url.host,
            url.port,
            within.as_secs_f64()
        )),
    };
    let found = match (&checked, retained) {
        (Ok(()), Some((topic, wait))) => tokio::time::timeout(wait, async {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::Publish(p))) if p.topic == topic => {
                        return Some(p.payload.to_vec());
                    }
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
        })
        .await
        .ok()
        .flatten(),
        _ => None,
    };
    if connected && client.disconnect().await.is_ok() {
        // Polled until the DISCONNECT is written (a retained message may
        // come first), so the broker does not log a lost client.
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Outgoing(Outgoing::Disconnect)) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
    }
    checked.map(|()| found)
}

/// The SUBACK's codes are in the order of the filters asked for.
fn granted(filters: &[&str], ack: &SubAck) -> Result<(), String> {
    let refused: Vec<&str> = filters
        .iter()
        .zip(&ack.return_codes)
        .filter(|(_, code)| **code == SubscribeReasonCode::Failure)
        .map(|(f, _)| *f)
        .collect();
    if refused.is_empty() {
        return Ok(());
    }
    Err(format!(
        "connected, but the broker refused the subscription to {}: its access rules must let this user subscribe there",
        refused.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(codes: Vec<SubscribeReasonCode>) -> SubAck {
        SubAck {
            pkid: 1,
            return_codes: codes,
        }
    }

    #[test]
    fn names_the_refused_filters_in_order() {
        use SubscribeReasonCode::{Failure, Success};
        let filters = ["a/down", "cloud/state"];
        assert_eq!(
            granted(&filters, &ack(vec![Success(QoS::AtLeastOnce); 2])),
            Ok(())
        );
        // A broker may grant less than asked: still granted.
        assert_eq!(
            granted(
                &filters,
                &ack(vec![Success(QoS::AtMostOnce), Success(QoS::AtLeastOnce)])
            ),
            Ok(())
        );
        let e =
            granted(&filters, &ack(vec![Success(QoS::AtLeastOnce), Failure])).expect_err("refused");
        assert!(
            e.contains("subscription to cloud/state:") && !e.contains("a/down"),
            "{e}"
        );
        let e = granted(&filters, &ack(vec![Failure, Failure])).expect_err("refused");
        assert!(e.contains("to a/down and cloud/state:"), "{e}");
    }
}
