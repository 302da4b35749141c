//! What Depot's benchmarks share: the closed-loop and open-loop load
//! runners, concurrent loading with progress, the pick workload.

pub mod closed_loop;
pub mod cpu;
pub mod load;
pub mod open_loop;
pub mod picking;
pub mod stock;

pub use closed_loop::{Run, Tally, closed_loop};
pub use load::{load, progress_bar};
pub use open_loop::{OpenRun, open_loop};

/// The SKU of the benches' catalog item `i`.
pub fn sku(i: u64) -> String {
    format!("SKU-{i:06}")
}
