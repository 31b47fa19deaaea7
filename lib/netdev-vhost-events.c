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

/* The rte_vhost callbacks of the netdev-vhost class: connections and
 * devices coming and going (new_connection, new_device, destroy_device,
 * ...), vring state changes, and the vhost-user message hooks of the ring
 * guard, all run by DPDK's vhost-events thread (and, for a connected
 * guest, by the main thread inside rte_vhost_driver_unregister()).  Owns
 * the device id map and the list of vring events deferred to the main
 * thread, which the class's run function (lib/netdev-vhost.c) drains with
 * netdev_vhost_events_run(), and the map of OVS's txq ids onto the queue
 * pairs the guest enabled (netdev_vhost_remap_txqs()).  Finds ports in the
 * registry (lib/netdev-vhost-registry.h). */

#include <config.h>

#include "netdev-vhost-private.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-stats.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <rte_vhost.h>

#include "connectivity.h"
#include "netdev-provider.h"
#include "openvswitch/list.h"
#include "openvswitch/poll-loop.h"
#include "openvswitch/vlog.h"
#include "seq.h"
#include "userspace-tso.h"
#include "util.h"

#define this_module (*VLM_netdev_vhost)

/* rte_vhost device id -> port, for the message hooks, which get only the
 * id.  Written by the vhost-events thread and the main thread under
 * 'vid_map_mutex'; never taken by PMD threads. */
static struct ovs_mutex vid_map_mutex = OVS_MUTEX_INITIALIZER;
static struct netdev_vhost *vid_map[NETDEV_VHOST_MAX_VID]
    OVS_GUARDED_BY(vid_map_mutex);

/* Source of connection generations (struct netdev_vhost's conn_gen),
 * unique over all ports, also a port deleted and added again under the
 * same name.  'vid_map_mutex'. */
static uint64_t conn_gen_last OVS_GUARDED_BY(vid_map_mutex);

/* True if 'vid' is a device id the map can hold. */
static inline bool
vid_in_map(int vid)
{
    return vid >= 0 && vid < NETDEV_VHOST_MAX_VID;
}

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

static struct netdev_vhost *
vid_map_get(int vid)
{
    struct netdev_vhost *dev = NULL;

    if (vid_in_map(vid)) {
        ovs_mutex_lock(&vid_map_mutex);
        dev = vid_map[vid];
        ovs_mutex_unlock(&vid_map_mutex);
    }
    return dev;
}

/* A vhost-user message starts with its request code, 32 bits (vhost-user
 * protocol, "Message Specification"); SET_MEM_TABLE is 5. */
#define VHOST_USER_REQ_SET_MEM_TABLE 5

/* The ring guard's hook before the library handles a vhost-user message
 * (lib/netdev-vhost-guard.h): closes the guard of the port of 'vid'. */
static enum rte_vhost_msg_result
ring_guard_pre_msg(int vid, void *msg)
{
    uint32_t request;

    memcpy(&request, msg, sizeof request);
    ovs_mutex_lock(&vid_map_mutex);
    struct netdev_vhost *dev = vid_in_map(vid) ? vid_map[vid] : NULL;
    if (dev) {
        if (dev->in_msg) {
            /* The library skipped the post hook: the previous message
             * failed (and the front-end asked for a reply, or the
             * connection would be gone).  The guard stayed closed since
             * then; this message's post hook re-opens it. */
            netdev_vhost_cov_pending(NETDEV_VHOST_COV_RING_GUARD_MSG_FAILED,
                                     1);
        }
        dev->in_msg = true;
        netdev_vhost_guard_close(dev);
        if (request == VHOST_USER_REQ_SET_MEM_TABLE) {
            netdev_vhost_counter_add(&dev->mem_table_msgs, 1);
        }
    }
    ovs_mutex_unlock(&vid_map_mutex);
    return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

/* The ring guard's hook after the library handled a message: reopens the
 * guard with the rings as they are now. */
static enum rte_vhost_msg_result
ring_guard_post_msg(int vid, void *msg OVS_UNUSED)
{
    ovs_mutex_lock(&vid_map_mutex);
    struct netdev_vhost *dev = vid_in_map(vid) ? vid_map[vid] : NULL;
    if (dev) {
        dev->in_msg = false;
        if (netdev_vhost_get_vid(dev) == vid) {
            netdev_vhost_guard_open(dev, vid);
        }
    }
    ovs_mutex_unlock(&vid_map_mutex);
    return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

static const struct rte_vhost_user_extern_ops ring_guard_ops = {
    .pre_msg_handle = ring_guard_pre_msg,
    .post_msg_handle = ring_guard_post_msg,
};

static int
new_connection(int vid)
{
    char ifname[PATH_MAX];

    rte_vhost_get_ifname(vid, ifname, sizeof ifname);
    ovs_mutex_lock(&netdev_vhost_mutex);
    struct netdev_vhost *dev = netdev_vhost_find_by_ifname(ifname);
    if (dev && vid_in_map(vid)) {
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

/* The virtio features recovery of stock OVS 3.5 (destroy_connection() in
 * lib/netdev-dpdk.c), for the connection of 'dev' that just closed: a
 * connection that never reached new_device (the guest likely did not
 * accept the features offered) switches between the clean features (with
 * TSO) and the workaround (without); a guest that negotiated the
 * workaround sends the next one back to clean; a guest that negotiated the
 * clean features changes nothing.  A switch asks for a reconfigure, which
 * registers a client port's socket again with the other features
 * (lib/netdev-vhost.c).  Stock's states for server ports are kept too, but
 * only client ports re-register, as in stock.  vhost-events thread (or the
 * main thread in rte_vhost_driver_unregister()), 'dev->mutex' held.
 * Called on OVS 3.5 builds only (NETDEV_VHOST_HAS_VIRTIO_RECOVERY). */
static void
virtio_recovery_step(struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(1, 5);
    unsigned int st = dev->virtio_state;

    if (!(st & NETDEV_VHOST_VIRTIO_NEGOTIATED)) {
        /* Stock warns always; without userspace TSO the features offered
         * never change and the recovery cannot help: debug level. */
        VLOG_RL(&rl, userspace_tso_enabled() ? VLL_WARN : VLL_DBG,
                "Connection on socket '%s' closed during initialization.",
                dev->vhost_id);
    }
    if (st & NETDEV_VHOST_VIRTIO_RECONF) {
        return;
    }
    if (st == NETDEV_VHOST_VIRTIO_CLEAN) {
        st = NETDEV_VHOST_VIRTIO_WORKAROUND;
    } else if (st == NETDEV_VHOST_VIRTIO_WORKAROUND
               || st == (NETDEV_VHOST_VIRTIO_WORKAROUND
                         | NETDEV_VHOST_VIRTIO_NEGOTIATED)) {
        st = NETDEV_VHOST_VIRTIO_CLEAN;
    }
    if (!(st & NETDEV_VHOST_VIRTIO_NEGOTIATED)) {
        st |= NETDEV_VHOST_VIRTIO_RECONF;
        netdev_request_reconfigure(&dev->up);
    }
    dev->virtio_state = st;
}

#if NETDEV_VHOST_GUEST_OFFLOADS
/* All tx offload flags a port may advertise (OVS 3.5's netdev-provider.h);
 * a vhost port advertises at most the checksum and TCP TSO ones, as
 * stock. */
#define NETDEV_VHOST_TX_OFFLOADS (NETDEV_TX_OFFLOAD_IPV4_CKSUM         \
                                  | NETDEV_TX_OFFLOAD_TCP_CKSUM        \
                                  | NETDEV_TX_OFFLOAD_UDP_CKSUM        \
                                  | NETDEV_TX_OFFLOAD_SCTP_CKSUM       \
                                  | NETDEV_TX_OFFLOAD_TCP_TSO          \
                                  | NETDEV_TX_VXLAN_TNL_TSO            \
                                  | NETDEV_TX_GENEVE_TNL_TSO           \
                                  | NETDEV_TX_GRE_TNL_TSO              \
                                  | NETDEV_TX_OFFLOAD_OUTER_IP_CKSUM   \
                                  | NETDEV_TX_OFFLOAD_OUTER_UDP_CKSUM)

/* Sets the tx offloads 'dev' advertises to OVS (netdev->ol_flags, which
 * OVS's netdev_send() reads to compute in software what the port does not
 * offload; its status shows them as tx_*_offload) from the virtio features
 * guest 'vid' negotiated, or clears them for vid -1, as stock OVS 3.5's
 * new_device() and destroy_device():
 *   - IPv4 checksum always: virtio has no such offload, but the vhost
 *     library computes it in software;
 *   - TCP, UDP and SCTP checksums with VIRTIO_NET_F_GUEST_CSUM (the guest
 *     takes partial checksums, virtio 1.1 section 5.1.6.2);
 *   - TCP TSO with userspace TSO, the clean virtio features (not the
 *     recovery's workaround) and both VIRTIO_NET_F_GUEST_TSO4 and _TSO6;
 *     with userspace TSO and a guest without them, a warning, as stock.
 * vhost-events thread (or the main thread), 'dev->mutex' held. */
static void
offloads_update(struct netdev_vhost *dev, int vid) OVS_REQUIRES(dev->mutex)
{
    uint64_t ol = 0;
    uint64_t features;

    if (vid >= 0) {
        ol = NETDEV_TX_OFFLOAD_IPV4_CKSUM;
        if (rte_vhost_get_negotiated_features(vid, &features)) {
            VLOG_INFO("Error checking guest features for vHost Device '%s'",
                      dev->vhost_id);
        } else {
            bool clean = !NETDEV_VHOST_HAS_VIRTIO_RECOVERY
                         || dev->virtio_state & NETDEV_VHOST_VIRTIO_CLEAN;

            if (features & (1ULL << VIRTIO_NET_F_GUEST_CSUM)) {
                ol |= NETDEV_TX_OFFLOAD_TCP_CKSUM
                      | NETDEV_TX_OFFLOAD_UDP_CKSUM
                      | NETDEV_TX_OFFLOAD_SCTP_CKSUM;
            }
            if (userspace_tso_enabled() && clean) {
                if (features & (1ULL << VIRTIO_NET_F_GUEST_TSO4)
                    && features & (1ULL << VIRTIO_NET_F_GUEST_TSO6)) {
                    ol |= NETDEV_TX_OFFLOAD_TCP_TSO;
                    VLOG_DBG("%s: TSO enabled on vhost port",
                             netdev_get_name(&dev->up));
                } else {
                    VLOG_WARN("%s: Tx TSO offload is not supported.",
                              netdev_get_name(&dev->up));
                }
            }
        }
    }
    dev->up.ol_flags = (dev->up.ol_flags & ~NETDEV_VHOST_TX_OFFLOADS) | ol;
}
#endif

static void
destroy_connection(int vid)
{
    struct netdev_vhost *dev = NULL;

    ovs_mutex_lock(&netdev_vhost_mutex);
    if (vid_in_map(vid)) {
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
        if (NETDEV_VHOST_HAS_VIRTIO_RECOVERY) {
            virtio_recovery_step(dev);
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
    dev = netdev_vhost_find_by_ifname(ifname);
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
    /* DPDK's per-vring statistics (client ports only, as stock) start at
     * zero only on a new connection: a device stopped and started on the
     * same one (the guest's driver reloaded, the guest rebooted) keeps
     * counting, and destroy_device() already added those to
     * coalesced_base. */
    uint64_t features = 0;
    bool iommu = false;

    rte_vhost_get_negotiated_features(vid, &features);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];

        if (NETDEV_VHOST_HAS_DEFERRED_KICKS) {
            if (dev->client) {
                qp->coalesced_base -= netdev_vhost_vring_stat(
                    vid, q, "guest_notifications_suppressed");
            }
            /* The new virtqueues start with DPDK's irq_pending latch
             * clear: the connection's first kick goes out at once. */
            iommu = netdev_vhost_txq_connect(dev, q, features);
        }
    }
    if (iommu) {
        VLOG_INFO("%s: the guest's rings are behind a vIOMMU "
                  "(VIRTIO_F_IOMMU_PLATFORM): kicks are not deferred",
                  netdev_get_name(&dev->up));
    }

    ovs_mutex_lock(&vid_map_mutex);
    if (vid_in_map(vid)) {
        vid_map[vid] = dev;
    }
    ovsrcu_index_set(&dev->vid, vid);
    netdev_vhost_guard_close(dev);
    netdev_vhost_guard_open(dev, vid);
    ovs_mutex_unlock(&vid_map_mutex);

    if (NETDEV_VHOST_HAS_VIRTIO_RECOVERY) {
        dev->virtio_state |= NETDEV_VHOST_VIRTIO_NEGOTIATED;
    }
#if NETDEV_VHOST_GUEST_OFFLOADS
    offloads_update(dev, vid);
#endif

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

/* Live migration with packed rings: while the front-end logs dirty pages
 * (VHOST_F_LOG_ALL negotiated), marks every packed descriptor ring of
 * device 'vid' dirty as a whole, so that the last copy of the guest's
 * memory has every descriptor the device wrote.  DPDK logs the used
 * descriptors it writes into a packed ring at the vring's log address
 * plus their offset (DPDK 24.11 lib/vhost/virtio_net.c
 * vhost_flush_enqueue_shadow_packed() and _batch_packed(), through
 * vhost_log_cache_used_vring()), and QEMU gives the device event area as
 * that address (hw/virtio/vhost.c vhost_virtqueue_set_addr():
 * log_guest_addr = used_phys): the descriptor pages themselves are never
 * logged.  destroy_device() runs at the first GET_VRING_BASE of the
 * switch-over, after the device's last write to the rings and before QEMU
 * syncs the log (vhost_log_put(hdev, true) in do_vhost_dev_stop()).
 * Returns the number of rings logged.  vhost-events thread. */
static int
log_packed_rings(int vid)
{
    struct rte_vhost_memory *mem = NULL;
    uint64_t features;
    int n = 0;

    if (rte_vhost_get_negotiated_features(vid, &features)
        || !RTE_VHOST_NEED_LOG(features)
        || !(features & (1ULL << VIRTIO_F_RING_PACKED))
        || rte_vhost_get_mem_table(vid, &mem) || !mem) {
        return 0;
    }
    for (uint16_t i = 0; i < rte_vhost_get_vring_num(vid); i++) {
        struct rte_vhost_vring vring;

        if (rte_vhost_get_vhost_vring(vid, i, &vring) || !vring.desc_packed
            || !vring.size) {
            continue;
        }

        uint64_t hva = (uintptr_t) vring.desc_packed;
        uint64_t len = (uint64_t) vring.size
                       * sizeof(struct vring_packed_desc);
        bool logged = false;

        /* The ring is contiguous in the host's mapping; log each part in
         * the region (guest-physical range) it lies in. */
        for (uint32_t r = 0; r < mem->nregions; r++) {
            const struct rte_vhost_mem_region *reg = &mem->regions[r];
            uint64_t start = MAX(hva, reg->host_user_addr);
            uint64_t end = MIN(hva + len, reg->host_user_addr + reg->size);

            if (start < end) {
                rte_vhost_log_write(vid, reg->guest_phys_addr
                                         + (start - reg->host_user_addr),
                                    end - start);
                logged = true;
            }
        }
        n += logged;
    }
    free(mem);
    return n;
}

static void
destroy_device(int vid)
{
    char ifname[PATH_MAX];
    struct netdev_vhost *dev, *found;
    uint64_t suppressed_read[NETDEV_VHOST_MAX_QP];

    rte_vhost_get_ifname(vid, ifname, sizeof ifname);
    ovs_mutex_lock(&netdev_vhost_mutex);
    dev = found = netdev_vhost_find_by_vid(vid);
    if (found) {
        ovs_mutex_lock(&dev->mutex);
        atomic_store_relaxed(&dev->ready, false);
        ovs_mutex_lock(&vid_map_mutex);
        /* The id first, then the guard: a PMD thread that finds the guard
         * closed then also finds the id withdrawn, and leaves a held kick to
         * the teardown below (kick_run_locked(), lib/netdev-vhost-txq.c). */
        ovsrcu_index_set(&dev->vid, -1);
        netdev_vhost_heavy_fence();
        netdev_vhost_guard_close(dev);
        ovs_mutex_unlock(&vid_map_mutex);

        /* Client ports: keep the coalesced kicks of this connection:
         * DPDK's per-vring statistics vanish with the device.  (Kicks
         * folded after this read are added below.)  The kicks themselves
         * are ours (tx.kq.kicks, lib/netdev-vhost-kick.h): nothing to
         * keep. */
        for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
            struct netdev_vhost_qp *qp = &dev->qps[q];

            suppressed_read[q] = 0;
            if (NETDEV_VHOST_HAS_DEFERRED_KICKS && dev->client) {
                suppressed_read[q] = netdev_vhost_vring_stat(
                    vid, q, "guest_notifications_suppressed");
                qp->coalesced_base += suppressed_read[q];
            }
            qp->tx.enabled = false;
            qp->tx_reported = false;
            qp->rx_enabled = false;
        }
#if NETDEV_VHOST_GUEST_OFFLOADS
        /* No offloads until the next guest says which (stock 3.5). */
        offloads_update(dev, -1);
#endif
        netdev_vhost_remap_txqs(dev);
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
         * netdev_vhost_flush_all() takes each tx_lock once; it drops what
         * is staged: the guest's rx vrings are gone. */
        for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
            netdev_vhost_wait_while_set(&found->qps[q].rx_busy);
        }
        netdev_vhost_flush_all(found, true);
        ovs_mutex_lock(&found->mutex);
        for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
            struct netdev_vhost_qp *qp = &found->qps[q];

            /* A PMD thread that read the id before it was withdrawn may
             * have enqueued after the count was read above: it held this
             * queue's tx_lock, which netdev_vhost_flush_all() took
             * since. */
            if (NETDEV_VHOST_HAS_DEFERRED_KICKS) {
                if (found->client) {
                    qp->coalesced_base += netdev_vhost_vring_stat(
                        vid, q, "guest_notifications_suppressed")
                        - suppressed_read[q];
                }
                /* Held kicks: delivered now, while the virtqueues and
                 * their callfds exist (lib/netdev-vhost-txq.h); each is
                 * counted once, as delivered (kicks_delivered and
                 * kicks_teardown), which the port's kicks include. */
                netdev_vhost_txq_teardown(found, q, vid);
            }
        }
        ovs_mutex_unlock(&found->mutex);

        int logged = log_packed_rings(vid);
        if (logged) {
            VLOG_INFO("vHost Device '%s': %d packed descriptor rings logged "
                      "whole for live migration", ifname, logged);
        }
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
    if (vid_in_map(vid) && vid_map[vid]) {
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
            netdev_vhost_cov_pending(NETDEV_VHOST_COV_EVENTS_COALESCED, 1);
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

const struct rte_vhost_device_ops netdev_vhost_device_ops = {
    .new_device = new_device,
    .destroy_device = destroy_device,
    .vring_state_changed = vring_state_changed,
    .features_changed = features_changed,
    .new_connection = new_connection,
    .destroy_connection = destroy_connection,
    /* Counts the kicks DPDK writes inside our enqueues (DPDK 22.11 and
     * later call it after every eventfd write; lib/netdev-vhost-kick.h). */
    .guest_notified = netdev_vhost_guest_notified,
#if NETDEV_VHOST_DEFERRED_KICKS
    .guest_notify = netdev_vhost_guest_notify,
#endif
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
    dev = netdev_vhost_find_by_name(ev->name);
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

        qp->tx.enabled = ev->enable;
        qp->tx_reported = true;
        /* What is staged is never dropped here.  DPDK reports a vring
         * disabled and enabled again around one SET_VRING_CALL or
         * SET_VRING_KICK, which a front-end may send at any time (QEMU's
         * vhost_virtqueue_mask() swaps the call eventfd while the guest
         * masks an interrupt vector): the two reports may merge into one
         * event, or this thread may see the "disabled" one before DPDK
         * made the second.  Either way the vring may be usable again by
         * now.  Ending enabled: flush (a reconfigure flush), as stock
         * would have placed the packets.  Ending disabled: the packets
         * stay staged to their deadline, when they go into the vring if
         * it is back, or are dropped and counted (tx_dropped) if it is
         * still disabled; a device that goes away drops them at once
         * (destroy_device()). */
        if (ev->was_disabled && ev->enable) {
            netdev_vhost_txq_flush(dev, q, NETDEV_VHOST_TXQ_ALL);
        }
        netdev_vhost_remap_txqs(dev);
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


void
netdev_vhost_events_init(void)
{
    event_seq = seq_create();
}

void
netdev_vhost_events_run(void)
{
    struct ovs_list events;

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

void
netdev_vhost_events_wait(void)
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

void
netdev_vhost_events_forget(struct netdev_vhost *dev)
{
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

void
netdev_vhost_remap_txqs(struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    int enabled[NETDEV_VHOST_MAX_QP];
    int n_enabled = 0;
    int n_txq = MIN(dev->up.n_txq, NETDEV_VHOST_MAX_QP);

    for (int q = 0; q < n_txq; q++) {
        if (dev->qps[q].tx.enabled) {
            enabled[n_enabled++] = q;
        }
    }
    for (int i = 0; i < NETDEV_VHOST_MAX_QP; i++) {
        int map = -1;

        if (i < n_txq && n_enabled) {
            map = dev->qps[i].tx.enabled ? i : enabled[i % n_enabled];
        }
        atomic_store_relaxed(&dev->tx_map[i], map);
    }
}
