/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * mw_shim: out-of-line copies of DPDK's static-inline functions, macros and
 * per-lcore (TLS) variables, which bindgen can describe but Rust cannot link
 * or read. Each mw_X wraps rte_X with the same semantics. The Rust
 * declarations are in src/shim.rs and must match these signatures.
 */
#ifndef MW_SHIM_H
#define MW_SHIM_H

#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;

/* ethdev fast path */
uint16_t mw_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
			 struct rte_mbuf **rx_pkts, uint16_t nb_pkts);
uint16_t mw_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
			 struct rte_mbuf **tx_pkts, uint16_t nb_pkts);

/* mbuf allocation */
struct rte_mbuf *mw_pktmbuf_alloc(struct rte_mempool *mp);
int mw_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs,
			  unsigned int count);
void mw_pktmbuf_free(struct rte_mbuf *m);
void mw_pktmbuf_free_bulk(struct rte_mbuf **mbufs, unsigned int count);
void mw_pktmbuf_reset(struct rte_mbuf *m);

/* mbuf data (first segment for the *_len/room getters, as DPDK) */
char *mw_pktmbuf_prepend(struct rte_mbuf *m, uint16_t len);
char *mw_pktmbuf_adj(struct rte_mbuf *m, uint16_t len);
char *mw_pktmbuf_append(struct rte_mbuf *m, uint16_t len);
int mw_pktmbuf_trim(struct rte_mbuf *m, uint16_t len);
void *mw_pktmbuf_mtod(struct rte_mbuf *m);
void *mw_pktmbuf_mtod_offset(struct rte_mbuf *m, uint32_t off);
uint16_t mw_pktmbuf_data_len(const struct rte_mbuf *m);
uint32_t mw_pktmbuf_pkt_len(const struct rte_mbuf *m);
uint16_t mw_pktmbuf_headroom(const struct rte_mbuf *m);
uint16_t mw_pktmbuf_tailroom(const struct rte_mbuf *m);
int mw_pktmbuf_is_contiguous(const struct rte_mbuf *m);
uint16_t mw_mbuf_refcnt_read(const struct rte_mbuf *m);
uint16_t mw_mbuf_refcnt_update(struct rte_mbuf *m, int16_t value);

/* chains (multicast replication, multi-segment receive) */
int mw_pktmbuf_chain(struct rte_mbuf *head, struct rte_mbuf *tail);
int mw_pktmbuf_linearize(struct rte_mbuf *m);
const void *mw_pktmbuf_read(const struct rte_mbuf *m, uint32_t off,
			    uint32_t len, void *buf);
struct rte_mbuf *mw_pktmbuf_header_clone(struct rte_mbuf *md,
					 struct rte_mempool *headers,
					 struct rte_mempool *clones);
uint16_t mw_pktmbuf_data_room_size(struct rte_mempool *mp);

/* time, lcores, errno */
uint64_t mw_get_tsc_cycles(void);
uint64_t mw_get_tsc_hz(void);
unsigned int mw_lcore_id(void);
unsigned int mw_socket_id(void);
int mw_errno(void);
void mw_set_errno(int value);
void mw_pause(void);

#endif /* MW_SHIM_H */
