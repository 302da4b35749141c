//! Room left on the disk under the database. When it is full every write
//! is refused (507) and, on the edge, the floor stops: both daemons say how
//! much is left, warn below `low_disk_mib`, say when it is full, and keep
//! some room in reserve so that a server stopped on a full disk starts
//! again.

use crate::Wms;
use crate::metrics::Scrape;
use depot_protocol::Timestamp;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const MIB: u64 = 1024 * 1024;
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
    /// The disk under `data_dir`, the database at `database` on it, and
    /// the warning threshold `low_disk_mib`.
    pub fn new(data_dir: &Path, database: &Path, low_disk_mib: u64) -> Self {
        Self {
            data_dir: data_dir.to_owned(),
            database: database.to_owned(),
            low_below_bytes: low_disk_mib.saturating_mul(MIB),
        }
    }

    /// Reads the disk under the data directory. `full_since` is what the
    /// running writer knows: that it refuses writes (a daemon's own
    /// status); `None` when only the disk is read (a command beside the
    /// daemon).
    pub fn read(&self, full_since: Option<Timestamp>) -> std::io::Result<Storage> {
        let (free_bytes, total_bytes) = free_and_size(&self.data_dir)?;
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

    /// [`Probe::read`] for a serving daemon, with what its writer knows of
    /// refused writes, off the runtime's threads (a disk that hangs must
    /// not take a worker with it); `None`, logged, when it cannot be read.
    pub async fn read_serving(&self, wms: &Wms) -> Option<Storage> {
        let full_since = wms.writer_stats().full_since();
        let probe = self.clone();
        let on_server = match wms.database_bytes_on_server().await {
            Ok(bytes) => bytes,
            Err(error) => {
                tracing::warn!(%error, "cannot read the database's size");
                None
            }
        };
        match tokio::task::spawn_blocking(move || probe.read(full_since)).await {
            // A database on a server is not on this disk: its size is the
            // server's answer.
            Ok(Ok(storage)) => Some(Storage {
                database_bytes: on_server.unwrap_or(storage.database_bytes),
                ..storage
            }),
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

/// Room a daemon keeps aside in its data directory, to give back when the
/// disk is full at start: after a clean stop SQLite has removed its `-wal`
/// and `-shm` files and cannot open the database again (not even to read)
/// without room to make them.
pub const RESERVE_BYTES: u64 = 8 * MIB;
const RESERVE_FILE: &str = "space-reserve";

impl Probe {
    /// Opens the database to serve from with `open`: with the reserve kept,
    /// or, when the disk is too full to open it, given back to open it all
    /// the same. The error says when the disk is full.
    pub fn open_to_serve(
        &self,
        open: impl Fn() -> crate::Result<Wms>,
    ) -> std::result::Result<Wms, String> {
        let reserve = self.data_dir.join(RESERVE_FILE);
        let opened = match open() {
            Err(e) if self.full() && reserve.exists() => {
                std::fs::remove_file(&reserve)
                    .map_err(|r| format!("{e}; cannot give back {}: {r}", reserve.display()))?;
                tracing::error!(
                    error = %e,
                    "the disk under {} is full: gave back the {} kept in reserve to open the database; free space on it",
                    self.data_dir.display(),
                    human(RESERVE_BYTES)
                );
                open()
            }
            opened => opened,
        };
        match opened {
            Ok(wms) => {
                if let Err(error) = self.keep_reserve() {
                    tracing::warn!(%error, "cannot keep space in reserve in the data directory");
                }
                Ok(wms)
            }
            Err(e) if self.full() => Err(format!(
                "the disk under {} is full, and SQLite needs room to open the database ({e}): free space on it",
                self.data_dir.display()
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    fn full(&self) -> bool {
        self.read(None).is_ok_and(|s| s.state == StorageState::Full)
    }

    /// Makes the reserve when it is missing and the disk has room for it
    /// above the warning threshold; true when it was made now, an error
    /// when it could not be written. Written out, not sparse: a sparse
    /// file holds no blocks to give back.
    fn keep_reserve(&self) -> std::io::Result<bool> {
        let reserve = self.data_dir.join(RESERVE_FILE);
        if reserve.exists() {
            return Ok(false);
        }
        let room = self.read(None).map(|s| s.free_bytes);
        let wanted = RESERVE_BYTES.saturating_add(self.low_below_bytes);
        if !room.is_ok_and(|free| free > wanted) {
            return Ok(false);
        }
        let made = (|| {
            use std::io::Write;
            let mut file = std::fs::File::create(&reserve)?;
            let block = vec![0u8; 64 * 1024];
            for _ in 0..RESERVE_BYTES / block.len() as u64 {
                file.write_all(&block)?;
            }
            file.sync_all()
        })();
        if made.is_err() {
            let _ = std::fs::remove_file(&reserve);
        }
        made.map(|()| true)
    }

    /// Keeps the reserve while a daemon serves, looking every `every`: a
    /// box that started on its reserve, or without room for one, has it
    /// again once space is freed, not only at its next start, and is ready
    /// for the next stop on a full disk. Stops when dropped.
    pub fn tend_reserve(&self, every: Duration) -> ReserveKeeper {
        let probe = self.clone();
        let task = tokio::spawn(async move {
            // `open_to_serve` has just looked.
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut tending = Tending::default();
            loop {
                tick.tick().await;
                let p = probe.clone();
                let outcome = tokio::task::spawn_blocking(move || p.keep_reserve())
                    .await
                    .unwrap_or_else(|e| Err(std::io::Error::other(e)));
                match tending.after(outcome) {
                    Some(Said::Made) => tracing::info!(
                        "kept {} in reserve again under {}: a stop on a full disk can start again",
                        human(RESERVE_BYTES),
                        probe.data_dir.display()
                    ),
                    Some(Said::Cannot(error)) => tracing::warn!(
                        %error,
                        "cannot keep space in reserve under {}: a stop on a full disk may not start again",
                        probe.data_dir.display()
                    ),
                    None => {}
                }
            }
        });
        ReserveKeeper(task.abort_handle())
    }
}

/// What the reserve's keeper has said, so that a data directory that
/// cannot be written (a filesystem remounted read-only, say) is told once,
/// not every few seconds.
#[derive(Debug, Default)]
struct Tending {
    failing: Option<String>,
}

#[derive(Debug, PartialEq)]
enum Said {
    Made,
    Cannot(String),
}

impl Tending {
    fn after(&mut self, outcome: std::io::Result<bool>) -> Option<Said> {
        match outcome {
            Ok(made) => {
                self.failing = None;
                made.then_some(Said::Made)
            }
            Err(error) => {
                let error = error.to_string();
                if self.failing.as_ref() == Some(&error) {
                    return None;
                }
                self.failing = Some(error.clone());
                Some(Said::Cannot(error))
            }
        }
    }
}

/// How often a serving daemon looks for its reserve: a file's metadata,
/// and the disk's free space only when the reserve is missing.
pub const TEND_RESERVE_EVERY: Duration = Duration::from_secs(5);

/// The task of [`Probe::tend_reserve`]; stops it when dropped.
#[derive(Debug)]
pub struct ReserveKeeper(tokio::task::AbortHandle);

impl Drop for ReserveKeeper {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The gauges of `/metrics` for the disk under the data directory.
pub fn gauges(scrape: &mut Scrape, s: &Storage) {
    let bytes = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    scrape.gauge(
        "depot_storage_free_bytes",
        "Bytes still free on the data directory's disk for the user the server runs as",
        bytes(s.free_bytes),
    );
    scrape.gauge(
        "depot_storage_size_bytes",
        "Size of the data directory's filesystem",
        bytes(s.total_bytes),
    );
    scrape.gauge(
        "depot_storage_database_bytes",
        "The database with its write-ahead log",
        bytes(s.database_bytes),
    );
    scrape.gauge(
        "depot_storage_low",
        "1 while the disk has less than low_disk_mib free, or is full, else 0",
        i64::from(s.state != StorageState::Ok),
    );
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

/// Bytes free for the user this runs as, and the size, of the filesystem
/// under `path`.
pub fn free_and_size(path: &Path) -> std::io::Result<(u64, u64)> {
    let fs = rustix::fs::statvfs(path)?;
    Ok((
        fs.f_bavail.saturating_mul(fs.f_frsize),
        fs.f_blocks.saturating_mul(fs.f_frsize),
    ))
}

/// The database file, its write-ahead log and its shared-memory index.
pub fn database_bytes(db: &Path) -> u64 {
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
        let db = dir.path().join("edge.db");
        std::fs::write(&db, vec![0u8; 8192]).expect("db");
        std::fs::write(dir.path().join("edge.db-wal"), vec![0u8; 4096]).expect("wal");
        let probe = Probe::new(dir.path(), &db, 512);
        let s = probe.read(None).expect("statvfs");
        assert_eq!(s.database_bytes, 12288);
        assert!(s.total_bytes > 0 && s.free_bytes <= s.total_bytes, "{s:?}");
        assert_eq!(s.low_below_bytes, 512 * MIB);
        assert!(
            s.summary().contains("(database 12.0 KiB)"),
            "{}",
            s.summary()
        );

        let at = depot_protocol::now();
        let s = probe.read(Some(at)).expect("statvfs");
        assert_eq!(s.state, StorageState::Full);
        assert!(
            s.summary()
                .ends_with("every write is refused until space is freed on this disk"),
            "{}",
            s.summary()
        );

        let s = Probe::new(dir.path(), &db, u64::MAX)
            .read(None)
            .expect("statvfs");
        assert_eq!(s.state, StorageState::Low);
        assert!(s.summary().contains("; LOW: less than"), "{}", s.summary());

        let missing = dir.path().join("missing");
        assert!(Probe::new(&missing, &db, 512).read(None).is_err());
    }

    #[test]
    fn keeps_a_reserve_and_opens_with_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("cloud.db");
        let probe = Probe::new(dir.path(), &db, 0);
        let wms = probe
            .open_to_serve(|| Wms::open(&db, "cloud"))
            .expect("open");
        let reserve = dir.path().join(RESERVE_FILE);
        assert_eq!(
            std::fs::metadata(&reserve).map(|m| m.len()).ok(),
            Some(RESERVE_BYTES)
        );
        drop(wms);
        // Not made where it would leave less than the threshold.
        std::fs::remove_file(&reserve).expect("remove");
        let wms = Probe::new(dir.path(), &db, u64::MAX / MIB)
            .open_to_serve(|| Wms::open(&db, "cloud"))
            .expect("open");
        assert!(!reserve.exists());
        drop(wms);
        // An error that is not a full disk is told as it is.
        let err = probe
            .open_to_serve(|| Err(crate::WmsError::Internal("no such thing".into())))
            .err()
            .expect("refused");
        assert!(
            err.ends_with("no such thing") && !err.contains("full"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn makes_the_reserve_again_while_serving_once_there_is_room() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("edge.db");
        let reserve = dir.path().join(RESERVE_FILE);
        let wanted = Some(RESERVE_BYTES);
        let size = || std::fs::metadata(&reserve).map(|m| m.len()).ok();
        // Generous: writing and syncing 8 MiB can be slow on a busy disk.
        let made_within = async |limit: Duration| {
            let until = std::time::Instant::now() + limit;
            while std::time::Instant::now() < until {
                if size() == wanted {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            false
        };
        let soon = Duration::from_secs(20);

        // No room above the threshold: looked for, not made.
        let crowded = Probe::new(dir.path(), &db, u64::MAX / MIB);
        let keeper = crowded.tend_reserve(Duration::from_millis(20));
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(size(), None);
        drop(keeper);

        let probe = Probe::new(dir.path(), &db, 0);
        let keeper = probe.tend_reserve(Duration::from_millis(20));
        assert!(made_within(soon).await, "made once there is room");
        // Given back at a start on a full disk, say: made again.
        std::fs::remove_file(&reserve).expect("remove");
        assert!(made_within(soon).await, "made again");
        // Dropped, it stops looking.
        drop(keeper);
        tokio::time::sleep(Duration::from_millis(50)).await;
        std::fs::remove_file(&reserve).expect("remove");
        assert!(!made_within(Duration::from_secs(1)).await, "no longer made");
    }

    #[test]
    fn a_reserve_that_cannot_be_made_is_told_once_per_cause() {
        let mut t = Tending::default();
        let cannot = |m: &str| Err(std::io::Error::other(m.to_owned()));
        assert_eq!(t.after(Ok(false)), None);
        assert_eq!(
            t.after(cannot("read-only")),
            Some(Said::Cannot("read-only".into()))
        );
        assert_eq!(t.after(cannot("read-only")), None);
        assert_eq!(t.after(cannot("read-only")), None);
        assert_eq!(
            t.after(cannot("no space")),
            Some(Said::Cannot("no space".into()))
        );
        assert_eq!(t.after(Ok(true)), Some(Said::Made));
        assert_eq!(t.after(Ok(false)), None);
        assert_eq!(
            t.after(cannot("no space")),
            Some(Said::Cannot("no space".into()))
        );
        assert_eq!(t.after(Ok(false)), None);
        assert_eq!(
            t.after(cannot("no space")),
            Some(Said::Cannot("no space".into()))
        );
    }

    #[test]
    fn a_reserve_that_cannot_be_written_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A file where the directory should be: nothing can be made in it.
        let not_a_dir = dir.path().join("data");
        std::fs::write(&not_a_dir, b"").expect("file");
        let probe = Probe::new(&not_a_dir, &not_a_dir.join("edge.db"), 0);
        assert!(probe.keep_reserve().is_err());
        let probe = Probe::new(dir.path(), &dir.path().join("edge.db"), 0);
        assert!(probe.keep_reserve().expect("made"));
        assert!(!probe.keep_reserve().expect("kept"), "made once");
    }
}
