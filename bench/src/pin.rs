//! Server and load generator on different cores, where a bench runs both
//! in one process on one machine: each gets a tokio runtime whose threads
//! are pinned to its half of the cores the process may use, so the load
//! generator's work does not land on the server's cores (and the other
//! way round). On one core, or where affinity cannot be set, nothing is
//! pinned and the report says so.

use std::io;

/// The cores the process may use, split into two halves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub server: Vec<usize>,
    pub clients: Vec<usize>,
}

impl Split {
    /// The cores this process may run on (its affinity mask), halved:
    /// the server takes the first half (the larger, on an odd count).
    /// `None` with fewer than two.
    pub fn of_this_process() -> Option<Self> {
        let set = rustix::thread::sched_getaffinity(None).ok()?;
        let cores: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect();
        Self::halve(&cores)
    }

    fn halve(cores: &[usize]) -> Option<Self> {
        if cores.len() < 2 {
            return None;
        }
        let (server, clients) = cores.split_at(cores.len().div_ceil(2));
        Some(Self {
            server: server.to_vec(),
            clients: clients.to_vec(),
        })
    }

    /// How a report says it: "server on cores 0, clients on cores 1".
    pub fn describe(split: Option<&Self>) -> String {
        let list = |c: &[usize]| c.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        match split {
            Some(s) => format!(
                "server pinned to core(s) {}, load generator to core(s) {}",
                list(&s.server),
                list(&s.clients)
            ),
            None => "not pinned (one core, or affinity unavailable): server and load generator share the cores".into(),
        }
    }
}

/// Pins the calling thread to `cores`; the threads it starts after
/// inherit the mask (an engine's writer and reader threads do).
pub fn pin_current(cores: &[usize]) -> io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &c in cores {
        set.set(c);
    }
    rustix::thread::sched_setaffinity(None, &set).map_err(io::Error::from)
}

/// A multi-thread runtime of one worker per core in `cores`, every thread
/// of it (workers and blocking pool) pinned there. `name` names its
/// threads, so a profile tells server from clients (and
/// [`crate::cpu::server`] reads the server's, named
/// [`crate::cpu::SERVER_THREADS`]).
pub fn runtime(name: &str, cores: &[usize]) -> io::Result<tokio::runtime::Runtime> {
    let pinned = cores.to_vec();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.len().max(1))
        .thread_name(name)
        // Blocking threads (the engine's reads) are kept for the whole
        // run: the CPU time of a thread that ends leaves procfs with it,
        // and [`crate::cpu::server`] would lose it.
        .thread_keep_alive(std::time::Duration::from_secs(24 * 3600))
        .on_thread_start(move || {
            if let Err(e) = pin_current(&pinned) {
                eprintln!("could not pin a thread: {e}");
            }
        })
        .enable_all()
        .build()
}

/// The server's side, as every bench that serves and loads in one process
/// sets it up: the cores split (unless `no_pin`), the calling thread
/// pinned to the server's half (so the engines it opens next, whose
/// threads inherit its mask, run there), and the server's runtime, named
/// [`crate::cpu::SERVER_THREADS`]. Unpinned, a default runtime.
pub fn server(no_pin: bool) -> io::Result<(Option<Split>, tokio::runtime::Runtime)> {
    let split = if no_pin {
        None
    } else {
        Split::of_this_process()
    };
    let runtime = match &split {
        Some(s) => {
            pin_current(&s.server)?;
            runtime(crate::cpu::SERVER_THREADS, &s.server)?
        }
        None => tokio::runtime::Runtime::new()?,
    };
    Ok((split, runtime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_the_cores_with_the_server_taking_the_odd_one() {
        assert_eq!(Split::halve(&[0]), None);
        assert_eq!(
            Split::halve(&[0, 1]),
            Some(Split {
                server: vec![0],
                clients: vec![1]
            })
        );
        assert_eq!(
            Split::halve(&[2, 3, 5]),
            Some(Split {
                server: vec![2, 3],
                clients: vec![5]
            })
        );
    }

    #[test]
    fn a_pinned_runtime_runs_on_its_cores() {
        let Some(split) = Split::of_this_process() else {
            return;
        };
        let rt = runtime("pin-test", &split.clients).expect("runtime");
        let on = rt.block_on(async {
            tokio::spawn(async { rustix::thread::sched_getcpu() })
                .await
                .expect("task")
        });
        assert!(split.clients.contains(&on), "{on} not in {split:?}");
        assert!(Split::describe(Some(&split)).contains("pinned"));
    }
}
