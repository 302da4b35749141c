//! Headless Chromium for the page tests: what the page shows, its layout at a size, screenshots kept as artifacts.

use super::*;

pub(crate) const READ_PAGE: &str = r#"
const $ = (id) => document.getElementById(id);
return {
  result: $('result').dataset.state,
  verdict: $('result-verdict').textContent,
  message: $('result-message').textContent,
  errors: Array.from($('result-errors').children, (li) => li.textContent),
  note: $('result-input').textContent,
  text: document.body.innerText,
  retry: !$('retry').hidden && $('retry').offsetParent !== null,
  release: !$('release').hidden && $('release').offsetParent !== null ? $('release').textContent : null,
  background: getComputedStyle($('result')).backgroundColor,
  remaining: $('remaining-total').textContent,
  task: $('task-title').textContent,
  next: $('task-next').textContent,
  live: $('live').dataset.state,
  cloud: $('cloud').dataset.state,
  printer: $('printer').textContent,
  disk: $('disk').hidden ? 'hidden' : $('disk').dataset.state + ': ' + $('disk').querySelector('.value').textContent,
  weight: $('weight').textContent,
  focused: document.activeElement && document.activeElement.id,
  hash: location.hash,
  stored: localStorage.getItem('depot.station.key') !== null,
  animating: document.getAnimations().some((a) => a.playState === 'running'),
};
"#;

/// Where the page's panels are, through `getBoundingClientRect`: the
/// answer (and its verdict and message in it), the task, what is left, the
/// scan input, the answer's errors and the task's buttons when they show.
pub(crate) const LAYOUT: &str = r#"
const box = (el) => {
  if (!el || el.offsetParent === null) return null;
  const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
};
const $ = (id) => box(document.getElementById(id));
return {
  width: window.innerWidth,
  height: window.innerHeight,
  scroll: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
  panels: {result: $('result'), task: $('task'), left: $('left'), scan: $('scan-form')},
  inside: {verdict: $('result-verdict'), message: $('result-message'),
           errors: $('result-errors'), retry: $('retry'), release: $('release')},
};
"#;

/// The panels a packer reads at the station: whole, in the viewport, none
/// over another; the verdict, message and errors within the answer's
/// panel (read whole, not scrolled away), and the task's buttons within
/// the task's. Says what is wrong.
pub(crate) fn check_layout(layout: &Value) -> Result<(), String> {
    let (w, h) = (
        layout["width"].as_f64().unwrap_or_default(),
        layout["height"].as_f64().unwrap_or_default(),
    );
    let rect =
        |b: &Value| ["left", "top", "right", "bottom"].map(|k| b[k].as_f64().unwrap_or(f64::NAN));
    let within = |a: [f64; 4], b: [f64; 4]| {
        a[0] >= b[0] - 0.5 && a[1] >= b[1] - 0.5 && a[2] <= b[2] + 0.5 && a[3] <= b[3] + 0.5
    };
    let mut panels = Vec::new();
    for name in ["result", "task", "left", "scan"] {
        let b = &layout["panels"][name];
        if b.is_null() {
            return Err(format!("{name} is not shown"));
        }
        let r = rect(b);
        if !(r[2] - r[0] >= 40.0 && r[3] - r[1] >= 24.0) {
            return Err(format!("{name} is too small: {b}"));
        }
        if !within(r, [0.0, 0.0, w, h]) {
            return Err(format!("{name} is not inside the {w}x{h} viewport: {b}"));
        }
        panels.push((name, r));
    }
    for (i, (a, ra)) in panels.iter().enumerate() {
        for (b, rb) in &panels[i + 1..] {
            let apart = ra[2] <= rb[0] + 0.5
                || rb[2] <= ra[0] + 0.5
                || ra[3] <= rb[1] + 0.5
                || rb[3] <= ra[1] + 0.5;
            if !apart {
                return Err(format!("{a} {ra:?} and {b} {rb:?} overlap"));
            }
        }
    }
    let result = rect(&layout["panels"]["result"]);
    let task = rect(&layout["panels"]["task"]);
    for (name, panel) in [
        ("verdict", result),
        ("message", result),
        ("errors", result),
        ("retry", task),
        ("release", task),
    ] {
        let b = &layout["inside"][name];
        if !b.is_null() && !within(rect(b), panel) {
            return Err(format!("{name} {b} is not within its panel {panel:?}"));
        }
    }
    let scroll = &layout["scroll"];
    if scroll[0].as_f64().unwrap_or(f64::MAX) > w || scroll[1].as_f64().unwrap_or(f64::MAX) > h {
        return Err(format!("the page scrolls: {scroll} in {w}x{h}"));
    }
    Ok(())
}

pub(crate) struct Browser<'a> {
    pub(crate) session: Session<'a>,
    pub(crate) driver: &'a Driver,
}

impl Browser<'_> {
    pub(crate) async fn read(&self) -> Value {
        self.session.run(READ_PAGE).await
    }

    /// Polls the page until `check` holds, for at most `limit` from
    /// `since`; fails with what the page shows and the browser said.
    pub(crate) async fn until(
        &self,
        what: &str,
        since: Instant,
        limit: Duration,
        check: impl Fn(&Value) -> bool,
    ) {
        loop {
            let page = self.read().await;
            if check(&page) {
                return;
            }
            if since.elapsed() > limit {
                let text = self.session.run("return document.body.innerText").await;
                let console = self.session.console().await;
                panic!(
                    "the page did not show {what} within {limit:?}\nread: {page:#}\n--- page text ---\n{}\n--- console ---\n{console:#}\n--- chromedriver log (tail) ---\n{}",
                    text.as_str().unwrap_or_default(),
                    tail(&self.driver.log(), 40),
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Browser<'_> {
    /// At `width` × `height`: the layout holds (`check_layout`), and a
    /// screenshot is kept as `station-page-<width>x<height>.png`.
    pub(crate) async fn at_size(&self, width: i64, height: i64) -> PathBuf {
        self.session.viewport(width, height).await;
        // Laid out again at the new size before it is measured.
        self.until("the page at its new size", Instant::now(), LIMIT, |p| {
            p["animating"] == false
        })
        .await;
        let layout = self.session.run(LAYOUT).await;
        if let Err(wrong) = check_layout(&layout) {
            let shot = self
                .screenshot(&format!("station-page-{width}x{height}-wrong.png"))
                .await;
            panic!(
                "at {width}x{height}: {wrong}\nlayout: {layout:#}\nscreenshot: {}",
                shot.display()
            );
        }
        self.screenshot(&format!("station-page-{width}x{height}.png"))
            .await
    }

    /// Saves the page, once its flash is over, in the artifacts directory.
    pub(crate) async fn screenshot(&self, name: &str) -> PathBuf {
        self.until("the page still", Instant::now(), LIMIT, |p| {
            p["animating"] == false
        })
        .await;
        let shot = self.session.screenshot().await;
        assert!(shot.starts_with(b"\x89PNG"), "not a PNG");
        let dir = artifacts_dir();
        std::fs::create_dir_all(&dir).expect("artifacts directory");
        let file = dir.join(name);
        std::fs::write(&file, &shot).expect("screenshot written");
        file
    }
}

pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The chromedriver and the Chromium it drives, from the environment; `None`
/// (the test then skips, saying how to run it) without
/// `DEPOT_TEST_CHROMEDRIVER`.
pub(crate) fn browser_binaries() -> Option<(String, String)> {
    let Some(chromedriver) = std::env::var("DEPOT_TEST_CHROMEDRIVER")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        eprintln!(
            "skipped: set DEPOT_TEST_CHROMEDRIVER to a chromedriver binary (Debian: chromium-driver, /usr/bin/chromedriver) to run the station page in headless Chromium"
        );
        return None;
    };
    let chromium =
        std::env::var("DEPOT_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    Some((chromedriver, chromium))
}

/// Opens the station's page in a new Chromium session of `driver`, the key
/// in the URL's fragment as a station's bookmark has it.
pub(crate) async fn open_page<'a>(
    driver: &'a Driver,
    chromium: &str,
    profile: &std::path::Path,
    floor: &Floor,
) -> Browser<'a> {
    let session = driver.session(chromium, profile).await;
    session
        .goto(&format!(
            "{}/stations/{STATION}#key={}",
            floor.edge.base, floor.rig.key
        ))
        .await;
    Browser { session, driver }
}

pub(crate) fn artifacts_dir() -> PathBuf {
    match std::env::var_os("DEPOT_ARTIFACTS_DIR") {
        Some(dir) => PathBuf::from(dir),
        // edge/ is one level below the workspace.
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/artifacts"),
    }
}
