//! What the bench runs beside the engines: a scratch directory, a
//! Mosquitto of its own, the cloud's and the edge's servers, the process's
//! file limit, and waiting for a condition.

use anyhow::{Context, bail};
use depot_cloud::settings::Settings as CloudSettings;
use depot_edge::settings::Settings as EdgeSettings;
use depot_wms::Wms;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Removes a directory however `main` ends.
pub struct TempDir(pub PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A Mosquitto of our own: loopback, a free port, stopped when dropped.
pub struct Mosquitto {
    pub child: tokio::process::Child,
    pub url: String,
}

impl Mosquitto {
    /// `extra`: lines added to its configuration.
    pub async fn start(bin: &Path, dir: &Path, extra: &str) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!(
                "listener {port} 127.0.0.1\nallow_anonymous true\nmax_packet_size 1048576\n{extra}"
            ),
        )?;
        let log = std::fs::File::create(dir.join("mosquitto.log"))?;
        let child = tokio::process::Command::new(bin)
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {} (install Debian's mosquitto, or give --mqtt-url)",
                    bin.display()
                )
            })?;
        let until = Instant::now() + Duration::from_secs(10);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            if Instant::now() > until {
                bail!("mosquitto did not listen on port {port} within 10 s");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Self {
            child,
            url: format!("mqtt://127.0.0.1:{port}"),
        })
    }

    /// The broker's process, for its CPU time.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// Something serving until told to stop.
pub struct Running {
    pub stop: oneshot::Sender<()>,
    pub task: JoinHandle<anyhow::Result<()>>,
}

impl Running {
    pub fn spawn<F, Fut>(serve: F) -> Self
    where
        F: FnOnce(oneshot::Receiver<()>) -> Fut,
        Fut: Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        let (stop, stopped) = oneshot::channel();
        Self {
            stop,
            task: tokio::spawn(serve(stopped)),
        }
    }

    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await.context("a server task failed")?
    }
}

/// Says on stderr which broker the run uses.
pub fn say_broker(mqtt: &depot_mqtt::MqttUrl, own: bool) {
    let own = if own {
        " (a Mosquitto started for this run)"
    } else {
        ""
    };
    eprintln!("broker: {mqtt}{own}");
}

/// The cloud on SQLite in `dir` (or on the PostgreSQL database given),
/// syncing through the broker at `url`, serving until stopped.
pub async fn start_cloud(
    dir: &Path,
    url: &str,
    database: Option<&str>,
) -> anyhow::Result<(Wms, Running)> {
    let mut settings = CloudSettings {
        data_dir: dir.join("cloud"),
        ..CloudSettings::default()
    };
    settings.broker.url = Some(url.to_owned());
    if let Some(database) = database {
        settings.database.url = depot_cloud::settings::Secret(database.to_owned());
    }
    let cloud = depot_cloud::admin::open(&settings)?;
    let broker = depot_cloud::Broker::start(&settings).await?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let server = {
        let cloud = cloud.clone();
        Running::spawn(move |stopped| async move {
            depot_cloud::Daemon::new(cloud, settings.clone())
                .sync_through(&broker)
                .serve(listener, async {
                    let _ = stopped.await;
                })
                .await
        })
    };
    Ok((cloud, server))
}

pub fn start_edge(edge: &Wms, settings: &EdgeSettings, listener: TcpListener) -> Running {
    let (edge, settings) = (edge.clone(), settings.clone());
    Running::spawn(move |stopped| async move {
        depot_edge::Daemon::new(edge, settings)
            .serve(listener, async {
                let _ = stopped.await;
            })
            .await
    })
}

/// Waits for `check`, every 20 ms, at most 60 s.
pub async fn eventually<F, Fut>(what: &str, mut check: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let until = Instant::now() + Duration::from_secs(60);
    while !check().await {
        if Instant::now() > until {
            bail!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The process's open-file limit, (soft, hard), from /proc/self/limits;
/// `None` for unlimited (or unreadable).
pub fn file_limit() -> (Option<u64>, Option<u64>) {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let Some(line) = limits.lines().find(|l| l.starts_with("Max open files")) else {
        return (None, None);
    };
    let mut values = line
        .trim_start_matches("Max open files")
        .split_whitespace()
        .map(|v| v.parse::<u64>().ok());
    (values.next().flatten(), values.next().flatten())
}

/// Files open in this process now.
pub fn open_files() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// Makes sure at least `needed` files may be open: raises the soft limit
/// up to the hard one with util-linux's `prlimit` when it is lower (this
/// package has no safe binding of setrlimit), or says how to. Answers the
/// soft limit in force.
pub fn ensure_file_limit(needed: u64) -> anyhow::Result<Option<u64>> {
    let (soft, hard) = file_limit();
    let Some(soft) = soft else {
        return Ok(None);
    };
    if soft >= needed {
        return Ok(Some(soft));
    }
    let raised = hard.map_or(needed.max(soft), |hard| hard.min(needed.max(65_536)));
    let status = std::process::Command::new("prlimit")
        .arg(format!("--pid={}", std::process::id()))
        .arg(format!(
            "--nofile={raised}:{}",
            hard.map_or_else(|| "unlimited".to_owned(), |h| h.to_string())
        ))
        .stdin(Stdio::null())
        .status();
    let now = file_limit().0;
    match now {
        Some(now) if now >= needed => {
            eprintln!("raised the open-file limit from {soft} to {now} (prlimit)");
            Ok(Some(now))
        }
        _ => bail!(
            "this run needs about {needed} open files, the limit is {soft} (hard {}) and raising it failed ({status:?}): run `ulimit -n {needed}` first",
            hard.map_or_else(|| "unlimited".to_owned(), |h| h.to_string())
        ),
    }
}

/// What `bin -h` says of its version (its first line), if anything.
pub fn mosquitto_version(bin: &Path) -> Option<String> {
    let out = std::process::Command::new(bin)
        .arg("-h")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find(|l| l.contains("version"))
        .map(|l| l.trim().to_owned())
}

/// CPU time (user + system, in clock ticks of 1/100 s) of each thread of
/// this process, by thread id, with its name.
pub fn thread_times() -> Vec<(u32, String, u64)> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|t| {
            let tid = t.file_name().to_str()?.parse::<u32>().ok()?;
            let (name, ticks) = stat_times(&std::fs::read_to_string(t.path().join("stat")).ok()?)?;
            Some((tid, name, ticks))
        })
        .collect()
}

/// Clock ticks every core of the machine has spent busy (user, nice,
/// system, irq and softirq of /proc/stat's `cpu` line): with a
/// PostgreSQL cloud, its server's work is in processes of its own.
pub fn machine_busy() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq …
    let busy = [0, 1, 2, 5, 6].iter().filter_map(|&i| fields.get(i)).sum();
    Some(busy)
}

/// CPU time (clock ticks) of process `pid`, children not included.
pub fn process_time(pid: u32) -> Option<u64> {
    stat_times(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?).map(|(_, t)| t)
}

/// The name and utime + stime of a /proc stat line.
fn stat_times(stat: &str) -> Option<(String, u64)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_owned();
    // After the name: state (field 3), … utime is field 14, stime 15.
    let fields: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((name, utime + stime))
}
