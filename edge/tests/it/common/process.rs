//! The real `depot-edge` process, for tests that kill it or run its CLI.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_depot-edge");

/// The environment that runs `depot-edge` with `settings`' box, data and
/// broker.
pub fn env_of(settings: &depot_edge::settings::Settings) -> Vec<(&'static str, String)> {
    vec![
        ("DEPOT_BUSINESS_ID", settings.business_id.to_string()),
        ("DEPOT_EDGE_ID", settings.edge_id.clone()),
        ("DEPOT_NODE", settings.node.to_string()),
        ("DEPOT_DATA_DIR", settings.data_dir.display().to_string()),
        ("DEPOT_BROKER__URL", settings.broker.url.clone()),
    ]
}

/// `depot-edge serve`, killed when dropped.
pub struct Edge {
    pub child: Child,
    /// `http://127.0.0.1:<port>`, as it printed it.
    pub base: String,
}

impl Edge {
    /// Stops it the hard way: what it answered is on disk all the same.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Stops it as systemd does (SIGTERM), and waits until it has.
    pub fn terminate(mut self) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(sent.success());
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "a clean stop: {status}");
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `depot-edge serve` with `env` on a free port and waits for the
/// address it prints once it listens.
pub fn spawn(env: &[(&str, String)]) -> Edge {
    spawn_command(Command::new(BIN), env)
}

/// `spawn`, with the process's file limit (soft and hard) at `files`, set
/// by util-linux's `prlimit` before it runs.
pub fn spawn_with_file_limit(env: &[(&str, String)], files: u64) -> Edge {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--nofile={files}:{files}")).arg(BIN);
    spawn_command(cmd, env)
}

fn spawn_command(mut cmd: Command, env: &[(&str, String)]) -> Edge {
    // The daemon's log goes to `daemon.log` in its data directory, so a
    // test that gives up can say what the box was doing.
    let log = env
        .iter()
        .find(|(k, _)| *k == "DEPOT_DATA_DIR")
        .and_then(|(_, dir)| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(std::path::Path::new(dir).join("daemon.log"))
                .ok()
        });
    cmd.arg("serve")
        .env("DEPOT_LOG", if log.is_some() { "info" } else { "warn" })
        .stdout(Stdio::piped())
        .stderr(log.map_or_else(Stdio::null, Stdio::from));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn depot-edge");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("address line");
    let base = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");
    Edge { child, base }
}

/// Runs a one-shot `depot-edge` command (`status`, `sync --wait`,
/// `doctor`) with `env`: whether it succeeded, and what it printed.
pub async fn run(env: &[(&str, String)], args: &[&str]) -> (bool, String) {
    let out = tokio::process::Command::new(BIN)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("DEPOT_LOG", "warn")
        .env("RUST_BACKTRACE", "0")
        .env_remove("DEPOT_CLOUD_URL")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run depot-edge");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}
