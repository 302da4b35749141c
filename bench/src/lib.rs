//! What Depot's benchmarks share: the closed-loop and open-loop load
//! runners, concurrent loading with progress, the pick workload, pinning
//! the server and the load generator to different cores.

pub mod closed_loop;
pub mod cpu;
pub mod load;
pub mod open_loop;
pub mod picking;
pub mod pin;
pub mod stock;

pub use closed_loop::{Run, Tally, closed_loop};
pub use load::{load, progress_bar};
pub use open_loop::{OpenRun, open_loop};

/// The SKU of the benches' catalog item `i`.
pub fn sku(i: u64) -> String {
    format!("SKU-{i:06}")
}

/// The machine a report was measured on: its cores and CPU model (from
/// procfs where there is one).
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    format!("{cores} cores, {model}")
}
