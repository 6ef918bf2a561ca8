//! Unmapping that waits for the workers: this process's `munmap`, which the
//! DPDK drivers loaded at run time resolve to (the daemon's executable
//! exports it: control/build.rs). Called on EAL's interrupt thread, it
//! defers the unmapping until every worker has started a pass since
//! ([`crate::grace`]); called anywhere else, it unmaps at once.
//!
//! Why: DPDK 22.11's memif driver handles a peer's disconnection on EAL's
//! interrupt thread (`memif_disconnect`): it clears the connected flag and
//! then unmaps the shared rings, with nothing between it and a worker that
//! checked the flag a moment before and is still inside `eth_memif_rx` or
//! `eth_memif_tx`. A worker preempted there reads unmapped memory and the
//! process dies (SIGSEGV in `librte_net_memif.so`; seen twice in an hour's
//! soak whose buddy restarts every 3 s, docs/reliability.md). With the
//! unmapping deferred, such a worker reads the old rings, still mapped,
//! finds the queue empty or stale, and its next pass sees the flag.
//!
//! Deferred regions are kept in a bounded list: when it is full (more than
//! [`MAX_PENDING`] regions waiting, i.e. workers that do not pass), the
//! unmapping happens at once, as it would without this, and is counted.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use crate::grace::{self, Ticket};

/// Regions waiting for the workers at most.
pub const MAX_PENDING: usize = 256;

/// The thread whose unmappings wait (EAL's interrupt thread), 0: none.
static DEFERRING_TID: AtomicI32 = AtomicI32::new(0);

/// What waits: address, length, and the ticket that must elapse.
static PENDING: Mutex<Vec<(usize, usize, Ticket)>> = Mutex::new(Vec::new());

/// Unmappings deferred, done after their grace period, and done at once
/// because the list was full (diagnostics: [`counts`]).
static DEFERRED: AtomicU64 = AtomicU64::new(0);
static RECLAIMED: AtomicU64 = AtomicU64::new(0);
static FORCED: AtomicU64 = AtomicU64::new(0);

/// From now on, unmappings by thread `tid` wait for the workers.
pub fn defer_on_thread(tid: i32) {
    // The list's room, allocated here rather than inside `munmap`.
    PENDING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .reserve_exact(MAX_PENDING);
    DEFERRING_TID.store(tid, Ordering::Release);
}

/// The thread id of this process's thread named `name` (`comm`), if any.
pub fn thread_named(name: &str) -> Option<i32> {
    std::fs::read_dir("/proc/self/task")
        .ok()?
        .flatten()
        .find_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            (comm.trim_end() == name)
                .then(|| t.file_name().to_str()?.parse().ok())
                .flatten()
        })
}

/// Unmappings deferred, reclaimed after their grace period, and forced
/// because the list was full, since the process started.
pub fn counts() -> (u64, u64, u64) {
    (
        DEFERRED.load(Ordering::Relaxed),
        RECLAIMED.load(Ordering::Relaxed),
        FORCED.load(Ordering::Relaxed),
    )
}

/// Regions waiting now.
pub fn pending() -> usize {
    PENDING.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// Unmaps what no worker can be reading any more. The daemon calls it
/// every 100 ms; each deferred unmapping calls it too.
pub fn reclaim() {
    let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    reclaim_locked(&mut p);
}

fn reclaim_locked(p: &mut Vec<(usize, usize, Ticket)>) {
    p.retain(|&(addr, len, t)| {
        if !t.elapsed() {
            return true;
        }
        raw_munmap(addr, len);
        RECLAIMED.fetch_add(1, Ordering::Relaxed);
        false
    });
}

fn raw_munmap(addr: usize, len: usize) -> c_int {
    // SAFETY: the system call itself, with the caller's arguments (a
    // deferred region is one a driver asked to unmap, unmapped once).
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int }
}

fn current_tid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// `munmap(2)` for this process (see the module's doc): on the deferring
/// thread the region stays mapped until the workers have passed, and 0 is
/// returned; elsewhere the system call.
///
/// # Safety
///
/// As `munmap(2)`: the caller gives up the mapping.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    let tid = DEFERRING_TID.load(Ordering::Acquire);
    if tid != 0 && tid == current_tid() {
        let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        reclaim_locked(&mut p);
        if p.len() < MAX_PENDING {
            p.push((addr as usize, len, grace::ticket()));
            DEFERRED.fetch_add(1, Ordering::Relaxed);
            // With no worker holding a mark, at once.
            reclaim_locked(&mut p);
            return 0;
        }
        FORCED.fetch_add(1, Ordering::Relaxed);
    }
    raw_munmap(addr as usize, len)
}
