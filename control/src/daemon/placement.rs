//! Where the daemon's threads run (docs/daemon.md "Threads"): each worker
//! on its core (`workers.cores`), every other thread (control, admin,
//! stats, signals, and DPDK's own: interrupts, telemetry) on the control
//! cores, so that they never take a worker's core from it.
//!
//! The other threads are moved once everything has started, by thread id
//! (`/proc/self/task`): that also catches the threads EAL starts, and
//! undoes EAL's pinning of the main thread to its main lcore, which the
//! threads spawned after `rte_eal_init` inherit. Threads started later
//! inherit the control cores from the thread that starts them.

use std::collections::BTreeSet;

use rustix::process::Pid;
use rustix::thread::{CpuSet, gettid, sched_getaffinity, sched_setaffinity};

use crate::config::Config;

/// The cores the calling thread may run on (the process's, when called
/// before anything pins it).
pub fn allowed_cores() -> Vec<usize> {
    match sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
        Err(_) => Vec::new(),
    }
}

/// The cores of the threads other than the workers: `workers.control_cores`;
/// else, when the workers are pinned, the `allowed` cores less theirs (all
/// of `allowed` if that leaves none: the `Err` says so); else none (nothing
/// is pinned, nothing is moved).
pub fn control_cores(cfg: &Config, allowed: &[usize]) -> Result<Option<Vec<usize>>, String> {
    if let Some(c) = &cfg.workers.control_cores {
        return Ok(Some(c.clone()));
    }
    let Some(workers) = &cfg.workers.cores else {
        return Ok(None);
    };
    let busy: BTreeSet<usize> = workers.iter().copied().collect();
    let rest: Vec<usize> = allowed
        .iter()
        .copied()
        .filter(|c| !busy.contains(c))
        .collect();
    if rest.is_empty() {
        return Err(format!(
            "the workers take every core the daemon may use ({allowed:?}): the other \
             threads share them (set workers.control_cores to choose)"
        ));
    }
    Ok(Some(rest))
}

/// The workers' cores that the other threads share (`control`): a
/// configuration can ask for it (`workers.control_cores` naming a worker's
/// core), and the daemon then warns, because a worker preempted in the
/// middle of a burst by the control threads or by EAL's interrupt thread
/// forwards unevenly, and DPDK's memif driver unmaps a disconnected peer's
/// rings from that interrupt thread while a preempted worker may still be
/// reading them (docs/reliability.md "Default mode").
pub fn shared_worker_cores(cfg: &Config, control: &[usize]) -> Vec<usize> {
    let Some(workers) = &cfg.workers.cores else {
        return Vec::new();
    };
    let mut shared: Vec<usize> = workers
        .iter()
        .copied()
        .filter(|c| control.contains(c))
        .collect();
    shared.sort_unstable();
    shared.dedup();
    shared
}

/// The id of the calling thread (for [`place_others`]' exceptions).
pub fn thread_id() -> i32 {
    gettid().as_raw_nonzero().get()
}

/// Moves every thread of the process except `keep` (the workers) onto
/// `cores`. Returns how many threads were moved; a thread that ended in
/// the meantime is skipped.
pub fn place_others(cores: &[usize], keep: &[i32]) -> Result<usize, String> {
    let mut set = CpuSet::new();
    for &c in cores {
        if c >= CpuSet::MAX_CPU {
            return Err(format!("core {c}: above the largest core id"));
        }
        set.set(c);
    }
    let tasks =
        std::fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
    let mut moved = 0;
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if keep.contains(&tid) {
            continue;
        }
        let Some(pid) = Pid::from_raw(tid) else {
            continue;
        };
        match sched_setaffinity(Some(pid), &set) {
            Ok(()) => moved += 1,
            // Gone since the listing.
            Err(rustix::io::Errno::SRCH) => {}
            Err(e) => return Err(format!("thread {tid} to cores {cores:?}: {e}")),
        }
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn cfg(toml_workers: &str) -> Config {
        let text = format!(
            "[router]\nname = \"r\"\n[[hr]]\naddress = 0x0101\nsan_id = 0x0201\nmtu = 1500\n\
             [hr.port]\nbackend = \"udp\"\nbind = \"127.0.0.1:35101\"\n[workers]\n{toml_workers}\n"
        );
        Config::from_toml(&text).expect("config")
    }

    #[test]
    fn control_cores_default_to_the_rest() {
        let c = cfg("cores = [1]");
        assert_eq!(control_cores(&c, &[0, 1, 2]).unwrap(), Some(vec![0, 2]));
        assert!(control_cores(&c, &[1]).is_err());
        let c = cfg("cores = [1]\ncontrol_cores = [1]");
        assert_eq!(control_cores(&c, &[0, 1]).unwrap(), Some(vec![1]));
        let c = cfg("");
        assert_eq!(control_cores(&c, &[0, 1]).unwrap(), None);
    }

    #[test]
    fn workers_sharing_a_core_with_the_others_are_found() {
        let c = cfg("count = 2\ncores = [1, 2]\ncontrol_cores = [0, 2]");
        assert_eq!(shared_worker_cores(&c, &[0, 2]), [2]);
        let c = cfg("cores = [1]");
        assert!(shared_worker_cores(&c, &[0]).is_empty());
        let c = cfg("");
        assert!(shared_worker_cores(&c, &[0, 1]).is_empty());
    }
}
