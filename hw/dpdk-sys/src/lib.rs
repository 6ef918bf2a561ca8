//! dpdk-sys (being written).
