//! An edge on a site whose broker speaks TLS with the site's own CA and
//! requires client certificates (a TLS front before the cloud's broker):
//! without its certificate the box stays offline and says why, on its
//! status, in `depot-edge status`, `sync --wait` and `doctor`; with it,
//! the catalog comes down and the floor's work goes up, and the doctor's
//! connection is accepted.

use crate::common;
use common::{RunningEdge, syncs_both_ways};
use depot_edge::faults::Faults;
use depot_edge::settings::Settings as EdgeSettings;
use depot_mqtt::testing::mosquitto::Mosquitto;
use depot_mqtt::testing::{Pki, TlsFront};
use depot_testkit::{eventually, rig::Rig};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Runs `depot-edge --config <config> <args>`: whether it succeeded, and
/// what it printed.
async fn run(config: &Path, args: &[&str]) -> (bool, String) {
    let config = config.display().to_string();
    let mut all = vec!["--config", config.as_str()];
    all.extend_from_slice(args);
    common::process::run(&[], &all).await
}

/// The edge's settings as a TOML file, for the CLI.
fn write_config(s: &EdgeSettings, path: &Path) {
    let file = |p: &Option<PathBuf>| {
        p.as_ref()
            .map(|p| format!("{:?}", p.display().to_string()))
            .unwrap_or_else(|| "\"\"".into())
    };
    let mut toml = format!(
        "business_id = {}\nedge_id = {:?}\nnode = {}\ndata_dir = {:?}\n\n[broker]\nurl = {:?}\nca_file = {}\n",
        s.business_id,
        s.edge_id,
        s.node,
        s.data_dir.display().to_string(),
        s.broker.url,
        file(&s.broker.ca_file),
    );
    if s.broker.client_cert_file.is_some() {
        toml.push_str(&format!(
            "client_cert_file = {}\nclient_key_file = {}\n",
            file(&s.broker.client_cert_file),
            file(&s.broker.client_key_file)
        ));
    }
    std::fs::write(path, toml).expect("write config");
}

/// The doctor's report line of the check `what` ("broker", "cloud").
fn report_line<'a>(report: &'a str, what: &str) -> &'a str {
    report
        .lines()
        .find(|l| {
            l.get(6..)
                .is_some_and(|rest| rest.split_whitespace().next() == Some(what))
        })
        .unwrap_or_else(|| panic!("no {what} line:\n{report}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_edge_syncs_through_tls_with_its_certificate_and_says_why_without() {
    // The embedded broker behind a TLS front; the cloud goes through the
    // front too, with a certificate of its own CA.
    let broker = tokio::task::spawn_blocking(|| {
        depot_cloud::broker::EmbeddedBroker::start(SocketAddr::from(([127, 0, 0, 1], 0)))
    })
    .await
    .expect("join")
    .expect("embedded broker");
    let certs = tempfile::tempdir().expect("tempdir");
    let pki = Pki::create(certs.path()).expect("pki");
    let front = TlsFront::start(&pki, broker.addr).await.expect("TLS front");
    let edge_id = format!("tls{}", std::process::id());
    let rig = Rig::start_with(&edge_id, false, |cloud| {
        cloud.broker.url = Some(format!("mqtts://localhost:{}", front.addr.port()));
        cloud.broker.ca_file = Some(pki.ca.clone());
        cloud.broker.client_cert_file = Some(pki.client_cert.clone());
        cloud.broker.client_key_file = Some(pki.client_key.clone());
    })
    .await;
    let item = rig.item("TLS-1").await;
    let config = rig.dir.path().join("edge.toml");

    // The site's CA, but no client certificate.
    let mut settings = rig.edge_settings();
    settings.broker.url = format!("mqtts://localhost:{}", front.addr.port());
    settings.broker.ca_file = Some(pki.ca.clone());
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    let wanted = "the broker requires a client certificate: set broker.client_cert_file";
    eventually("the reason the link is down", || async {
        edge.wms
            .sync_snapshot()
            .await
            .is_ok_and(|s| !s.connected && s.link_error.is_some_and(|e| e.contains(wanted)))
    })
    .await;
    write_config(&settings, &config);
    let (ok, said) = run(&config, &["status"]).await;
    assert!(ok, "{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("link error") && l.contains(wanted)),
        "{said}"
    );
    let (ok, said) = run(&config, &["sync", "--wait", "--timeout", "1"]).await;
    assert!(!ok, "{said}");
    assert!(
        said.contains("the link to the broker is down") && said.contains(wanted),
        "{said}"
    );
    let (ok, report) = run(&config, &["doctor"]).await;
    assert!(!ok, "{report}");
    let line = report_line(&report, "broker");
    assert!(
        line.starts_with("FAIL ") && line.contains(wanted) && line.contains("TLS, broker.ca_file"),
        "{report}"
    );
    assert!(
        report_line(&report, "cloud").starts_with("SKIP "),
        "{report}"
    );
    edge.stop().await;

    // With its certificate: online, the catalog down, the floor's work up.
    settings.broker.client_cert_file = Some(pki.client_cert.clone());
    settings.broker.client_key_file = Some(pki.client_key.clone());
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    eventually("the link through TLS", || async {
        edge.wms
            .sync_snapshot()
            .await
            .is_ok_and(|s| s.connected && s.link_error.is_none())
    })
    .await;
    syncs_both_ways(&rig, &edge, item, "TLS-1").await;
    write_config(&settings, &config);
    let (_, report) = run(&config, &["doctor"]).await;
    let line = report_line(&report, "broker");
    assert!(
        line.starts_with("OK ")
            && line
                .contains("accepted an MQTT connection (TLS, broker.ca_file, client certificate")
            && line.contains("and the subscription to depot/v1/")
            && line.ends_with("/down and depot/v1/cloud/state"),
        "{report}"
    );
    let cloud = report_line(&report, "cloud");
    assert!(
        cloud.starts_with("OK ") && cloud.contains("online on the broker (depot-cloud "),
        "{report}"
    );
    let (ok, said) = run(&config, &["status"]).await;
    assert!(ok && !said.contains("link error"), "{said}");
    edge.stop().await;
    rig.stop().await;
}

/// Mosquitto with a TLS listener on the test CA that requires a client
/// certificate and a password (users `cloud`, `edge`, and `nosub`, whom
/// its access rules do not let read).
fn tls_mosquitto(binary: &str, pki: &Pki, dir: &Path) -> Mosquitto {
    let passwd = dir.join("passwd");
    for (i, (user, password)) in [
        ("cloud", "cloud-pw"),
        ("edge", "edge-pw"),
        ("nosub", "nosub-pw"),
    ]
    .iter()
    .enumerate()
    {
        let mut cmd = std::process::Command::new("mosquitto_passwd");
        if i == 0 {
            cmd.arg("-c");
        }
        let status = cmd
            .arg("-b")
            .arg(&passwd)
            .args([user, password])
            .status()
            .expect("mosquitto_passwd (Debian's mosquitto package has it)");
        assert!(status.success(), "mosquitto_passwd failed");
    }
    // `nosub` may publish on the sync topics but not read them.
    let acl = dir.join("acl");
    std::fs::write(
        &acl,
        "user cloud\ntopic readwrite #\n\nuser edge\ntopic readwrite depot/#\n\nuser nosub\ntopic write depot/#\n",
    )
    .expect("write acl");
    Mosquitto::start(
        binary,
        dir,
        &format!(
            "cafile {}\ncertfile {}\nkeyfile {}\nrequire_certificate true\nallow_anonymous false\npassword_file {}\nacl_file {}\nmax_packet_size 1048576\n",
            pki.ca.display(),
            pki.server_cert.display(),
            pki.server_key.display(),
            passwd.display(),
            acl.display()
        ),
    )
    .expect("start mosquitto")
}

/// Against Mosquitto (`DEPOT_TEST_MOSQUITTO`, the path of its binary; CI
/// sets it), a broker no one here wrote: the cloud and the edge each with
/// the site's CA, a client certificate and a password. A wrong password
/// keeps the box offline and says so; a user the broker's rules do not let
/// read is connected and told where to look; the right one syncs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cloud_and_edge_sync_through_mosquitto_with_tls_certificates_and_passwords() {
    let Some(binary) = Mosquitto::binary("the Mosquitto TLS test") else {
        return;
    };
    let certs = tempfile::tempdir().expect("tempdir");
    let pki = Pki::create(certs.path()).expect("pki");
    let mosquitto = tls_mosquitto(&binary, &pki, certs.path());
    let url = |login: &str| format!("mqtts://{login}@localhost:{}", mosquitto.port);
    let edge_id = format!("mtls{}", std::process::id());
    let rig = Rig::start_with(&edge_id, false, |cloud| {
        cloud.broker.url = Some(url("cloud:cloud-pw"));
        cloud.broker.ca_file = Some(pki.ca.clone());
        cloud.broker.client_cert_file = Some(pki.client_cert.clone());
        cloud.broker.client_key_file = Some(pki.client_key.clone());
    })
    .await;
    let item = rig.item("MTLS-1").await;

    let mut settings = rig.edge_settings();
    settings.broker.url = url("edge:wrong");
    settings.broker.ca_file = Some(pki.ca.clone());
    settings.broker.client_cert_file = Some(pki.client_cert.clone());
    settings.broker.client_key_file = Some(pki.client_key.clone());
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    eventually("the refused password on the status", || async {
        edge.wms.sync_snapshot().await.is_ok_and(|s| {
            !s.connected
                && s.link_error
                    .is_some_and(|e| e.contains("the credentials in broker.url"))
        })
    })
    .await;
    edge.stop().await;

    // A user the broker's rules do not let read: Mosquitto grants the
    // subscription and delivers nothing, so the box hears no answer to its
    // hello, and says where to look (1 s resends: 2 s of silence).
    settings.broker.url = url("nosub:nosub-pw");
    settings.broker.resend_after_secs = 1;
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    eventually("the silent cloud on the status", || async {
        edge.wms.sync_snapshot().await.is_ok_and(|s| {
            s.connected
                && s.link_error.is_some_and(|e| {
                    e.contains("the cloud has not answered") && e.contains("access rules")
                })
        })
    })
    .await;
    edge.stop().await;
    // The doctor's subscription is granted too, but what the cloud left on
    // the broker never reaches it.
    let config = certs.path().join("edge.toml");
    write_config(&settings, &config);
    let (ok, report) = run(&config, &["doctor"]).await;
    assert!(!ok, "{report}");
    assert!(
        report_line(&report, "broker").starts_with("OK "),
        "{report}"
    );
    let cloud = report_line(&report, "cloud");
    assert!(
        cloud.starts_with("FAIL ") && cloud.contains("withhold"),
        "{report}"
    );
    settings.broker.resend_after_secs = 15;

    settings.broker.url = url("edge:edge-pw");
    let edge = RunningEdge::start(settings.clone(), Faults::default()).await;
    syncs_both_ways(&rig, &edge, item, "MTLS-1").await;
    write_config(&settings, &config);
    let (_, report) = run(&config, &["doctor"]).await;
    // Its rules let `edge` read depot/#: the subscription is granted, and
    // the cloud's state comes through.
    assert!(
        report_line(&report, "broker").starts_with("OK ")
            && report.contains("and the subscription to"),
        "{report}"
    );
    assert!(report_line(&report, "cloud").starts_with("OK "), "{report}");
    edge.stop().await;
    rig.stop().await;
    // The stopped cloud's last word stays on the broker.
    let (_, report) = run(&config, &["doctor"]).await;
    let cloud = report_line(&report, "cloud");
    assert!(
        cloud.starts_with("FAIL ") && cloud.contains("offline: depot-cloud stopped"),
        "{report}"
    );
    drop(mosquitto);
}
