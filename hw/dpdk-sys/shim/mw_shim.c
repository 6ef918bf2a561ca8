/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Out-of-line wrappers of DPDK 22.11's static-inline API (see mw_shim.h).
 * Compiled by build.rs with the full `pkg-config --cflags libdpdk`.
 */
#include <rte_config.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>

#include "mw_shim.h"

uint16_t mw_eth_rx_burst(uint16_t port_id, uint16_t queue_id,
			 struct rte_mbuf **rx_pkts, uint16_t nb_pkts)
{
	return rte_eth_rx_burst(port_id, queue_id, rx_pkts, nb_pkts);
}

uint16_t mw_eth_tx_burst(uint16_t port_id, uint16_t queue_id,
			 struct rte_mbuf **tx_pkts, uint16_t nb_pkts)
{
	return rte_eth_tx_burst(port_id, queue_id, tx_pkts, nb_pkts);
}

struct rte_mbuf *mw_pktmbuf_alloc(struct rte_mempool *mp)
{
	return rte_pktmbuf_alloc(mp);
}

int mw_pktmbuf_alloc_bulk(struct rte_mempool *mp, struct rte_mbuf **mbufs,
			  unsigned int count)
{
	return rte_pktmbuf_alloc_bulk(mp, mbufs, count);
}

void mw_pktmbuf_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

void mw_pktmbuf_free_bulk(struct rte_mbuf **mbufs, unsigned int count)
{
	rte_pktmbuf_free_bulk(mbufs, count);
}

void mw_pktmbuf_reset(struct rte_mbuf *m)
{
	rte_pktmbuf_reset(m);
}

char *mw_pktmbuf_prepend(struct rte_mbuf *m, uint16_t len)
{
	return rte_pktmbuf_prepend(m, len);
}

char *mw_pktmbuf_adj(struct rte_mbuf *m, uint16_t len)
{
	return rte_pktmbuf_adj(m, len);
}

char *mw_pktmbuf_append(struct rte_mbuf *m, uint16_t len)
{
	return rte_pktmbuf_append(m, len);
}

int mw_pktmbuf_trim(struct rte_mbuf *m, uint16_t len)
{
	return rte_pktmbuf_trim(m, len);
}

void *mw_pktmbuf_mtod(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, void *);
}

void *mw_pktmbuf_mtod_offset(struct rte_mbuf *m, uint32_t off)
{
	return rte_pktmbuf_mtod_offset(m, void *, off);
}

uint16_t mw_pktmbuf_data_len(const struct rte_mbuf *m)
{
	return rte_pktmbuf_data_len(m);
}

uint32_t mw_pktmbuf_pkt_len(const struct rte_mbuf *m)
{
	return rte_pktmbuf_pkt_len(m);
}

uint16_t mw_pktmbuf_headroom(const struct rte_mbuf *m)
{
	return rte_pktmbuf_headroom(m);
}

uint16_t mw_pktmbuf_tailroom(const struct rte_mbuf *m)
{
	return rte_pktmbuf_tailroom(m);
}

int mw_pktmbuf_is_contiguous(const struct rte_mbuf *m)
{
	return rte_pktmbuf_is_contiguous(m);
}

uint16_t mw_mbuf_refcnt_read(const struct rte_mbuf *m)
{
	return rte_mbuf_refcnt_read(m);
}

uint16_t mw_mbuf_refcnt_update(struct rte_mbuf *m, int16_t value)
{
	return rte_mbuf_refcnt_update(m, value);
}

int mw_pktmbuf_chain(struct rte_mbuf *head, struct rte_mbuf *tail)
{
	return rte_pktmbuf_chain(head, tail);
}

int mw_pktmbuf_linearize(struct rte_mbuf *m)
{
	return rte_pktmbuf_linearize(m);
}

const void *mw_pktmbuf_read(const struct rte_mbuf *m, uint32_t off,
			    uint32_t len, void *buf)
{
	return rte_pktmbuf_read(m, off, len, buf);
}

struct rte_mbuf *mw_pktmbuf_header_clone(struct rte_mbuf *md,
					 struct rte_mempool *headers,
					 struct rte_mempool *clones)
{
	struct rte_mbuf *h, *mi;

	if (unlikely(md->nb_segs != 1))
		return NULL;
	h = rte_pktmbuf_alloc(headers);
	if (unlikely(h == NULL))
		return NULL;
	mi = rte_pktmbuf_alloc(clones);
	if (unlikely(mi == NULL)) {
		rte_pktmbuf_free(h);
		return NULL;
	}
	/* What rte_pktmbuf_clone does for one segment, inline. */
	rte_pktmbuf_attach(mi, md);
	h->next = mi;
	h->nb_segs = 2;
	h->pkt_len = h->data_len + mi->pkt_len;
	return h;
}

uint16_t mw_pktmbuf_data_room_size(struct rte_mempool *mp)
{
	return rte_pktmbuf_data_room_size(mp);
}

uint64_t mw_get_tsc_cycles(void)
{
	return rte_get_tsc_cycles();
}

uint64_t mw_get_tsc_hz(void)
{
	return rte_get_tsc_hz();
}

unsigned int mw_lcore_id(void)
{
	return rte_lcore_id();
}

unsigned int mw_socket_id(void)
{
	return rte_socket_id();
}

int mw_errno(void)
{
	return rte_errno;
}

void mw_set_errno(int value)
{
	rte_errno = value;
}

void mw_pause(void)
{
	rte_pause();
}
