//! `depot-edge`: the warehouse API served from the box's own database, so
//! the floor keeps working without the internet, and the link that syncs
//! it with the cloud. [`Daemon`] runs both on a listener the caller binds;
//! `main.rs` only parses arguments.

pub mod backup;
pub mod caller;
mod daemon;
pub mod devices;
pub mod disk;
pub mod doctor;
#[cfg(feature = "faults")]
pub mod faults;
pub mod identity;
pub mod link;
pub mod metrics;
pub mod releases;
pub mod selftest;
pub mod settings;
pub mod station_page;
pub mod status;
pub mod systemd;

pub use daemon::Daemon;

use depot_wms::Wms;
use settings::Settings;

/// Opens the edge's database as its node.
pub fn open(settings: &Settings) -> depot_wms::Result<Wms> {
    Wms::open_node(&settings.database(), &settings.origin(), settings.node)
}
