//! Room left on the box's disk. When the disk under the database is full,
//! every write is refused (507) and the floor stops: the box says how much
//! is left, warns below `low_disk_mib`, and says when it is full.

use crate::settings::Settings;
use depot_protocol::Timestamp;
use serde::Serialize;
use std::path::{Path, PathBuf};

const MIB: u64 = 1024 * 1024;
/// Less than this is full whatever the writer has seen: SQLite grows its
/// files a page at a time, and nothing else fits either.
const FULL_BELOW: u64 = MIB;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StorageState {
    Ok,
    /// Below `low_disk_mib` free.
    Low,
    /// Writes are refused.
    Full,
}

/// The data directory's disk, and what the database takes of it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Storage {
    /// The data directory.
    pub path: String,
    /// Bytes still free there for the user the box runs as.
    pub free_bytes: u64,
    /// The size of that filesystem.
    pub total_bytes: u64,
    /// The database with its write-ahead log.
    pub database_bytes: u64,
    /// `low_disk_mib`, in bytes.
    pub low_below_bytes: u64,
    /// `ok`, `low` (below `low_below_bytes` free) or `full` (writes are
    /// refused).
    pub state: StorageState,
    /// Since when writes are refused for a full disk.
    pub full_since: Option<String>,
}

/// Where to look: the data directory, the database, the threshold. Read
/// from the settings once; cheap to clone.
#[derive(Debug, Clone)]
pub struct Probe {
    data_dir: PathBuf,
    database: PathBuf,
    low_below_bytes: u64,
}

impl Probe {
    pub fn new(settings: &Settings) -> Self {
        Self {
            data_dir: settings.data_dir.clone(),
            database: settings.database(),
            low_below_bytes: settings.low_disk_mib.saturating_mul(MIB),
        }
    }

    /// Reads the disk under the data directory. `full_since` is what the
    /// running writer knows: that it refuses writes (a daemon's own
    /// status); `None` when only the disk is read (`depot-edge status`).
    pub fn read(&self, full_since: Option<Timestamp>) -> std::io::Result<Storage> {
        let fs = rustix::fs::statvfs(&self.data_dir)?;
        let free_bytes = fs.f_bavail.saturating_mul(fs.f_frsize);
        let total_bytes = fs.f_blocks.saturating_mul(fs.f_frsize);
        Ok(Storage {
            path: self.data_dir.display().to_string(),
            free_bytes,
            total_bytes,
            database_bytes: database_bytes(&self.database),
            low_below_bytes: self.low_below_bytes,
            state: state(free_bytes, self.low_below_bytes, full_since.is_some()),
            full_since: full_since.map(|t| depot_protocol::format_ts(&t)),
        })
    }

    /// [`Probe::read`] off the runtime's threads (a disk that hangs must
    /// not take a worker with it); `None`, logged, when it cannot be read.
    pub async fn read_async(&self, full_since: Option<Timestamp>) -> Option<Storage> {
        let probe = self.clone();
        match tokio::task::spawn_blocking(move || probe.read(full_since)).await {
            Ok(Ok(storage)) => Some(storage),
            Ok(Err(error)) => {
                tracing::warn!(%error, "cannot read the data directory's disk");
                None
            }
            Err(error) => {
                tracing::warn!(%error, "reading the data directory's disk failed");
                None
            }
        }
    }
}

impl Storage {
    /// One line for people: free, total, the database, and what to do when
    /// it runs out.
    pub fn summary(&self) -> String {
        let line = format!(
            "{} free of {} on {} (database {})",
            human(self.free_bytes),
            human(self.total_bytes),
            self.path,
            human(self.database_bytes)
        );
        match self.state {
            StorageState::Ok => line,
            StorageState::Low => format!(
                "{line}; LOW: less than {} free (low_disk_mib): free space before the disk fills and every write is refused",
                human(self.low_below_bytes)
            ),
            StorageState::Full => format!(
                "{line}; FULL{}: every write is refused until space is freed on this disk",
                self.full_since
                    .as_deref()
                    .map(|t| format!(" since {t}"))
                    .unwrap_or_default()
            ),
        }
    }
}

fn state(free: u64, low_below: u64, refusing: bool) -> StorageState {
    if refusing || free < FULL_BELOW {
        StorageState::Full
    } else if free < low_below {
        StorageState::Low
    } else {
        StorageState::Ok
    }
}

/// The database file, its write-ahead log and its shared-memory index.
fn database_bytes(db: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let mut path = db.as_os_str().to_owned();
            path.push(suffix);
            std::fs::metadata(path).ok()
        })
        .map(|m| m.len())
        .sum()
}

/// Bytes as people read them: `512 MiB`, `7.3 GiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_when_refusing_or_under_a_mib_low_under_the_threshold() {
        let low = 512 * MIB;
        assert_eq!(state(10 * 1024 * MIB, low, false), StorageState::Ok);
        assert_eq!(state(low, low, false), StorageState::Ok);
        assert_eq!(state(low - 1, low, false), StorageState::Low);
        assert_eq!(state(FULL_BELOW, low, false), StorageState::Low);
        assert_eq!(state(FULL_BELOW - 1, low, false), StorageState::Full);
        assert_eq!(state(0, 0, false), StorageState::Full);
        // The writer's word wins over the free space read: blocks reserved
        // for root, or freed by another process meanwhile.
        assert_eq!(state(10 * 1024 * MIB, low, true), StorageState::Full);
        assert_eq!(state(5 * MIB, 0, false), StorageState::Ok);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human(0), "0 B");
        assert_eq!(human(1023), "1023 B");
        assert_eq!(human(1024), "1.0 KiB");
        assert_eq!(human(512 * MIB), "512 MiB");
        assert_eq!(human(1536 * MIB), "1.5 GiB");
        assert_eq!(human(604 * MIB + 300 * 1024), "604 MiB");
        assert_eq!(human(u64::MAX), "16777216 TiB");
    }

    #[test]
    fn reads_the_data_directory_and_the_database() {
        let dir = tempfile::tempdir().expect("tempdir");
        let settings = Settings {
            data_dir: dir.path().to_owned(),
            ..Settings::default()
        };
        std::fs::write(settings.database(), vec![0u8; 8192]).expect("db");
        std::fs::write(dir.path().join("edge.db-wal"), vec![0u8; 4096]).expect("wal");
        let s = Probe::new(&settings).read(None).expect("statvfs");
        assert_eq!(s.database_bytes, 12288);
        assert!(s.total_bytes > 0 && s.free_bytes <= s.total_bytes, "{s:?}");
        assert_eq!(s.low_below_bytes, 512 * MIB);
        assert!(
            s.summary().contains("(database 12.0 KiB)"),
            "{}",
            s.summary()
        );

        let at = depot_protocol::now();
        let s = Probe::new(&settings).read(Some(at)).expect("statvfs");
        assert_eq!(s.state, StorageState::Full);
        assert!(
            s.summary()
                .ends_with("every write is refused until space is freed on this disk"),
            "{}",
            s.summary()
        );

        let huge = Settings {
            low_disk_mib: u64::MAX,
            ..settings.clone()
        };
        let s = Probe::new(&huge).read(None).expect("statvfs");
        assert_eq!(s.state, StorageState::Low);
        assert!(s.summary().contains("; LOW: less than"), "{}", s.summary());

        let missing = Settings {
            data_dir: dir.path().join("missing"),
            ..settings
        };
        assert!(Probe::new(&missing).read(None).is_err());
    }
}
