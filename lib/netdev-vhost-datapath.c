/*
 * Copyright (c) 2026 The ovs-netdev-vhost authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

/* The datapath of the netdev-vhost class: netdev_vhost_send() and
 * netdev_vhost_rxq_recv(), run by PMD threads, with the batch preparation
 * (offload fields, copies into mbufs), the ring question and the tx
 * queues' staging.  Every flush or drop of a tx queue, also those the main
 * thread and the vhost-events thread make (reconfigure, destroy, vring
 * disabled), goes through txq_flush_locked() under the queue's tx_lock;
 * the class (lib/netdev-vhost.c) and the callbacks
 * (lib/netdev-vhost-events.c) call the exported wrappers. */

#include <config.h>

#include "netdev-vhost-private.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-mempool.h"
#include "netdev-vhost-qos.h"

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include "coverage.h"
#include "dp-packet.h"
#include "netdev-provider.h"
#include "openvswitch/vlog.h"
#include "packets.h"
#include "timeval.h"
#include "userspace-tso.h"
#include "util.h"
#include "vhost-ring.h"
#include "vhost-tx-policy.h"

#define this_module (*VLM_netdev_vhost)

COVERAGE_DEFINE(netdev_vhost_tx_contention);
COVERAGE_DEFINE(netdev_vhost_query_skipped);

/* Asks the guest's driver whether it wants a used buffer notification on
 * queue pair 'q' of 'dev' (its rx vring).  PMD thread, with the queue's
 * tx_lock held.  Returns false, and counts a skipped query, while the
 * rings are being changed: the burst then goes out at once, which is
 * always safe.  (utilities/ovs-vhost-bench measures this function by its
 * name.) */
static bool
guest_wants_interrupt(struct netdev_vhost *dev, struct netdev_vhost_qp *qp,
                      int vid, int q)
{
    bool wants = false;

    if (OVS_LIKELY(netdev_vhost_guard_enter(&qp->reading, &dev->rings_valid)
                   && qp->vring.avail && qp->vring.used)) {
        if (dev->features & (1ULL << VIRTIO_F_RING_PACKED)) {
            /* One read of the driver's event suppression structure; the
             * device's used position (DPDK keeps the wrap counter in bit
             * 15) is needed only for DESC, which DPDK guests never use. */
            struct vring_packed_desc_event ev;
            uint16_t last_avail = 0, last_used = 0;

            memcpy(&ev, (const void *) qp->vring.driver_event, sizeof ev);
            if ((ev.flags & 3) == VRING_PACKED_EVENT_FLAG_DESC) {
                rte_vhost_get_vring_base(vid, netdev_vhost_tx_vring(q),
                                         &last_avail, &last_used);
            }
            wants = vhost_packed_wants_interrupt(&ev, qp->vring.size,
                                                 last_used & 0x7fff,
                                                 last_used >> 15);
        } else {
            wants = vhost_split_wants_interrupt(
                qp->vring.avail, qp->vring.used, qp->vring.size,
                dev->features & (1ULL << VIRTIO_RING_F_EVENT_IDX));
        }
    } else {
        qp->queries_skipped++;
        COVERAGE_INC(netdev_vhost_query_skipped);
    }
    netdev_vhost_guard_exit(&qp->reading);
    qp->last_wants_intr = wants;
    return wants;
}

/* Tx queues. */

struct enqueue_ctx {
    struct netdev_vhost *dev;
    struct netdev_vhost_qp *qp;
    int vid;
    int q;
};

/* vhost_txp_send_func: places 'n' mbufs in the guest's rx vring of the
 * context's queue pair with up to tx-retries-max retries, then frees them
 * (rte_vhost_enqueue_burst() copies).  Called with the queue's tx_lock. */
static void
enqueue_cb(void *aux, void **pkts_, int n)
{
    struct enqueue_ctx *ctx = aux;
    struct rte_mbuf **pkts = (struct rte_mbuf **) pkts_;
    struct netdev_vhost_qp *qp = ctx->qp;
    int sent = 0, retries = 0, max_retries;
    uint64_t bytes = 0;

    if (OVS_LIKELY(ctx->vid >= 0)) {
        bool defer = NETDEV_VHOST_HAS_DEFERRED_KICKS && qp->kq.defer;

        atomic_read_relaxed(&ctx->dev->tx_retries_max, &max_retries);
        if (defer) {
            /* DPDK's guest_notify() on this thread answers for this
             * enqueue only (lib/netdev-vhost-kick.c). */
            netdev_vhost_kick_enqueue_begin(ctx->dev, ctx->q, ctx->vid);
        }
        for (;;) {
            int k = rte_vhost_enqueue_burst(ctx->vid,
                                            netdev_vhost_tx_vring(ctx->q),
                                            pkts + sent, n - sent);
            sent += k;
            if (!k || sent >= n || retries >= max_retries) {
                break;
            }
            retries++;
        }
        if (defer) {
            netdev_vhost_kick_enqueue_end();
        }
    }
    for (int i = 0; i < sent; i++) {
        bytes += rte_pktmbuf_pkt_len(pkts[i]);
    }
    /* One call for the burst, as stock OVS 3.5 (3.1 frees them one by
     * one): the mbufs go back to their mempools' per-lcore caches in bulk
     * (DPDK's rte_pktmbuf_free_bulk(), 22.11 and 24.11). */
    rte_pktmbuf_free_bulk(pkts, n);
    netdev_vhost_counter_add(&qp->tx_packets, sent);
    netdev_vhost_counter_add(&qp->tx_bytes, bytes);
    netdev_vhost_counter_add(&qp->tx_dropped, n - sent);
    netdev_vhost_counter_add(&qp->tx_retries, retries);
}

/* vhost_txp_drop_func: frees staged mbufs of a queue that is gone and
 * counts them in the queue pair's tx_staged_dropped.  Called with the
 * queue's tx_lock. */
static void
drop_cb(void *aux, void **pkts, int n)
{
    struct enqueue_ctx *ctx = aux;

    netdev_vhost_counter_add(&ctx->qp->tx_staged_dropped, n);
    netdev_vhost_cov_pending(NETDEV_VHOST_COV_STAGED_DROPS, n);
    rte_pktmbuf_free_bulk((struct rte_mbuf **) pkts, n);
}

/* Keeps 'dev->staged' in step with queue pair 'q', which had 'before'
 * staged packets: only a change between none and some writes it.  Called
 * with the queue's tx_lock. */
static void
staged_update(struct netdev_vhost *dev, int q, int before)
{
    int after = dev->qps[q].txp.n_staged;
    atomic_uint64_t *word = &dev->staged.bits[q / 64];
    uint64_t bit = UINT64_C(1) << (q % 64);
    uint64_t orig;

    if (!before && after) {
        atomic_or_explicit(word, bit, &orig, memory_order_relaxed);
    } else if (before && !after) {
        atomic_and_explicit(word, ~bit, &orig, memory_order_relaxed);
    }
}

/* Takes the tx_lock of queue pair 'q' of 'dev' and returns how many
 * packets it has staged, for txq_unlock(). */
static inline int
txq_lock(struct netdev_vhost *dev, int q)
{
    rte_spinlock_lock(&dev->qps[q].tx_lock);
    return dev->qps[q].txp.n_staged;
}

/* As txq_lock(), or returns -1 if another thread holds the lock. */
static inline int
txq_trylock(struct netdev_vhost *dev, int q)
{
    if (!rte_spinlock_trylock(&dev->qps[q].tx_lock)) {
        return -1;
    }
    return dev->qps[q].txp.n_staged;
}

/* Updates 'dev->staged' and the published deadline of queue pair 'q',
 * which had 'before' staged packets when it was locked, and releases its
 * tx_lock.  A queue that had and has nothing staged (a polling guest's)
 * writes neither. */
static inline void
txq_unlock(struct netdev_vhost *dev, int q, int before)
{
    struct netdev_vhost_qp *qp = &dev->qps[q];

    staged_update(dev, q, before);
    if (before || qp->txp.n_staged) {
        atomic_store_relaxed(&qp->staged_due, vhost_txp_deadline(&qp->txp));
    }
    rte_spinlock_unlock(&qp->tx_lock);
}

/* The one flush of a tx queue: empties queue pair 'q' of 'dev' as 'how'
 * says; when the device is gone, drops and counts instead (as staged
 * drops).  'now' is time_usec() or, for NETDEV_VHOST_TXQ_DROP, anything.
 * The device id is read here, with the queue's tx_lock held, as on every tx
 * path: destroy_device() takes every tx_lock after it withdrew the id, so
 * no thread uses the id of a gone device afterwards.  Called with the
 * queue's tx_lock, by txq_lock()'s callers, which update 'dev->staged'. */
static void
txq_flush_locked(struct netdev_vhost *dev, int q, long long int now,
                 enum netdev_vhost_txq_flush how)
{
    struct netdev_vhost_qp *qp = &dev->qps[q];
    int vid = netdev_vhost_get_vid(dev);
    struct enqueue_ctx ctx = { dev, qp, vid, q };

    if (!qp->txp.n_staged) {
        return;
    }
    if (how == NETDEV_VHOST_TXQ_DROP || vid < 0) {
        netdev_vhost_cov_pending(NETDEV_VHOST_COV_FLUSH_ON_DESTROY, 1);
        vhost_txp_drop(&qp->txp, drop_cb, &ctx);
    } else if (how == NETDEV_VHOST_TXQ_ALL) {
        vhost_txp_flush(&qp->txp, VHOST_TXP_FLUSH_RECONFIG, now, enqueue_cb,
                        &ctx);
    } else {
        vhost_txp_run(&qp->txp, now, enqueue_cb, &ctx);
    }
}

void
netdev_vhost_txq_flush(struct netdev_vhost *dev, int q,
                       enum netdev_vhost_txq_flush how)
{
    long long int now = how == NETDEV_VHOST_TXQ_DROP ? 0 : time_usec();
    int before = txq_lock(dev, q);

    txq_flush_locked(dev, q, now, how);
    txq_unlock(dev, q, before);
}

/* Flushes the staged packets of every queue pair of 'dev' whose deadline
 * passed.  PMD threads (from rxq_recv), so that nothing stays staged when
 * no more traffic comes, whichever PMD thread polls the port.  Looks only
 * at the queues 'dev->staged' names, and takes the lock only of those
 * whose published deadline ('staged_due', a relaxed read: a stale value
 * delays the flush by one poll at most) has passed, so that the rx PMD
 * thread writes no tx_lock line while the deadline is ahead; skips queues
 * whose lock another thread holds: that thread flushes them.  The
 * deadline is read again with the lock held: the staging state is the lock
 * holder's to change. */
static void
flush_due(struct netdev_vhost *dev)
{
    long long int now = time_usec();

    for (int w = 0; w < ARRAY_SIZE(dev->staged.bits); w++) {
        uint64_t bits;

        atomic_read_relaxed(&dev->staged.bits[w], &bits);
        for (; bits; bits = zero_rightmost_1bit(bits)) {
            int q = w * 64 + raw_ctz(bits);
            long long int due;
            int before;

            atomic_read_relaxed(&dev->qps[q].staged_due, &due);
            if (due > now || (before = txq_trylock(dev, q)) < 0) {
                continue;
            }
            if (vhost_txp_deadline(&dev->qps[q].txp) <= now) {
                /* Debug level, rate-limited: says which thread flushed
                 * (the log line's thread name); the tests check it. */
                static struct vlog_rate_limit due_rl
                    = VLOG_RATE_LIMIT_INIT(5, 5);

                VLOG_DBG_RL(&due_rl, "%s: tx queue %d: %d staged packets "
                            "flushed at their deadline",
                            netdev_get_name(&dev->up), q,
                            dev->qps[q].txp.n_staged);
                txq_flush_locked(dev, q, now, NETDEV_VHOST_TXQ_DUE);
            }
            txq_unlock(dev, q, before);
        }
    }
}

void
netdev_vhost_flush_all(struct netdev_vhost *dev, bool drop)
{
    long long int now = time_usec();

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        int before = txq_lock(dev, q);

        txq_flush_locked(dev, q, now, drop ? NETDEV_VHOST_TXQ_DROP
                                           : NETDEV_VHOST_TXQ_ALL);
        txq_unlock(dev, q, before);
    }
}

void
netdev_vhost_txq_set_policy(struct netdev_vhost *dev,
                            enum vhost_txp_mode mode, uint32_t interval_us,
                            bool coalesce_kicks, uint32_t min_us,
                            uint32_t max_us)
{
    long long int now = time_usec();

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];
        int before = txq_lock(dev, q);
        int vid = netdev_vhost_get_vid(dev);
        struct enqueue_ctx ctx = { dev, qp, vid, q };

        if (before && vid < 0) {
            txq_flush_locked(dev, q, now, NETDEV_VHOST_TXQ_DROP);
        }
        /* Deferred kicks: auto no longer stages (the policy is told that
         * the guest never wants interrupts, see netdev_vhost_send()), so
         * what it staged is flushed by the mode change to auto below as
         * for a switch to immediate. */
        bool adaptive = mode == VHOST_TXP_ADAPTIVE;
        bool defer = (NETDEV_VHOST_HAS_DEFERRED_KICKS && coalesce_kicks
                      && (mode == VHOST_TXP_AUTO || adaptive));
        uint32_t q_interval = netdev_vhost_kickq_configure(
            &qp->kq, defer, adaptive, interval_us, min_us, max_us);

        vhost_txp_set_config(&qp->txp, mode, q_interval, now, enqueue_cb,
                             &ctx);
        if (defer && qp->txp.n_staged) {
            vhost_txp_flush(&qp->txp, VHOST_TXP_FLUSH_RECONFIG, now,
                            enqueue_cb, &ctx);
        }
        txq_unlock(dev, q, before);
    }
}

/* Tx batches. */

#if NETDEV_VHOST_GUEST_OFFLOADS
/* The TSO segment size of 'm', a TCP packet whose headers before the TCP
 * payload are 'l3_len' + 'l4_len' bytes (and 'tunnel_len' more of the
 * outer headers and the tunnel for a tunnelled packet): the smaller of the
 * packet's own segment size ('m->tso_segsz', the guest's or the tap's
 * gso_size from the receive side) and what the port's MTU allows, as stock
 * OVS 3.4+ (netdev_dpdk_prep_hwol_packet()).  A packet without a segment
 * size of its own (0) gets the MTU's: stock would pass 0 on, which the
 * guest cannot segment by. */
static uint16_t
tso_segsz(const struct netdev_vhost *dev, const struct rte_mbuf *m,
          int tunnel_len)
{
    int link = dev->mtu - m->l3_len - m->l4_len - tunnel_len;

#if NETDEV_VHOST_TSO_SEGSZ_HINT
    if (m->tso_segsz && m->tso_segsz < link) {
        return m->tso_segsz;
    }
#endif
    return link > 0 ? link : 0;
}

/* Fills in the header lengths and flags that rte_vhost needs to pass
 * checksum and segmentation requests to the guest in the virtio-net header
 * (virtio 1.1 section 5.1.6.2: csum_start = l2_len + l3_len, gso_size =
 * tso_segsz), in the offload model of stock OVS 3.5
 * (netdev_dpdk_prep_hwol_packet() in lib/netdev-dpdk.c), which runs for
 * every packet, not only with userspace TSO: OVS 3.2+ offloads checksums
 * by default.
 *
 *   - No request: the IPv4/IPv6 and tunnel marks are cleared; a packet
 *     with other offload flags is dropped.
 *   - A tunnelled packet (VXLAN, GENEVE, GRE; other tunnel types are
 *     dropped) with inner requests: the lengths describe the inner
 *     headers (l2_len spans the outer headers and the tunnel up to the
 *     inner L3 header, or, with outer requests, from the outer L4 header,
 *     outer_l2_len and outer_l3_len describing the outer ones).  Without
 *     inner requests the outer requests become plain ones.
 *   - TSO: l4_len from the TCP header, tso_segsz from tso_segsz(); a
 *     packet whose headers and segment exceed the largest frame is
 *     dropped.
 *   - An L4 checksum request on IPv4 also asks for the IPv4 checksum.
 *
 * csum_start and csum_offset of the dp_packet (OVS 3.5's partial checksum
 * from a tap's virtio-net header) travel with the packet's fields in
 * copy_to_mbuf(); the vhost library derives the guest's csum_start from
 * the lengths set here.  PMD threads.  Returns false for a packet to drop
 * (counted as tx_invalid_hwol_drops by the caller). */
static bool
prepare_offload(const struct netdev_vhost *dev, struct rte_mbuf *m)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);
    struct dp_packet *pkt = CONTAINER_OF(m, struct dp_packet, mbuf);
    const uint64_t inner_req = RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK
                               | RTE_MBUF_F_TX_TCP_SEG;
    const uint64_t outer_req = RTE_MBUF_F_TX_OUTER_IP_CKSUM
                               | RTE_MBUF_F_TX_OUTER_UDP_CKSUM;
    const uint64_t inner_marks = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6;
    const uint64_t outer_marks = RTE_MBUF_F_TX_OUTER_IPV4
                                 | RTE_MBUF_F_TX_OUTER_IPV6
                                 | RTE_MBUF_F_TX_TUNNEL_MASK;
    uint64_t tunnel = m->ol_flags & RTE_MBUF_F_TX_TUNNEL_MASK;
    char *l2, *l3, *l4;

    if (!(m->ol_flags & (inner_req | outer_req))) {
        m->ol_flags &= ~(inner_marks | outer_marks);
        if (OVS_UNLIKELY(m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK)) {
            VLOG_WARN_RL(&rl, "%s: unexpected tx offload flags %#"PRIx64,
                         netdev_get_name(&dev->up),
                         m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK);
            return false;
        }
        return true;
    }
    if (OVS_UNLIKELY(tunnel && tunnel != RTE_MBUF_F_TX_TUNNEL_VXLAN
                     && tunnel != RTE_MBUF_F_TX_TUNNEL_GENEVE
                     && tunnel != RTE_MBUF_F_TX_TUNNEL_GRE)) {
        VLOG_WARN_RL(&rl, "%s: unexpected tunnel type %#"PRIx64,
                     netdev_get_name(&dev->up), tunnel);
        return false;
    }

    m->outer_l2_len = 0;
    m->outer_l3_len = 0;
    if (tunnel && m->ol_flags & inner_req) {
        l2 = dp_packet_eth(pkt);
        if (m->ol_flags & outer_req) {
            char *outer_l3 = dp_packet_l3(pkt), *outer_l4 = dp_packet_l4(pkt);

            if (!l2 || !outer_l3 || !outer_l4) {
                goto no_headers;
            }
            m->outer_l2_len = outer_l3 - l2;
            m->outer_l3_len = outer_l4 - outer_l3;
            l2 = outer_l4;
        } else {
            m->ol_flags &= ~outer_marks;
        }
        l3 = dp_packet_inner_l3(pkt);
        l4 = dp_packet_inner_l4(pkt);
    } else {
        if (tunnel) {
            /* Only outer requests: they are the packet's own. */
            uint64_t fl = m->ol_flags & ~inner_marks;

            if (fl & RTE_MBUF_F_TX_OUTER_IP_CKSUM) {
                fl |= RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_IPV4;
            }
            if (fl & RTE_MBUF_F_TX_OUTER_UDP_CKSUM) {
                fl |= RTE_MBUF_F_TX_UDP_CKSUM
                      | (fl & RTE_MBUF_F_TX_OUTER_IPV4 ? RTE_MBUF_F_TX_IPV4
                                                       : RTE_MBUF_F_TX_IPV6);
            }
            m->ol_flags = fl & ~(outer_req | outer_marks);
        }
        l2 = dp_packet_eth(pkt);
        l3 = dp_packet_l3(pkt);
        l4 = dp_packet_l4(pkt);
    }
    if (OVS_UNLIKELY(!l2 || !l3 || !l4)) {
        goto no_headers;
    }
    m->l2_len = l3 - l2;
    m->l3_len = l4 - l3;

    if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
        const struct tcp_header *th = (const struct tcp_header *) l4;
        uint32_t max_len = MTU_TO_FRAME_LEN(dev->mtu);

        m->l4_len = TCP_OFFSET(th->tcp_ctl) * 4;
        m->tso_segsz = tso_segsz(dev, m,
                                 tunnel ? m->l2_len + m->outer_l3_len : 0);
        if (OVS_UNLIKELY(m->l2_len + m->l3_len + m->l4_len + m->tso_segsz
                         > max_len || !m->tso_segsz)) {
            VLOG_WARN_RL(&rl, "%s: oversized TSO packet: headers %d, "
                         "segment %"PRIu16", largest frame %"PRIu32,
                         netdev_get_name(&dev->up),
                         m->l2_len + m->l3_len + m->l4_len, m->tso_segsz,
                         max_len);
            return false;
        }
    }
    if (m->ol_flags & RTE_MBUF_F_TX_L4_MASK
        && m->ol_flags & RTE_MBUF_F_TX_IPV4) {
        m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
    }
    return true;

no_headers:
    VLOG_WARN_RL(&rl, "%s: offload requested for a packet without L2, L3 "
                 "or L4 header (flags %#"PRIx64")", netdev_get_name(&dev->up),
                 m->ol_flags);
    return false;
}
#else
/* With userspace TSO (other_config:userspace-tso-enable), fills in the
 * header lengths that rte_vhost needs to pass checksum and segmentation
 * requests to the guest (virtio-net header), as stock OVS 3.1 does
 * (netdev_dpdk_prep_hwol_packet()): no tunnel offsets, tso_segsz from the
 * MTU.  Returns false for a TSO packet without an L4 header (dropped). */
static bool
prepare_offload(const struct netdev_vhost *dev, struct rte_mbuf *m)
{
    struct dp_packet *pkt = CONTAINER_OF(m, struct dp_packet, mbuf);

    if (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) {
        m->l2_len = (char *) dp_packet_l3(pkt) - (char *) dp_packet_eth(pkt);
        m->l3_len = (char *) dp_packet_l4(pkt) - (char *) dp_packet_l3(pkt);
        m->outer_l2_len = 0;
        m->outer_l3_len = 0;
    }
    if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
        struct tcp_header *th = dp_packet_l4(pkt);

        if (!th) {
            return false;
        }
        m->l4_len = TCP_OFFSET(th->tcp_ctl) * 4;
        m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
        m->tso_segsz = dev->mtu - m->l3_len - m->l4_len;
        if (m->ol_flags & RTE_MBUF_F_TX_IPV4) {
            m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
        }
    }
    return true;
}
#endif

/* rte_mbuf_extbuf_free_callback_t of copy_extbuf_attach(). */
static void
copy_extbuf_free(void *addr OVS_UNUSED, void *opaque)
{
    rte_free(opaque);
}

/* Attaches to 'm' an external buffer (rte_malloc()) large enough for
 * 'data_len' bytes after the headroom, as stock OVS 3.1 does
 * (dpdk_pktmbuf_attach_extbuf() in lib/netdev-dpdk.c): a TSO packet from a
 * tap, internal or system port is longer than the mempool's buffers.  The
 * buffer is freed with the mbuf.  Returns false if the packet is too
 * large for an mbuf (64 kB) or there is no memory. */
static bool
copy_extbuf_attach(struct rte_mbuf *m, uint32_t data_len)
{
    uint32_t total_len = RTE_PKTMBUF_HEADROOM + data_len
                         + sizeof(struct rte_mbuf_ext_shared_info)
                         + sizeof(uintptr_t);
    struct rte_mbuf_ext_shared_info *shinfo;
    uint16_t buf_len;
    void *buf;

    total_len = RTE_ALIGN_CEIL(total_len, sizeof(uintptr_t));
    if (total_len > UINT16_MAX) {
        return false;
    }
    buf_len = total_len;
    buf = rte_malloc(NULL, buf_len, RTE_CACHE_LINE_SIZE);
    if (!buf) {
        return false;
    }
    shinfo = rte_pktmbuf_ext_shinfo_init_helper(buf, &buf_len,
                                                copy_extbuf_free, buf);
    if (!shinfo) {
        rte_free(buf);
        return false;
    }
    rte_pktmbuf_attach_extbuf(m, buf, rte_malloc_virt2iova(buf), buf_len,
                              shinfo);
    rte_pktmbuf_reset_headroom(m);
    return true;
}

/* Returns a copy of 'packet' (not a DPDK mbuf) in an mbuf of 'mp', with an
 * external buffer if it does not fit in the pool's buffers (TSO packets,
 * only with userspace TSO), keeping its offload requests, its TSO segment
 * size (part of the mbuf's tx_offload) and its header offsets (also the
 * inner ones of OVS 3.3+), as stock OVS 3.1's and 3.5's
 * dpdk_copy_dp_packet_to_mbuf().  Returns NULL
 * if no mbuf or memory could be had.  The caller still owns 'packet'. */
static struct dp_packet *
copy_to_mbuf(struct rte_mempool *mp, const struct dp_packet *packet)
{
    uint32_t len = dp_packet_size(packet);
    struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

    if (!m) {
        return NULL;
    }
    if (rte_pktmbuf_tailroom(m) < len && !copy_extbuf_attach(m, len)) {
        rte_pktmbuf_free(m);
        return NULL;
    }

    struct dp_packet *copy = CONTAINER_OF(m, struct dp_packet, mbuf);
    memcpy(rte_pktmbuf_mtod(m, void *), dp_packet_data(packet), len);
    dp_packet_set_size(copy, len);
    m->tx_offload = packet->mbuf.tx_offload;
    m->packet_type = packet->mbuf.packet_type;
    m->ol_flags |= packet->mbuf.ol_flags
                   & ~(RTE_MBUF_F_EXTERNAL | RTE_MBUF_F_INDIRECT);
    memcpy(&copy->l2_pad_size, &packet->l2_pad_size,
           sizeof(struct dp_packet) - offsetof(struct dp_packet, l2_pad_size));
    if (NETDEV_VHOST_HAS_GUEST_OFFLOADS && dp_packet_l3(copy)) {
        /* As stock 3.5: the outer lengths from the copied offsets (which
         * include the inner ones, csum_start and csum_offset);
         * prepare_offload() sets them for the request. */
        char *l2 = dp_packet_eth(copy), *l3 = dp_packet_l3(copy);
        char *l4 = dp_packet_l4(copy);

        m->l2_len = l2 ? l3 - l2 : 0;
        m->l3_len = l4 ? l4 - l3 : 0;
    }
    return copy;
}

/* Copies packets that are not DPDK mbufs into mbufs of 'dev''s mempool,
 * drops packets longer than the MTU allows, except TSO packets (the guest
 * gets them whole, as from stock OVS 3.1 and 3.5), and prepares their
 * offload requests (prepare_offload(): every packet in the OVS 3.5 model,
 * only with userspace TSO in OVS 3.1's).
 * Returns the number of packets left in 'batch'; drops are counted. */
static int
prepare_batch(struct netdev_vhost *dev, struct dp_packet_batch *batch)
{
    uint32_t max_len = MTU_TO_FRAME_LEN(dev->mtu);
    int mtu_drops = 0, copy_drops = 0;
    struct dp_packet *packet;
    size_t i, size = dp_packet_batch_size(batch);

    int hwol_drops = 0;
    /* OVS 3.5 model: every packet is prepared (checksum offload without
     * userspace TSO); OVS 3.1: only with userspace TSO. */
    bool tso = userspace_tso_enabled();
    bool prepare = NETDEV_VHOST_HAS_GUEST_OFFLOADS || tso;

    DP_PACKET_BATCH_REFILL_FOR_EACH (i, size, packet, batch) {
        bool seg = prepare && packet->mbuf.ol_flags & RTE_MBUF_F_TX_TCP_SEG;

        /* Stock checks the length after the copy: a TSO packet of any
         * length is copied (netdev_dpdk_filter_packet_len()). */
        if (OVS_UNLIKELY(dp_packet_size(packet) > max_len) && !seg) {
            mtu_drops++;
            dp_packet_delete(packet);
            continue;
        }
        if (OVS_UNLIKELY(packet->source != DPBUF_DPDK)) {
            struct dp_packet *copy = dev->mp
                                     ? copy_to_mbuf(dev->mp->mp, packet)
                                     : NULL;

            dp_packet_delete(packet);
            if (!copy) {
                copy_drops++;
                continue;
            }
            packet = copy;
        }
        if (prepare && OVS_UNLIKELY(!prepare_offload(dev, &packet->mbuf))) {
            hwol_drops++;
            dp_packet_delete(packet);
            continue;
        }
        dp_packet_batch_refill(batch, packet, i);
    }
    if (OVS_UNLIKELY(mtu_drops || copy_drops || hwol_drops)) {
        rte_spinlock_lock(&dev->stats_lock);
        dev->tx_mtu_exceeded_drops += mtu_drops;
        dev->tx_failure_drops += copy_drops;
        dev->tx_invalid_hwol_drops += hwol_drops;
        rte_spinlock_unlock(&dev->stats_lock);
    }
    return dp_packet_batch_size(batch);
}

/* netdev_class 'send': PMD threads (any number, 'qid' may be shared: the
 * queue's tx_lock serializes).  Takes ownership of every packet in
 * 'batch': each is placed in the guest's rx vring now, staged by the tx
 * policy to be placed later, or dropped and counted.  Always returns 0, as
 * stock vhost ports do.  (utilities/ovs-vhost-bench measures this function
 * by its name.) */
int
netdev_vhost_send(struct netdev *netdev, int qid,
                  struct dp_packet_batch *batch,
                  bool concurrent_txq OVS_UNUSED)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    int vid = netdev_vhost_get_vid(dev);
    int n_txq = netdev->n_txq;
    bool ready;
    int q = -1;

    atomic_read_relaxed(&dev->ready, &ready);
    if (OVS_LIKELY(n_txq > 0)) {
        atomic_read_relaxed(&dev->tx_map[qid % n_txq], &q);
    }
    if (OVS_UNLIKELY(vid < 0 || !ready || q < 0
                     || !(dev->flags & NETDEV_UP))) {
        int cnt = dp_packet_batch_size(batch);

        rte_spinlock_lock(&dev->stats_lock);
        dev->tx_down_drops += cnt;
        rte_spinlock_unlock(&dev->stats_lock);
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    int cnt = prepare_batch(dev, batch);
    struct vhost_meter *qos = ovsrcu_get(struct vhost_meter *,
                                         &dev->egress_qos);
    if (OVS_UNLIKELY(qos && cnt)) {
        /* The meter frees what it drops and shrinks the batch to what it
         * kept: every later use of 'batch' (the drop below included) sees
         * only packets this function still owns. */
        int drops = vhost_meter_run(qos, batch);

        if (drops) {
            rte_spinlock_lock(&dev->stats_lock);
            dev->tx_qos_drops += drops;
            rte_spinlock_unlock(&dev->stats_lock);
            cnt = dp_packet_batch_size(batch);
        }
    }
    if (OVS_UNLIKELY(!cnt)) {
        return 0;
    }

    struct netdev_vhost_qp *qp = &dev->qps[q];
    int before = txq_trylock(dev, q);

    if (OVS_UNLIKELY(before < 0)) {
        COVERAGE_INC(netdev_vhost_tx_contention);
        before = txq_lock(dev, q);
    }
    /* Again under the lock: see txq_flush_locked(). */
    vid = netdev_vhost_get_vid(dev);
    if (OVS_UNLIKELY(vid < 0)) {
        txq_unlock(dev, q, before);
        rte_spinlock_lock(&dev->stats_lock);
        dev->tx_down_drops += cnt;
        rte_spinlock_unlock(&dev->stats_lock);
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    struct enqueue_ctx ctx = { dev, qp, vid, q };

    bool wants = qp->txp.mode == VHOST_TXP_TIMED;
    if (NETDEV_VHOST_HAS_DEFERRED_KICKS && qp->kq.defer) {
        /* Deferred kicks (auto, DPDK 23.11+): the burst goes out at once
         * and DPDK asks guest_notify() whether to kick; nothing to ask
         * the ring here. */
    } else if (vhost_txp_needs_query(&qp->txp)) {
        wants = guest_wants_interrupt(dev, qp, vid, q);
    }
    /* The clock is read only when staging is in play: a polling guest
     * costs one ring read per burst and nothing else. */
    long long int now = wants || qp->txp.n_staged ? time_usec() : 0;
    /* Adaptive mode: whether this burst would wake the guest at the floor
     * (lib/vhost-moderation.h).  With deferred kicks: DPDK asks
     * guest_notify() during the enqueue, or a kick is already held (DPDK
     * then asks nothing). */
    uint64_t kick_requests = qp->kq.kick.stats.requests;
    bool kick_held = qp->kq.kick.pending;

    vhost_txp_burst(&qp->txp, wants, (void **) batch->packets, cnt, now,
                    enqueue_cb, &ctx);
    if (OVS_UNLIKELY(qp->kq.adaptive)) {
        bool wanted = (NETDEV_VHOST_HAS_DEFERRED_KICKS && qp->kq.defer
                       ? kick_held || qp->kq.kick.stats.requests
                                      != kick_requests
                       : wants);

        netdev_vhost_kickq_moderate(&qp->kq, &qp->txp, cnt, wanted,
                                    now ? now : time_usec());
    }
    if (NETDEV_VHOST_HAS_DEFERRED_KICKS
        && OVS_UNLIKELY(qp->kq.kick.pending)) {
        /* This thread holds the lock that rxq_recv's delivery would try:
         * deliver a due held kick of this queue now. */
        netdev_vhost_kick_run_locked(dev, q, vid, time_usec());
    }
    txq_unlock(dev, q, before);
    return 0;
}

/* Rx. */

struct netdev_rxq_vhost {
    struct netdev_rxq up;
};

/* netdev_class 'rxq_alloc', 'rxq_construct', 'rxq_destruct' and
 * 'rxq_dealloc': main thread.  An rxq needs no state of its own: queue
 * pair 'rxq->queue_id' of the port holds it. */
struct netdev_rxq *
netdev_vhost_rxq_alloc(void)
{
    struct netdev_rxq_vhost *rx = xzalloc(sizeof *rx);
    return &rx->up;
}

int
netdev_vhost_rxq_construct(struct netdev_rxq *rxq OVS_UNUSED)
{
    return 0;
}

void
netdev_vhost_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

void
netdev_vhost_rxq_dealloc(struct netdev_rxq *rxq)
{
    free(CONTAINER_OF(rxq, struct netdev_rxq_vhost, up));
}

/* netdev_class 'rxq_recv': the one PMD thread that polls 'rxq'.  Dequeues
 * up to NETDEV_MAX_BURST packets from the guest's tx vring; the caller owns
 * them.  Also flushes staged tx packets whose deadline passed and
 * delivers held kicks that are due (of every queue of the port).  Returns 0,
 * or EAGAIN when there is nothing to receive. */
int
netdev_vhost_rxq_recv(struct netdev_rxq *rxq, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev_vhost *dev = netdev_vhost_cast(rxq->netdev);
    int q = rxq->queue_id;
    struct netdev_vhost_qp *qp = &dev->qps[q];
    uint16_t nb_rx = 0;
    bool ready;

    if (OVS_UNLIKELY(netdev_vhost_qmap_any(&dev->staged))) {
        flush_due(dev);
    }
    if (NETDEV_VHOST_HAS_DEFERRED_KICKS
        && OVS_UNLIKELY(netdev_vhost_qmap_any(&dev->kick_pending))) {
        netdev_vhost_kick_run(dev);
    }

    /* Announce the use of the device id before reading it: destroy_device()
     * withdraws the id, runs the heavy fence, then waits for 'rx_busy' to
     * be false (netdev_vhost_light_fence()). */
    atomic_store_explicit(&qp->rx_busy, true, memory_order_relaxed);
    netdev_vhost_light_fence();
    int vid = netdev_vhost_get_vid(dev);
    atomic_read_relaxed(&dev->ready, &ready);
    if (OVS_LIKELY(vid >= 0 && ready && dev->flags & NETDEV_UP && dev->mp)) {
        nb_rx = rte_vhost_dequeue_burst(vid, netdev_vhost_rx_vring(q),
                                        dev->mp->mp,
                                        (struct rte_mbuf **) batch->packets,
                                        NETDEV_MAX_BURST);
        if (qfill) {
            *qfill = nb_rx == NETDEV_MAX_BURST
                     ? rte_vhost_rx_queue_count(vid,
                                                netdev_vhost_rx_vring(q))
                       & UINT16_MAX
                     : 0;
        }
    }
    atomic_store_explicit(&qp->rx_busy, false, memory_order_release);
    if (!nb_rx) {
        return EAGAIN;
    }

    uint64_t bytes = 0;
    for (int i = 0; i < nb_rx; i++) {
        bytes += rte_pktmbuf_pkt_len((struct rte_mbuf *) batch->packets[i]);
    }
    netdev_vhost_counter_add(&qp->rx_packets, nb_rx);
    netdev_vhost_counter_add(&qp->rx_bytes, bytes);

    struct vhost_meter *policer = ovsrcu_get(struct vhost_meter *,
                                             &dev->ingress_policer);
    batch->count = nb_rx;
    if (OVS_UNLIKELY(policer)) {
        int drops = vhost_meter_run(policer, batch);

        if (drops) {
            rte_spinlock_lock(&dev->stats_lock);
            dev->rx_qos_drops += drops;
            dev->rx_dropped += drops;
            rte_spinlock_unlock(&dev->stats_lock);
            if (dp_packet_batch_is_empty(batch)) {
                return EAGAIN;
            }
        }
    }
    dp_packet_batch_init_packet_fields(batch);
    return 0;
}

/* netdev_class 'rxq_enabled': the PMD thread that polls 'rxq'.  True if
 * the guest enabled its tx vring of the queue pair, and always for rxq 0. */
bool
netdev_vhost_rxq_enabled(struct netdev_rxq *rxq)
{
    struct netdev_vhost *dev = netdev_vhost_cast(rxq->netdev);

    /* Rx queue 0 is always polled, as stock keeps it enabled: its poll
     * also flushes staged tx packets whose deadline passed, which must
     * happen even if the guest never enables its tx vring. */
    return !rxq->queue_id || dev->qps[rxq->queue_id].rx_enabled;
}
