//! The few WebDriver calls the station page test makes (W3C WebDriver over
//! HTTP, to chromedriver): a session, navigation, scripts that read the
//! page, typing into an element, clicking one, the window's size, a
//! screenshot.

use base64::Engine;
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// An upper bound for chromedriver and Chromium to do anything.
const LIMIT: Duration = Duration::from_secs(30);
/// The W3C name of an element reference in answers.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// chromedriver on a port of its own, stopped on drop.
pub struct Driver {
    child: Child,
    base: String,
    pub log: PathBuf,
    client: reqwest::Client,
}

impl Driver {
    /// Starts `binary` and waits until it says it is ready.
    pub async fn start(binary: &str, dir: &Path) -> Self {
        // A free port: chromedriver takes a number, not a listener.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = dir.join("chromedriver.log");
        let child = Command::new(binary)
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        let driver = Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
            log,
            client: reqwest::Client::new(),
        };
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            let ready = driver
                .client
                .get(format!("{}/status", driver.base))
                .timeout(Duration::from_secs(2))
                .send()
                .await;
            if let Ok(r) = ready {
                let body: Value = r.json().await.unwrap_or_default();
                if body["value"]["ready"] == true {
                    return driver;
                }
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "chromedriver did not get ready; its log: {}",
                driver.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self
            .client
            .request(method.clone(), format!("{}{path}", self.base))
            .timeout(LIMIT);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let r = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = r.status();
        let body: Value = r.json().await.unwrap_or_default();
        assert!(status.is_success(), "{method} {path}: {status} {body}");
        body["value"].clone()
    }

    /// A headless Chromium session, its profile in `profile`.
    pub async fn session(&self, chromium: &str, profile: &Path) -> Session<'_> {
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:loggingPrefs": {"browser": "ALL"},
            "goog:chromeOptions": {
                "binary": chromium,
                // Headless, and quiet: this machine's closed network
                // refuses the connections Chromium makes on its own.
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--window-size=1280,800",
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
        }}});
        let value = self
            .call(reqwest::Method::POST, "/session", Some(caps))
            .await;
        let id = value["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session id in {value}"))
            .to_owned();
        Session { driver: self, id }
    }
}

impl Drop for Driver {
    /// Asks chromedriver to quit, which ends the browsers of sessions a
    /// failed test left open; kills it if it does not.
    fn drop(&mut self) {
        let addr = self.base.trim_start_matches("http://").to_owned();
        if let Ok(mut s) = std::net::TcpStream::connect(&addr) {
            let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
            let _ = s.write_all(
                format!("GET /shutdown HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                    .as_bytes(),
            );
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Session<'a> {
    driver: &'a Driver,
    id: String,
}

impl Session<'_> {
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let path = format!("/session/{}{path}", self.id);
        self.driver.call(method, &path, body).await
    }

    pub async fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({ "url": url })))
            .await;
    }

    /// Runs `script` (a function body) in the page: what it returns.
    pub async fn run(&self, script: &str) -> Value {
        let body = json!({"script": script, "args": []});
        self.call(reqwest::Method::POST, "/execute/sync", Some(body))
            .await
    }

    async fn element(&self, css: &str) -> String {
        let found = self
            .call(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_owned()
    }

    /// Clicks the element `css` names, as a pointer would (WebDriver
    /// refuses an element that is hidden or covered).
    pub async fn click(&self, css: &str) {
        let element = self.element(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/click"),
            Some(json!({})),
        )
        .await;
    }

    /// Makes the page's viewport `width` × `height` CSS pixels: the window
    /// is set, then grown by whatever the browser's own frame takes.
    pub async fn viewport(&self, width: i64, height: i64) {
        let mut rect = (width, height);
        for _ in 0..3 {
            self.call(
                reqwest::Method::POST,
                "/window/rect",
                Some(json!({"width": rect.0, "height": rect.1})),
            )
            .await;
            let inner = self
                .run("return [window.innerWidth, window.innerHeight]")
                .await;
            let (w, h) = (
                inner[0].as_i64().unwrap_or_default(),
                inner[1].as_i64().unwrap_or_default(),
            );
            if (w, h) == (width, height) {
                return;
            }
            rect = (rect.0 + width - w, rect.1 + height - h);
        }
        panic!("the viewport could not be made {width}x{height}");
    }

    /// Types `text` into the element `css` names, as keystrokes.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css).await;
        self.call(
            reqwest::Method::POST,
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        )
        .await;
    }

    /// The page as a PNG.
    pub async fn screenshot(&self) -> Vec<u8> {
        let shot = self.call(reqwest::Method::GET, "/screenshot", None).await;
        base64::engine::general_purpose::STANDARD
            .decode(shot.as_str().unwrap_or_default())
            .expect("a base64 screenshot")
    }

    /// What the browser's console said.
    pub async fn console(&self) -> Value {
        self.call(
            reqwest::Method::POST,
            "/se/log",
            Some(json!({"type": "browser"})),
        )
        .await
    }

    pub async fn close(self) {
        self.call(reqwest::Method::DELETE, "", None).await;
    }
}
