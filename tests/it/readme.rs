//! The README and the tours as a newcomer runs them: the demo started as
//! `depot demo` starts it (on free ports), the `export` line it prints
//! pasted into bash, and then every ```sh block of [`DOCS`], in order, each
//! document in one shell. A block that cannot run here says why on the line
//! right above it (`<!-- not run by tests/it/readme.rs: … -->`).
//!
//! curl is given a configuration of the test's own that makes an HTTP error
//! fail the command, so a request the documents get wrong fails here even
//! where a person would only have seen an error body go by. Then what the
//! tours claim and the blocks cannot show by their exit status: the
//! marketplace prices end in .99, and the doctor's command the tour shows
//! is the one the demo prints, and passes on the demo's edge.

use depot::demo::banner::{self, shell_word};
use depot::demo::station::STATION;
use depot::demo::{self, Announce, Options};
use depot_testkit::eventually;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The documents whose shell blocks run, in this order, against one demo
/// (the order of the README's table: later ones find what earlier ones did,
/// as a reader going down the table would).
const DOCS: [&str; 12] = [
    "README.md",
    "docs/tour.md",
    "docs/devices.md",
    "docs/live-events.md",
    "docs/webhooks.md",
    "docs/locations.md",
    "docs/counts.md",
    "docs/replenishment.md",
    "docs/returns.md",
    "docs/channels.md",
    "docs/connectors.md",
    "docs/idempotency.md",
];

/// What a block that is not run has on the line above it, then its reason.
const NOT_RUN: &str = "<!-- not run by tests/it/readme.rs:";

/// Tools the blocks use besides bash and curl. A document whose blocks use
/// one that is not installed is not run (its blocks build on each other),
/// with a note saying so.
const TOOLS: [&str; 3] = ["jq", "openssl", "python3"];

/// What no block may hold: the demo's ports are the reader's choice (and
/// the test's are free ones), its key is new at every start.
const FIXED: [&str; 4] = [":8080", ":8081", ":9999", "dpk_"];

/// An upper bound for the demo to be ready (the first sync included) and
/// for one document's blocks to run; they take seconds.
const LIMIT: Duration = Duration::from_secs(120);

/// One ```sh block.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    doc: &'static str,
    /// The line of its opening fence, from 1.
    line: usize,
    text: Vec<String>,
    /// Why it is not run, when it is not.
    not_run: Option<String>,
}

impl Block {
    fn name(&self) -> String {
        format!("the block at {}:{}", self.doc, self.line)
    }
}

/// The ```sh blocks of `text`. A not-run marker must stand right above a
/// block, with a reason: one left behind above anything else fails.
fn blocks(doc: &'static str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(rest) = line.strip_prefix(NOT_RUN) {
            let reason = rest.trim().trim_end_matches("-->").trim();
            assert!(!reason.is_empty(), "{doc}:{}: say why it is not run", i + 1);
            assert_eq!(
                lines.get(i + 1).map(|l| l.trim()),
                Some("```sh"),
                "{doc}:{}: the not-run marker stands above no ```sh block",
                i + 1
            );
        }
        if line == "```sh" {
            let start = i;
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && lines[i].trim() != "```" {
                body.push(lines[i].to_owned());
                i += 1;
            }
            assert!(
                i < lines.len(),
                "{doc}:{}: the block is never closed",
                start + 1
            );
            let not_run = start
                .checked_sub(1)
                .and_then(|above| lines[above].trim().strip_prefix(NOT_RUN))
                .map(|rest| rest.trim().trim_end_matches("-->").trim().to_owned());
            found.push(Block {
                doc,
                line: start + 1,
                text: body,
                not_run,
            });
        }
        i += 1;
    }
    found
}

/// The tools of [`TOOLS`] a block calls.
fn tools_used(block: &Block) -> Vec<&'static str> {
    TOOLS
        .into_iter()
        .filter(|tool| {
            block.text.iter().any(|l| {
                l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|w| w == *tool)
            })
        })
        .collect()
}

/// Whether `tool` is an executable on the `PATH` (asked of the file
/// system: not every tool answers `--version`).
fn installed(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// A script of `blocks` after `prelude`, and where each of its lines came
/// from: a failure is reported on the document's line, not the script's.
struct Script {
    text: String,
    /// For each line of the script from 1: the block and the line of the
    /// document.
    origin: Vec<Option<(usize, usize)>>,
}

/// Marks the start of each block on the script's standard error, so a
/// block that hangs is named too.
const STARTED: &str = "readme-test: running";
const FAILED: &str = "readme-test: failed at line";

impl Script {
    fn new(prelude: &[String], blocks: &[&Block]) -> Self {
        let mut text = String::new();
        let mut origin = Vec::new();
        let mut push = |line: &str, from: Option<(usize, usize)>| {
            text.push_str(line);
            text.push('\n');
            origin.push(from);
        };
        // Every command checked; the first to fail says where it was.
        push("set -Eeuo pipefail", None);
        push(&format!("trap 'echo \"{FAILED} $LINENO\" >&2' ERR"), None);
        for line in prelude {
            push(line, None);
        }
        for (n, block) in blocks.iter().enumerate() {
            push(&format!("echo '{STARTED} {}' >&2", block.name()), None);
            for (k, line) in block.text.iter().enumerate() {
                push(line, Some((n, block.line + 1 + k)));
            }
        }
        Self { text, origin }
    }

    /// The block and document line of the script's line `at` (from 1).
    fn origin(&self, at: usize) -> Option<(usize, usize)> {
        self.origin.get(at.checked_sub(1)?).copied().flatten()
    }
}

/// Runs one document's blocks in one bash, in `dir`; panics naming the
/// block and the line that failed.
async fn run_doc(dir: &Path, curl_home: &Path, prelude: &[String], blocks: &[&Block]) {
    let doc = blocks[0].doc;
    let script = Script::new(prelude, blocks);
    let stem = doc.replace(['/', '.'], "-");
    let path = dir.join(format!("{stem}.sh"));
    std::fs::write(&path, &script.text).expect("the script");
    let out_path = dir.join(format!("{stem}.out"));
    let err_path = dir.join(format!("{stem}.err"));
    // Files, not pipes: a process a block left in the background would
    // hold a pipe open after bash exits.
    let out = std::fs::File::create(&out_path).expect("stdout file");
    let err = std::fs::File::create(&err_path).expect("stderr file");
    let started = Instant::now();
    let mut child = tokio::process::Command::new("bash")
        .arg(&path)
        .current_dir(dir)
        .env("CURL_HOME", curl_home)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        // Its own group, so whatever it started can be found and stopped.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("bash");
    let group = child.id().expect("bash's pid");
    let status = tokio::time::timeout(LIMIT, child.wait()).await;
    // A process a block stopped may take a moment to be gone.
    let mut left = true;
    for _ in 0..40 {
        left = signal_group(group, "-0");
        if !left {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    signal_group(group, "-KILL");
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let tail = |text: &str| {
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    let what_ran = format!(
        "its output (last lines):\n{}\nits errors:\n{}",
        tail(&stdout),
        tail(&stderr)
    );
    let status = match status {
        Ok(status) => status.expect("bash ran"),
        Err(_) => {
            let running = stderr
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix(STARTED))
                .unwrap_or(" its first block");
            panic!("{doc}: still running after {LIMIT:?}, in{running}\n{what_ran}");
        }
    };
    if !status.success() {
        let at = stderr
            .lines()
            .find_map(|l| l.strip_prefix(FAILED)?.trim().parse::<usize>().ok());
        let place = match at.and_then(|at| script.origin(at)) {
            Some((n, line)) => {
                let block = blocks[n];
                // The lines before the failing one, where its variables
                // were set, and a few after.
                let first = (line - block.line - 1).saturating_sub(12);
                let shown: Vec<String> = block
                    .text
                    .iter()
                    .enumerate()
                    .skip(first)
                    .take(16)
                    .map(|(k, l)| {
                        let here = block.line + 1 + k;
                        let mark = if here == line { ">>" } else { "  " };
                        format!("{mark} {here:4} {l}")
                    })
                    .collect();
                format!("{}, line {line}:\n{}", block.name(), shown.join("\n"))
            }
            None => "a line outside the blocks (the variables the demo printed?)".to_owned(),
        };
        panic!("{doc}: {status} in {place}\n{what_ran}");
    }
    assert!(
        !left,
        "{doc}: its blocks left a process running (a receiver not stopped?)\n{what_ran}"
    );
    println!(
        "{doc}: {} blocks ran in {:.1}s",
        blocks.len(),
        started.elapsed().as_secs_f64()
    );
}

/// `kill SIGNAL -- -GROUP`: whether some process of the group was there.
fn signal_group(group: u32, signal: &str) -> bool {
    std::process::Command::new("kill")
        .args([signal, "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// curl's configuration for the blocks: an HTTP error is a failure that
/// shows its body (`fail-with-body`, curl 7.76 on; plain `fail` before),
/// and an error is shown even with `-s`.
fn curl_home(dir: &Path) -> PathBuf {
    let with_body = std::process::Command::new("curl")
        .args(["--fail-with-body", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let home = dir.join("curl-home");
    std::fs::create_dir_all(&home).expect("curl home");
    let fail = if with_body { "fail-with-body" } else { "fail" };
    std::fs::write(home.join(".curlrc"), format!("{fail}\nshow-error\n")).expect("curlrc");
    home
}

async fn get(client: &reqwest::Client, url: &str, key: &str) -> (u16, Value) {
    match client.get(url).header("X-API-KEY", key).send().await {
        Ok(r) => {
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        }
        Err(_) => (0, Value::Null),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_readme_and_the_tours_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let docs: Vec<(&'static str, Vec<Block>)> = DOCS
        .iter()
        .map(|doc| {
            let text = std::fs::read_to_string(root.join(doc)).expect("the document");
            (*doc, blocks(doc, &text))
        })
        .collect();
    for block in docs.iter().flat_map(|(_, b)| b) {
        for fixed in FIXED {
            assert!(
                !block.text.iter().any(|l| l.contains(fixed)),
                "{} holds {fixed:?}: use the variables the demo prints ($C, $E, $K …)",
                block.name()
            );
        }
    }
    for tool in ["bash", "curl"] {
        if !installed(tool) {
            println!(
                "note: the README's and the tours' blocks were not run: {tool} is not installed"
            );
            return;
        }
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let announced = Arc::new(Mutex::new(Vec::<String>::new()));
    let announce: Announce = {
        let announced = Arc::clone(&announced);
        Arc::new(move |line| {
            if let Ok(mut lines) = announced.lock() {
                lines.push(line);
            }
        })
    };
    let options = Options {
        listen: "127.0.0.1:0".parse().expect("addr"),
        edge_listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: dir.path().join("depot-demo"),
    };
    let running = demo::start(options, announce).await.expect("the demo");
    let printed = banner::banner(&running).expect("the banner");
    let exports = printed
        .iter()
        .map(|l| l.trim())
        .find(|l| l.starts_with("export "))
        .expect("the demo prints the tours' variables")
        .to_owned();
    let cloud_base = format!("http://{}", running.cloud_addr().expect("cloud"));
    let edge_base = format!("http://{}", running.edge_addr().expect("edge"));
    let key = running.demo.key.clone();
    let business = running.demo.business;
    let edge_config = running.edge_config().to_owned();
    let doctor = banner::doctor(&running).expect("the doctor's command");
    assert!(
        printed.iter().any(|l| l.contains(&doctor)),
        "the demo does not print {doctor}"
    );
    // What the tour's not-run block does with `cargo run -p depot-cloud`.
    let (client_id, client_secret) =
        depot_cloud::oauth::admin::create_client(running.cloud(), "CI publisher", "releases:write")
            .await
            .expect("an OAuth client");
    let (stop, stopped) = oneshot::channel::<()>();
    let served = tokio::spawn(running.run(async {
        let _ = stopped.await;
    }));

    // A reader takes longer than this to get from the demo's banner to
    // the edge's tour: by then the key, the orders and the printer's
    // record have reached the edge, as the tour says they do within seconds.
    let client = reqwest::Client::new();
    eventually("the edge's station ready, with the key synced", || async {
        let (status, body) = get(&client, &format!("{edge_base}/v1/edge/stations"), &key).await;
        let s = &body["data"][0];
        status == 200
            && s["name"] == STATION
            && s["scanners"][0]["connected"] == true
            && s["scale"]["state"] == "weight"
            && s["printer"]["printer_id"].is_i64()
    })
    .await;
    let confirmed = format!("{edge_base}/v1/orders/{business}/list?status=confirmed&length=1");
    eventually("a confirmed order at the edge", || async {
        get(&client, &confirmed, &key).await.1["data"][0]["id"].is_i64()
    })
    .await;

    let curl_home = curl_home(dir.path());
    let prelude = vec![
        exports,
        format!(
            "client_id={} client_secret={}",
            shell_word(&client_id),
            shell_word(&client_secret)
        ),
    ];
    let mut ran = Vec::new();
    for (doc, blocks) in &docs {
        for b in blocks.iter().filter(|b| b.not_run.is_some()) {
            println!(
                "note: {} is not run: {}",
                b.name(),
                b.not_run.as_deref().unwrap_or_default()
            );
        }
        let runnable: Vec<&Block> = blocks.iter().filter(|b| b.not_run.is_none()).collect();
        if runnable.is_empty() {
            continue;
        }
        let mut missing: Vec<&str> = runnable
            .iter()
            .flat_map(|b| tools_used(b))
            .filter(|tool| !installed(tool))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            println!(
                "note: {doc} was not run: it uses {}, not installed here",
                missing.join(", ")
            );
            continue;
        }
        run_doc(dir.path(), &curl_home, &prelude, &runnable).await;
        ran.push(*doc);
    }

    // "Marketplace: end in .99": every price the tour's rules wrote does.
    if ran.contains(&"docs/tour.md") {
        let (_, items) = get(
            &client,
            &format!("{cloud_base}/v1/items/{business}/list?length=100"),
            &key,
        )
        .await;
        let items = items["data"].as_array().expect("items");
        assert_eq!(items.len(), 36, "the demo's items");
        for item in items {
            let marketplace = item["prices"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["price_list_id"] == 2))
                .and_then(|p| p["amount"].as_str())
                .unwrap_or_default();
            assert!(
                marketplace.ends_with(".99"),
                "{}'s marketplace price is {marketplace:?}, not one ending in .99",
                item["sku"]
            );
        }
    }

    // The doctor's command the tour shows, with the variables the demo
    // printed, is the one the demo prints; and it passes on the demo's edge.
    let (_, tour) = docs
        .iter()
        .find(|(doc, _)| *doc == "docs/tour.md")
        .expect("the tour");
    let shown = tour
        .iter()
        .flat_map(|b| &b.text)
        .find(|l| l.contains(" doctor "))
        .expect("the tour shows the doctor's command");
    assert_eq!(
        shown
            .replace(
                "\"$D/edge.toml\"",
                &shell_word(&edge_config.display().to_string())
            )
            .replace("\"$C\"", &cloud_base),
        doctor
    );
    let mut report = Vec::new();
    let passed =
        depot_edge::doctor::run_reporting(Some(&edge_config), Some(&cloud_base), |check| {
            report.push(check.to_string());
        })
        .await;
    assert!(
        passed,
        "the doctor finds the demo's edge failing:\n{}",
        report.join("\n")
    );

    let _ = stop.send(());
    let stopped = tokio::time::timeout(LIMIT, served).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "the demo did not stop cleanly: {stopped:?}"
    );
    if let Ok(lines) = announced.lock() {
        println!("the demo said:\n  {}", lines.join("\n  "));
    }
}

#[test]
fn blocks_are_found_with_their_markers() {
    let text = "intro\n\n<!-- not run by tests/it/readme.rs: it needs a printer -->\n```sh\nlp label.zpl\n```\n\n```sh\ncurl -s \"$C/v1\" | jq .\n```\n```toml\nx = 1\n```\n";
    let found = blocks("doc.md", text);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found[0].line, 4);
    assert_eq!(found[0].not_run.as_deref(), Some("it needs a printer"));
    assert_eq!(found[1].line, 8);
    assert_eq!(found[1].not_run, None);
    assert_eq!(found[1].text, ["curl -s \"$C/v1\" | jq ."]);
    assert_eq!(tools_used(&found[1]), ["jq"]);
    let script = Script::new(&["export C=x".to_owned()], &[&found[1]]);
    // set, trap, the prelude, the block's start, then its line 9.
    assert_eq!(script.origin(5), Some((0, 9)));
    assert_eq!(script.origin(3), None);
}

#[test]
#[should_panic(expected = "stands above no ```sh block")]
fn a_marker_above_nothing_fails() {
    blocks(
        "doc.md",
        "<!-- not run by tests/it/readme.rs: why -->\ntext\n",
    );
}
