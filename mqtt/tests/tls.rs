//! TLS to the broker: the files a client is given, checked when loaded,
//! and a real handshake through a TLS front that requires client
//! certificates, with each way it can fail said in words that name the
//! setting to change.

use depot_mqtt::testing::{Pki, TlsFront};
use depot_mqtt::{MqttUrl, Probe, Tls, TlsFiles, probe};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A broker that reads a CONNECT and answers CONNACK with `code` (0:
/// accepted, 4: bad user name or password), then holds the connection
/// until the client leaves.
async fn fake_broker(code: u8) -> SocketAddr {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                if tcp
                    .read(&mut buf)
                    .await
                    .is_ok_and(|n| n > 0 && buf[0] == 0x10)
                {
                    let _ = tcp.write_all(&[0x20, 0x02, 0x00, code]).await;
                    while tcp.read(&mut buf).await.is_ok_and(|n| n > 0) {}
                }
            });
        }
    });
    addr
}

fn url(scheme: &str, addr: SocketAddr) -> MqttUrl {
    MqttUrl::parse(&format!("{scheme}://edge:pw@127.0.0.1:{}", addr.port())).expect("url")
}

async fn try_with(url: &MqttUrl, files: &TlsFiles) -> Result<(), String> {
    let tls = Tls::load(url, files).map_err(|e| format!("load: {e}"))?;
    let asked = Probe {
        client_id: "tls-test",
        filters: &[],
        retained: None,
        within: Duration::from_secs(5),
    };
    probe(url, &tls, asked).await.map(drop)
}

fn refused(outcome: Result<(), String>, expected: &str) {
    match outcome {
        Ok(()) => panic!("connected; expected {expected:?}"),
        Err(why) => assert!(why.contains(expected), "{why:?} does not say {expected:?}"),
    }
}

struct Rig {
    _dir: tempfile::TempDir,
    pki: Pki,
    front: TlsFront,
}

async fn rig(code: u8) -> Rig {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::create(dir.path()).expect("pki");
    let front = TlsFront::start(&pki, fake_broker(code).await)
        .await
        .expect("front");
    Rig {
        _dir: dir,
        pki,
        front,
    }
}

#[tokio::test]
async fn a_client_with_the_ca_and_its_certificate_connects() {
    let r = rig(0).await;
    let u = url("mqtts", r.front.addr);
    try_with(&u, &r.pki.client_files())
        .await
        .expect("connects through TLS with a client certificate");
}

#[tokio::test]
async fn each_way_a_handshake_fails_names_what_to_change() {
    let r = rig(0).await;
    let u = url("mqtts", r.front.addr);
    let files = r.pki.client_files();

    // The public roots (no CA file), or the wrong CA.
    let public = TlsFiles {
        ca_file: None,
        ..files.clone()
    };
    refused(try_with(&u, &public).await, "set broker.ca_file");
    let other = TlsFiles {
        ca_file: Some(r.pki.other_ca.clone()),
        ..files.clone()
    };
    refused(
        try_with(&u, &other).await,
        "not signed by a CA this client trusts",
    );

    // No client certificate, or one from another CA.
    let anonymous = TlsFiles {
        ca_file: files.ca_file.clone(),
        ..TlsFiles::default()
    };
    refused(
        try_with(&u, &anonymous).await,
        "requires a client certificate: set broker.client_cert_file",
    );
    let stranger = TlsFiles {
        ca_file: files.ca_file.clone(),
        client_cert_file: Some(r.pki.stranger_cert.clone()),
        client_key_file: Some(r.pki.stranger_key.clone()),
    };
    refused(
        try_with(&u, &stranger).await,
        "did not accept this client's certificate",
    );

    // TLS spoken to a plain listener, plain MQTT to a TLS one, nothing there.
    let plain_broker = fake_broker(0).await;
    refused(
        try_with(&url("mqtts", plain_broker), &files).await,
        "closed the connection during the TLS handshake: is it a TLS listener",
    );
    refused(
        try_with(&url("mqtt", r.front.addr), &TlsFiles::default()).await,
        "is not MQTT: a TLS listener wants mqtts://",
    );
    let closed = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
    let gone = closed.local_addr().expect("addr");
    drop(closed);
    refused(
        try_with(&url("mqtts", gone), &files).await,
        "nothing listens at 127.0.0.1",
    );
}

#[tokio::test]
async fn a_broker_that_refuses_the_password_says_so_through_tls() {
    let r = rig(4).await;
    let u = url("mqtts", r.front.addr);
    refused(
        try_with(&u, &r.pki.client_files()).await,
        "refused the user name or password (the credentials in broker.url)",
    );
}

#[test]
fn files_are_checked_when_loaded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::create(dir.path()).expect("pki");
    let tls_url = MqttUrl::parse("mqtts://broker.example").expect("url");
    let load = |files: TlsFiles| match Tls::load(&tls_url, &files) {
        Ok(_) => panic!("{files:?} loaded"),
        Err(e) => e.to_string(),
    };
    let missing = dir.path().join("nope.pem");
    let not_pem = dir.path().join("notes.txt");
    std::fs::write(&not_pem, "not a certificate\n").expect("write");
    let cases: Vec<(TlsFiles, &str)> = vec![
        (
            TlsFiles {
                ca_file: Some(missing.clone()),
                ..TlsFiles::default()
            },
            "broker.ca_file (",
        ),
        (
            TlsFiles {
                ca_file: Some(not_pem.clone()),
                ..TlsFiles::default()
            },
            "no certificate in it (expected PEM: a -----BEGIN CERTIFICATE----- block)",
        ),
        (
            TlsFiles {
                client_cert_file: Some(pki.client_cert.clone()),
                ..TlsFiles::default()
            },
            "broker.client_cert_file is set without its key",
        ),
        (
            TlsFiles {
                client_key_file: Some(pki.client_key.clone()),
                ..TlsFiles::default()
            },
            "broker.client_key_file is set without its certificate",
        ),
        (
            TlsFiles {
                client_cert_file: Some(pki.client_cert.clone()),
                client_key_file: Some(not_pem.clone()),
                ..TlsFiles::default()
            },
            "broker.client_key_file",
        ),
        (
            TlsFiles {
                client_cert_file: Some(pki.client_cert.clone()),
                client_key_file: Some(pki.stranger_key.clone()),
                ..TlsFiles::default()
            },
            "does not go with broker.client_cert_file",
        ),
    ];
    for (files, expected) in cases {
        let why = load(files.clone());
        assert!(why.contains(expected), "{files:?}: {why:?}");
    }
    let why = load(TlsFiles {
        ca_file: Some(missing.clone()),
        ..TlsFiles::default()
    });
    assert!(
        why.contains(&missing.display().to_string()) && why.contains("cannot read it"),
        "{why}"
    );

    // Files with a plain URL: whoever set them meant TLS.
    let plain = MqttUrl::parse("mqtt://broker.example").expect("url");
    let why = Tls::load(&plain, &pki.client_files())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(why.contains("use mqtts://"), "{why:?}");
    // No files: the public roots, for any URL.
    assert!(Tls::load(&plain, &TlsFiles::default()).is_ok());
    let some: PathBuf = pki.ca.clone();
    assert!(
        Tls::load(
            &tls_url,
            &TlsFiles {
                ca_file: Some(some),
                ..TlsFiles::default()
            }
        )
        .is_ok()
    );
}

/// A broker named by its IPv6 address, `mqtts://[::1]:port`: the address is
/// the name its certificate must carry. Skipped where the machine has no
/// IPv6 loopback.
#[tokio::test]
async fn a_broker_at_an_ipv6_address_is_reached_in_plain_and_through_tls() {
    let v6 = std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST);
    if std::net::TcpListener::bind((v6, 0)).is_err() {
        eprintln!("no IPv6 loopback here: skipped");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::create(dir.path()).expect("pki");
    let broker = fake_broker(0).await;
    let front = TlsFront::start_on(v6, &pki, broker)
        .await
        .expect("front on ::1");
    let tls_url =
        MqttUrl::parse(&format!("mqtts://edge:pw@[::1]:{}", front.addr.port())).expect("url");
    assert_eq!(
        tls_url.to_string(),
        format!("mqtts://edge:***@[::1]:{}", front.addr.port())
    );
    try_with(&tls_url, &pki.client_files())
        .await
        .expect("connects to [::1] through TLS");

    // Plain MQTT to an IPv6 address, through a relay on ::1 to the broker.
    let relay = TcpListener::bind((v6, 0)).await.expect("bind ::1");
    let relay_port = relay.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = relay.accept().await {
            tokio::spawn(async move {
                if let Ok(mut up) = tokio::net::TcpStream::connect(broker).await {
                    let _ = tokio::io::copy_bidirectional(&mut tcp, &mut up).await;
                }
            });
        }
    });
    let plain = MqttUrl::parse(&format!("mqtt://[::1]:{relay_port}")).expect("url");
    try_with(&plain, &TlsFiles::default())
        .await
        .expect("connects to [::1] in plain");
}
