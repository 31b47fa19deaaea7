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

/* The netdev-vhost class: OVS's "dpdkvhostuser" and "dpdkvhostuserclient"
 * port types on DPDK's public rte_vhost API, with an interrupt-aware tx
 * path.  On every tx burst it asks the guest's driver whether it wants an
 * interrupt on that virtqueue (lib/vhost-ring.c) and lets the per-queue
 * policy (lib/vhost-tx-policy.c) send now or stage the burst so that one
 * kick covers many packets.
 *
 * Threads: the main thread (construct, set_config, reconfigure, stats,
 * status), PMD threads (rxq_recv, send), and DPDK's vhost-events thread
 * (the rte_vhost callbacks and the message hooks of the ring guard). */

#include <config.h>

#include "netdev-vhost.h"
#include "netdev-vhost-private.h"
#include "netdev-vhost-qos.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_vhost.h>

#include "connectivity.h"
#include "coverage.h"
#include "dirs.h"
#include "dp-packet.h"
#include "fatal-signal.h"
#include "netdev-provider.h"
#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/list.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "ovs-numa.h"
#include "packets.h"
#include "seq.h"
#include "sset.h"
#include "smap.h"
#include "timeval.h"
#include "unixctl.h"
#include "userspace-tso.h"
#include "util.h"
#include "vhost-ring.h"

VLOG_DEFINE_THIS_MODULE(netdev_vhost);

COVERAGE_DEFINE(netdev_vhost_tx_contention);
COVERAGE_DEFINE(netdev_vhost_query_skipped);
COVERAGE_DEFINE(netdev_vhost_flush_on_destroy);
COVERAGE_DEFINE(netdev_vhost_staged_drops);
COVERAGE_DEFINE(netdev_vhost_ring_guard_wait);
COVERAGE_DEFINE(netdev_vhost_ring_guard_long_wait);
COVERAGE_DEFINE(netdev_vhost_ring_guard_msg_failed);
COVERAGE_DEFINE(netdev_vhost_vring_events_coalesced);

/* OVS keeps coverage counts per thread and adds a thread's counts up when
 * that thread polls (at most once a second): a count made in DPDK's
 * vhost-events thread shows only at its next poll a second later (the next
 * guest leaving), or never.  Events that may happen there (a guest leaving
 * with staged packets, the ring guard) are counted here, by any thread, and
 * the main thread adds them to the coverage counters in
 * netdev_vhost_class_run(). */
static atomic_uint cov_staged_drops = ATOMIC_VAR_INIT(0);
static atomic_uint cov_flush_on_destroy = ATOMIC_VAR_INIT(0);
static atomic_uint cov_ring_guard_wait = ATOMIC_VAR_INIT(0);
static atomic_uint cov_ring_guard_long_wait = ATOMIC_VAR_INIT(0);
static atomic_uint cov_ring_guard_msg_failed = ATOMIC_VAR_INIT(0);

const char netdev_vhost_version[] = NETDEV_VHOST_VERSION;

#define VIRTIO_RXQ 0            /* Guest rx vring of a pair: our tx. */
#define VIRTIO_TXQ 1            /* Guest tx vring of a pair: our rx. */
#define VIRTIO_QNUM 2
#define NETDEV_VHOST_MAX_VID 1024
#define NETDEV_VHOST_N_MBUF (4096 * 4)
#define NETDEV_VHOST_MBUF_ALIGN 1024
#define NETDEV_VHOST_MAX_PKT_LEN 9728
#define ETHER_HDR_MAX_LEN (RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN \
                           + 2 * RTE_VLAN_HLEN)
#define MTU_TO_FRAME_LEN(MTU) ((MTU) + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN)
#define MTU_TO_MAX_FRAME_LEN(MTU) ((MTU) + ETHER_HDR_MAX_LEN)

/* All netdev-vhost ports. */
static struct ovs_mutex netdev_vhost_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list vhost_list OVS_GUARDED_BY(netdev_vhost_mutex)
    = OVS_LIST_INITIALIZER(&vhost_list);

/* rte_vhost device id -> port, for the message hooks, which get only the
 * id.  Written by the vhost-events thread and the main thread under
 * 'vid_map_mutex'; never taken by PMD threads. */
static struct ovs_mutex vid_map_mutex = OVS_MUTEX_INITIALIZER;
static struct netdev_vhost *vid_map[NETDEV_VHOST_MAX_VID]
    OVS_GUARDED_BY(vid_map_mutex);

/* Global configuration from the Open_vSwitch table. */
static char *vhost_sock_dir;
static bool vhost_iommu_enabled;
static bool vhost_postcopy_enabled;
static enum vhost_txp_mode default_txp_mode = VHOST_TXP_AUTO;
static uint32_t default_txp_interval = VHOST_TXP_INTERVAL_DEFAULT;
static char *default_txp_error;

/* Vring state changes, deferred from the vhost-events thread to the main
 * thread: the callback runs with the library's queue locks held, where
 * rte_vhost_enable_guest_notification() must not be called.  An event
 * names the port and the generation of its connection (conn_gen), not only
 * the device id: rte_vhost reuses ids, and an event of a gone connection
 * must not change the queues of the next one.  At most one event per
 * connection and vring is pending: a later change updates it (a guest
 * flooding SET_VRING_ENABLE costs no memory). */
struct vring_event {
    struct ovs_list node;
    char *name;                 /* Port name. */
    uint64_t gen;               /* Its conn_gen when the event came. */
    int vid;
    uint16_t vring;
    bool enable;                /* Latest state. */
    bool was_disabled;          /* Disabled at least once meanwhile. */
};
static struct ovs_mutex event_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list event_list OVS_GUARDED_BY(event_mutex)
    = OVS_LIST_INITIALIZER(&event_list);
static size_t n_events OVS_GUARDED_BY(event_mutex);
static struct seq *event_seq;
static atomic_uint cov_events_coalesced = ATOMIC_VAR_INIT(0);

/* Source of connection generations (struct netdev_vhost's conn_gen),
 * unique over all ports, also a port deleted and added again under the
 * same name.  'vid_map_mutex'. */
static uint64_t conn_gen_last OVS_GUARDED_BY(vid_map_mutex);

/* Mempools of dp_packets, shared by ports with the same NUMA node and MTU. */
struct netdev_vhost_mempool {
    struct ovs_list node;
    struct rte_mempool *mp;
    int numa_id;
    int mtu;
    int refcount;
};
static struct ovs_mutex mp_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list mp_list OVS_GUARDED_BY(mp_mutex)
    = OVS_LIST_INITIALIZER(&mp_list);

static const struct netdev_class netdev_vhost_server_class;
static const struct netdev_class netdev_vhost_client_class;

static int netdev_vhost_get_vid(const struct netdev_vhost *dev)
{
    return ovsrcu_index_get(&dev->vid);
}

static bool
is_vhost_class(const struct netdev_class *class)
{
    return class == &netdev_vhost_server_class
           || class == &netdev_vhost_client_class;
}

/* Mempools. */

static void
mbuf_init_dp_packet(struct rte_mempool *mp OVS_UNUSED, void *arg OVS_UNUSED,
                    void *obj, unsigned int idx OVS_UNUSED)
{
    dp_packet_init_dpdk((struct dp_packet *) obj);
}

static struct netdev_vhost_mempool *
mempool_get(int numa_id, int mtu)
{
    struct netdev_vhost_mempool *vmp;
    char name[RTE_MEMPOOL_NAMESIZE];

    ovs_mutex_lock(&mp_mutex);
    LIST_FOR_EACH (vmp, node, &mp_list) {
        if (vmp->numa_id == numa_id && vmp->mtu == mtu) {
            vmp->refcount++;
            ovs_mutex_unlock(&mp_mutex);
            return vmp;
        }
    }

    uint32_t buf_size = ROUND_UP(MTU_TO_MAX_FRAME_LEN(mtu),
                                 NETDEV_VHOST_MBUF_ALIGN)
                        + RTE_PKTMBUF_HEADROOM;
    uint16_t priv_size = ROUND_UP(sizeof(struct dp_packet)
                                  - sizeof(struct rte_mbuf),
                                  RTE_MBUF_PRIV_ALIGN);
    snprintf(name, sizeof name, "ovs_vhost_%d_%d", numa_id, mtu);
    struct rte_mempool *mp = rte_pktmbuf_pool_create(
        name, NETDEV_VHOST_N_MBUF, RTE_MEMPOOL_CACHE_MAX_SIZE, priv_size,
        buf_size, numa_id);
    if (!mp) {
        VLOG_ERR("Failed to create mempool \"%s\" with %d mbufs of %"PRIu32
                 " bytes on numa %d: %s", name, NETDEV_VHOST_N_MBUF,
                 buf_size, numa_id, rte_strerror(rte_errno));
        ovs_mutex_unlock(&mp_mutex);
        return NULL;
    }
    rte_mempool_obj_iter(mp, mbuf_init_dp_packet, NULL);
    VLOG_INFO("Created mempool \"%s\" with %d mbufs for MTU %d on numa %d",
              name, NETDEV_VHOST_N_MBUF, mtu, numa_id);

    vmp = xzalloc(sizeof *vmp);
    vmp->mp = mp;
    vmp->numa_id = numa_id;
    vmp->mtu = mtu;
    vmp->refcount = 1;
    ovs_list_push_back(&mp_list, &vmp->node);
    ovs_mutex_unlock(&mp_mutex);
    return vmp;
}

static void
mempool_put(struct netdev_vhost_mempool *vmp)
{
    if (!vmp) {
        return;
    }
    ovs_mutex_lock(&mp_mutex);
    vmp->refcount--;
    /* Free only when every mbuf is back: packets may still sit in other
     * ports' queues otherwise.  Unused pools are retried on the next put. */
    struct netdev_vhost_mempool *p;
    LIST_FOR_EACH_SAFE (p, node, &mp_list) {
        if (!p->refcount && rte_mempool_full(p->mp)) {
            ovs_list_remove(&p->node);
            rte_mempool_free(p->mp);
            free(p);
        }
    }
    ovs_mutex_unlock(&mp_mutex);
}

/* Returns the number of mbufs of 'vmp' currently allocated (in use), for
 * the leak checks of the tests.  Any thread. */
static unsigned int
mempool_in_use(const struct netdev_vhost_mempool *vmp)
{
    return vmp ? rte_mempool_in_use_count(vmp->mp) : 0;
}

/* The ring guard (DESIGN.md section 4; seed 001).
 *
 * A PMD thread reads the driver's notification suppression fields in guest
 * memory.  vhost-user messages (SET_MEM_TABLE, SET_VRING_ADDR, IOTLB
 * updates, GET_VRING_BASE, ...) may unmap or move that memory at any time.
 * Before the library handles any message, the vhost-events thread clears
 * 'rings_valid' and waits until no PMD thread is between its store to
 * 'reading' and its load of 'rings_valid' (a Dekker handshake with
 * sequentially consistent accesses, about 20 cycles per burst).  After the
 * message it reloads the ring pointers and sets 'rings_valid' again. */

/* Spins with rte_pause() this many times before it yields the CPU while it
 * waits for a PMD thread to leave a section (the ring question, a dequeue):
 * a few microseconds, far longer than the section itself takes.  A PMD
 * thread preempted inside must get the CPU back, which matters when it
 * shares a core with the waiting thread. */
#define WAIT_SPINS 4096

/* Waits until '*flag' (a PMD thread's "inside" flag, stored before it
 * reads the state the caller has just withdrawn, with a full fence between
 * the two) is false: first spinning, then yielding the CPU.  Returns 0 if
 * it did not wait, 1 if it waited only spinning, 2 if it had to yield. */
static int
wait_while_set(atomic_bool *flag)
{
    int n = 0;

    for (;;) {
        bool set;

        atomic_read_explicit(flag, &set, memory_order_seq_cst);
        if (!set) {
            return !n ? 0 : n <= WAIT_SPINS ? 1 : 2;
        }
        if (++n <= WAIT_SPINS) {
            rte_pause();
        } else {
            sched_yield();
        }
    }
}

static void
rings_invalidate(struct netdev_vhost *dev)
{
    int waited = 0;

    atomic_store_explicit(&dev->rings_valid, false, memory_order_seq_cst);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        waited = MAX(waited, wait_while_set(&dev->qps[q].reading));
    }
    if (waited) {
        atomic_add_relaxed(&cov_ring_guard_wait, 1, &(unsigned int){0});
    }
    if (waited > 1) {
        atomic_add_relaxed(&cov_ring_guard_long_wait, 1, &(unsigned int){0});
    }
}

static void
rings_refresh(struct netdev_vhost *dev, int vid)
{
    uint16_t n_vrings = rte_vhost_get_vring_num(vid);
    uint64_t features = 0;

    rte_vhost_get_negotiated_features(vid, &features);
    dev->features = features;
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct rte_vhost_vring *vr = &dev->qps[q].vring;

        if (q * VIRTIO_QNUM + VIRTIO_RXQ >= n_vrings
            || rte_vhost_get_vhost_vring(vid, q * VIRTIO_QNUM + VIRTIO_RXQ,
                                         vr)) {
            memset(vr, 0, sizeof *vr);
        }
    }
    atomic_store_explicit(&dev->rings_valid, true, memory_order_seq_cst);
}

static struct netdev_vhost *
vid_map_get(int vid)
{
    struct netdev_vhost *dev = NULL;

    if (vid >= 0 && vid < NETDEV_VHOST_MAX_VID) {
        ovs_mutex_lock(&vid_map_mutex);
        dev = vid_map[vid];
        ovs_mutex_unlock(&vid_map_mutex);
    }
    return dev;
}

/* A vhost-user message starts with its request code, 32 bits (vhost-user
 * protocol, "Message Specification"); SET_MEM_TABLE is 5. */
#define VHOST_USER_REQ_SET_MEM_TABLE 5

static enum rte_vhost_msg_result
ring_guard_pre_msg(int vid, void *msg)
{
    uint32_t request;

    memcpy(&request, msg, sizeof request);
    ovs_mutex_lock(&vid_map_mutex);
    struct netdev_vhost *dev = vid >= 0 && vid < NETDEV_VHOST_MAX_VID
                               ? vid_map[vid] : NULL;
    if (dev) {
        if (dev->in_msg) {
            /* The library skipped the post hook: the previous message
             * failed (and the front-end asked for a reply, or the
             * connection would be gone).  The guard stayed closed since
             * then; this message's post hook re-opens it. */
            atomic_add_relaxed(&cov_ring_guard_msg_failed, 1,
                               &(unsigned int){0});
        }
        dev->in_msg = true;
        rings_invalidate(dev);
        if (request == VHOST_USER_REQ_SET_MEM_TABLE) {
            dev->mem_table_msgs++;
        }
    }
    ovs_mutex_unlock(&vid_map_mutex);
    return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

static enum rte_vhost_msg_result
ring_guard_post_msg(int vid, void *msg OVS_UNUSED)
{
    ovs_mutex_lock(&vid_map_mutex);
    struct netdev_vhost *dev = vid >= 0 && vid < NETDEV_VHOST_MAX_VID
                               ? vid_map[vid] : NULL;
    if (dev) {
        dev->in_msg = false;
        if (netdev_vhost_get_vid(dev) == vid) {
            rings_refresh(dev, vid);
        }
    }
    ovs_mutex_unlock(&vid_map_mutex);
    return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

static const struct rte_vhost_user_extern_ops ring_guard_ops = {
    .pre_msg_handle = ring_guard_pre_msg,
    .post_msg_handle = ring_guard_post_msg,
};

/* Asks the guest's driver whether it wants a used buffer notification on
 * queue pair 'q' of 'dev' (its rx vring).  PMD thread, with the queue's
 * tx_lock held.  Returns false, and counts a skipped query, while the
 * rings are being changed: the burst then goes out at once, which is
 * always safe. */
static bool
guest_wants_interrupt(struct netdev_vhost *dev, struct netdev_vhost_qp *qp,
                      int vid, int q)
{
    bool wants = false;
    bool valid;

    atomic_store_explicit(&qp->reading, true, memory_order_seq_cst);
    atomic_read_explicit(&dev->rings_valid, &valid, memory_order_seq_cst);
    if (OVS_LIKELY(valid && qp->vring.avail && qp->vring.used)) {
        if (dev->features & (1ULL << VIRTIO_F_RING_PACKED)) {
            /* One read of the driver's event suppression structure; the
             * device's used position (DPDK keeps the wrap counter in bit
             * 15) is needed only for DESC, which DPDK guests never use. */
            struct vring_packed_desc_event ev;
            uint16_t last_avail = 0, last_used = 0;

            memcpy(&ev, (const void *) qp->vring.driver_event, sizeof ev);
            if ((ev.flags & 3) == VRING_PACKED_EVENT_FLAG_DESC) {
                rte_vhost_get_vring_base(vid, q * VIRTIO_QNUM + VIRTIO_RXQ,
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
        qp->queries++;
    } else {
        qp->queries_skipped++;
        COVERAGE_INC(netdev_vhost_query_skipped);
    }
    atomic_store_explicit(&qp->reading, false, memory_order_release);
    qp->last_wants_intr = wants;
    return wants;
}

/* Tx. */

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
        atomic_read_relaxed(&ctx->dev->tx_retries_max, &max_retries);
        for (;;) {
            int k = rte_vhost_enqueue_burst(ctx->vid,
                                            ctx->q * VIRTIO_QNUM + VIRTIO_RXQ,
                                            pkts + sent, n - sent);
            sent += k;
            if (!k || sent >= n || retries >= max_retries) {
                break;
            }
            retries++;
        }
    }
    for (int i = 0; i < n; i++) {
        if (i < sent) {
            bytes += rte_pktmbuf_pkt_len(pkts[i]);
        }
        rte_pktmbuf_free(pkts[i]);
    }
    qp->tx_packets += sent;
    qp->tx_bytes += bytes;
    qp->tx_dropped += n - sent;
    qp->tx_retries += retries;
}

/* vhost_txp_drop_func: frees staged mbufs of a queue that is gone and
 * counts them in the queue pair's tx_staged_dropped.  Called with the
 * queue's tx_lock. */
static void
drop_cb(void *aux, void **pkts, int n)
{
    struct enqueue_ctx *ctx = aux;

    ctx->qp->tx_staged_dropped += n;
    atomic_add_relaxed(&cov_staged_drops, n, &(unsigned int){0});
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

/* True if some queue pair of 'dev' has staged packets.  Any thread. */
static bool
staged_any(struct netdev_vhost *dev)
{
    for (int w = 0; w < ARRAY_SIZE(dev->staged.bits); w++) {
        uint64_t bits;

        atomic_read_relaxed(&dev->staged.bits[w], &bits);
        if (bits) {
            return true;
        }
    }
    return false;
}

/* Flushes what is staged on queue pair 'q' of 'dev' if its deadline passed
 * (or, with 'all', in any case: VHOST_TXP_FLUSH_RECONFIG), or, when the
 * device is gone or 'drop' is true, drops and counts it as staged drops.
 * The device id is read here, with the queue's tx_lock held, as on every tx
 * path: destroy_device() takes every tx_lock after it withdrew the id, so
 * no thread uses the id of a gone device afterwards.  Called with the
 * queue's tx_lock. */
static void
qp_flush_locked(struct netdev_vhost *dev, int q, long long int now,
                bool all, bool drop)
{
    struct netdev_vhost_qp *qp = &dev->qps[q];
    int before = qp->txp.n_staged;
    int vid = netdev_vhost_get_vid(dev);
    struct enqueue_ctx ctx = { dev, qp, vid, q };

    if (!before) {
        return;
    }
    if (drop || vid < 0) {
        atomic_add_relaxed(&cov_flush_on_destroy, 1, &(unsigned int){0});
        vhost_txp_drop(&qp->txp, drop_cb, &ctx);
    } else if (all) {
        vhost_txp_flush(&qp->txp, VHOST_TXP_FLUSH_RECONFIG, now, enqueue_cb,
                        &ctx);
    } else {
        vhost_txp_run(&qp->txp, now, enqueue_cb, &ctx);
    }
    staged_update(dev, q, before);
}

/* Flushes the staged packets of every queue pair of 'dev' whose deadline
 * passed.  PMD threads (from rxq_recv), so that nothing stays staged when
 * no more traffic comes, whichever PMD thread polls the port.  Looks only
 * at the queues 'dev->staged' names; skips queues whose lock another
 * thread holds: that thread flushes them. */
static void
flush_due(struct netdev_vhost *dev)
{
    long long int now = time_usec();

    for (int w = 0; w < ARRAY_SIZE(dev->staged.bits); w++) {
        uint64_t bits;

        atomic_read_relaxed(&dev->staged.bits[w], &bits);
        for (; bits; bits = zero_rightmost_1bit(bits)) {
            int q = w * 64 + raw_ctz(bits);
            struct netdev_vhost_qp *qp = &dev->qps[q];

            if (vhost_txp_deadline(&qp->txp) > now
                || !rte_spinlock_trylock(&qp->tx_lock)) {
                continue;
            }
            qp_flush_locked(dev, q, now, false, false);
            rte_spinlock_unlock(&qp->tx_lock);
        }
    }
}

/* Flushes (or, with 'drop' or no device, drops and counts) everything
 * staged on 'dev'.  Takes every queue's tx_lock once, also of queues with
 * nothing staged: destroy_device() relies on that.  Main thread or
 * vhost-events thread. */
static void
flush_all(struct netdev_vhost *dev, bool drop)
{
    long long int now = time_usec();

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];

        rte_spinlock_lock(&qp->tx_lock);
        qp_flush_locked(dev, q, now, true, drop);
        rte_spinlock_unlock(&qp->tx_lock);
    }
}

/* With userspace TSO (other_config:userspace-tso-enable), fills in the
 * header lengths that rte_vhost needs to pass checksum and segmentation
 * requests to the guest (virtio-net header), as stock OVS 3.1 does.
 * Returns false for a TSO packet without an L4 header (dropped). */
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
 * only with userspace TSO), keeping its offload requests and header
 * offsets, as stock OVS 3.1's dpdk_copy_dp_packet_to_mbuf().  Returns NULL
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
    return copy;
}

/* Copies packets that are not DPDK mbufs into mbufs of 'dev''s mempool and
 * drops packets longer than the MTU allows, except TSO packets with
 * userspace TSO (the guest gets them whole, as from stock OVS 3.1).
 * Returns the number of packets left in 'batch'; drops are counted. */
static int
prepare_batch(struct netdev_vhost *dev, struct dp_packet_batch *batch)
{
    uint32_t max_len = MTU_TO_FRAME_LEN(dev->mtu);
    int mtu_drops = 0, copy_drops = 0;
    struct dp_packet *packet;
    size_t i, size = dp_packet_batch_size(batch);

    int hwol_drops = 0;
    bool tso = userspace_tso_enabled();

    DP_PACKET_BATCH_REFILL_FOR_EACH (i, size, packet, batch) {
        bool seg = tso && packet->mbuf.ol_flags & RTE_MBUF_F_TX_TCP_SEG;

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
        if (tso && OVS_UNLIKELY(!prepare_offload(dev, &packet->mbuf))) {
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
 * stock vhost ports do. */
static int
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
        int kept = vhost_meter_run(qos, (struct rte_mbuf **) batch->packets,
                                   cnt);
        if (kept != cnt) {
            rte_spinlock_lock(&dev->stats_lock);
            dev->tx_qos_drops += cnt - kept;
            rte_spinlock_unlock(&dev->stats_lock);
            cnt = kept;
        }
    }
    if (OVS_UNLIKELY(!cnt)) {
        return 0;
    }

    struct netdev_vhost_qp *qp = &dev->qps[q];

    if (OVS_UNLIKELY(!rte_spinlock_trylock(&qp->tx_lock))) {
        COVERAGE_INC(netdev_vhost_tx_contention);
        rte_spinlock_lock(&qp->tx_lock);
    }
    /* Again under the lock: see qp_flush_locked(). */
    vid = netdev_vhost_get_vid(dev);
    if (OVS_UNLIKELY(vid < 0)) {
        rte_spinlock_unlock(&qp->tx_lock);
        rte_spinlock_lock(&dev->stats_lock);
        dev->tx_down_drops += cnt;
        rte_spinlock_unlock(&dev->stats_lock);
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    struct enqueue_ctx ctx = { dev, qp, vid, q };

    bool wants = qp->txp.mode == VHOST_TXP_TIMED;
    if (vhost_txp_needs_query(&qp->txp)) {
        wants = guest_wants_interrupt(dev, qp, vid, q);
    }
    /* The clock is read only when staging is in play: a polling guest
     * costs one ring read per burst and nothing else. */
    long long int now = wants || qp->txp.n_staged ? time_usec() : 0;
    int before = qp->txp.n_staged;

    vhost_txp_burst(&qp->txp, wants, (void **) batch->packets, cnt, now,
                    enqueue_cb, &ctx);
    staged_update(dev, q, before);
    rte_spinlock_unlock(&qp->tx_lock);
    return 0;
}

/* Rx. */

struct netdev_rxq_vhost {
    struct netdev_rxq up;
};

static struct netdev_rxq *
netdev_vhost_rxq_alloc(void)
{
    struct netdev_rxq_vhost *rx = xzalloc(sizeof *rx);
    return &rx->up;
}

static int
netdev_vhost_rxq_construct(struct netdev_rxq *rxq OVS_UNUSED)
{
    return 0;
}

static void
netdev_vhost_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

static void
netdev_vhost_rxq_dealloc(struct netdev_rxq *rxq)
{
    free(CONTAINER_OF(rxq, struct netdev_rxq_vhost, up));
}

/* netdev_class 'rxq_recv': the one PMD thread that polls 'rxq'.  Dequeues
 * up to NETDEV_MAX_BURST packets from the guest's tx vring; the caller owns
 * them.  Also flushes staged tx packets whose deadline passed.  Returns 0,
 * or EAGAIN when there is nothing to receive. */
static int
netdev_vhost_rxq_recv(struct netdev_rxq *rxq, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev_vhost *dev = netdev_vhost_cast(rxq->netdev);
    int q = rxq->queue_id;
    struct netdev_vhost_qp *qp = &dev->qps[q];
    uint16_t nb_rx = 0;
    bool ready;

    if (OVS_UNLIKELY(staged_any(dev))) {
        flush_due(dev);
    }

    /* Announce the use of the device id before reading it: destroy_device()
     * withdraws the id, then waits for 'rx_busy' to be false. */
    atomic_store_explicit(&qp->rx_busy, true, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    int vid = netdev_vhost_get_vid(dev);
    atomic_read_relaxed(&dev->ready, &ready);
    if (OVS_LIKELY(vid >= 0 && ready && dev->flags & NETDEV_UP && dev->mp)) {
        nb_rx = rte_vhost_dequeue_burst(vid, q * VIRTIO_QNUM + VIRTIO_TXQ,
                                        dev->mp->mp,
                                        (struct rte_mbuf **) batch->packets,
                                        NETDEV_MAX_BURST);
        if (qfill) {
            *qfill = nb_rx == NETDEV_MAX_BURST
                     ? rte_vhost_rx_queue_count(vid,
                                                q * VIRTIO_QNUM + VIRTIO_TXQ)
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
    qp->rx_packets += nb_rx;
    qp->rx_bytes += bytes;

    struct vhost_meter *policer = ovsrcu_get(struct vhost_meter *,
                                             &dev->ingress_policer);
    if (OVS_UNLIKELY(policer)) {
        int kept = vhost_meter_run(policer,
                                   (struct rte_mbuf **) batch->packets,
                                   nb_rx);
        if (kept != nb_rx) {
            rte_spinlock_lock(&dev->stats_lock);
            dev->rx_qos_drops += nb_rx - kept;
            dev->rx_dropped += nb_rx - kept;
            rte_spinlock_unlock(&dev->stats_lock);
            nb_rx = kept;
            if (!nb_rx) {
                return EAGAIN;
            }
        }
    }

    batch->count = nb_rx;
    dp_packet_batch_init_packet_fields(batch);
    return 0;
}

static bool
netdev_vhost_rxq_enabled(struct netdev_rxq *rxq)
{
    struct netdev_vhost *dev = netdev_vhost_cast(rxq->netdev);

    /* Rx queue 0 is always polled, as stock keeps it enabled: its poll
     * also flushes staged tx packets whose deadline passed, which must
     * happen even if the guest never enables its tx vring. */
    return !rxq->queue_id || dev->qps[rxq->queue_id].rx_enabled;
}

/* Tx queue mapping: OVS txq ids onto enabled queue pairs.  Main thread,
 * 'dev->mutex' held. */
static void
remap_txqs(struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    int enabled[NETDEV_VHOST_MAX_QP];
    int n_enabled = 0;
    int n_txq = MIN(dev->up.n_txq, NETDEV_VHOST_MAX_QP);

    for (int q = 0; q < n_txq; q++) {
        if (dev->qps[q].tx_enabled) {
            enabled[n_enabled++] = q;
        }
    }
    for (int i = 0; i < NETDEV_VHOST_MAX_QP; i++) {
        int map = -1;

        if (i < n_txq && n_enabled) {
            map = dev->qps[i].tx_enabled ? i : enabled[i % n_enabled];
        }
        atomic_store_relaxed(&dev->tx_map[i], map);
    }
}

/* rte_vhost callbacks: DPDK's vhost-events thread. */

static struct netdev_vhost *
find_by_ifname(const char *ifname) OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (dev->registered_id && !strcmp(dev->registered_id, ifname)) {
            return dev;
        }
    }
    return NULL;
}

static struct netdev_vhost *
find_by_name(const char *name) OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (!strcmp(netdev_get_name(&dev->up), name)) {
            return dev;
        }
    }
    return NULL;
}

static int
new_connection(int vid)
{
    char ifname[PATH_MAX];

    rte_vhost_get_ifname(vid, ifname, sizeof ifname);
    ovs_mutex_lock(&netdev_vhost_mutex);
    struct netdev_vhost *dev = find_by_ifname(ifname);
    if (dev && vid < NETDEV_VHOST_MAX_VID) {
        ovs_mutex_lock(&vid_map_mutex);
        vid_map[vid] = dev;
        dev->conn_gen = ++conn_gen_last;
        dev->in_msg = false;
        ovs_mutex_unlock(&vid_map_mutex);
        if (rte_vhost_extern_callback_register(vid, &ring_guard_ops, dev)) {
            VLOG_WARN("%s: could not register vhost-user message hooks",
                      netdev_get_name(&dev->up));
        }
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);
    return 0;
}

static void
destroy_connection(int vid)
{
    struct netdev_vhost *dev = NULL;

    ovs_mutex_lock(&netdev_vhost_mutex);
    if (vid >= 0 && vid < NETDEV_VHOST_MAX_VID) {
        ovs_mutex_lock(&vid_map_mutex);
        dev = vid_map[vid];
        vid_map[vid] = NULL;
        if (dev) {
            dev->conn_gen = ++conn_gen_last;
        }
        ovs_mutex_unlock(&vid_map_mutex);
    }
    if (dev) {
        /* Back to one queue pair until the next guest offers more, as
         * stock OVS does. */
        ovs_mutex_lock(&dev->mutex);
        if (dev->requested_n_qp != 1) {
            dev->requested_n_qp = 1;
            netdev_request_reconfigure(&dev->up);
        }
        ovs_mutex_unlock(&dev->mutex);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);
}

/* netdev_change_seq_changed() for the vhost-events thread.  OVS's version
 * wakes the main thread (connectivity seq) before it bumps the port's
 * change_seq: the main thread can refresh the port's database status in
 * between, find the port unchanged and not look again, so that link_state
 * and status stay stale (seen when guests reconnect to a restarted
 * ovs-vswitchd).  Waking the main thread again after the bump closes that
 * window. */
static void
change_seq_changed_async(struct netdev_vhost *dev)
{
    netdev_change_seq_changed(&dev->up);
    seq_change(connectivity_seq_get());
}

/* Guest->host notifications stay off on every vring (the PMD polls):
 * applied at new_device and again whenever a vring becomes enabled (seed
 * 000: a setting made before a vring is ready may not stick). */
static void
disable_guest_notifications(int vid, int vring)
{
    int err = rte_vhost_enable_guest_notification(vid, vring, 0);

    if (err) {
        VLOG_DBG("vid %d vring %d: could not disable notifications (%d)",
                 vid, vring, err);
    }
}

static int
new_device(int vid)
{
    char ifname[PATH_MAX];
    struct netdev_vhost *dev;
    int numa;

    rte_vhost_get_ifname(vid, ifname, sizeof ifname);
    ovs_mutex_lock(&netdev_vhost_mutex);
    dev = find_by_ifname(ifname);
    if (!dev) {
        ovs_mutex_unlock(&netdev_vhost_mutex);
        VLOG_INFO("vHost Device '%s' can't be added - name not found",
                  ifname);
        return -1;
    }

    ovs_mutex_lock(&dev->mutex);
    uint16_t n_vrings = rte_vhost_get_vring_num(vid);
    int n_qp = MIN(n_vrings / VIRTIO_QNUM, NETDEV_VHOST_MAX_QP);

    numa = rte_vhost_get_numa_node(vid);
    if (numa < 0) {
        numa = dev->numa_id;
    }
    for (int i = 0; i < n_vrings; i++) {
        disable_guest_notifications(vid, i);
    }
    /* DPDK's per-vring statistics start at zero only on a new connection:
     * a device stopped and started on the same one (the guest's driver
     * reloaded, the guest rebooted) keeps counting, and destroy_device()
     * already added those kicks to kicks_base. */
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        dev->qps[q].kicks_base -= netdev_vhost_vring_kicks(vid, q);
    }

    ovs_mutex_lock(&vid_map_mutex);
    if (vid < NETDEV_VHOST_MAX_VID) {
        vid_map[vid] = dev;
    }
    ovsrcu_index_set(&dev->vid, vid);
    rings_invalidate(dev);
    rings_refresh(dev, vid);
    ovs_mutex_unlock(&vid_map_mutex);

    if (dev->requested_n_qp != n_qp || dev->up.n_rxq != n_qp
        || numa != dev->numa_id || !dev->mp) {
        dev->requested_n_qp = n_qp;
        dev->requested_numa_id = numa;
        netdev_request_reconfigure(&dev->up);
    } else {
        atomic_store_relaxed(&dev->ready, true);
    }
    change_seq_changed_async(dev);
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&netdev_vhost_mutex);

    VLOG_INFO("vHost Device '%s' has been added on numa node %i",
              ifname, numa);
    return 0;
}

static void
destroy_device(int vid)
{
    char ifname[PATH_MAX];
    struct netdev_vhost *dev, *found = NULL;

    rte_vhost_get_ifname(vid, ifname, sizeof ifname);
    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (netdev_vhost_get_vid(dev) == vid) {
            found = dev;
            break;
        }
    }
    if (found) {
        dev = found;
        ovs_mutex_lock(&dev->mutex);
        atomic_store_relaxed(&dev->ready, false);
        ovs_mutex_lock(&vid_map_mutex);
        rings_invalidate(dev);
        ovsrcu_index_set(&dev->vid, -1);
        atomic_thread_fence(memory_order_seq_cst);
        ovs_mutex_unlock(&vid_map_mutex);

        /* Keep the kick counts of this connection: DPDK's per-vring
         * statistics vanish with the device. */
        for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
            struct netdev_vhost_qp *qp = &dev->qps[q];

            qp->kicks_base += netdev_vhost_vring_kicks(vid, q);
            qp->tx_enabled = false;
            qp->rx_enabled = false;
        }
        remap_txqs(dev);
        change_seq_changed_async(dev);
        ovs_mutex_unlock(&dev->mutex);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);

    if (found) {
        /* DPDK frees the device when this returns: wait until no thread
         * uses 'vid' any more, and only for the threads that may use it.
         * Not ovsrcu_synchronize(): that waits for every thread, also the
         * main thread, which may be waiting for this callback to return in
         * rte_vhost_driver_unregister() (netdev_vhost_destruct(), a port
         * deleted as its guest leaves): a deadlock.  'found' stays valid:
         * unregistering its socket waits for this callback to return.
         *
         * Rx: each rxq's PMD thread flags its use of the id (rx_busy).
         * Tx: every tx path reads the id under the queue's tx_lock, and
         * flush_all() takes each tx_lock once; it drops what is staged:
         * the guest's rx vrings are gone. */
        for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
            wait_while_set(&found->qps[q].rx_busy);
        }
        flush_all(found, true);
        VLOG_INFO("vHost Device '%s' has been removed", ifname);
    } else {
        VLOG_INFO("vHost Device '%s' not found", ifname);
    }
}

/* Stock OVS 3.1 warns when this many vring events wait for the main
 * thread (netdev-dpdk.c, vring_state_changed()). */
#define VRING_EVENTS_WARN 1000

static int
vring_state_changed(int vid, uint16_t vring, int enable)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    struct vring_event *ev;
    uint64_t gen = 0;
    char *name = NULL;

    ovs_mutex_lock(&vid_map_mutex);
    if (vid >= 0 && vid < NETDEV_VHOST_MAX_VID && vid_map[vid]) {
        name = xstrdup(netdev_get_name(&vid_map[vid]->up));
        gen = vid_map[vid]->conn_gen;
    }
    ovs_mutex_unlock(&vid_map_mutex);
    if (!name) {
        return 0;               /* Not a connection of ours (any more). */
    }

    ovs_mutex_lock(&event_mutex);
    LIST_FOR_EACH (ev, node, &event_list) {
        if (ev->gen == gen && ev->vring == vring && !strcmp(ev->name, name)) {
            ev->enable = enable != 0;
            ev->was_disabled |= !enable;
            ovs_mutex_unlock(&event_mutex);
            atomic_add_relaxed(&cov_events_coalesced, 1, &(unsigned int){0});
            free(name);
            return 0;
        }
    }
    ev = xzalloc(sizeof *ev);
    ev->name = name;
    ev->gen = gen;
    ev->vid = vid;
    ev->vring = vring;
    ev->enable = enable != 0;
    ev->was_disabled = !enable;
    ovs_list_push_back(&event_list, &ev->node);
    if (++n_events == VRING_EVENTS_WARN) {
        VLOG_WARN_RL(&rl, "%d vring state changes wait for the main thread",
                     VRING_EVENTS_WARN);
    }
    ovs_mutex_unlock(&event_mutex);
    seq_change(event_seq);
    return 0;
}

static int
features_changed(int vid, uint64_t features)
{
    struct netdev_vhost *dev = vid_map_get(vid);

    if (dev) {
        VLOG_INFO("%s: virtio features changed to 0x%016"PRIx64,
                  netdev_get_name(&dev->up), features);
    }
    return 0;
}

static const struct rte_vhost_device_ops vhost_device_ops = {
    .new_device = new_device,
    .destroy_device = destroy_device,
    .vring_state_changed = vring_state_changed,
    .features_changed = features_changed,
    .new_connection = new_connection,
    .destroy_connection = destroy_connection,
};

/* Applies one deferred vring state change.  Main thread. */
static void
apply_vring_event(const struct vring_event *ev)
{
    int q = ev->vring / VIRTIO_QNUM;
    bool is_rx = ev->vring % VIRTIO_QNUM == VIRTIO_TXQ;
    struct netdev_vhost *dev;

    /* Vrings become ready before new_device(), so look the port up by its
     * connection, not by its running device: by name, and only if the
     * connection the event came from is still the port's. */
    ovs_mutex_lock(&netdev_vhost_mutex);
    dev = find_by_name(ev->name);
    if (!dev || q >= NETDEV_VHOST_MAX_QP) {
        ovs_mutex_unlock(&netdev_vhost_mutex);
        return;
    }
    ovs_mutex_lock(&dev->mutex);
    ovs_mutex_lock(&vid_map_mutex);
    bool current = dev->conn_gen == ev->gen;
    ovs_mutex_unlock(&vid_map_mutex);
    if (!current) {
        VLOG_DBG("%s: ignoring a state change of vring %d of a closed "
                 "connection", ev->name, ev->vring);
        ovs_mutex_unlock(&dev->mutex);
        ovs_mutex_unlock(&netdev_vhost_mutex);
        return;
    }
    /* The connection cannot end meanwhile: destroy_connection() waits for
     * netdev_vhost_mutex. */
    if (ev->enable) {
        disable_guest_notifications(ev->vid, ev->vring);
    }
    if (is_rx) {
        dev->qps[q].rx_enabled = ev->enable;
    } else {
        struct netdev_vhost_qp *qp = &dev->qps[q];

        qp->tx_enabled = ev->enable;
        if (ev->was_disabled) {
            /* The guest took its rx vring away (and maybe gave it back
             * since): what is staged for it can no longer be placed. */
            rte_spinlock_lock(&qp->tx_lock);
            qp_flush_locked(dev, q, 0, true, true);
            rte_spinlock_unlock(&qp->tx_lock);
        }
        remap_txqs(dev);
    }
    netdev_change_seq_changed(&dev->up);
    /* Stock's message, once per state the vring went through. */
    for (int i = ev->was_disabled && ev->enable ? 0 : 1; i < 2; i++) {
        bool enable = i ? ev->enable : false;

        VLOG_INFO("State of queue %d ( %s_qid %d ) of vhost device '%s' "
                  "changed to '%s'", ev->vring, is_rx ? "rx" : "tx", q,
                  dev->registered_id ? dev->registered_id : "",
                  enable ? "enabled" : "disabled");
    }
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&netdev_vhost_mutex);
}

/* Moves the counts of 'pending' (see cov_staged_drops) to the caller's
 * coverage counter and returns them.  Main thread. */
static unsigned int
take_pending(atomic_uint *pending)
{
    unsigned int n;

    atomic_read_relaxed(pending, &n);
    if (n) {
        atomic_sub_relaxed(pending, n, &(unsigned int){0});
    }
    return n;
}

static void
netdev_vhost_class_run(const struct netdev_class *class OVS_UNUSED)
{
    struct ovs_list events;

    COVERAGE_ADD(netdev_vhost_staged_drops, take_pending(&cov_staged_drops));
    COVERAGE_ADD(netdev_vhost_flush_on_destroy,
                 take_pending(&cov_flush_on_destroy));
    COVERAGE_ADD(netdev_vhost_ring_guard_wait,
                 take_pending(&cov_ring_guard_wait));
    COVERAGE_ADD(netdev_vhost_ring_guard_long_wait,
                 take_pending(&cov_ring_guard_long_wait));
    COVERAGE_ADD(netdev_vhost_ring_guard_msg_failed,
                 take_pending(&cov_ring_guard_msg_failed));
    COVERAGE_ADD(netdev_vhost_vring_events_coalesced,
                 take_pending(&cov_events_coalesced));

    ovs_list_init(&events);
    ovs_mutex_lock(&event_mutex);
    ovs_list_push_back_all(&events, &event_list);
    n_events = 0;
    ovs_mutex_unlock(&event_mutex);

    struct vring_event *ev;
    LIST_FOR_EACH_POP (ev, node, &events) {
        apply_vring_event(ev);
        free(ev->name);
        free(ev);
    }
}

static void
netdev_vhost_class_wait(const struct netdev_class *class OVS_UNUSED)
{
    uint64_t seqno = seq_read(event_seq);
    bool pending;

    ovs_mutex_lock(&event_mutex);
    pending = !ovs_list_is_empty(&event_list);
    ovs_mutex_unlock(&event_mutex);
    if (pending) {
        poll_immediate_wake();
    } else {
        seq_wait(event_seq, seqno);
    }
}

/* Sets 'dev->registered_id' to 'id' (may be NULL) and returns the old
 * value, for the caller to free.  Both locks: the vhost-events thread reads
 * it under netdev_vhost_mutex (find_by_ifname()), the main thread under
 * dev->mutex.  Main thread, neither lock held. */
static char *
registered_id_set(struct netdev_vhost *dev, char *id)
    OVS_EXCLUDED(netdev_vhost_mutex, dev->mutex)
{
    ovs_mutex_lock(&netdev_vhost_mutex);
    ovs_mutex_lock(&dev->mutex);
    char *old = dev->registered_id;
    dev->registered_id = id;
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&netdev_vhost_mutex);
    return old;
}

/* Registers 'dev->vhost_id' with rte_vhost and starts it.  Main thread,
 * with neither netdev_vhost_mutex nor dev->mutex held (it takes both to
 * publish 'registered_id').  Returns 0 or EINVAL. */
static int
vhost_driver_setup(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex, dev->mutex)
{
    const char *name = netdev_get_name(&dev->up);
    uint64_t flags = RTE_VHOST_USER_LINEARBUF_SUPPORT
                     | RTE_VHOST_USER_NET_STATS_ENABLE;
    int err;

    if (userspace_tso_enabled()) {
        flags |= RTE_VHOST_USER_EXTBUF_SUPPORT;
        dev->up.ol_flags |= NETDEV_TX_OFFLOAD_TCP_TSO
                            | NETDEV_TX_OFFLOAD_TCP_CKSUM
                            | NETDEV_TX_OFFLOAD_UDP_CKSUM
                            | NETDEV_TX_OFFLOAD_SCTP_CKSUM
                            | NETDEV_TX_OFFLOAD_IPV4_CKSUM;
    }
    if (dev->client) {
        flags |= RTE_VHOST_USER_CLIENT;
        if (vhost_iommu_enabled) {
            flags |= RTE_VHOST_USER_IOMMU_SUPPORT;
        }
        if (vhost_postcopy_enabled) {
            flags |= RTE_VHOST_USER_POSTCOPY_SUPPORT;
        }
    }

    err = rte_vhost_driver_register(dev->vhost_id, flags);
    if (err) {
        VLOG_ERR("vhost-user socket device setup failure for socket %s",
                 dev->vhost_id);
        return EINVAL;
    }
    registered_id_set(dev, xstrdup(dev->vhost_id));
    dev->driver_flags = flags;
    if (dev->client) {
        VLOG_INFO("vHost User device '%s' created in 'client' mode, "
                  "using client socket '%s'", name, dev->vhost_id);
    } else {
        fatal_signal_add_file_to_unlink(dev->vhost_id);
        VLOG_INFO("Socket %s created for vhost-user port %s",
                  dev->vhost_id, name);
    }

    err = rte_vhost_driver_callback_register(dev->vhost_id,
                                             &vhost_device_ops);
    if (!err) {
        /* As stock: without userspace TSO no checksum offload (and so no
         * TSO, UFO, ECN, virtio 1.1 5.1.3.1); with it, no UFO or ECN. */
        uint64_t unsupported = userspace_tso_enabled()
                               ? 1ULL << VIRTIO_NET_F_HOST_ECN
                                 | 1ULL << VIRTIO_NET_F_HOST_UFO
                               : 1ULL << VIRTIO_NET_F_HOST_TSO4
                                 | 1ULL << VIRTIO_NET_F_HOST_TSO6
                                 | 1ULL << VIRTIO_NET_F_CSUM;

        err = rte_vhost_driver_disable_features(dev->vhost_id, unsupported);
    }
    if (!err) {
        err = rte_vhost_driver_start(dev->vhost_id);
    }
    if (err) {
        VLOG_ERR("%s: could not start vhost-user driver for socket %s",
                 name, dev->vhost_id);
        rte_vhost_driver_unregister(dev->vhost_id);
        free(registered_id_set(dev, NULL));
        return EINVAL;
    }
    return 0;
}

/* Unregisters the socket of 'dev' from rte_vhost.  Main thread, with
 * neither netdev_vhost_mutex nor dev->mutex held.
 *
 * DPDK 22.11's rte_vhost_driver_unregister() (lib/vhost/socket.c) never
 * fails with EBUSY: while a callback of the socket runs in the vhost-events
 * thread it spins itself (fdset_try_del() and "goto again") until it
 * returns; it fails only for a path that is not registered.  For a
 * connected guest it calls destroy_device() in this thread, and no
 * destroy_connection() at all.  So: no callback may wait for the main
 * thread (destroy_device() does not), this thread must hold no lock the
 * callbacks take, and the device ids of the closed connections are
 * forgotten here. */
static void
vhost_driver_teardown(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex, dev->mutex)
{
    char *id = dev->registered_id;

    if (!id) {
        return;
    }
    if (rte_vhost_driver_unregister(id)) {
        VLOG_ERR("%s: could not unregister vhost-user socket %s",
                 netdev_get_name(&dev->up), id);
    }
    if (!dev->client) {
        fatal_signal_remove_file_to_unlink(id);
        unlink(id);
    }
    free(registered_id_set(dev, NULL));

    ovs_mutex_lock(&vid_map_mutex);
    for (int i = 0; i < NETDEV_VHOST_MAX_VID; i++) {
        if (vid_map[i] == dev) {
            vid_map[i] = NULL;
        }
    }
    dev->conn_gen = ++conn_gen_last;
    dev->in_msg = false;
    ovs_mutex_unlock(&vid_map_mutex);
}

/* Construction. */

static struct netdev *
netdev_vhost_alloc(void)
{
    struct netdev_vhost *dev = rte_zmalloc("netdev_vhost", sizeof *dev, 64);

    return dev ? &dev->up : NULL;
}

static void
netdev_vhost_dealloc(struct netdev *netdev)
{
    rte_free(netdev_vhost_cast(netdev));
}

static void
txp_cfg_apply(struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    struct netdev_vhost_txp_cfg *cfg = &dev->txp_cfg;
    enum vhost_txp_mode mode = cfg->mode_set ? cfg->mode : default_txp_mode;
    uint32_t interval = cfg->interval_set ? cfg->interval_us
                                          : default_txp_interval;
    long long int now = time_usec();

    cfg->mode = mode;
    cfg->interval_us = interval;
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];

        rte_spinlock_lock(&qp->tx_lock);
        int vid = netdev_vhost_get_vid(dev);
        struct enqueue_ctx ctx = { dev, qp, vid, q };
        int before = qp->txp.n_staged;

        if (before && vid < 0) {
            qp_flush_locked(dev, q, now, true, true);
        }
        vhost_txp_set_config(&qp->txp, mode, interval, now, enqueue_cb, &ctx);
        staged_update(dev, q, before);
        rte_spinlock_unlock(&qp->tx_lock);
    }
}

static int
common_construct(struct netdev *netdev, bool client)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_init(&dev->mutex);
    dev->client = client;
    ovsrcu_index_init(&dev->vid, -1);
    atomic_init(&dev->ready, false);
    atomic_init(&dev->rings_valid, false);
    for (int w = 0; w < ARRAY_SIZE(dev->staged.bits); w++) {
        atomic_init(&dev->staged.bits[w], 0);
    }
    atomic_init(&dev->tx_retries_max, NETDEV_VHOST_RETRY_DEF);
    dev->numa_id = rte_lcore_to_socket_id(rte_get_main_lcore());
    if (dev->numa_id < 0 || dev->numa_id == SOCKET_ID_ANY) {
        dev->numa_id = 0;
    }
    dev->requested_numa_id = dev->numa_id;
    dev->mtu = dev->requested_mtu = ETH_PAYLOAD_MAX;
    dev->requested_n_qp = 1;
    dev->flags = NETDEV_UP | NETDEV_PROMISC;
    eth_addr_nicira_random(&dev->hwaddr);
    rte_spinlock_init(&dev->stats_lock);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        rte_spinlock_init(&dev->qps[q].tx_lock);
        atomic_init(&dev->qps[q].reading, false);
        atomic_init(&dev->qps[q].rx_busy, false);
        atomic_init(&dev->tx_map[q], -1);
        vhost_txp_init(&dev->qps[q].txp, default_txp_mode,
                       default_txp_interval);
    }
    dev->txp_cfg.mode = default_txp_mode;
    dev->txp_cfg.interval_us = default_txp_interval;

    /* Like stock vhost ports: one rx queue until a guest says more. */
    netdev->n_rxq = 0;
    netdev->n_txq = 0;
    netdev_request_reconfigure(netdev);

    ovs_mutex_lock(&netdev_vhost_mutex);
    ovs_list_push_back(&vhost_list, &dev->list_node);
    ovs_mutex_unlock(&netdev_vhost_mutex);
    return 0;
}

static int
netdev_vhost_server_construct(struct netdev *netdev)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    const char *name = netdev->name;
    int err;

    /* The name becomes a file name in vhost-sock-dir: no directory
     * traversal. */
    if (strchr(name, '/') || strchr(name, '\\') || strstr(name, "..")
        || !strcmp(name, ".")) {
        VLOG_ERR("\"%s\" is not a valid name for a vhost-user port. "
                 "A valid name must not include '/', '\\' or '..'", name);
        return EINVAL;
    }
    if (strlen(vhost_sock_dir) + 1 + strlen(name) >= 108) {
        VLOG_ERR("vhost-user socket path '%s/%s' is too long (at most 107 "
                 "bytes)", vhost_sock_dir, name);
        return ENAMETOOLONG;
    }
    /* Say why the socket cannot be created, rather than let DPDK fail. */
    if (access(vhost_sock_dir, W_OK | X_OK)) {
        err = errno;
        VLOG_ERR("%s: cannot create the vhost-user socket in vhost-sock-dir "
                 "'%s': %s", name, vhost_sock_dir, ovs_strerror(err));
        return err;
    }

    common_construct(netdev, false);
    ovs_mutex_lock(&dev->mutex);
    dev->vhost_id = xasprintf("%s/%s", vhost_sock_dir, name);
    ovs_mutex_unlock(&dev->mutex);
    err = vhost_driver_setup(dev);
    if (err) {
        ovs_mutex_lock(&netdev_vhost_mutex);
        ovs_list_remove(&dev->list_node);
        ovs_mutex_unlock(&netdev_vhost_mutex);
        free(dev->vhost_id);
        ovs_mutex_destroy(&dev->mutex);
    }
    return err;
}

static int
netdev_vhost_client_construct(struct netdev *netdev)
{
    return common_construct(netdev, true);
}

static void
netdev_vhost_destruct(struct netdev *netdev)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    /* Out of the list first, as stock OVS does: rte_vhost_driver_unregister()
     * calls destroy_device() in this thread for a connected guest, and that
     * need not find the port: no PMD thread uses it any more, and what is
     * staged is dropped and counted below. */
    ovs_mutex_lock(&netdev_vhost_mutex);
    ovs_list_remove(&dev->list_node);
    ovs_mutex_unlock(&netdev_vhost_mutex);

    vhost_driver_teardown(dev);

    flush_all(dev, true);
    vhost_meter_destroy(ovsrcu_get_protected(struct vhost_meter *,
                                             &dev->ingress_policer));
    vhost_meter_destroy(ovsrcu_get_protected(struct vhost_meter *,
                                             &dev->egress_qos));
    mempool_put(dev->mp);
    free(dev->vhost_id);
    free(dev->txp_cfg.error);
    free(dev->path_error);
    free(dev->retries_error);
    free(dev->n_rxq_ignored);
    ovs_mutex_destroy(&dev->mutex);
}

/* Configuration. */

static int
netdev_vhost_get_config(const struct netdev *netdev, struct smap *args)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    int retries;

    ovs_mutex_lock(&dev->mutex);
    /* Stock's keys first (dpctl/show prints them; OVS's tests read mtu). */
    smap_add_format(args, "requested_rx_queues", "%d", dev->requested_n_qp);
    smap_add_format(args, "configured_rx_queues", "%d", netdev->n_rxq);
    smap_add_format(args, "requested_tx_queues", "%d", dev->requested_n_qp);
    smap_add_format(args, "configured_tx_queues", "%d", netdev->n_txq);
    smap_add_format(args, "mtu", "%d", dev->mtu);
    if (dev->client && dev->vhost_id) {
        smap_add(args, "vhost-server-path", dev->vhost_id);
    }
    atomic_read_relaxed(&dev->tx_retries_max, &retries);
    if (retries != NETDEV_VHOST_RETRY_DEF) {
        smap_add_format(args, "tx-retries-max", "%d", retries);
    }
    if (dev->txp_cfg.mode_set) {
        smap_add(args, "tx-flush-mode",
                 vhost_txp_mode_to_string(dev->txp_cfg.mode));
    }
    if (dev->txp_cfg.interval_set) {
        smap_add_format(args, "tx-flush-interval", "%"PRIu32,
                        dev->txp_cfg.interval_us);
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* Parses the tx policy options of 'args' into 'cfg', leaving what is
 * invalid as it was.  Returns NULL or a malloc'd error message. */
static char *
parse_txp_options(const struct smap *args, struct netdev_vhost_txp_cfg *cfg)
{
    const char *mode_s = smap_get(args, "tx-flush-mode");
    const char *interval_s = smap_get(args, "tx-flush-interval");
    char *error = NULL;

    if (!mode_s) {
        cfg->mode_set = false;
    } else {
        enum vhost_txp_mode mode;

        if (vhost_txp_mode_from_string(mode_s, &mode)) {
            cfg->mode_set = true;
            cfg->mode = mode;
        } else {
            error = xasprintf("tx-flush-mode \"%s\" is not one of auto, "
                              "immediate, timed", mode_s);
        }
    }
    if (!interval_s) {
        cfg->interval_set = false;
    } else {
        uint32_t us;
        char *e = vhost_txp_parse_interval(interval_s, &us);

        if (!e) {
            cfg->interval_set = true;
            cfg->interval_us = us;
        } else if (!error) {
            error = e;
        } else {
            char *both = xasprintf("%s; %s", error, e);
            free(error);
            free(e);
            error = both;
        }
    }
    return error;
}

/* Returns why a client port cannot connect to 'path' yet, or NULL: its
 * directory does not exist, or 'path' exists but is not a socket.  (A
 * missing socket in an existing directory is normal: the guest is not up
 * yet.)  The caller frees the message.  Main thread. */
static char *
socket_path_problem(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    struct stat st;
    char *problem = NULL;

    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        problem = xasprintf("directory \"%s\" of vhost-server-path does "
                            "not exist", dir);
    } else if (!stat(path, &st) && !S_ISSOCK(st.st_mode)) {
        problem = xasprintf("vhost-server-path \"%s\" is not a socket",
                            path);
    }
    free(dir);
    return problem;
}

/* Logs what socket_path_problem() finds for the new vhost-server-path of
 * client port 'dev': OVS keeps trying to connect, but the operator should
 * know.  Main thread, dev->mutex held. */
static void
socket_path_check(const struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    char *problem = socket_path_problem(dev->vhost_id);

    if (problem) {
        VLOG_WARN("%s: %s; connecting when a guest listens there",
                  netdev_get_name(&dev->up), problem);
        free(problem);
    }
}

/* Replaces '*cur' (a malloc'd string or NULL) by a copy of 'new' and
 * returns true if they differ: for logging a rejected setting once. */
static bool
note_change(char **cur, const char *new)
{
    if (nullable_string_is_equal(*cur, new)) {
        return false;
    }
    free(*cur);
    *cur = nullable_xstrdup(new);
    return true;
}

/* netdev_class 'set_config': main thread.  Returns EINVAL (port not
 * created) only for a new client port without a valid vhost-server-path.
 * Bad options never fail an existing port: OVS deletes ports whose
 * set_config fails, so they are logged (once per value), shown in status
 * ("vhost_server_path_error", "tx_retries_error", "tx_flush_error") and the
 * previous setting is kept. */
static int
netdev_vhost_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    const char *name = netdev_get_name(netdev);
    int err = 0;

    ovs_mutex_lock(&dev->mutex);
    if (dev->client) {
        const char *path = smap_get(args, "vhost-server-path");
        char *msg = NULL;

        if (!path || !path[0]) {
            msg = xasprintf("%s: dpdkvhostuserclient port requires "
                            "options:vhost-server-path", name);
        } else if (path[0] != '/' || strlen(path) >= 108) {
            msg = xasprintf("%s: vhost-server-path \"%s\" must be an "
                            "absolute path shorter than 108 bytes", name,
                            path);
        }
        if (msg && !dev->vhost_id) {
            /* A new port: not created, its Interface error says why. */
            VLOG_WARN_BUF(errp, "%s", msg);
            free(msg);
            err = EINVAL;
            goto out;
        } else if (msg) {
            if (note_change(&dev->path_error, msg)) {
                VLOG_ERR("%s; keeping vhost-server-path \"%s\"", msg,
                         dev->vhost_id);
            }
            free(msg);
        } else {
            note_change(&dev->path_error, NULL);
            if (!nullable_string_is_equal(path, dev->vhost_id)) {
                free(dev->vhost_id);
                dev->vhost_id = xstrdup(path);
                netdev_request_reconfigure(netdev);
                socket_path_check(dev);
            }
        }
    }

    /* The guest's driver decides how many queues a vhost port has. */
    const char *n_rxq_s = smap_get(args, "n_rxq");
    if (note_change(&dev->n_rxq_ignored, n_rxq_s) && n_rxq_s) {
        VLOG_WARN("%s: options:n_rxq \"%s\" ignored: the guest's driver "
                  "chooses how many queues a vhost-user port has", name,
                  n_rxq_s);
    }

    const char *retries_s = smap_get(args, "tx-retries-max");
    int retries = NETDEV_VHOST_RETRY_DEF;
    int cur;
    atomic_read_relaxed(&dev->tx_retries_max, &cur);
    if (retries_s && (!str_to_int(retries_s, 10, &retries)
                      || retries < NETDEV_VHOST_RETRY_MIN
                      || retries > NETDEV_VHOST_RETRY_MAX)) {
        char *msg = xasprintf("tx-retries-max \"%s\" is not a number from "
                              "%d to %d", retries_s, NETDEV_VHOST_RETRY_MIN,
                              NETDEV_VHOST_RETRY_MAX);
        if (note_change(&dev->retries_error, msg)) {
            VLOG_ERR("%s: %s; keeping tx-retries-max=%d", name, msg, cur);
        }
        free(msg);
        retries = cur;
    } else {
        note_change(&dev->retries_error, NULL);
    }
    if (cur != retries) {
        atomic_store_relaxed(&dev->tx_retries_max, retries);
        VLOG_INFO("Max Tx retries for vhost device '%s' set to %d",
                  name, retries);
    }

    char *error = parse_txp_options(args, &dev->txp_cfg);
    if (error && !nullable_string_is_equal(error, dev->txp_cfg.error)) {
        VLOG_ERR("%s: %s; keeping tx-flush-mode=%s tx-flush-interval=%"
                 PRIu32, name, error,
                 vhost_txp_mode_to_string(dev->txp_cfg.mode),
                 dev->txp_cfg.interval_us);
    }
    free(dev->txp_cfg.error);
    dev->txp_cfg.error = error;
    txp_cfg_apply(dev);

out:
    ovs_mutex_unlock(&dev->mutex);
    return err;
}

void
netdev_vhost_set_other_config(const struct smap *ovs_other_config)
{
    const char *mode_s = smap_get(ovs_other_config, "vhost-tx-flush-mode");
    const char *interval_s = smap_get(ovs_other_config,
                                      "vhost-tx-flush-interval");
    enum vhost_txp_mode mode = VHOST_TXP_AUTO;
    uint32_t interval = VHOST_TXP_INTERVAL_DEFAULT;
    char *error = NULL;

    if (mode_s && !vhost_txp_mode_from_string(mode_s, &mode)) {
        error = xasprintf("other_config:vhost-tx-flush-mode \"%s\" is not "
                          "one of auto, immediate, timed", mode_s);
    }
    if (!error && interval_s) {
        char *e = vhost_txp_parse_interval(interval_s, &interval);
        if (e) {
            error = xasprintf("other_config:vhost-%s", e);
            free(e);
        }
    }
    if (error) {
        if (!nullable_string_is_equal(error, default_txp_error)) {
            VLOG_ERR("%s; keeping vhost-tx-flush-mode=%s "
                     "vhost-tx-flush-interval=%"PRIu32, error,
                     vhost_txp_mode_to_string(default_txp_mode),
                     default_txp_interval);
            free(default_txp_error);
            default_txp_error = error;
        } else {
            free(error);
        }
        return;
    }
    free(default_txp_error);
    default_txp_error = NULL;
    if (mode == default_txp_mode && interval == default_txp_interval) {
        return;
    }
    default_txp_mode = mode;
    default_txp_interval = interval;
    VLOG_INFO("vhost tx flush default: mode %s, interval %"PRIu32" us",
              vhost_txp_mode_to_string(mode), interval);

    struct netdev_vhost *dev;
    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        ovs_mutex_lock(&dev->mutex);
        txp_cfg_apply(dev);
        ovs_mutex_unlock(&dev->mutex);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);
}

/* netdev_class 'reconfigure': main thread, with no PMD thread using the
 * port.  Applies the requested MTU, NUMA node and queue counts, and (client
 * ports) (re)connects to vhost-server-path. */
static int
netdev_vhost_reconfigure(struct netdev *netdev)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    int err = 0;

    if (dev->client && dev->registered_id
        && !nullable_string_is_equal(dev->registered_id, dev->vhost_id)) {
        vhost_driver_teardown(dev);
    }

    ovs_mutex_lock(&dev->mutex);
    flush_all(dev, false);

    if (!dev->mp || dev->mtu != dev->requested_mtu
        || dev->numa_id != dev->requested_numa_id) {
        struct netdev_vhost_mempool *mp = mempool_get(dev->requested_numa_id,
                                                      dev->requested_mtu);
        if (!mp) {
            err = ENOMEM;
        } else {
            mempool_put(dev->mp);
            dev->mp = mp;
            dev->mtu = dev->requested_mtu;
            dev->numa_id = dev->requested_numa_id;
        }
    }

    netdev->n_rxq = dev->requested_n_qp;
    netdev->n_txq = dev->requested_n_qp;
    remap_txqs(dev);

    if (netdev_vhost_get_vid(dev) >= 0 && dev->mp) {
        atomic_store_relaxed(&dev->ready, true);
    }
    netdev_change_seq_changed(netdev);
    bool setup = dev->client && dev->vhost_id && !dev->registered_id;
    ovs_mutex_unlock(&dev->mutex);

    if (setup) {
        int error = vhost_driver_setup(dev);
        err = err ? err : error;
    }
    return err;
}

/* Simple getters and setters: main thread. */

static int
netdev_vhost_get_numa_id(const struct netdev *netdev)
{
    return netdev_vhost_cast(netdev)->numa_id;
}

static int
netdev_vhost_set_etheraddr(struct netdev *netdev, const struct eth_addr mac)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    if (!eth_addr_equals(dev->hwaddr, mac)) {
        dev->hwaddr = mac;
        netdev_change_seq_changed(netdev);
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

static int
netdev_vhost_get_etheraddr(const struct netdev *netdev, struct eth_addr *mac)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    *mac = dev->hwaddr;
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

static int
netdev_vhost_get_mtu(const struct netdev *netdev, int *mtup)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    *mtup = dev->mtu;
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* MTU 68 to 9702 (the largest frame, with two VLAN tags, is 9728 bytes, as
 * stock netdev-dpdk).  EINVAL outside. */
static int
netdev_vhost_set_mtu(struct netdev *netdev, int mtu)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    if (mtu < 68 || MTU_TO_MAX_FRAME_LEN(mtu) > NETDEV_VHOST_MAX_PKT_LEN) {
        VLOG_WARN("%s: unsupported MTU %d (68 to %d)", netdev_get_name(netdev),
                  mtu, NETDEV_VHOST_MAX_PKT_LEN - ETHER_HDR_MAX_LEN);
        return EINVAL;
    }
    ovs_mutex_lock(&dev->mutex);
    if (dev->requested_mtu != mtu) {
        dev->requested_mtu = mtu;
        netdev_request_reconfigure(netdev);
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

static int
netdev_vhost_get_ifindex(const struct netdev *netdev OVS_UNUSED)
{
    return 0;
}

static bool
carrier_up(const struct netdev_vhost *dev)
{
    bool ready;

    atomic_read_relaxed(&dev->ready, &ready);
    if (netdev_vhost_get_vid(dev) < 0 || !ready) {
        return false;
    }
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        if (dev->qps[q].tx_enabled || dev->qps[q].rx_enabled) {
            return true;
        }
    }
    return false;
}

static int
netdev_vhost_get_carrier(const struct netdev *netdev, bool *carrier)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    *carrier = carrier_up(dev);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

static long long int
netdev_vhost_get_carrier_resets(const struct netdev *netdev)
{
    return netdev_vhost_cast(netdev)->link_reset_cnt;
}

static int
netdev_vhost_update_flags(struct netdev *netdev, enum netdev_flags off,
                          enum netdev_flags on, enum netdev_flags *old_flagsp)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    if ((off | on) & ~(NETDEV_UP | NETDEV_PROMISC)) {
        return EINVAL;
    }
    ovs_mutex_lock(&dev->mutex);
    *old_flagsp = dev->flags;
    dev->flags = (dev->flags & ~off) | on;
    if (dev->flags != *old_flagsp) {
        netdev_change_seq_changed(netdev);
    }
    ovs_mutex_unlock(&dev->mutex);
    if (*old_flagsp & NETDEV_UP && !(dev->flags & NETDEV_UP)) {
        flush_all(dev, false);
    }
    return 0;
}

/* Statistics. */

/* Returns DPDK's count of guest notifications (kicks: eventfd writes to
 * the guest's callfd) of the rx vring of queue pair 'q' of device 'vid',
 * or 0 if unknown.  Any non-PMD thread. */
uint64_t
netdev_vhost_vring_kicks(int vid, int q)
{
    struct rte_vhost_stat_name names[32];
    struct rte_vhost_stat stats[32];
    int vring = q * VIRTIO_QNUM + VIRTIO_RXQ;

    if (vid < 0 || vring >= rte_vhost_get_vring_num(vid)) {
        return 0;
    }
    int n = rte_vhost_vring_stats_get_names(vid, vring, names,
                                            ARRAY_SIZE(names));
    if (n <= 0 || n > ARRAY_SIZE(names)
        || rte_vhost_vring_stats_get(vid, vring, stats, n) != n) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const char *suffix = strrchr(names[i].name, '_');

        if (strstr(names[i].name, "guest_notifications")
            && suffix && stats[i].id < n) {
            return stats[stats[i].id].value;
        }
    }
    return 0;
}

/* netdev_class 'get_stats': main thread.  netdev_get_stats() presets every
 * field to all-ones ("unsupported"), so each supported one is assigned. */
static int
netdev_vhost_get_stats(const struct netdev *netdev, struct netdev_stats *s)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
    uint64_t tx_dropped = 0;

    ovs_mutex_lock(&dev->mutex);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        const struct netdev_vhost_qp *qp = &dev->qps[q];

        rx_packets += qp->rx_packets;
        rx_bytes += qp->rx_bytes;
        tx_packets += qp->tx_packets;
        tx_bytes += qp->tx_bytes;
        tx_dropped += qp->tx_dropped + qp->tx_staged_dropped;
    }
    rte_spinlock_lock(&dev->stats_lock);
    tx_dropped += dev->tx_failure_drops + dev->tx_mtu_exceeded_drops
                  + dev->tx_down_drops + dev->tx_qos_drops
                  + dev->tx_invalid_hwol_drops;
    s->rx_dropped = dev->rx_dropped;
    rte_spinlock_unlock(&dev->stats_lock);
    ovs_mutex_unlock(&dev->mutex);

    s->rx_packets = rx_packets;
    s->rx_bytes = rx_bytes;
    s->tx_packets = tx_packets;
    s->tx_bytes = tx_bytes;
    s->tx_dropped = tx_dropped;
    s->rx_errors = 0;
    s->tx_errors = 0;
    return 0;
}

static void
custom_add(struct netdev_custom_stats *cs, size_t *allocated,
           const char *name, uint64_t value)
{
    if (cs->size >= *allocated) {
        cs->counters = x2nrealloc(cs->counters, allocated,
                                  sizeof *cs->counters);
    }
    ovs_strlcpy(cs->counters[cs->size].name, name,
                NETDEV_CUSTOM_STATS_NAME_SIZE);
    cs->counters[cs->size].value = value;
    cs->size++;
}

/* Fills 'cs' with the port's custom statistics: stock's software drop
 * counters, DPDK's per-vring statistics (stock names), and the tx policy's
 * per-queue counters as tx_q<N>_<counter>.  Main thread. */
static int
netdev_vhost_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *cs)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    size_t allocated = cs->size;
    uint64_t tx_failure = 0, tx_retries = 0;
    char name[NETDEV_CUSTOM_STATS_NAME_SIZE];

    ovs_mutex_lock(&dev->mutex);
    int vid = netdev_vhost_get_vid(dev);
    int n_qp = MIN(MAX(dev->up.n_txq, dev->up.n_rxq), NETDEV_VHOST_MAX_QP);

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        tx_failure += dev->qps[q].tx_dropped;
        tx_retries += dev->qps[q].tx_retries;
    }
    rte_spinlock_lock(&dev->stats_lock);
    tx_failure += dev->tx_failure_drops;
    uint64_t mtu_drops = dev->tx_mtu_exceeded_drops;
    uint64_t tx_qos_drops = dev->tx_qos_drops;
    uint64_t hwol_drops = dev->tx_invalid_hwol_drops;
    uint64_t rx_qos_drops = dev->rx_qos_drops;
    rte_spinlock_unlock(&dev->stats_lock);

    custom_add(cs, &allocated, "ovs_tx_failure_drops", tx_failure);
    custom_add(cs, &allocated, "ovs_tx_mtu_exceeded_drops", mtu_drops);
    custom_add(cs, &allocated, "ovs_tx_qos_drops", tx_qos_drops);
    custom_add(cs, &allocated, "ovs_rx_qos_drops", rx_qos_drops);
    custom_add(cs, &allocated, "ovs_tx_invalid_hwol_drops", hwol_drops);
    custom_add(cs, &allocated, "tx_retries", tx_retries);

    /* DPDK's per-vring statistics, already named rx_q<N>_... and
     * tx_q<N>_... by the library. */
    if (vid >= 0) {
        uint16_t n_vrings = rte_vhost_get_vring_num(vid);
        for (int vring = 0; vring < MIN(n_vrings, n_qp * VIRTIO_QNUM);
             vring++) {
            struct rte_vhost_stat_name names[32];
            struct rte_vhost_stat stats[32];
            int n = rte_vhost_vring_stats_get_names(vid, vring, names,
                                                    ARRAY_SIZE(names));

            if (n <= 0 || n > ARRAY_SIZE(names)
                || rte_vhost_vring_stats_get(vid, vring, stats, n) != n) {
                continue;
            }
            for (int i = 0; i < n; i++) {
                custom_add(cs, &allocated, names[i].name, stats[i].value);
            }
        }
    }

    for (int q = 0; q < n_qp; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];
        struct vhost_txp_stats st;

        rte_spinlock_lock(&qp->tx_lock);
        st = qp->txp.stats;
        int n_staged = qp->txp.n_staged;
        rte_spinlock_unlock(&qp->tx_lock);

#define ADD(SUFFIX, VALUE)                                              \
        snprintf(name, sizeof name, "tx_q%d_" SUFFIX, q);               \
        custom_add(cs, &allocated, name, VALUE)
        ADD("bursts", st.bursts);
        ADD("bursts_intr", st.bursts_intr);
        ADD("sent_immediate", st.sent_immediate);
        ADD("staged", st.staged);
        ADD("staged_now", n_staged);
        ADD("flush_deadline", st.flushes[VHOST_TXP_FLUSH_DEADLINE]);
        ADD("flush_full", st.flushes[VHOST_TXP_FLUSH_FULL]);
        ADD("flush_guest", st.flushes[VHOST_TXP_FLUSH_GUEST]);
        ADD("flush_reconfigure", st.flushes[VHOST_TXP_FLUSH_RECONFIG]);
        ADD("staged_drops", st.staged_drops);
        ADD("kicks", qp->kicks_base + netdev_vhost_vring_kicks(vid, q));
        ADD("max_wait_us", st.max_wait_us);
        ADD("queries_skipped", qp->queries_skipped);
#undef ADD
    }
    if (dev->mp) {
        custom_add(cs, &allocated, "ovs_mempool_in_use",
                   mempool_in_use(dev->mp));
    }
    custom_add(cs, &allocated, "vhost_mem_table_msgs", dev->mem_table_msgs);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

static const char *
ring_layout(uint64_t features)
{
    return features & (1ULL << VIRTIO_F_RING_PACKED) ? "packed" : "split";
}

/* netdev_class 'get_status': stock's keys for vhost ports, then ours.
 * Main thread. */
static int
netdev_vhost_get_status(const struct netdev *netdev, struct smap *args)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    int vid = netdev_vhost_get_vid(dev);

    smap_add(args, "mode", dev->client ? "client" : "server");
    smap_add(args, "status", vid >= 0 ? "connected" : "disconnected");
    if (vid >= 0) {
        char socket_name[PATH_MAX];
        uint64_t features;
        uint16_t mtu;

        if (!rte_vhost_get_ifname(vid, socket_name, sizeof socket_name)) {
            smap_add(args, "socket", socket_name);
        }
        if (!rte_vhost_get_negotiated_features(vid, &features)) {
            smap_add_format(args, "features", "0x%016"PRIx64, features);
            smap_add(args, "ring", ring_layout(features));
            smap_add(args, "event_idx",
                     features & (1ULL << VIRTIO_RING_F_EVENT_IDX)
                     ? "true" : "false");
        }
        if (!rte_vhost_get_mtu(vid, &mtu)) {
            smap_add_format(args, "mtu", "%d", mtu);
        }
        int numa = rte_vhost_get_numa_node(vid);
        if (numa >= 0) {
            smap_add_format(args, "numa", "%d", numa);
        }
        uint16_t n_vrings = rte_vhost_get_vring_num(vid);
        if (n_vrings) {
            smap_add_format(args, "num_of_vrings", "%d", n_vrings);
        }
        for (int i = 0; i < n_vrings; i++) {
            struct rte_vhost_vring vring;

            if (!rte_vhost_get_vhost_vring(vid, i, &vring)) {
                smap_add_nocopy(args, xasprintf("vring_%d_size", i),
                                xasprintf("%d", vring.size));
            }
        }
    } else if (dev->vhost_id) {
        smap_add(args, "socket", dev->vhost_id);
    }
    smap_add_format(args, "n_rxq", "%d", dev->up.n_rxq);
    smap_add_format(args, "n_txq", "%d", dev->up.n_txq);
    smap_add(args, "tx_flush_mode",
             vhost_txp_mode_to_string(dev->txp_cfg.mode));
    smap_add_format(args, "tx_flush_interval", "%"PRIu32,
                    dev->txp_cfg.interval_us);
    if (dev->txp_cfg.error) {
        smap_add(args, "tx_flush_error", dev->txp_cfg.error);
    }
    if (dev->path_error) {
        smap_add(args, "vhost_server_path_error", dev->path_error);
    }
    if (dev->retries_error) {
        smap_add(args, "tx_retries_error", dev->retries_error);
    }
    if (dev->client && vid < 0 && dev->vhost_id) {
        char *problem = socket_path_problem(dev->vhost_id);

        if (problem) {
            smap_add_nocopy(args, xstrdup("socket_error"), problem);
        }
    }
    smap_add(args, "netdev_vhost_version", netdev_vhost_version);
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* QoS: main thread. */

/* netdev_class 'set_policing': the ingress policer, as stock OVS 3.1: rate
 * and burst in kbit/s and kbit; rate 0 removes it; burst 0 means 8000
 * kbit.  Packet-rate limits are not supported (ignored, as stock). */
static int
netdev_vhost_set_policing(struct netdev *netdev, uint32_t rate,
                          uint32_t burst, uint32_t kpkts_rate OVS_UNUSED,
                          uint32_t kpkts_burst OVS_UNUSED)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    burst = !rate ? 0 : !burst ? 8000 : burst;
    ovs_mutex_lock(&dev->mutex);
    if (dev->policer_rate != rate || dev->policer_burst != burst) {
        struct vhost_meter *old = ovsrcu_get_protected(struct vhost_meter *,
                                                       &dev->ingress_policer);
        struct vhost_meter *new = NULL;

        if (rate) {
            new = vhost_meter_create_srtcm(rate * 1000ULL / 8,
                                           burst * 1000ULL / 8,
                                           "ingress policer");
        }
        ovsrcu_set(&dev->ingress_policer, new);
        if (old) {
            ovsrcu_postpone(vhost_meter_destroy, old);
        }
        dev->policer_rate = rate;
        dev->policer_burst = burst;
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

static int
netdev_vhost_get_qos_types(const struct netdev *netdev OVS_UNUSED,
                           struct sset *types)
{
    vhost_meter_qos_types(types);
    return 0;
}

static int
netdev_vhost_get_qos(const struct netdev *netdev, const char **typep,
                     struct smap *details)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    struct vhost_meter *m = ovsrcu_get_protected(struct vhost_meter *,
                                                 &dev->egress_qos);
    *typep = m ? vhost_meter_get_qos(m, details) : "";
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* netdev_class 'set_qos': "egress-policer" or "trtcm-policer" (see
 * netdev-vhost-qos.h), "" removes QoS.  Bad parameters: EINVAL, logged as
 * stock does, and no QoS. */
static int
netdev_vhost_set_qos(struct netdev *netdev, const char *type,
                     const struct smap *details)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    struct vhost_meter *new = NULL;
    int error = 0;

    if (type && type[0]) {
        error = vhost_meter_create_qos(type, details, &new);
        if (error) {
            VLOG_ERR("Failed to set QoS type %s on port %s: %s", type,
                     netdev_get_name(netdev), ovs_strerror(error));
        }
    }
    ovs_mutex_lock(&dev->mutex);
    struct vhost_meter *old = ovsrcu_get_protected(struct vhost_meter *,
                                                   &dev->egress_qos);
    ovsrcu_set(&dev->egress_qos, new);
    if (old) {
        ovsrcu_postpone(vhost_meter_destroy, old);
    }
    ovs_mutex_unlock(&dev->mutex);
    return error;
}

/* The classes. */

#define NETDEV_VHOST_CLASS_COMMON                           \
    .is_pmd = true,                                         \
    .run = netdev_vhost_class_run,                          \
    .wait = netdev_vhost_class_wait,                        \
    .alloc = netdev_vhost_alloc,                            \
    .dealloc = netdev_vhost_dealloc,                        \
    .destruct = netdev_vhost_destruct,                      \
    .get_config = netdev_vhost_get_config,                  \
    .set_config = netdev_vhost_set_config,                  \
    .get_numa_id = netdev_vhost_get_numa_id,                \
    .send = netdev_vhost_send,                              \
    .set_etheraddr = netdev_vhost_set_etheraddr,            \
    .get_etheraddr = netdev_vhost_get_etheraddr,            \
    .get_mtu = netdev_vhost_get_mtu,                        \
    .set_mtu = netdev_vhost_set_mtu,                        \
    .get_ifindex = netdev_vhost_get_ifindex,                \
    .get_carrier = netdev_vhost_get_carrier,                \
    .get_carrier_resets = netdev_vhost_get_carrier_resets,  \
    .get_stats = netdev_vhost_get_stats,                    \
    .get_custom_stats = netdev_vhost_get_custom_stats,      \
    .get_status = netdev_vhost_get_status,                  \
    .update_flags = netdev_vhost_update_flags,              \
    .set_policing = netdev_vhost_set_policing,              \
    .get_qos_types = netdev_vhost_get_qos_types,            \
    .get_qos = netdev_vhost_get_qos,                        \
    .set_qos = netdev_vhost_set_qos,                        \
    .reconfigure = netdev_vhost_reconfigure,                \
    .rxq_alloc = netdev_vhost_rxq_alloc,                    \
    .rxq_construct = netdev_vhost_rxq_construct,            \
    .rxq_destruct = netdev_vhost_rxq_destruct,              \
    .rxq_dealloc = netdev_vhost_rxq_dealloc,                \
    .rxq_recv = netdev_vhost_rxq_recv,                      \
    .rxq_enabled = netdev_vhost_rxq_enabled

static const struct netdev_class netdev_vhost_server_class = {
    .type = "dpdkvhostuser",
    .construct = netdev_vhost_server_construct,
    NETDEV_VHOST_CLASS_COMMON,
};

static const struct netdev_class netdev_vhost_client_class = {
    .type = "dpdkvhostuserclient",
    .construct = netdev_vhost_client_construct,
    NETDEV_VHOST_CLASS_COMMON,
};

static void
parse_vhost_config(const struct smap *ovs_other_config)
{
    const char *dir = smap_get(ovs_other_config, "vhost-sock-dir");

    free(vhost_sock_dir);
    if (dir && strlen(dir) <= NAME_MAX) {
        if (strstr(dir, "..")) {
            VLOG_ERR("vhost-user sock directory request '%s/%s' has invalid "
                     "characters '..' - using %s instead.",
                     ovs_rundir(), dir, ovs_rundir());
            vhost_sock_dir = xstrdup(ovs_rundir());
        } else {
            struct stat s;

            vhost_sock_dir = xasprintf("%s/%s", ovs_rundir(), dir);
            VLOG_INFO("User-provided vhost-sock-dir in use: %s", dir);
            if (stat(vhost_sock_dir, &s)) {
                VLOG_ERR("vhost-user sock directory '%s' does not exist.",
                         vhost_sock_dir);
            }
        }
    } else {
        vhost_sock_dir = xstrdup(ovs_rundir());
    }
    vhost_iommu_enabled = smap_get_bool(ovs_other_config,
                                        "vhost-iommu-support", false);
    vhost_postcopy_enabled = smap_get_bool(ovs_other_config,
                                           "vhost-postcopy-support", false);
}

void
netdev_vhost_register(const struct smap *ovs_other_config)
{
    static const struct netdev_class *classes[] = {
        &netdev_vhost_server_class,
        &netdev_vhost_client_class,
    };
    struct ds taken = DS_EMPTY_INITIALIZER;

    event_seq = seq_create();
    parse_vhost_config(ovs_other_config);
    netdev_vhost_set_other_config(ovs_other_config);

    for (size_t i = 0; i < ARRAY_SIZE(classes); i++) {
        const char *type = classes[i]->type;

        netdev_unregister_provider(type);
        if (netdev_register_provider(classes[i])) {
            VLOG_ERR("could not register netdev-vhost class for %s", type);
            continue;
        }
        ds_put_format(&taken, "%s%s", taken.length ? ", " : "", type);
    }
    netdev_vhost_unixctl_register();
    VLOG_INFO("netdev-vhost %s took over port types: %s (tx flush default: "
              "%s, %"PRIu32" us)", netdev_vhost_version, ds_cstr(&taken),
              vhost_txp_mode_to_string(default_txp_mode),
              default_txp_interval);
    ds_destroy(&taken);
}

/* Looks up a port of our classes by name for the operator commands.
 * Returns it with a reference taken (netdev_close() it), or NULL. */
struct netdev *
netdev_vhost_lookup(const char *name)
{
    struct netdev *netdev = netdev_from_name(name);

    if (netdev && !is_vhost_class(netdev->netdev_class)) {
        netdev_close(netdev);
        return NULL;
    }
    return netdev;
}

/* Calls 'cb' for every port of our classes, sorted by name.  Main thread. */
void
netdev_vhost_for_each(void (*cb)(struct netdev_vhost *, void *aux),
                      void *aux)
{
    struct netdev_vhost *dev;
    struct netdev_vhost **devs = NULL;
    size_t n = 0, allocated = 0;

    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (n >= allocated) {
            devs = x2nrealloc(devs, &allocated, sizeof *devs);
        }
        devs[n++] = dev;
        netdev_ref(&dev->up);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);

    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (strcmp(netdev_get_name(&devs[j]->up),
                       netdev_get_name(&devs[i]->up)) < 0) {
                struct netdev_vhost *t = devs[i];
                devs[i] = devs[j];
                devs[j] = t;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        cb(devs[i], aux);
        netdev_close(&devs[i]->up);
    }
    free(devs);
}
