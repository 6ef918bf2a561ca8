//! In-process ethdev pairs over `rte_ring`s, for tests and benchmarks.

use std::ffi::{CString, c_uint};
use std::sync::atomic::{AtomicU32, Ordering};

use dpdk_sys as sys;

use super::eal::{DpdkError, Eal, errno_error};
use super::ethdev::device_name;

/// The two ends of an in-process link made by [`ring_pair`]: what end `a`
/// transmits on queue `q`, end `b` receives on queue `q`, and the other way
/// round. Both are ethdevs of the ring PMD, to be started with
/// [`Eal::start_ports`] like any other device (by these names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingPair {
    /// One end's ethdev name.
    pub a: String,
    /// The other end's ethdev name.
    pub b: String,
}

static SEQ: AtomicU32 = AtomicU32::new(0);

fn ring(name: &str, size: u32) -> Result<*mut sys::rte_ring, DpdkError> {
    let c = CString::new(name).map_err(|_| DpdkError::BadArgument(name.into()))?;
    // SAFETY: EAL is initialised (callers hold an &Eal); `c` is a valid C
    // string; flags 0 = multi-producer/multi-consumer, size a power of two.
    let r = unsafe { sys::rte_ring_create(c.as_ptr(), size as c_uint, sys::SOCKET_ID_ANY, 0) };
    if r.is_null() {
        Err(errno_error("rte_ring_create", name))
    } else {
        Ok(r)
    }
}

/// Creates two ring-PMD ethdevs cross-connected by `2 × queues` rte_rings of
/// `ring_size` slots (rounded up to a power of two; one slot stays empty):
/// a "host" end for a test or generator thread and a "router" end, or two
/// routers back to back. Mbufs pass by pointer (zero copy, exact bytes and
/// `ol_flags`), in order, and a full ring refuses transmission.
///
/// The ethdevs are named `net_ring_<tag><n>a` and `…b` (the PMD's prefix,
/// then `<n>`, a process-wide sequence number: a vdev name cannot be used
/// twice in a process). The rings live for the rest of the process.
pub fn ring_pair(
    _eal: &Eal,
    tag: &str,
    queues: u16,
    ring_size: u32,
) -> Result<RingPair, DpdkError> {
    if queues == 0 {
        return Err(DpdkError::Config("a ring pair needs a queue".into()));
    }
    let size = ring_size.max(2).next_power_of_two();
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let (mut ab, mut ba) = (Vec::new(), Vec::new());
    for q in 0..queues {
        ab.push(ring(&format!("mwr{n}ab{q}"), size)?);
        ba.push(ring(&format!("mwr{n}ba{q}"), size)?);
    }
    let mut names = Vec::with_capacity(2);
    for (end, rx, tx) in [('a', &ba, &ab), ('b', &ab, &ba)] {
        // The PMD names the ethdev "net_ring_" + this name.
        let name = format!("{tag}{n}{end}");
        let c = CString::new(name.as_str()).map_err(|_| DpdkError::BadArgument(name.clone()))?;
        // SAFETY: EAL is initialised; `rx`/`tx` hold `queues` live rings,
        // which the PMD keeps using (they are never freed); `c` is a valid C
        // string.
        let rc = unsafe {
            sys::rte_eth_from_rings(
                c.as_ptr(),
                rx.as_ptr(),
                c_uint::from(queues),
                tx.as_ptr(),
                c_uint::from(queues),
                0,
            )
        };
        if rc < 0 {
            return Err(errno_error("rte_eth_from_rings", name));
        }
        let port = u16::try_from(rc).expect("an ethdev port id");
        names.push(device_name(port).ok_or(DpdkError::NoSuchDevice(name))?);
    }
    let b = names.pop().expect("two ends");
    let a = names.pop().expect("two ends");
    Ok(RingPair { a, b })
}
