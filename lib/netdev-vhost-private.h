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

/* The port structure of the netdev-vhost class, shared between the class
 * (lib/netdev-vhost.c) and the operator commands (lib/netdev-vhost-unixctl.c
 * and the statistics code).  Nothing here is for use outside lib/. */

#include <stdbool.h>
#include <stdint.h>

#include <rte_spinlock.h>
#include <rte_vhost.h>

#include "netdev-provider.h"
#include "openvswitch/list.h"
#include "ovs-atomic.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "vhost-tx-policy.h"

/* Largest number of queue pairs per port (DPDK 22.11 VHOST_MAX_QUEUE_PAIRS
 * is 128). */
#define NETDEV_VHOST_MAX_QP 128

/* Tx retries of rte_vhost_enqueue_burst() (options:tx-retries-max), as
 * stock OVS 3.1: 0 to 32, default 8. */
#define NETDEV_VHOST_RETRY_MIN 0
#define NETDEV_VHOST_RETRY_MAX 32
#define NETDEV_VHOST_RETRY_DEF 8

/* Per queue-pair state.  Queue pair 'q' is vring 2q (guest rx: our tx) and
 * vring 2q + 1 (guest tx: our rx), virtio 1.1 section 5.1.2. */
struct netdev_vhost_qp {
    /* Our tx side (vring 2q).  'tx_lock' protects everything up to the
     * ring guard: several PMD threads may map to the same vring, and the
     * main thread flushes on reconfigure. */
    rte_spinlock_t tx_lock;
    bool tx_enabled;                /* Guest enabled vring 2q. */
    struct vhost_txp txp;           /* Staging and policy counters. */
    uint64_t tx_packets;            /* Packets placed in the used ring. */
    uint64_t tx_bytes;
    uint64_t tx_dropped;            /* Not accepted after retries. */
    uint64_t tx_staged_dropped;     /* Staged, then dropped: the queue or
                                     * device went away.  Unlike the tx
                                     * policy's staged_drops, never
                                     * cleared. */
    uint64_t tx_dropped_base;       /* 'tx_dropped' at the last
                                     * netdev-vhost/clear-stats. */
    uint64_t tx_retries;
    uint64_t queries;               /* Ring questions asked. */
    uint64_t queries_skipped;       /* ...not asked: ring being changed. */
    bool last_wants_intr;           /* Answer of the last question. */
    uint64_t kicks_base;            /* Kicks of earlier connections. */

    /* Ring guard (DESIGN.md section 4, seed 001).  The PMD sets 'reading'
     * while it reads the driver's suppression fields; the vhost-user
     * message thread clears dev->rings_valid and waits for 'reading' to be
     * false before a message may remap guest memory. */
    atomic_bool reading;
    struct rte_vhost_vring vring;   /* Pointers valid iff rings_valid. */

    /* Our rx side (vring 2q + 1); written by the one PMD that polls it.
     * 'rx_busy' is true while that PMD may use the device id it read: the
     * vhost-events thread waits for it to be false after it withdrew the
     * id (destroy_device(); a Dekker handshake as the ring guard's). */
    atomic_bool rx_busy;
    bool rx_enabled;
    uint64_t rx_packets;
    uint64_t rx_bytes;
} __attribute__((aligned(64)));

/* Queue pairs of a port with staged packets, one bit each.  A bit is set
 * by the thread that stages into an empty queue and cleared by the one that
 * empties it, both with the queue's tx_lock; every rxq_recv of the port
 * reads it.  A cache line of its own, written only on those transitions
 * (not per burst), so that the PMD threads' reads of the port's other
 * fields do not bounce with it. */
struct netdev_vhost_staged_map {
    atomic_uint64_t bits[NETDEV_VHOST_MAX_QP / 64];
} __attribute__((aligned(64)));

/* Configuration state of the tx policy of a port. */
struct netdev_vhost_txp_cfg {
    bool mode_set;                  /* options:tx-flush-mode given. */
    bool interval_set;              /* options:tx-flush-interval given. */
    enum vhost_txp_mode mode;       /* Effective mode. */
    uint32_t interval_us;           /* Effective interval, us. */
    char *error;                    /* Last rejected option, or NULL. */
};

struct netdev_vhost {
    struct netdev up;

    /* Protects the members below that are not atomic, except where noted.
     * Taken by the main thread and the vhost-user callbacks; never by PMD
     * threads on the fast path. */
    struct ovs_mutex mutex;
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
     * ids).  'vid_map_mutex' (lib/netdev-vhost.c). */
    uint64_t conn_gen;
    bool in_msg;                    /* Between the ring guard's pre and post
                                     * message hooks ('vid_map_mutex'). */
    uint64_t driver_flags;          /* RTE_VHOST_USER_* of registration. */

    ovsrcu_index vid;               /* rte_vhost device id, or -1. */
    atomic_bool ready;              /* Reconfigured for the current vid. */
    atomic_bool rings_valid;        /* Ring guard, see netdev_vhost_qp. */
    uint64_t features;              /* Negotiated virtio features. */
    uint64_t mem_table_msgs;        /* VHOST_USER_SET_MEM_TABLE messages
                                     * (ring guard; vhost-events thread). */
    int numa_id;
    int requested_numa_id;
    int mtu;
    int requested_mtu;
    int requested_n_qp;             /* Queue pairs the guest offers. */
    struct eth_addr hwaddr;
    enum netdev_flags flags;
    long long int link_reset_cnt;
    atomic_int tx_retries_max;

    struct netdev_vhost_mempool *mp;   /* Rx and copy mempool. */

    struct netdev_vhost_txp_cfg txp_cfg;
    char *path_error;               /* Rejected vhost-server-path, or NULL. */
    char *retries_error;            /* Rejected tx-retries-max, or NULL. */
    char *n_rxq_ignored;            /* options:n_rxq (ignored), or NULL. */

    /* Policers (lib/netdev-vhost-qos.c): set by the main thread, run by
     * PMD threads, freed after an RCU grace period. */
    OVSRCU_TYPE(struct vhost_meter *) ingress_policer;
    OVSRCU_TYPE(struct vhost_meter *) egress_qos;
    uint32_t policer_rate;          /* kbit/s, 0: no ingress policer. */
    uint32_t policer_burst;         /* kbit. */

    /* Maps OVS txq ids (0..up.n_txq - 1) to enabled queue pairs, or -1.
     * Written under 'mutex' by the main thread and read by PMD threads. */
    atomic_int tx_map[NETDEV_VHOST_MAX_QP];

    /* Software drop counters, 'stats_lock'. */
    rte_spinlock_t stats_lock;
    uint64_t tx_dropped;            /* All tx drops. */
    uint64_t rx_dropped;
    uint64_t tx_failure_drops;      /* Enqueue failed or no mbuf. */
    uint64_t tx_mtu_exceeded_drops;
    uint64_t tx_down_drops;         /* No device or queue disabled. */
    uint64_t tx_qos_drops;          /* Egress QoS. */
    uint64_t tx_invalid_hwol_drops; /* TSO packet without L4 header. */
    uint64_t rx_qos_drops;          /* Ingress policer. */

    struct netdev_vhost_staged_map staged;

    struct netdev_vhost_qp qps[NETDEV_VHOST_MAX_QP];
};

static inline struct netdev_vhost *
netdev_vhost_cast(const struct netdev *netdev)
{
    return CONTAINER_OF(netdev, struct netdev_vhost, up);
}

/* Returns DPDK's count of kicks (guest notifications: eventfd writes to
 * the guest's callfd) on the rx vring of queue pair 'q' of rte_vhost device
 * 'vid', or 0 if unknown (no device, statistics disabled).  Any thread but
 * a PMD thread (it takes the library's vring lock). */
uint64_t netdev_vhost_vring_kicks(int vid, int q);

/* Returns the netdev-vhost port named 'name' with a reference the caller
 * must release with netdev_close(), or NULL if there is no such port or it
 * is not of our classes.  Main thread. */
struct netdev *netdev_vhost_lookup(const char *name);

/* Calls 'cb' with every netdev-vhost port in name order, each held by a
 * reference for the duration of the call.  Main thread. */
void netdev_vhost_for_each(void (*cb)(struct netdev_vhost *, void *aux),
                           void *aux);

/* Registers the netdev-vhost/... unixctl commands
 * (lib/netdev-vhost-unixctl.c).  Main thread, once. */
void netdev_vhost_unixctl_register(void);

#endif /* netdev-vhost-private.h */
