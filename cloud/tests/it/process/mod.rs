//! `depot-cloud` as a real process: its admin commands, and `serve`.
#![allow(dead_code)]

use depot_testkit::http::Client;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_depot-cloud");

/// `depot-cloud` with `args` and `env`, run to its end: what it printed.
pub fn run(env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("DEPOT_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run depot-cloud")
}

pub fn admin(dir: &Path, args: &[&str]) -> String {
    admin_with(dir, &[], args)
}

/// Business 1, `name`, with warehouse 1 (`W1`), made by the admin
/// commands with `env`.
pub fn business_with_a_warehouse(dir: &Path, env: &[(&str, &str)], name: &str) {
    admin_with(dir, env, &["business", "create", "--name", name]);
    let warehouse = [
        "warehouse",
        "create",
        "--business",
        "1",
        "--code",
        "W1",
        "--name",
        "Main",
    ];
    admin_with(dir, env, &warehouse);
}

/// `admin`, with `env` besides.
pub fn admin_with(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env("DEPOT_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run admin");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A business, a warehouse, an item and a key, made with the admin
/// commands; then `depot-cloud serve` with `env` besides. Answers the
/// server, its address and the key.
pub async fn serve_one_business(dir: &Path, env: &[(&str, &str)]) -> (Child, String, String) {
    business_with_a_warehouse(dir, &[], "Test");
    let key = admin(dir, &["key", "create", "--business", "1"]);
    assert!(key.starts_with("dpk_"), "{key}");
    // Each admin command closes the database behind it.
    assert!(
        !dir.join("cloud.db-wal").exists(),
        "an admin command left its log"
    );

    let (child, base) = serve(dir, env);

    let r = Client::new(&base)
        .with_key(key.as_str())
        .post(
            "/v1/items/1/create",
            json!({"sku": "CR-1", "name": "Test item"}),
        )
        .await;
    assert_eq!(r.status, 200);
    (child, base, key)
}

/// `depot-cloud serve` on `dir`, with `env` besides, on free ports: the
/// process and its address.
pub fn serve(dir: &Path, env: &[(&str, &str)]) -> (Child, String) {
    let (child, base, _) = serve_logging_to(dir, env, Stdio::null());
    (child, base)
}

/// `serve`, its log to `stderr`: the process, its address and the rest of
/// what it prints (the broker it syncs through comes next).
pub fn serve_logging_to(
    dir: &Path,
    env: &[(&str, &str)],
    stderr: Stdio,
) -> (Child, String, BufReader<ChildStdout>) {
    let mut child = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("DEPOT_LOG", "warn")
        .env("DEPOT_RATE_LIMIT__PER_SECOND", "100000")
        .env("DEPOT_RATE_LIMIT__BURST", "100000")
        .env("DEPOT_BROKER__EMBEDDED_LISTEN", "127.0.0.1:0")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read address");
    let base = line.trim().rsplit(' ').next().expect("address").to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{line}");
    (child, base, stdout)
}

/// Stops the server with SIGTERM and expects a clean exit.
pub fn terminate(child: &mut Child) {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(sent.success());
    let status = child.wait().expect("wait");
    assert!(status.success(), "a clean stop: {status}");
}
