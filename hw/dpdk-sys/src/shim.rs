//! Declarations of the C shim (`shim/mw_shim.c`): out-of-line copies of the
//! DPDK functions that are `static inline` in the headers, of macros, and of
//! the per-lcore TLS variable `rte_errno`, none of which Rust can link or read
//! directly.
//!
//! Each `mw_X` behaves exactly like DPDK's `rte_X`; see DPDK's documentation
//! of `rte_X` for the contract. The signatures mirror `shim/mw_shim.h` and are
//! checked against bindgen's reading of that header when the crate compiles.
//!
//! The functions that take pointers or ids are `unsafe`: the pointers must
//! be valid DPDK objects
//! (mbufs from a pktmbuf pool, pools from `rte_pktmbuf_pool_create`), port
//! and queue ids must name configured, started queues, and EAL must have been
//! initialised in this process. The time, lcore and errno accessors touch no
//! shared state and are declared `safe` (before EAL init `mw_get_tsc_hz`
//! returns 0 and `mw_lcore_id` returns `LCORE_ID_ANY`).

use crate::bindings::{rte_mbuf, rte_mempool};
use core::ffi::{c_char, c_int, c_uint, c_void};

unsafe extern "C" {
    /// `rte_eth_rx_burst`: receives up to `nb_pkts` mbufs into `rx_pkts`;
    /// returns how many. A queue is polled by one thread at a time.
    pub fn mw_eth_rx_burst(
        port_id: u16,
        queue_id: u16,
        rx_pkts: *mut *mut rte_mbuf,
        nb_pkts: u16,
    ) -> u16;

    /// `rte_eth_tx_burst`: hands up to `nb_pkts` mbufs to the driver and
    /// returns how many it took; the caller still owns (and must free or
    /// retry) the rest.
    pub fn mw_eth_tx_burst(
        port_id: u16,
        queue_id: u16,
        tx_pkts: *mut *mut rte_mbuf,
        nb_pkts: u16,
    ) -> u16;

    /// `rte_pktmbuf_alloc`: one reset mbuf from `mp`, or null when empty.
    pub fn mw_pktmbuf_alloc(mp: *mut rte_mempool) -> *mut rte_mbuf;

    /// `rte_pktmbuf_alloc_bulk`: `count` reset mbufs into `mbufs`, all or
    /// nothing; 0 on success, a negative errno otherwise.
    pub fn mw_pktmbuf_alloc_bulk(
        mp: *mut rte_mempool,
        mbufs: *mut *mut rte_mbuf,
        count: c_uint,
    ) -> c_int;

    /// `rte_pktmbuf_free`: frees an mbuf chain (null is allowed).
    pub fn mw_pktmbuf_free(m: *mut rte_mbuf);

    /// `rte_pktmbuf_free_bulk`: frees `count` mbuf chains (null entries are
    /// skipped).
    pub fn mw_pktmbuf_free_bulk(mbufs: *mut *mut rte_mbuf, count: c_uint);

    /// `rte_pktmbuf_reset`: resets the mbuf's fields (length 0, default
    /// headroom).
    pub fn mw_pktmbuf_reset(m: *mut rte_mbuf);

    /// `rte_pktmbuf_prepend`: grows the data `len` bytes to the front;
    /// returns the new start, or null if the headroom is too small.
    pub fn mw_pktmbuf_prepend(m: *mut rte_mbuf, len: u16) -> *mut c_char;

    /// `rte_pktmbuf_adj`: removes `len` bytes from the front; returns the new
    /// start, or null if the first segment is shorter.
    pub fn mw_pktmbuf_adj(m: *mut rte_mbuf, len: u16) -> *mut c_char;

    /// `rte_pktmbuf_append`: grows the data `len` bytes at the end of the
    /// last segment; returns the start of the new bytes, or null if the
    /// tailroom is too small.
    pub fn mw_pktmbuf_append(m: *mut rte_mbuf, len: u16) -> *mut c_char;

    /// `rte_pktmbuf_trim`: removes `len` bytes from the end of the last
    /// segment; 0 on success, -1 if it is shorter.
    pub fn mw_pktmbuf_trim(m: *mut rte_mbuf, len: u16) -> c_int;

    /// `rte_pktmbuf_mtod(m, void *)`: the start of the first segment's data.
    pub fn mw_pktmbuf_mtod(m: *mut rte_mbuf) -> *mut c_void;

    /// `rte_pktmbuf_mtod_offset(m, void *, off)`.
    pub fn mw_pktmbuf_mtod_offset(m: *mut rte_mbuf, off: u32) -> *mut c_void;

    /// `rte_pktmbuf_data_len`: bytes in the first segment.
    pub fn mw_pktmbuf_data_len(m: *const rte_mbuf) -> u16;

    /// `rte_pktmbuf_pkt_len`: bytes in the whole chain.
    pub fn mw_pktmbuf_pkt_len(m: *const rte_mbuf) -> u32;

    /// `rte_pktmbuf_headroom`: free bytes before the data.
    pub fn mw_pktmbuf_headroom(m: *const rte_mbuf) -> u16;

    /// `rte_pktmbuf_tailroom`: free bytes after the data of the first segment.
    pub fn mw_pktmbuf_tailroom(m: *const rte_mbuf) -> u16;

    /// `rte_pktmbuf_is_contiguous`: non-zero when the chain has one segment.
    pub fn mw_pktmbuf_is_contiguous(m: *const rte_mbuf) -> c_int;

    /// `rte_mbuf_refcnt_read`.
    pub fn mw_mbuf_refcnt_read(m: *const rte_mbuf) -> u16;

    /// `rte_mbuf_refcnt_update`: adds `value`; returns the new count.
    pub fn mw_mbuf_refcnt_update(m: *mut rte_mbuf, value: i16) -> u16;

    /// `rte_pktmbuf_chain`: appends the chain `tail` to the chain `head`
    /// (which then owns it); 0 on success, `-EOVERFLOW` (nothing changed)
    /// when the segment count would exceed `RTE_MBUF_MAX_NB_SEGS`.
    pub fn mw_pktmbuf_chain(head: *mut rte_mbuf, tail: *mut rte_mbuf) -> c_int;

    /// `rte_pktmbuf_linearize`: copies the data of every further segment
    /// into the first one's tailroom and frees those segments; 0 on success,
    /// -1 (nothing changed) when the tailroom is too small. It writes into
    /// the first segment's buffer: that buffer must not be shared.
    pub fn mw_pktmbuf_linearize(m: *mut rte_mbuf) -> c_int;

    /// `rte_pktmbuf_read`: a pointer to `len` bytes of the chain from `off`:
    /// into the first segment when they lie in it, else copied into `buf`
    /// (`len` bytes of room); null when the chain is shorter.
    pub fn mw_pktmbuf_read(
        m: *const rte_mbuf,
        off: u32,
        len: u32,
        buf: *mut c_void,
    ) -> *const c_void;

    /// A multicast replica of the single-segment packet `md` (what DPDK's
    /// `ipv4_multicast` builds in `mcast_out_pkt` with a clone): an empty
    /// mbuf from `headers` chained to an indirect mbuf from `clones`
    /// attached to `md`'s data (`rte_pktmbuf_attach`, which raises `md`'s
    /// reference count), in one call; null when `md` is a chain or a pool
    /// is empty (nothing allocated then).
    pub fn mw_pktmbuf_header_clone(
        md: *mut rte_mbuf,
        headers: *mut rte_mempool,
        clones: *mut rte_mempool,
    ) -> *mut rte_mbuf;

    /// `rte_pktmbuf_data_room_size`: the data room (headroom included) of
    /// each mbuf of the pktmbuf pool `mp`.
    pub fn mw_pktmbuf_data_room_size(mp: *mut rte_mempool) -> u16;

    /// `rte_get_tsc_cycles`: the TSC (rdtsc).
    pub safe fn mw_get_tsc_cycles() -> u64;

    /// `rte_get_tsc_hz`: TSC ticks per second, as EAL measured them.
    pub safe fn mw_get_tsc_hz() -> u64;

    /// `rte_lcore_id`: the calling thread's lcore id, `LCORE_ID_ANY`
    /// (`u32::MAX`) on threads that EAL did not create or register.
    pub safe fn mw_lcore_id() -> c_uint;

    /// `rte_socket_id`: the calling thread's NUMA socket.
    pub safe fn mw_socket_id() -> c_uint;

    /// The calling thread's `rte_errno` (a per-lcore TLS variable).
    pub safe fn mw_errno() -> c_int;

    /// Sets the calling thread's `rte_errno`.
    pub safe fn mw_set_errno(value: c_int);

    /// `rte_pause`: the spin-loop hint (x86 `pause`).
    pub safe fn mw_pause();
}
