//! [`PlaneStats`]: the counters of the daemon's control thread (docs/stats.md
//! "Router-wide"), declared here, beside the area that holds them, so that
//! readers know them without the daemon's crates.

rrp::counter_set! {
    /// The daemon's control-thread counters.
    pub struct PlaneStats in "plane" {
        /// Punted packets handed to the RRP engine.
        pub punts: u64 => counter "punts",
        /// Notices handed to the RRP engine.
        pub notices: u64 => counter "notices",
        /// Packets injected into a worker's ring.
        pub injected: u64 => counter "injected",
        /// Packets the engine sent that found the injection ring full.
        pub inject_full: u64 => counter "inject_full",
        /// Packets the engine sent to a native address the port cannot hold.
        pub inject_bad_native: u64 => counter "inject_bad_native",
        /// FIB sets published.
        pub fibs_published: u64 => counter "fibs_published",
        /// Version of the last published FIB set.
        pub fib_version: u64 => gauge "fib_version",
        /// An HR's partition tables that the forwarding path's guard could
        /// not take (more partitions than a SAN may have, a bad entry): the
        /// last good ones kept (docs/partitions.md "At the routers").
        pub partition_tables_refused: u64 => counter "partition_tables_refused",
    }
}
