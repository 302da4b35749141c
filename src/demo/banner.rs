//! What `depot demo` prints once it runs: the addresses, the key, the
//! station's devices, requests to try, the line that sets the tours'
//! variables and the doctor's command for the demo's edge. Made here rather
//! than in `main` so that tests read exactly what a person is shown.

use super::Running;
use super::station::{PRINTER, SCALE, SCANNER, STATION};
use std::path::Path;

/// `path` relative to the working directory when it is below it: what a
/// person types.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned())
        .display()
        .to_string()
}

/// `word` as one shell word: quoted only where the shell would split or
/// expand it.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-:@%+=,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The line that sets the variables every tour's commands use: `C` the
/// cloud, `E` the edge, `B` the business, `K` the key, `K2` a second
/// operator's key, `D` the data directory (absolute, so it works from any
/// directory).
pub fn exports(running: &Running) -> anyhow::Result<String> {
    Ok(format!(
        "export C=http://{} E=http://{} B={} K={} K2={} D={}",
        running.cloud_addr()?,
        running.edge_addr()?,
        running.demo.business,
        shell_word(&running.demo.key),
        shell_word(&running.demo.second_key),
        shell_word(&running.data_dir().display().to_string()),
    ))
}

/// `depot-edge doctor` for the demo's own edge, run from the source tree.
pub fn doctor(running: &Running) -> anyhow::Result<String> {
    Ok(format!(
        "cargo run --release -p depot-edge -- --config {} doctor --cloud http://{}",
        shell_word(&shown(running.edge_config())),
        running.cloud_addr()?
    ))
}

/// Every line, in order.
pub fn banner(running: &Running) -> anyhow::Result<Vec<String>> {
    let demo = &running.demo;
    let station = &running.station;
    let data_dir = shown(running.data_dir());
    let base = format!("http://{}", running.cloud_addr()?);
    let edge_base = format!("http://{}", running.edge_addr()?);
    let mut lines = vec![
        "Depot demo is running.".to_owned(),
        format!("  cloud API    {base}/v1   (OpenAPI: {base}/v1/openapi.json)"),
        format!(
            "  edge API     {edge_base}/v1   (what scanning stations talk to; status: {edge_base}/v1/edge/status)"
        ),
        format!("  broker       {}", running.broker_url),
        format!("  data         {data_dir}"),
        format!("  business id  {}", demo.business),
        format!(
            "  API key      {}   (works on the cloud and, once synced, on the edge)",
            demo.key
        ),
        format!(
            "  webhooks     carrier \"own\" signs with {:?}",
            super::DEMO_WEBHOOK_SECRET
        ),
        format!(
            "  doctor       {}   (checks the edge: settings, database, devices, broker, clock)",
            doctor(running)?
        ),
        String::new(),
        format!("Packing station {STATION} at the edge, on simulated devices:"),
        format!(
            "  scanner      {SCANNER} (serial, {}); scan a code with: printf '%s\\n' DEMO-001 > {}",
            station.scanner_port(),
            shown(station.trigger())
        ),
        format!(
            "  scale        {SCALE} (MT-SICS, {}); the demo's operator puts each order's parcel on it",
            station.scale_port()
        ),
        format!(
            "  printer      {PRINTER} (ZPL, tcp://{}); its labels land in {}/",
            station.printer_addr(),
            shown(station.labels())
        ),
        format!(
            "  station      {edge_base}/v1/edge/stations (PUT …/{STATION}/task to pack an order; docs/devices.md shows how)"
        ),
        String::new(),
        "Try:".to_owned(),
    ];
    for e in super::examples(demo.business) {
        lines.push(format!("  {}", e.curl(&base, &demo.key)));
    }
    lines.extend([
        String::new(),
        "The tours (docs/tour.md, docs/devices.md, docs/live-events.md) start from these variables; paste this line in your shell:".to_owned(),
        format!("  {}", exports(running)?),
        "docs/tour.md walks a whole warehouse day (receive, wave, pick, pack, label, dispatch, track) from here,".to_owned(),
        format!("and packs an order at {STATION} until its label arrives."),
        format!("Ctrl-C stops it; the data stays in {data_dir} for the next run."),
        String::new(),
    ]);
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn shell_words_are_quoted_only_where_needed() {
        assert_eq!(shell_word("dpk_0a1b"), "dpk_0a1b");
        assert_eq!(shell_word("/tmp/depot-demo"), "/tmp/depot-demo");
        assert_eq!(shell_word("/home/ana/my demo"), "'/home/ana/my demo'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
