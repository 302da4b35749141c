//! `depot-edge doctor`, the real process, on a box with a printer that is
//! not plugged in, a broker that is down and a clock an hour off the
//! cloud's: each is a FAIL line saying what to fix, what works says OK, and
//! the exit status is non-zero.

use std::path::Path;
use std::process::Output;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const BIN: &str = env!("CARGO_BIN_EXE_depot-edge");

/// An HTTP server whose every answer carries a `Date` an hour behind.
async fn cloud_an_hour_behind() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let mut read = 0;
            while !buf[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf[read..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read += n,
                }
            }
            let date = (chrono::Utc::now() - chrono::Duration::hours(1))
                .format("%a, %d %b %Y %H:%M:%S GMT");
            let answer = format!(
                "HTTP/1.1 200 OK\r\nDate: {date}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = conn.write_all(answer.as_bytes()).await;
        }
    });
    base
}

async fn doctor(config: &Path, extra: &[&str]) -> Output {
    tokio::process::Command::new(BIN)
        .arg("--config")
        .arg(config)
        .arg("doctor")
        .args(extra)
        .env("RUST_BACKTRACE", "0")
        .env_remove("DEPOT_CLOUD_URL")
        .output()
        .await
        .expect("run depot-edge doctor")
}

/// The report line of the check named `what`.
fn line<'a>(report: &'a str, what: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.get(6..).is_some_and(|rest| rest.starts_with(what)))
        .unwrap_or_else(|| panic!("no line for {what}:\n{report}"))
}

#[tokio::test]
async fn each_problem_is_a_failed_check_that_says_what_to_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let broker_port = closed.local_addr().expect("addr").port();
    drop(closed);
    let missing = dir.path().join("usb-lp0");
    let config = dir.path().join("edge.toml");
    std::fs::write(
        &config,
        format!(
            r#"business_id = 1
edge_id = "doc-1"
node = 1
data_dir = "{data}"

[broker]
url = "mqtt://127.0.0.1:{broker_port}"

[[devices.printers]]
name = "Dock"
endpoint = "{missing}"

[[devices.printers]]
name = "Sink"
endpoint = "/dev/null"
"#,
            data = dir.path().join("data").display(),
            missing = missing.display(),
        ),
    )
    .expect("write config");

    let out = doctor(&config, &[]).await;
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{report}");
    assert_eq!(out.status.code(), Some(1), "{report}");
    for ok in [
        "configuration",
        "data directory",
        "database",
        "printer Sink",
    ] {
        assert!(line(&report, ok).starts_with("OK "), "{report}");
    }
    let dock = line(&report, "printer Dock");
    assert!(dock.starts_with("FAIL "), "{report}");
    assert!(
        dock.contains(&missing.display().to_string()) && dock.contains("does not exist"),
        "{dock}"
    );
    let broker = line(&report, "broker");
    assert!(broker.starts_with("FAIL "), "{report}");
    assert!(
        broker.contains(&broker_port.to_string()) && broker.contains("DEPOT_BROKER__URL"),
        "{broker}"
    );
    assert!(line(&report, "cloud").starts_with("SKIP "), "{report}");
    assert!(line(&report, "clock").starts_with("SKIP "), "{report}");

    let cloud = cloud_an_hour_behind().await;
    let out = doctor(&config, &["--cloud", &cloud]).await;
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let clock = line(&report, "clock");
    assert!(clock.starts_with("FAIL "), "{report}");
    assert!(
        clock.contains("ahead of") && clock.contains("ntp"),
        "{clock}"
    );

    // A configuration that does not load is the first failure, and the last.
    std::fs::write(&config, "business_id = \"one\"\n").expect("write config");
    let out = doctor(&config, &[]).await;
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        line(&report, "configuration").starts_with("FAIL "),
        "{report}"
    );
    assert_eq!(report.lines().count(), 1, "{report}");
}

/// Mosquitto that lets the box connect but not subscribe (its dynamic
/// security plugin; `DEPOT_TEST_MOSQUITTO`): the broker check fails,
/// naming the topics and the broker's rules, not the URL.
#[tokio::test]
async fn a_broker_that_refuses_the_subscription_fails_the_check() {
    use depot_mqtt::testing::mosquitto::Mosquitto;
    let Some(mosquitto) =
        Mosquitto::refusing_subscriptions("the doctor's refused-subscription test")
            .expect("start mosquitto")
    else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("edge.toml");
    std::fs::write(
        &config,
        format!(
            "business_id = 7\nedge_id = \"doc-2\"\nnode = 1\ndata_dir = \"{}\"\n\n[broker]\nurl = \"{}\"\n",
            dir.path().join("data").display(),
            mosquitto.url()
        ),
    )
    .expect("write config");
    let out = doctor(&config, &[]).await;
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    let broker = line(&report, "broker");
    assert!(
        broker.starts_with("FAIL ")
            && broker.contains(
                "refused the subscription to depot/v1/7/edge/doc-2/down and depot/v1/cloud/state"
            )
            && broker.contains("access rules")
            && !broker.contains("DEPOT_BROKER__URL"),
        "{report}"
    );
}
