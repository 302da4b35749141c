//! A Mosquitto of the tests' own (`DEPOT_TEST_MOSQUITTO`, the path of its
//! binary; CI sets it), for what the shared one of `DEPOT_TEST_MQTT_URL`
//! cannot be: TLS, passwords, access rules.

use std::path::Path;
use std::time::{Duration, Instant};

/// A running Mosquitto on a loopback port; stopped when dropped.
pub struct Mosquitto {
    pub port: u16,
    child: std::process::Child,
}

impl Mosquitto {
    /// The binary the environment names, or `None` (said on stderr) when
    /// the test is to be skipped.
    pub fn binary(test: &str) -> Option<String> {
        let binary = std::env::var("DEPOT_TEST_MOSQUITTO").ok();
        if binary.is_none() {
            eprintln!("DEPOT_TEST_MOSQUITTO is not set: {test} is skipped");
        }
        binary
    }

    /// Starts `binary` with its configuration and log in `dir`: a listener
    /// on a free loopback port, then `config`. Returns once it listens.
    pub fn start(binary: &str, dir: &Path, config: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let conf = dir.join("mosquitto.conf");
        let log = dir.join("mosquitto.log");
        // `user root`: started as root (CI), Mosquitto would otherwise read
        // the files as its own user, which cannot enter the test's directory.
        std::fs::write(
            &conf,
            format!("user root\nlistener {port} 127.0.0.1\n{config}"),
        )
        .expect("write mosquitto.conf");
        let child = std::process::Command::new(binary)
            .arg("-c")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"))
            .spawn()
            .expect("start mosquitto");
        let broker = Self { port, child };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "mosquitto did not listen: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        broker
    }
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
