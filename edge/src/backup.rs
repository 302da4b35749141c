//! `depot-edge backup` and `restore`: a copy of the live database taken
//! while the daemon keeps writing, and its return in place of the
//! database once the daemon is stopped.
//!
//! Neither ever leaves a half-written file under the name it was asked
//! for: both write next to the target, check what they wrote, and rename.

use crate::disk;
use crate::settings::Settings;
use anyhow::{Context, bail};
use depot_wms::database::{self as store, Inspection};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Pages copied per step of a backup unless told otherwise (4 MiB of
/// 4 KiB pages).
pub const PAGES_PER_STEP: u32 = 1024;

/// Between steps: leaves the disk to the daemon for a moment.
const PAUSE: Duration = Duration::from_millis(10);

/// The lock `serve` holds on its data directory for as long as it runs, and
/// `restore` while it swaps the database: the database must never be
/// replaced under a daemon that has it open.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another depot-edge ({}) holds {}", pid.map_or_else(|| "pid unknown".to_owned(), |p| format!("pid {p}")), path.display())]
    Held { path: PathBuf, pid: Option<u32> },
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl DataDirLock {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("edge.lock")
    }

    /// Takes the lock, creating the data directory if needed. The lock file
    /// stays when released (removing it would race with the next taker);
    /// it holds the pid of the last holder, for messages.
    pub fn acquire(data_dir: &Path) -> Result<Self, LockError> {
        let path = Self::path(data_dir);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(data_dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // `try_lock` needs Rust 1.89 (the pinned toolchain is newer) while
        // `rust-version` still says 1.85: raising it turns on lints that
        // the rest of the workspace does not pass yet.
        #[allow(clippy::incompatible_msrv)]
        let locked = file.try_lock();
        match locked {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(LockError::Held {
                    pid: text.trim().parse().ok(),
                    path,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        Ok(Self { _file: file })
    }
}

/// What `backup` wrote.
#[derive(Debug)]
pub struct BackupReport {
    pub path: PathBuf,
    pub bytes: u64,
    pub pages: u64,
    pub last_seq: i64,
    pub origin: String,
    pub took: Duration,
}

impl fmt::Display for BackupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "wrote {} ({} bytes, {} pages) in {:.1}s: {}, events through seq {}, integrity ok",
            self.path.display(),
            self.bytes,
            self.pages,
            self.took.as_secs_f64(),
            self.origin,
            self.last_seq
        )
    }
}

/// Copies the live database to `target`. Safe while the daemon runs.
pub fn backup(
    settings: &Settings,
    target: &Path,
    pages_per_step: u32,
) -> anyhow::Result<BackupReport> {
    let started = Instant::now();
    let db = settings.database();
    if !db.is_file() {
        bail!(
            "no database at {}: is data_dir right (DEPOT_DATA_DIR)? It is made when `depot-edge serve` first starts",
            db.display()
        );
    }
    if target.is_dir() {
        bail!(
            "{} is a directory: name the backup file, e.g. {}",
            target.display(),
            target.join("edge-backup.db").display()
        );
    }
    let Some(name) = target.file_name() else {
        bail!("{} does not name a file", target.display());
    };
    let dir = parent(target);
    if !dir.is_dir() {
        bail!(
            "cannot write {}: the directory {} does not exist (create it first)",
            target.display(),
            dir.display()
        );
    }
    if same_file(target, &db) {
        bail!(
            "{} is the live database itself: write the backup somewhere else",
            target.display()
        );
    }
    room_for_copy(settings, target, dir, &db)?;
    let partial = Partial::new(dir.join(format!(
        ".{}.{}.partial",
        name.to_string_lossy(),
        std::process::id()
    )));
    partial.clear();
    let bar = progress_bar();
    store::copy_live(&db, &partial.path, pages_per_step, PAUSE, |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    })
    .with_context(|| format!("copying {} to {}", db.display(), partial.path.display()))?;
    bar.finish_and_clear();
    store::settle(&partial.path)
        .with_context(|| format!("finishing {}", partial.path.display()))?;
    let seen = store::inspect(&partial.path)
        .with_context(|| format!("checking {}", partial.path.display()))?;
    if !seen.is_ok() {
        bail!(
            "the copy failed its integrity check ({}); nothing was written to {}. The live database may be damaged: check the disk, and keep the last good backup",
            seen.problems.join("; "),
            target.display()
        );
    }
    sync_file(&partial.path)?;
    std::fs::rename(&partial.path, target).with_context(|| {
        format!(
            "renaming {} to {}",
            partial.path.display(),
            target.display()
        )
    })?;
    partial.keep();
    sync_dir(dir)?;
    let bytes = std::fs::metadata(target)
        .with_context(|| format!("reading {}", target.display()))?
        .len();
    Ok(BackupReport {
        path: target.to_owned(),
        bytes,
        pages: seen.pages,
        last_seq: seen.last_seq,
        origin: seen
            .node
            .map(|(n, o)| format!("{o} (node {n})"))
            .unwrap_or_else(|| "no node".into()),
        took: started.elapsed(),
    })
}

/// What `restore` did.
#[derive(Debug)]
pub struct RestoreReport {
    pub from: PathBuf,
    pub database: PathBuf,
    pub last_seq: i64,
    pub origin: String,
    /// Where the database it replaced was kept, if there was one.
    pub kept: Option<PathBuf>,
    /// The replaced database's log, if it could be read and went further
    /// than the backup: `(newest seq, acknowledged by the cloud)`.
    pub behind: Option<(i64, i64)>,
    /// The newest of the box's own events in the backup (its place in what
    /// goes up to the cloud).
    pub own_through: i64,
}

impl fmt::Display for RestoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "restored {} into {}: {}, events through seq {}",
            self.from.display(),
            self.database.display(),
            self.origin,
            self.last_seq
        )?;
        if let Some(kept) = &self.kept {
            write!(
                f,
                "\nthe replaced database is kept as {} (delete it once the box works)",
                kept.display()
            )?;
        }
        if let Some((head, acked)) = self.behind {
            write!(
                f,
                "\nthe replaced database had events through seq {head}; the {} made after this backup are not in it",
                head - self.last_seq
            )?;
            if acked > self.own_through {
                write!(
                    f,
                    "\nthe cloud had acknowledged {acked} of the box's own events, the backup holds {}: the daemon takes the other {} back from the cloud before it sends anything (see docs/deployment.md, Backups)",
                    self.own_through,
                    acked - self.own_through
                )?;
            }
        }
        write!(
            f,
            "\nwhen it next connects, the daemon asks the cloud for the box's own events after the {} in this backup before it sends any",
            self.own_through
        )?;
        Ok(())
    }
}

/// Replaces the database with the backup at `source`, after checking that
/// it is whole and this edge's. The daemon must be stopped. The restored
/// log is marked as certain only through its newest event: the cloud may
/// hold later ones, which the daemon takes back before sending its own.
pub fn restore(settings: &Settings, source: &Path) -> anyhow::Result<RestoreReport> {
    if !source.exists() {
        bail!("no backup at {}", source.display());
    }
    if !source.is_file() {
        bail!(
            "{} is not a file: name a file `depot-edge backup` wrote",
            source.display()
        );
    }
    let sqlite = store::looks_like_sqlite(source)
        .with_context(|| format!("reading {}", source.display()))?;
    if !sqlite {
        bail!(
            "{} is not an SQLite database (it does not start with the SQLite header): name a file `depot-edge backup` wrote",
            source.display()
        );
    }
    let _lock = match DataDirLock::acquire(&settings.data_dir) {
        Ok(lock) => lock,
        Err(LockError::Held { pid, .. }) => bail!(
            "a depot-edge daemon{} is running on {}: stop it first (e.g. `systemctl stop depot-edge`), then restore; nothing was changed",
            pid.map(|p| format!(" (pid {p})")).unwrap_or_default(),
            settings.data_dir.display()
        ),
        Err(e) => return Err(e.into()),
    };
    let db = settings.database();
    let partial = Partial::new(settings.data_dir.join("edge.db.restoring"));
    partial.clear();
    std::fs::copy(source, &partial.path)
        .with_context(|| format!("copying {} to {}", source.display(), partial.path.display()))?;
    let corrupt = |what: &str| {
        anyhow::anyhow!(
            "{} is corrupt ({what}): it cannot be restored; use an older backup. Nothing was changed",
            source.display()
        )
    };
    // A copy that cannot even leave WAL mode is likely damaged; `inspect`
    // says how.
    if let Err(e) = store::settle(&partial.path) {
        let seen = store::inspect(&partial.path)
            .with_context(|| format!("checking {}", source.display()))?;
        if seen.is_ok() {
            return Err(
                anyhow::Error::new(e).context(format!("preparing {}", partial.path.display()))
            );
        }
        return Err(corrupt(&seen.problems.join("; ")));
    }
    let seen =
        store::inspect(&partial.path).with_context(|| format!("checking {}", source.display()))?;
    if !seen.is_ok() {
        return Err(corrupt(&seen.problems.join("; ")));
    }
    check_identity(settings, source, &seen)?;
    let own_through = store::mark_restored(&partial.path)
        .with_context(|| format!("preparing {}", partial.path.display()))?;
    sync_file(&partial.path)?;

    // Best effort: a database damaged enough to need restoring may not say.
    let behind = if db.exists() {
        store::log_position(&db)
            .ok()
            .filter(|(head, _)| *head > seen.last_seq)
    } else {
        None
    };
    let kept = set_aside(&db)?;
    std::fs::rename(&partial.path, &db)
        .with_context(|| format!("renaming {} to {}", partial.path.display(), db.display()))?;
    partial.keep();
    sync_dir(&settings.data_dir)?;
    Ok(RestoreReport {
        from: source.to_owned(),
        database: db,
        last_seq: seen.last_seq,
        origin: seen
            .node
            .map(|(n, o)| format!("{o} (node {n})"))
            .unwrap_or_default(),
        kept,
        behind,
        own_through,
    })
}

/// Refuses a database that is not this edge's.
fn check_identity(settings: &Settings, source: &Path, seen: &Inspection) -> anyhow::Result<()> {
    let this = format!(
        "this box is {} (node {}) of business {}",
        settings.origin(),
        settings.node,
        settings.business_id
    );
    match &seen.node {
        None => bail!(
            "{} is not a depot edge database (it has no node record); nothing was changed",
            source.display()
        ),
        Some((0, origin)) => bail!(
            "{} is a {origin} database, not an edge's: {this}; nothing was changed",
            source.display()
        ),
        Some((n, origin)) if *n != settings.node || *origin != settings.origin() => bail!(
            "{} is the database of {origin} (node {n}), but {this}: restore a backup of this edge, or restore with that edge's settings; nothing was changed",
            source.display()
        ),
        Some(_) => {}
    }
    if let Some(other) = seen.businesses.iter().find(|b| **b != settings.business_id) {
        bail!(
            "{} holds business {other}, but {this}; nothing was changed",
            source.display()
        );
    }
    if !seen.schema_known {
        bail!(
            "{} was written by a newer depot-edge (schema version {}): restore it with that version; nothing was changed",
            source.display(),
            seen.schema_version
        );
    }
    Ok(())
}

/// Moves the database out of the way for its replacement, keeping it (and
/// its WAL, if anything is left in it) under one new name.
///
/// Its `-wal` and `-shm` must not stay behind: SQLite would apply an old WAL
/// to the new file. The WAL is checkpointed first, so that in the normal
/// case it holds nothing the main file lacks; a database too damaged to
/// checkpoint keeps its WAL beside the kept copy instead.
fn set_aside(db: &Path) -> anyhow::Result<Option<PathBuf>> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    if !db.exists() {
        // No database, but perhaps the WAL of one that was removed by hand.
        let wal = sibling(db, "-wal");
        if wal.exists() {
            let dest = db.with_file_name(format!("edge.db.orphan-{stamp}-wal"));
            std::fs::rename(&wal, &dest)
                .with_context(|| format!("moving {} to {}", wal.display(), dest.display()))?;
        }
        let _ = std::fs::remove_file(sibling(db, "-shm"));
        return Ok(None);
    }
    let complete = match store::checkpoint(db) {
        Ok(complete) => complete,
        Err(e) => {
            tracing::warn!(error = %e, "could not checkpoint the database being replaced");
            false
        }
    };
    let kept = db.with_file_name(format!("edge.db.replaced-{stamp}"));
    // A hard link keeps the old file while the rename below swaps in the
    // new one atomically; without hard links, it is moved first.
    if std::fs::hard_link(db, &kept).is_err() {
        std::fs::rename(db, &kept)
            .with_context(|| format!("moving {} to {}", db.display(), kept.display()))?;
    }
    for suffix in ["-wal", "-shm"] {
        let side = sibling(db, suffix);
        if !side.exists() {
            continue;
        }
        let dest = sibling(&kept, suffix);
        if suffix == "-wal" && !complete {
            std::fs::rename(&side, &dest)
                .with_context(|| format!("moving {} to {}", side.display(), dest.display()))?;
        } else {
            // Checkpointed (or only the WAL's index): nothing in it is needed.
            std::fs::remove_file(&side).with_context(|| format!("removing {}", side.display()))?;
        }
    }
    Ok(Some(kept))
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// A backup that fills the disk would stop the floor's writes until it
/// failed: it starts only when the copy fits, and, on the data directory's
/// own disk, leaves the floor `low_disk_mib` besides.
fn room_for_copy(settings: &Settings, target: &Path, dir: &Path, db: &Path) -> anyhow::Result<()> {
    let need = disk::database_bytes(db);
    let (free, _) = disk::free_and_size(dir)
        .with_context(|| format!("reading the room left in {}", dir.display()))?;
    let device = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    let shared = device(dir).is_some() && device(dir) == device(&settings.data_dir);
    if shared {
        let keep = settings.low_disk_mib.saturating_mul(disk::MIB);
        if free < need.saturating_add(keep) {
            bail!(
                "{} is on the data directory's own disk, which has {} free: the copy needs about {} and the floor keeps {} (low_disk_mib) for its own writes. Write the backup to another disk (a USB stick, a network share), or free space",
                target.display(),
                disk::human(free),
                disk::human(need),
                disk::human(keep)
            );
        }
    } else if free < need {
        bail!(
            "{} has {} free and the copy needs about {}: write the backup to a disk with room, or free space",
            dir.display(),
            disk::human(free),
            disk::human(need)
        );
    }
    Ok(())
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A progress bar on stderr when a person is watching it.
fn progress_bar() -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} copying [{bar:40}] {pos}/{len} pages ({eta} left)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn sync_file(path: &Path) -> anyhow::Result<()> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("syncing {}", path.display()))
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> anyhow::Result<()> {
    File::open(dir)
        .and_then(|f| f.sync_all())
        .with_context(|| format!("syncing {}", dir.display()))
}

/// A file being written under a temporary name: removed, with whatever
/// SQLite put beside it, unless it was renamed into place.
struct Partial {
    path: PathBuf,
    done: std::cell::Cell<bool>,
}

impl Partial {
    fn new(path: PathBuf) -> Self {
        Self {
            path,
            done: std::cell::Cell::new(false),
        }
    }

    fn keep(&self) {
        self.done.set(true);
    }

    /// Removes leftovers of an earlier attempt that died.
    fn clear(&self) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(sibling(&self.path, suffix));
        }
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done.get() {
            self.clear();
        } else {
            // The main file moved; only SQLite's side files could remain.
            for suffix in ["-journal", "-wal", "-shm"] {
                let _ = std::fs::remove_file(sibling(&self.path, suffix));
            }
        }
    }
}
