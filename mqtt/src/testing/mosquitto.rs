//! A Mosquitto of a test's own (`DEPOT_TEST_MOSQUITTO`, the path of its
//! binary; CI sets it), for what a shared broker cannot be: TLS, passwords,
//! access rules.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A running Mosquitto on a loopback port; stopped when dropped.
#[derive(Debug)]
pub struct Mosquitto {
    pub port: u16,
    child: std::process::Child,
    /// Its configuration, when made here.
    _dir: Option<tempfile::TempDir>,
}

impl Mosquitto {
    /// The binary the environment names, or `None` (said on stderr) when
    /// `test` is to be skipped.
    pub fn binary(test: &str) -> Option<String> {
        let binary = std::env::var("DEPOT_TEST_MOSQUITTO").ok();
        if binary.is_none() {
            eprintln!("DEPOT_TEST_MOSQUITTO is not set: {test} is skipped");
        }
        binary
    }

    /// Starts `binary` with its configuration and log in `dir`: a listener
    /// on a free loopback port, then `config`. Returns once it listens.
    pub fn start(binary: &str, dir: &Path, config: &str) -> io::Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let conf = dir.join("mosquitto.conf");
        let log = dir.join("mosquitto.log");
        // `user root`: started as root (CI), Mosquitto would otherwise read
        // the files as its own user, which cannot enter the test's directory.
        std::fs::write(
            &conf,
            format!("user root\nlistener {port} 127.0.0.1\n{config}"),
        )?;
        let child = std::process::Command::new(binary)
            .arg("-c")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log)?)
            .spawn()?;
        let broker = Self {
            port,
            child,
            _dir: None,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() >= deadline {
                return Err(io::Error::other(format!(
                    "mosquitto did not listen: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(broker)
    }

    /// Mosquitto that lets anyone connect and publish and nobody subscribe:
    /// every SUBSCRIBE is answered with a failure (0x80), as a broker whose
    /// rules deny it answers. Its access rules (`acl_file`) cannot do that,
    /// they only hold back deliveries; its dynamic security plugin can.
    /// `None` (said on stderr) without Mosquitto or the plugin: `test` is
    /// skipped.
    pub fn refusing_subscriptions(test: &str) -> io::Result<Option<Self>> {
        let Some(binary) = Self::binary(test) else {
            return Ok(None);
        };
        let Some(plugin) = dynamic_security_plugin()? else {
            eprintln!("no mosquitto_dynamic_security.so: {test} is skipped");
            return Ok(None);
        };
        let dir = tempfile::tempdir()?;
        let rules = dir.path().join("dynamic-security.json");
        std::fs::write(
            &rules,
            r#"{"defaultACLAccess": {"publishClientSend": true, "publishClientReceive": true, "subscribe": false, "unsubscribe": true}, "clients": [], "groups": [], "roles": []}"#,
        )?;
        let config = format!(
            "allow_anonymous true\nplugin {}\nplugin_opt_config_file {}\n",
            plugin.display(),
            rules.display()
        );
        let mut broker = Self::start(&binary, dir.path(), &config)?;
        broker._dir = Some(dir);
        Ok(Some(broker))
    }

    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.port)
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `DEPOT_TEST_MOSQUITTO_DYNSEC` (CI sets it: then it must be there), or
/// where Debian's package puts the plugin.
fn dynamic_security_plugin() -> io::Result<Option<PathBuf>> {
    if let Ok(path) = std::env::var("DEPOT_TEST_MOSQUITTO_DYNSEC") {
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(io::Error::other(format!(
                "DEPOT_TEST_MOSQUITTO_DYNSEC: no {}",
                path.display()
            )));
        }
        return Ok(Some(path));
    }
    let Ok(dirs) = std::fs::read_dir("/usr/lib") else {
        return Ok(None);
    };
    Ok(dirs
        .flatten()
        .map(|d| d.path().join("mosquitto_dynamic_security.so"))
        .find(|p| p.is_file()))
}
