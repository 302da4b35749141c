//! CPU time the process (or one of its threads) has used, from procfs.
//!
//! Wall-clock rates move with whatever else the machine runs; CPU time per
//! request moves far less, so a bench can still compare two builds while
//! the machine is busy. It is also what bounds throughput once every core
//! is busy: `cores / cpu_per_request`.

use std::time::Duration;

/// Clock ticks per second in procfs: `USER_HZ`, fixed at 100 in the
/// kernel's ABI on the architectures Depot runs on.
const TICKS_PER_SEC: u64 = 100;

/// User plus system time in a `stat` line of procfs; `None` where there is
/// no procfs or the line is not what the kernel writes.
fn stat_cpu(stat: &str) -> Option<Duration> {
    // The command name, in parentheses, may hold spaces: fields are counted
    // from after its closing parenthesis (field 3, the state, comes first).
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(
        (utime + stime) * 1000 / TICKS_PER_SEC,
    ))
}

/// CPU time of the whole process so far.
pub fn process() -> Option<Duration> {
    stat_cpu(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// CPU time so far of the process's threads named `name`, all together
/// (a bench may open several databases, each with its writer thread).
pub fn threads(name: &str) -> Option<Duration> {
    let mut total = None;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            // A thread may end between the listing and the read (a
            // runtime's idle blocking threads do): it is left out.
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            if let Some(cpu) = stat_cpu(&stat) {
                total = Some(total.unwrap_or_default() + cpu);
            }
        }
    }
    total
}

/// CPU time the whole machine has used so far, every process (a database
/// server's too): user, nice, system, irq, softirq and steal from the
/// first line of `/proc/stat`.
pub fn machine() -> Option<Duration> {
    machine_from(&std::fs::read_to_string("/proc/stat").ok()?)
}

fn machine_from(stat: &str) -> Option<Duration> {
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal
    let busy = [0, 1, 2, 5, 6, 7]
        .iter()
        .map(|&i| ticks.get(i).copied().unwrap_or(0))
        .sum::<u64>();
    Some(Duration::from_millis(busy * 1000 / TICKS_PER_SEC))
}

/// Threads of the server's runtime where a bench pins it ([`crate::pin`]).
pub const SERVER_THREADS: &str = "bench-server";

/// CPU time so far of the server where it runs on threads of its own: its
/// runtime's (workers and blocking pool: the engine's reads) and the
/// engine's writer. `None` when no thread is named for the server.
pub fn server() -> Option<Duration> {
    let own = threads(SERVER_THREADS)?;
    Some(own + threads("depot-writer").unwrap_or_default())
}

/// CPU time the process used since `before` (a [`process`] reading).
pub fn since(before: Option<Duration>) -> Option<Duration> {
    process()
        .zip(before)
        .map(|(after, before)| after.saturating_sub(before))
}

/// Microseconds of `cpu` per one of `n` requests.
pub fn micros_per(cpu: Duration, n: usize) -> f64 {
    cpu.as_secs_f64() * 1e6 / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_user_and_system_ticks_after_the_name() {
        let line = "4242 (tokio rt) worker) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 0 0";
        assert_eq!(stat_cpu(line), Some(Duration::from_millis(3250)));
    }

    #[test]
    fn reads_the_machines_busy_ticks() {
        let stat = "cpu  100 5 50 9000 40 3 2 1 0 0\ncpu0 50 2 25 4500 20 1 1 0 0 0\n";
        // 100 + 5 + 50 + 3 + 2 + 1 ticks: idle and iowait left out.
        assert_eq!(machine_from(stat), Some(Duration::from_millis(1610)));
        assert_eq!(machine_from("intr 1 2 3"), None);
    }

    #[test]
    fn refuses_what_is_not_a_stat_line() {
        assert_eq!(stat_cpu("no parenthesis here"), None);
        assert_eq!(stat_cpu("1 (x) S 1 2"), None);
        assert_eq!(stat_cpu("1 (x) S 1 2 3 4 5 6 7 8 9 10 x 5"), None);
    }

    #[test]
    fn this_process_has_used_some_cpu() {
        // Spin until the tick-granular counter moves: proves the fields read
        // are the ones that grow with work.
        let Some(start) = process() else {
            return;
        };
        let began = std::time::Instant::now();
        let mut x = 0u64;
        while process().is_some_and(|now| now <= start) {
            x = x.wrapping_mul(31).wrapping_add(1);
            assert!(began.elapsed() < Duration::from_secs(10), "{x}");
        }
        assert!(threads("no-such-thread-name").is_none());
    }
}
