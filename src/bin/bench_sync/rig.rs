//! What the bench runs beside the engines: a scratch directory, a
//! Mosquitto of its own, the edge's server, and waiting for a condition.

use anyhow::{Context, bail};
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
    pub async fn start(bin: &Path, dir: &Path) -> anyhow::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let conf = dir.join("mosquitto.conf");
        std::fs::write(
            &conf,
            format!("listener {port} 127.0.0.1\nallow_anonymous true\nmax_packet_size 1048576\n"),
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
