//! Room left on the box's disk (`depot_wms::disk`), read where the
//! settings put the data directory. A full disk stops the floor's writes,
//! so the box says how much is left everywhere it reports.

use crate::settings::Settings;
pub use depot_wms::disk::{
    MIB, Probe, RESERVE_BYTES, Storage, StorageState, TEND_RESERVE_EVERY, database_bytes,
    free_and_size, human,
};

/// The data directory's disk, with the box's warning threshold.
pub fn probe(settings: &Settings) -> Probe {
    Probe::new(
        &settings.data_dir,
        &settings.database(),
        settings.low_disk_mib,
    )
}

/// Opens the database to serve from, keeping room in reserve (see
/// [`Probe::open_to_serve`]).
pub fn open_to_serve(settings: &Settings) -> anyhow::Result<depot_wms::Wms> {
    probe(settings)
        .open_to_serve(|| crate::open(settings))
        .map_err(anyhow::Error::msg)
}
