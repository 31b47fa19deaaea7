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

#ifndef NETDEV_VHOST_PRIVATE_H
#define NETDEV_VHOST_PRIVATE_H 1

/* The port structure of the netdev-vhost class and the prototypes shared
 * by the files of lib/ that implement it (netdev-vhost.c, -datapath.c,
 * -events.c, -guard.c, -kick.c, -options.c, -registry.c, -stats.c,
 * -txq.c).  Nothing here
 * is for use outside lib/.
 *
 * Lock order (outer first; a thread holding a lock takes only locks listed
 * below it, never one above it):
 *
 *     netdev_vhost_mutex     port list (netdev-vhost-registry.c)
 *       dev->mutex           one port's configuration
 *         vid_map_mutex      device id map (netdev-vhost-events.c)
 *         qp->tx.lock        tx_lock: one queue pair at a time
 *                            (netdev-vhost-txq.c, the only taker)
 *         dev->stats_lock    software drop counters
 *         mp_mutex           mempools (netdev-vhost-mempool.c)
 *     event_mutex            vring event list (netdev-vhost-events.c);
 *                            no other lock is taken while it is held
 *
 * The locks at the same depth are never nested with each other.  PMD
 * threads take only qp->tx.lock, dev->stats_lock and the meters' own
 * locks (lib/netdev-vhost-qos.h), never a mutex.
 *
 * dev->mutex is declared OVS_ACQ_AFTER(netdev_vhost_mutex), which clang's
 * thread safety analysis checks (-Wthread-safety-beta).  dev->mutex before
 * dev->stats_lock is this comment only: in C an attribute cannot name
 * another member of the same struct, and rte_spinlock_t is no lock type
 * to clang before DPDK 23.03 (and after only with RTE_ANNOTATE_LOCKS). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_spinlock.h>
#include <rte_vhost.h>

#include "netdev-provider.h"
#include "openvswitch/list.h"
#include "ovs-atomic.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "util.h"
#include "netdev-vhost-kick.h"
#include "netdev-vhost-registry.h"
#include "netdev-vhost-txq.h"
#include "vhost-tx-policy.h"

/* Device ids of rte_vhost the class maps back to ports (DPDK 22.11
 * MAX_VHOST_DEVICE is 1024). */
#define NETDEV_VHOST_MAX_VID 1024

/* The vrings of a queue pair (virtio 1.1 section 5.1.2). */
#define VIRTIO_RXQ 0            /* Guest rx vring of a pair: our tx. */
#define VIRTIO_TXQ 1            /* Guest tx vring of a pair: our rx. */
#define VIRTIO_QNUM 2

/* Tx retries of rte_vhost_enqueue_burst() (options:tx-retries-max), as
 * stock OVS 3.1: 0 to 32, default 8. */
#define NETDEV_VHOST_RETRY_MIN 0
#define NETDEV_VHOST_RETRY_MAX 32
#define NETDEV_VHOST_RETRY_DEF 8

/* Compatibility points of the offload model (m4/netdev-vhost.m4,
 * DESIGN-NOTES.md section 7): true where OVS is of the 3.5 model (tx
 * offloads from the guest's negotiated features, inner header offsets;
 * the packet's own TSO segment size; stock's virtio features recovery and
 * vhost-max-queue-pairs). */
#if NETDEV_VHOST_GUEST_OFFLOADS
#define NETDEV_VHOST_HAS_GUEST_OFFLOADS true
#else
#define NETDEV_VHOST_HAS_GUEST_OFFLOADS false
#endif
#if NETDEV_VHOST_VIRTIO_RECOVERY
#define NETDEV_VHOST_HAS_VIRTIO_RECOVERY true
#else
#define NETDEV_VHOST_HAS_VIRTIO_RECOVERY false
#endif

/* options:vhost-max-queue-pairs of client ports, as stock OVS 3.5
 * (netdev-dpdk.c VHOST_MAX_QUEUE_PAIRS_*): 1 to 128, default 1; DPDK uses
 * it only for VDUSE devices, which this class does not drive. */
#define NETDEV_VHOST_MAX_QUEUE_PAIRS_MIN 1
#define NETDEV_VHOST_MAX_QUEUE_PAIRS_DEF 1
#define NETDEV_VHOST_MAX_QUEUE_PAIRS_MAX 128

/* Virtio features recovery (NETDEV_VHOST_HAS_VIRTIO_RECOVERY), as stock
 * OVS 3.5's virtio_features_state: with userspace TSO, a client port whose
 * guest closes the connection before it reaches new_device (it likely
 * rejected the features offered) is registered again without TSO
 * ("workaround"), and with TSO again after the next such failure or after
 * a guest that negotiated the workaround leaves.  'mutex'. */
#define NETDEV_VHOST_VIRTIO_CLEAN        (1u << 0)
#define NETDEV_VHOST_VIRTIO_WORKAROUND   (1u << 1)
#define NETDEV_VHOST_VIRTIO_NEGOTIATED   (1u << 2)
#define NETDEV_VHOST_VIRTIO_RECONF       (1u << 3)

/* A 64-bit counter that one thread at a time writes (the rx PMD of the
 * queue, or whoever holds the queue's tx_lock) and any thread may read
 * without that lock (get_stats(), the main thread): relaxed atomics, which
 * are plain loads and stores on x86-64 and aarch64, so that a reader never
 * sees a torn or racy value (C11 5.1.2.4; ThreadSanitizer checks it). */
static inline void
netdev_vhost_counter_add(atomic_uint64_t *c, uint64_t n)
{
    uint64_t v;

    atomic_read_relaxed(c, &v);
    atomic_store_relaxed(c, v + n);
}

static inline uint64_t
netdev_vhost_counter_get(const atomic_uint64_t *c)
{
    uint64_t v;

    atomic_read_relaxed(CONST_CAST(atomic_uint64_t *, c), &v);
    return v;
}

/* Room for the queue counters of lib/netdev-vhost-stats.c (its table's
 * size; checked there at build time). */
#define NETDEV_VHOST_QSTATS_MAX 64

/* Per queue-pair state.  Queue pair 'q' is vring 2q (guest rx: our tx) and
 * vring 2q + 1 (guest tx: our rx), virtio 1.1 section 5.1.2.
 *
 * Three groups, each starting on a cache line of its own: the sending PMD
 * threads write 'tx_hot' on every burst, the one PMD thread that polls the
 * rxq writes 'rx_hot' on every rxq_recv (also when idle), and 'cold' is
 * written only on connection changes (DESIGN-NOTES.md section 9). */
struct netdev_vhost_qp {
    PADDED_MEMBERS_CACHELINE_MARKER(CACHE_LINE_SIZE, tx_hot,
        /* Our tx side (vring 2q): lib/netdev-vhost-txq.h. */
        struct netdev_vhost_txq tx;
    );

    PADDED_MEMBERS_CACHELINE_MARKER(CACHE_LINE_SIZE, rx_hot,
        /* Our rx side (vring 2q + 1); written by the one PMD that polls
         * it.  'rx_busy' is true while that PMD may use the device id it
         * read: the vhost-events thread waits for it to be false after it
         * withdrew the id (destroy_device(); a Dekker handshake as the
         * ring guard's, lib/netdev-vhost-guard.h). */
        atomic_bool rx_busy;
        bool rx_enabled;
        struct netdev_vhost_txq_wait rx_wait;   /* This rxq's view of the
                                                 * port's tx deadlines. */
        atomic_uint64_t rx_packets;
        atomic_uint64_t rx_bytes;
    );

    PADDED_MEMBERS_CACHELINE_MARKER(CACHE_LINE_SIZE, cold,
        /* lib/netdev-vhost-stats.c, main and vhost-events threads under
         * dev->mutex. */
        uint64_t coalesced_base;    /* Client ports: DPDK's
                                     * guest_notifications_suppressed of
                                     * earlier connections. */
        uint64_t stats_base[NETDEV_VHOST_QSTATS_MAX];  /* The queue's
                                     * counters at the last clear-stats,
                                     * which our commands subtract (the
                                     * statistics never go back). */
        bool tx_reported;           /* A guest's state of vring 2q has
                                     * been applied since the port's last
                                     * device went away
                                     * (apply_vring_event(); false again
                                     * at destroy_device()).  Until then
                                     * a reconfigure enables tx queue 0,
                                     * as stock's
                                     * dpdk_vhost_reconfigure_helper(). */
    );
};
BUILD_ASSERT_DECL(offsetof(struct netdev_vhost_qp, rx_hot)
                  % CACHE_LINE_SIZE == 0);
BUILD_ASSERT_DECL(offsetof(struct netdev_vhost_qp, cold)
                  % CACHE_LINE_SIZE == 0);
BUILD_ASSERT_DECL(offsetof(struct netdev_vhost_qp, rx_busy)
                  >= offsetof(struct netdev_vhost_qp, tx)
                     + sizeof(struct netdev_vhost_txq));
BUILD_ASSERT_DECL(sizeof(struct netdev_vhost_qp) % CACHE_LINE_SIZE == 0);

/* Configuration state of the tx policy of a port. */
struct netdev_vhost_txp_cfg {
    bool mode_set;                  /* options:tx-flush-mode given. */
    bool interval_set;              /* options:tx-flush-interval given. */
    enum vhost_txp_mode mode;       /* Effective mode. */
    uint32_t interval_us;           /* Effective interval, us. */
    bool min_set;                   /* options:tx-flush-interval-min. */
    bool max_set;                   /* options:tx-flush-interval-max. */
    uint32_t min_us;                /* Effective adaptive floor, us. */
    uint32_t max_us;                /* Effective adaptive ceiling, us. */
    bool coalesce_set;              /* options:tx-coalesce given. */
    bool coalesce_kicks;            /* Effective tx-coalesce: kicks (true,
                                     * DPDK 23.11+ only) or packets. */
    bool watermark_set;             /* options:tx-kick-watermark given. */
    uint32_t watermark;             /* Effective tx-kick-watermark: 0 for
                                     * auto (a quarter of the ring), else
                                     * 1..VHOST_KICK_WATERMARK_MAX. */
    char *error;                    /* Last rejected option, or NULL. */
};

struct netdev_vhost {
    struct netdev up;

    /* Hot: read by PMD threads on every send or rxq_recv of the port,
     * written rarely (main thread, vhost-events thread). */
    ovsrcu_index vid;               /* rte_vhost device id, or -1. */
    atomic_bool ready;              /* Reconfigured for the current vid. */
    atomic_bool rings_valid;        /* Ring guard, see netdev_vhost_qp. */
    enum netdev_flags flags;        /* 'mutex' for writes. */
    int mtu;                        /* 'mutex' for writes. */
    uint64_t features;              /* Negotiated virtio features. */
    atomic_int tx_retries_max;
    struct netdev_vhost_mempool *mp;   /* Rx and copy mempool. */
    /* Policers (lib/netdev-vhost-qos.c): set by the main thread, run by
     * PMD threads, freed after an RCU grace period. */
    OVSRCU_TYPE(struct vhost_meter *) ingress_policer;
    OVSRCU_TYPE(struct vhost_meter *) egress_qos;
    /* Maps OVS txq ids (0..up.n_txq - 1) to enabled queue pairs, or -1.
     * Written under 'mutex' by the main thread and read by PMD threads. */
    atomic_int tx_map[NETDEV_VHOST_MAX_QP];

    /* Warm: software drop counters, written by PMD threads only when they
     * drop, under 'stats_lock'. */
    rte_spinlock_t stats_lock;
    uint64_t rx_dropped;
    uint64_t tx_failure_drops;      /* Enqueue failed or no mbuf. */
    uint64_t tx_mtu_exceeded_drops;
    uint64_t tx_down_drops;         /* No device or queue disabled. */
    uint64_t tx_qos_drops;          /* Egress QoS. */
    uint64_t tx_invalid_hwol_drops; /* TSO packet without L4 header. */
    uint64_t rx_qos_drops;          /* Ingress policer. */

    /* Cold: configuration and connection state, never read by PMD
     * threads.  'mutex' protects the members that are not atomic, except
     * where noted.  Taken by the main thread and the vhost-user callbacks;
     * never by PMD threads. */
    struct ovs_mutex mutex OVS_ACQ_AFTER(netdev_vhost_mutex);
    struct ovs_list list_node OVS_GUARDED_BY(netdev_vhost_mutex);

    bool client;                    /* dpdkvhostuserclient. */
    char *vhost_id;                 /* Socket path, or NULL (client, unset).*/
    /* Path registered with rte_vhost, or NULL.  Written with both
     * netdev_vhost_mutex and 'mutex' held (main thread); read with either
     * (the vhost-events thread holds netdev_vhost_mutex). */
    char *registered_id;
    /* Generation of the connection on 'registered_id': bumped at every
     * new_connection and destroy_connection, so that a deferred vring
     * event of a gone connection is recognised (rte_vhost reuses device
     * ids).  'vid_map_mutex' (lib/netdev-vhost-events.c). */
    uint64_t conn_gen;
    bool in_msg;                    /* Between the ring guard's pre and post
                                     * message hooks ('vid_map_mutex'). */
    atomic_uint64_t mem_table_msgs; /* VHOST_USER_SET_MEM_TABLE messages
                                     * (ring guard): the vhost-events
                                     * thread counts, any thread reads. */
    int numa_id;
    int requested_numa_id;
    int requested_mtu;
    int requested_n_qp;             /* Queue pairs the guest offers. */
    struct eth_addr hwaddr;

    struct netdev_vhost_txp_cfg txp_cfg;
    char *path_error;               /* Rejected vhost-server-path, or NULL. */
    char *retries_error;            /* Rejected tx-retries-max, or NULL. */
    char *n_rxq_ignored;            /* options:n_rxq (ignored), or NULL. */
    int max_queue_pairs;            /* options:vhost-max-queue-pairs. */
    char *max_qp_error;             /* Rejected vhost-max-queue-pairs, or
                                     * NULL. */
    unsigned int virtio_state;      /* NETDEV_VHOST_VIRTIO_*. */
    uint32_t policer_rate;          /* kbit/s, 0: no ingress policer. */
    uint32_t policer_burst;         /* kbit. */

    /* Hot again, each on cache lines of its own: the queues with packets
     * staged and with a kick held (lib/netdev-vhost-txq.h). */
    struct netdev_vhost_qmap staged;
    struct netdev_vhost_qmap kick_pending;
    atomic_uint32_t due_seq;        /* Bumped whenever a queue's published
                                     * deadline moves earlier
                                     * (lib/netdev-vhost-txq.c). */
    struct netdev_vhost_qp qps[NETDEV_VHOST_MAX_QP];
};

static inline struct netdev_vhost *
netdev_vhost_cast(const struct netdev *netdev)
{
    return CONTAINER_OF(netdev, struct netdev_vhost, up);
}

/* Returns the rte_vhost device id of 'dev', or -1 if no guest is
 * connected.  Any thread; PMD threads and the tx paths read it under the
 * queue's tx_lock (see netdev_vhost_txq_flush()). */
static inline int
netdev_vhost_get_vid(const struct netdev_vhost *dev)
{
    return ovsrcu_index_get(&dev->vid);
}

/* Returns the vring number of our tx side (the guest's rx vring) of queue
 * pair 'q' (virtio 1.1 section 5.1.2). */
static inline int
netdev_vhost_tx_vring(int q)
{
    return q * VIRTIO_QNUM + VIRTIO_RXQ;
}

/* Returns the vring number of our rx side (the guest's tx vring) of queue
 * pair 'q'. */
static inline int
netdev_vhost_rx_vring(int q)
{
    return q * VIRTIO_QNUM + VIRTIO_TXQ;
}

/* Coverage events that may happen outside the main thread, where OVS's
 * per-thread coverage counts would show late or never: they are counted
 * here by any thread with netdev_vhost_cov_pending() and moved to the
 * coverage counters of the same names by the main thread in the class's
 * run function (lib/netdev-vhost.c).  The counts are defined in
 * lib/netdev-vhost-registry.c. */
enum netdev_vhost_cov {
    NETDEV_VHOST_COV_STAGED_DROPS,      /* netdev_vhost_staged_drops */
    NETDEV_VHOST_COV_FLUSH_ON_DESTROY,  /* netdev_vhost_flush_on_destroy */
    NETDEV_VHOST_COV_RING_GUARD_WAIT,   /* netdev_vhost_ring_guard_wait */
    NETDEV_VHOST_COV_RING_GUARD_LONG_WAIT,
    NETDEV_VHOST_COV_RING_GUARD_MSG_FAILED,
    NETDEV_VHOST_COV_EVENTS_COALESCED,  /* ..._vring_events_coalesced */
    NETDEV_VHOST_N_COV
};
extern atomic_uint netdev_vhost_cov_counts[NETDEV_VHOST_N_COV];

/* Adds 'n' to pending coverage count 'c'.  Any thread, lock free. */
static inline void
netdev_vhost_cov_pending(enum netdev_vhost_cov c, unsigned int n)
{
    atomic_add_relaxed(&netdev_vhost_cov_counts[c], n, &(unsigned int){0});
}

/* Every file of the class logs as module "netdev_vhost" (defined in
 * lib/netdev-vhost-registry.c), so that a log line does not change with
 * the file its function lives in.  A file that logs writes, instead of
 * VLOG_DEFINE_THIS_MODULE:
 *     #define this_module (*VLM_netdev_vhost) */
extern struct vlog_module *VLM_netdev_vhost;

/* The port list: lib/netdev-vhost-registry.h. */

/* lib/netdev-vhost-datapath.c: send and rxq. */

/* The netdev_class datapath functions (see their definitions). */
int netdev_vhost_send(struct netdev *, int qid, struct dp_packet_batch *,
                      bool concurrent_txq);
struct netdev_rxq *netdev_vhost_rxq_alloc(void);
int netdev_vhost_rxq_construct(struct netdev_rxq *);
void netdev_vhost_rxq_destruct(struct netdev_rxq *);
void netdev_vhost_rxq_dealloc(struct netdev_rxq *);
int netdev_vhost_rxq_recv(struct netdev_rxq *, struct dp_packet_batch *,
                          int *qfill);
bool netdev_vhost_rxq_enabled(struct netdev_rxq *);

/* lib/netdev-vhost-events.c: the rte_vhost callbacks. */

/* The callbacks for rte_vhost_driver_callback_register(). */
extern const struct rte_vhost_device_ops netdev_vhost_device_ops;

/* Forgets every device id mapped to 'dev' and ends its connection
 * generation, after its socket was unregistered.  Main thread. */
void netdev_vhost_events_forget(struct netdev_vhost *dev);

/* Creates the event list's wake-up seq.  Main thread, once, before any
 * port exists. */
void netdev_vhost_events_init(void);

/* Applies the vring state changes the vhost-events thread deferred to the
 * main thread, in arrival order.  Main thread, no lock held. */
void netdev_vhost_events_run(void);

/* Wakes the main thread's poll loop when vring state changes wait.  Main
 * thread. */
void netdev_vhost_events_wait(void);

/* Maps the OVS txq ids of 'dev' onto its enabled queue pairs (tx_map):
 * txq i goes to queue pair i if the guest enabled it, else to one of the
 * enabled ones.  Main thread (reconfigure) or vhost-events thread,
 * dev->mutex held. */
void netdev_vhost_remap_txqs(struct netdev_vhost *dev)
    OVS_REQUIRES(dev->mutex);

#endif /* netdev-vhost-private.h */
