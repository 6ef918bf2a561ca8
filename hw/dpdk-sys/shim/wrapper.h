/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * What dpdk-sys binds: bindgen reads this header with the full
 * `pkg-config --cflags libdpdk` (which force-includes rte_config.h).
 */
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ethdev.h>
#include <rte_bus_vdev.h>
/* rte_flow: steering MessageWay frames to the workers' queues (hw/ports
 * dpdk::ethdev, "flows" spread). */
#include <rte_flow.h>
/* rte_eth_from_rings: in-process ring ethdev pairs for tests and benchmarks
 * (hw/ports dpdk::ring_pair); the library is linked in build.rs. */
#include <rte_eth_ring.h>
