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
 * path.  This file owns the class tables and their callbacks: construction
 * and destruction, the vhost-user sockets, reconfigure, status, the QoS
 * hooks and registration; the main thread runs it, called by OVS's netdev
 * layer and the ovs-vswitchd plug-in (vswitchd-plugin/).  No other file of
 * lib/ calls into it.
 *
 * The other files: lib/netdev-vhost-registry.[ch] (the port list),
 * lib/netdev-vhost-options.[ch] (Interface options and other_config),
 * lib/netdev-vhost-datapath.c (send and rxq_recv, PMD threads),
 * lib/netdev-vhost-events.c (the rte_vhost callbacks, DPDK's vhost-events
 * thread), lib/netdev-vhost-guard.[ch] (the ring guard),
 * lib/netdev-vhost-kick.[ch] (deferred kicks),
 * lib/netdev-vhost-mempool.[ch], lib/netdev-vhost-stats.[ch],
 * lib/netdev-vhost-unixctl.[ch] (operator commands),
 * lib/netdev-vhost-qos.[ch] (policers), and the pure lib/vhost-ring.[ch]
 * (the ring question), lib/vhost-tx-policy.[ch] (send now or stage),
 * lib/vhost-kick.[ch] and lib/vhost-moderation.[ch] (kick and interval
 * moderation). */

#include <config.h>

#include "netdev-vhost.h"
#include "netdev-vhost-notify.h"
#include "netdev-vhost-private.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-mempool.h"
#include "netdev-vhost-options.h"
#include "netdev-vhost-qos.h"
#include "netdev-vhost-registry.h"
#include "netdev-vhost-stats.h"
#include "netdev-vhost-unixctl.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_vhost.h>

#include "coverage.h"
#include "fatal-signal.h"
#include "netdev-provider.h"
#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "packets.h"
#include "smap.h"
#include "unixctl.h"
#include "userspace-tso.h"
#include "util.h"

#define this_module (*VLM_netdev_vhost)

COVERAGE_DEFINE(netdev_vhost_flush_on_destroy);
COVERAGE_DEFINE(netdev_vhost_staged_drops);
COVERAGE_DEFINE(netdev_vhost_ring_guard_wait);
COVERAGE_DEFINE(netdev_vhost_ring_guard_long_wait);
COVERAGE_DEFINE(netdev_vhost_ring_guard_msg_failed);
COVERAGE_DEFINE(netdev_vhost_vring_events_coalesced);

const char netdev_vhost_version[] = NETDEV_VHOST_VERSION;

#define NETDEV_VHOST_MAX_PKT_LEN 9728

/* Moves the counts of 'pending' (see netdev_vhost_cov_counts) to the
 * caller's coverage counter and returns them.  Main thread. */
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
    atomic_uint *c = netdev_vhost_cov_counts;

    COVERAGE_ADD(netdev_vhost_staged_drops,
                 take_pending(&c[NETDEV_VHOST_COV_STAGED_DROPS]));
    COVERAGE_ADD(netdev_vhost_flush_on_destroy,
                 take_pending(&c[NETDEV_VHOST_COV_FLUSH_ON_DESTROY]));
    COVERAGE_ADD(netdev_vhost_ring_guard_wait,
                 take_pending(&c[NETDEV_VHOST_COV_RING_GUARD_WAIT]));
    COVERAGE_ADD(netdev_vhost_ring_guard_long_wait,
                 take_pending(&c[NETDEV_VHOST_COV_RING_GUARD_LONG_WAIT]));
    COVERAGE_ADD(netdev_vhost_ring_guard_msg_failed,
                 take_pending(&c[NETDEV_VHOST_COV_RING_GUARD_MSG_FAILED]));
    COVERAGE_ADD(netdev_vhost_vring_events_coalesced,
                 take_pending(&c[NETDEV_VHOST_COV_EVENTS_COALESCED]));

    netdev_vhost_events_run();
}

static void
netdev_vhost_class_wait(const struct netdev_class *class OVS_UNUSED)
{
    netdev_vhost_events_wait();
}

/* Registers 'dev->vhost_id' with rte_vhost and starts it.  Main thread,
 * with neither netdev_vhost_mutex nor dev->mutex held (it takes both to
 * publish 'registered_id').  Returns 0 or EINVAL. */
static int
vhost_driver_setup(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex, dev->mutex)
{
    const char *name = netdev_get_name(&dev->up);
    /* DPDK's per-virtqueue statistics (RTE_VHOST_USER_NET_STATS_ENABLE)
     * only on client ports, as stock OVS 3.1 and 3.5
     * (netdev_dpdk_vhost_client_reconfigure(); server ports get
     * LINEARBUF_SUPPORT only): they cost DPDK a few cycles per packet in
     * every enqueue and dequeue.  The kick counters are ours
     * (lib/netdev-vhost-kick.h), on every port type. */
    uint64_t flags = RTE_VHOST_USER_LINEARBUF_SUPPORT;
    int err;

    /* Whether the guest is offered TSO: with userspace TSO, and for a
     * client port of the OVS 3.5 model not while the virtio features
     * recovery uses its workaround (see virtio_recovery_step() in
     * lib/netdev-vhost-events.c). */
    bool tso = userspace_tso_enabled();

    ovs_mutex_lock(&dev->mutex);
    if (NETDEV_VHOST_HAS_VIRTIO_RECOVERY && dev->client) {
        tso = tso && dev->virtio_state & NETDEV_VHOST_VIRTIO_CLEAN;
        dev->virtio_state &= ~NETDEV_VHOST_VIRTIO_RECONF;
    }
    ovs_mutex_unlock(&dev->mutex);
    if (tso) {
        flags |= RTE_VHOST_USER_EXTBUF_SUPPORT;
    }
    if (!NETDEV_VHOST_HAS_GUEST_OFFLOADS && tso) {
        /* OVS 3.1 model: the offloads are the port's from its creation,
         * whatever the guest negotiates (stock 3.1's
         * netdev_dpdk_vhost_client_reconfigure()).  The OVS 3.5 model sets
         * them when a guest connects (lib/netdev-vhost-events.c). */
        dev->up.ol_flags |= NETDEV_TX_OFFLOAD_TCP_TSO
                            | NETDEV_TX_OFFLOAD_TCP_CKSUM
                            | NETDEV_TX_OFFLOAD_UDP_CKSUM
                            | NETDEV_TX_OFFLOAD_SCTP_CKSUM
                            | NETDEV_TX_OFFLOAD_IPV4_CKSUM;
    }
#if NETDEV_VHOST_PACKET_OFFLOADS
    /* OVS 4.0 model: the library reports a guest's offload requests as a
     * DPDK ethdev driver would (a partial checksum as RX_L4_CKSUM_NONE, a
     * segmentation request as a segment size), which init_rx_fields()
     * (lib/netdev-vhost-datapath.c) turns into the packet's own state.  In
     * its legacy mode (OVS 3.x) it sets tx flags instead, which OVS 4.0
     * neither reads nor expects.  Stock 4.0 sets it on client ports
     * (netdev_dpdk_vhost_client_reconfigure()); here on every port, as a
     * server port's guest may negotiate checksum offload too (userspace
     * TSO). */
    flags |= RTE_VHOST_USER_NET_COMPLIANT_OL_FLAGS;
#endif
    if (dev->client) {
        flags |= RTE_VHOST_USER_CLIENT | RTE_VHOST_USER_NET_STATS_ENABLE;
        if (netdev_vhost_iommu_enabled()) {
            flags |= RTE_VHOST_USER_IOMMU_SUPPORT;
        }
        if (netdev_vhost_postcopy_enabled()) {
            flags |= RTE_VHOST_USER_POSTCOPY_SUPPORT;
        }
    }

    err = rte_vhost_driver_register(dev->vhost_id, flags);
    if (err) {
        VLOG_ERR("vhost-user socket device setup failure for socket %s",
                 dev->vhost_id);
        return EINVAL;
    }
    netdev_vhost_registry_set_ifname(dev, xstrdup(dev->vhost_id));
    if (dev->client) {
        VLOG_INFO("vHost User device '%s' created in 'client' mode, "
                  "using client socket '%s'", name, dev->vhost_id);
    } else {
        fatal_signal_add_file_to_unlink(dev->vhost_id);
        VLOG_INFO("Socket %s created for vhost-user port %s",
                  dev->vhost_id, name);
    }

    err = rte_vhost_driver_callback_register(dev->vhost_id,
                                             &netdev_vhost_device_ops);
    if (!err) {
        /* As stock: without userspace TSO no checksum offload (and so no
         * TSO, UFO, ECN, virtio 1.1 5.1.3.1); with it, no UFO or ECN.
         * OVS 3.5's client ports keep the guest's checksum offload
         * (VIRTIO_NET_F_CSUM) without TSO, and disable only TSO and UFO
         * (HOST_ECN is left alone: a running guest may have negotiated
         * it). */
        uint64_t unsupported = tso
                               ? 1ULL << VIRTIO_NET_F_HOST_ECN
                                 | 1ULL << VIRTIO_NET_F_HOST_UFO
                               : 1ULL << VIRTIO_NET_F_HOST_TSO4
                                 | 1ULL << VIRTIO_NET_F_HOST_TSO6
                                 | 1ULL << VIRTIO_NET_F_CSUM;

        if (NETDEV_VHOST_HAS_GUEST_OFFLOADS && dev->client && !tso) {
            unsupported = 1ULL << VIRTIO_NET_F_HOST_TSO4
                          | 1ULL << VIRTIO_NET_F_HOST_TSO6
                          | 1ULL << VIRTIO_NET_F_HOST_UFO;
        }

        err = rte_vhost_driver_disable_features(dev->vhost_id, unsupported);
    }
    if (!err) {
        err = rte_vhost_driver_start(dev->vhost_id);
    }
    if (err) {
        VLOG_ERR("%s: could not start vhost-user driver for socket %s",
                 name, dev->vhost_id);
        rte_vhost_driver_unregister(dev->vhost_id);
        free(netdev_vhost_registry_set_ifname(dev, NULL));
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
    free(netdev_vhost_registry_set_ifname(dev, NULL));
    netdev_vhost_events_forget(dev);
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

static int
common_construct(struct netdev *netdev, bool client)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    const struct netdev_vhost_txp_cfg *def = netdev_vhost_txp_defaults();

    ovs_mutex_init(&dev->mutex);
    dev->client = client;
    ovsrcu_index_init(&dev->vid, -1);
    atomic_init(&dev->ready, false);
    atomic_init(&dev->mem_table_msgs, 0);
    atomic_init(&dev->rings_valid, false);
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
        netdev_vhost_txq_init(dev, q, def->mode, def->interval_us);
        atomic_init(&dev->qps[q].rx_busy, false);
        atomic_init(&dev->tx_map[q], -1);
    }
    dev->txp_cfg.mode = def->mode;
    dev->txp_cfg.interval_us = def->interval_us;
    dev->max_queue_pairs = NETDEV_VHOST_MAX_QUEUE_PAIRS_DEF;
    dev->virtio_state = NETDEV_VHOST_VIRTIO_CLEAN;
    dev->txp_cfg.min_us = def->min_us;
    dev->txp_cfg.max_us = def->max_us;

    /* Like stock vhost ports: one rx queue until a guest says more. */
    netdev->n_rxq = 0;
    netdev->n_txq = 0;
    netdev_request_reconfigure(netdev);

    netdev_vhost_registry_add(dev);
    return 0;
}

static int
netdev_vhost_server_construct(struct netdev *netdev)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    const char *name = netdev->name;
    const char *sock_dir = netdev_vhost_sock_dir();
    int err;

    /* The name becomes a file name in vhost-sock-dir: no directory
     * traversal. */
    if (strchr(name, '/') || strchr(name, '\\') || strstr(name, "..")
        || !strcmp(name, ".")) {
        VLOG_ERR("\"%s\" is not a valid name for a vhost-user port. "
                 "A valid name must not include '/', '\\' or '..'", name);
        return EINVAL;
    }
    if (strlen(sock_dir) + 1 + strlen(name)
        >= NETDEV_VHOST_SOCK_PATH_MAX) {
        VLOG_ERR("vhost-user socket path '%s/%s' is too long (at most %"
                 PRIuSIZE" bytes)", sock_dir, name,
                 NETDEV_VHOST_SOCK_PATH_MAX - 1);
        return ENAMETOOLONG;
    }
    /* Say why the socket cannot be created, rather than let DPDK fail. */
    if (access(sock_dir, W_OK | X_OK)) {
        err = errno;
        VLOG_ERR("%s: cannot create the vhost-user socket in vhost-sock-dir "
                 "'%s': %s", name, sock_dir, ovs_strerror(err));
        return err;
    }

    common_construct(netdev, false);
    ovs_mutex_lock(&dev->mutex);
    dev->vhost_id = xasprintf("%s/%s", sock_dir, name);
    ovs_mutex_unlock(&dev->mutex);
    err = vhost_driver_setup(dev);
    if (err) {
        netdev_vhost_registry_remove(dev);
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
    netdev_vhost_registry_remove(dev);

    /* The notification thread lets go of this port's queues before the
     * device (and its id) can go, and before 'dev' is freed: destroy_device()
     * will not find the port to do it.  A kick it held is dropped with
     * the port. */
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        netdev_vhost_notify_quiesce(&dev->qps[q].tx.kq.nq);
    }
    vhost_driver_teardown(dev);

    netdev_vhost_flush_all(dev, true);
    vhost_meter_destroy(ovsrcu_get_protected(struct vhost_meter *,
                                             &dev->ingress_policer));
    vhost_meter_destroy(ovsrcu_get_protected(struct vhost_meter *,
                                             &dev->egress_qos));
    netdev_vhost_mempool_put(dev->mp);
    free(dev->vhost_id);
    free(dev->txp_cfg.error);
    free(dev->path_error);
    free(dev->retries_error);
    free(dev->n_rxq_ignored);
    free(dev->max_qp_error);
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
    if (dev->txp_cfg.coalesce_set) {
        smap_add(args, "tx-coalesce",
                 dev->txp_cfg.coalesce_kicks ? "kicks" : "packets");
    }
    if (dev->txp_cfg.min_set) {
        smap_add_format(args, "tx-flush-interval-min", "%"PRIu32,
                        dev->txp_cfg.min_us);
    }
    if (dev->txp_cfg.max_set) {
        smap_add_format(args, "tx-flush-interval-max", "%"PRIu32,
                        dev->txp_cfg.max_us);
    }
    ovs_mutex_unlock(&dev->mutex);
    return 0;
}

/* netdev_class 'set_config': the options of the port
 * (lib/netdev-vhost-options.h).  Main thread.  EINVAL, with '*errp' set,
 * only for a new client port without a valid vhost-server-path. */
static int
netdev_vhost_set_config(struct netdev *netdev, const struct smap *args,
                        char **errp)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);

    ovs_mutex_lock(&dev->mutex);
    int err = netdev_vhost_options_set(dev, args, errp);
    ovs_mutex_unlock(&dev->mutex);
    return err;
}

/* netdev_class 'reconfigure': main thread, with no PMD thread using the
 * port.  Applies the requested MTU, NUMA node and queue counts, and (client
 * ports) (re)connects to vhost-server-path. */
static int
netdev_vhost_reconfigure(struct netdev *netdev)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    int err = 0;

    ovs_mutex_lock(&dev->mutex);
    /* A client port registers again when its path changed, or (OVS 3.5)
     * when the virtio features recovery switched between the clean
     * features and the workaround (virtio_recovery_step() in
     * lib/netdev-vhost-events.c), as stock 3.5's
     * netdev_dpdk_vhost_client_reconfigure(). */
    bool again = dev->client && dev->registered_id
                 && (!nullable_string_is_equal(dev->registered_id,
                                               dev->vhost_id)
                     || (NETDEV_VHOST_HAS_VIRTIO_RECOVERY
                         && dev->virtio_state & NETDEV_VHOST_VIRTIO_RECONF));
    ovs_mutex_unlock(&dev->mutex);
    if (again) {
        vhost_driver_teardown(dev);
    }

    ovs_mutex_lock(&dev->mutex);
    netdev_vhost_flush_all(dev, false);

    /* The mempool is made when a guest connects (new_device() asks for a
     * reconfigure when there is none), as stock OVS 3.5 does: until then
     * netdev-dpdk/get-mempool-info says "Not allocated".  With per-port
     * memory every reconfigure with a guest asks again, as stock's
     * dpdk_vhost_reconfigure_helper(): the pool follows the guest's
     * queue pairs (the same pool comes back when nothing changed). */
    bool connected = netdev_vhost_get_vid(dev) >= 0;
    if (!dev->mp && !connected) {
        dev->mtu = dev->requested_mtu;
        dev->numa_id = dev->requested_numa_id;
    } else if (!dev->mp || dev->mtu != dev->requested_mtu
               || dev->numa_id != dev->requested_numa_id
               || (connected && netdev_vhost_mempool_per_port())) {
        struct netdev_vhost_mempool *mp = netdev_vhost_mempool_get(
            netdev_get_name(netdev), dev->requested_numa_id,
            dev->requested_mtu, dev->requested_n_qp);
        if (!mp) {
            err = ENOMEM;
        } else {
            netdev_vhost_mempool_put(dev->mp);
            dev->mp = mp;
            dev->mtu = dev->requested_mtu;
            dev->numa_id = dev->requested_numa_id;
        }
    }

    netdev->n_rxq = dev->requested_n_qp;
    netdev->n_txq = dev->requested_n_qp;
    /* Tx queue 0 is enabled unless the guest said otherwise, as stock's
     * dpdk_vhost_reconfigure_helper() keeps it (lib/netdev-dpdk.c, OVS 3.1
     * to 4.0): the guest's vring states may reach this thread only after
     * the reconfigure that a new guest asks for
     * (netdev_vhost_events_run()), while rx queue 0 is polled from its
     * end, so without this what the guest sent while the mempool was made
     * would be received and then dropped at tx queue 0. */
    if (netdev_vhost_get_vid(dev) >= 0 && !dev->qps[0].tx_reported) {
        dev->qps[0].tx.enabled = true;
    }
    netdev_vhost_remap_txqs(dev);

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
        if (dev->qps[q].tx.enabled || dev->qps[q].rx_enabled) {
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
        netdev_vhost_flush_all(dev, false);
    }
    return 0;
}

/* The admin state: stock's netdev-dpdk/set-admin-state for vhost ports
 * (lib/netdev-dpdk.c of OVS 3.1 and 3.5, netdev_dpdk_set_admin_state()),
 * which sets or clears NETDEV_UP only.  A port that is down counts the
 * packets sent to it as tx_dropped and leaves the guest's packets in its
 * ring (lib/netdev-vhost-datapath.c), as stock; Interface admin_state
 * and link_state show it down (OVS's netdev_get_carrier() reports no
 * carrier for a port that is not up, whatever the class).  Unlike stock, going up again does not zero the port's statistics:
 * they only grow. */

/* Parses "up" or "down" (any case, as stock) into '*up'.  Returns false
 * for anything else. */
static bool
admin_state_parse(const char *s, bool *up)
{
    if (!strcasecmp(s, "up")) {
        *up = true;
    } else if (!strcasecmp(s, "down")) {
        *up = false;
    } else {
        return false;
    }
    return true;
}

/* netdev_vhost_for_each() callback: '*up_' (bool) is the new state. */
static void
set_admin_state(struct netdev_vhost *dev, void *up_)
{
    bool up = *(bool *) up_;
    enum netdev_flags old_flags;

    netdev_vhost_update_flags(&dev->up, up ? 0 : NETDEV_UP,
                              up ? NETDEV_UP : 0, &old_flags);
    if ((old_flags & NETDEV_UP) != (up ? NETDEV_UP : 0)) {
        VLOG_INFO("%s: admin state %s", netdev_get_name(&dev->up),
                  up ? "up" : "down");
    }
}

/* Sets the admin state of port 'name', or of every port for NULL.  Returns
 * false if 'name' is not a netdev-vhost port. */
static bool
admin_state_apply(const char *name, bool up)
{
    if (!name) {
        netdev_vhost_for_each(set_admin_state, &up);
        return true;
    }

    struct netdev *netdev = netdev_vhost_lookup(name);
    if (!netdev) {
        return false;
    }
    set_admin_state(netdev_vhost_cast(netdev), &up);
    netdev_close(netdev);
    return true;
}

/* "ovs-appctl netdev-vhost/set-admin-state [PORT] up|down": main thread
 * (unixctl). */
static void
netdev_vhost_unixctl_admin_state(struct unixctl_conn *conn, int argc,
                                 const char *argv[], void *aux OVS_UNUSED)
{
    bool up;

    if (!admin_state_parse(argv[argc - 1], &up)) {
        unixctl_command_reply_error(conn, "Invalid Admin State");
    } else if (!admin_state_apply(argc > 2 ? argv[1] : NULL, up)) {
        unixctl_command_reply_error(conn, "no such netdev-vhost port");
    } else {
        unixctl_command_reply(conn, "OK");
    }
}

bool
netdev_vhost_unixctl_dpdk_admin_state(struct unixctl_conn *conn, int argc,
                                      const char *argv[])
{
    bool up;

    if (!admin_state_parse(argv[argc - 1], &up)) {
        return false;
    }
    if (argc > 2) {
        if (!admin_state_apply(argv[1], up)) {
            return false;
        }
        unixctl_command_reply(conn, "OK");
        return true;
    }
    admin_state_apply(NULL, up);
    return false;
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
    /* Stock OVS 3.5 (netdev_dpdk_vhost_user_get_status()), while a guest
     * is connected: the port runs the virtio features recovery's
     * workaround, so its guest has no TSO (DESIGN-NOTES.md section 7). */
    if (NETDEV_VHOST_HAS_VIRTIO_RECOVERY && vid >= 0
        && userspace_tso_enabled()
        && dev->virtio_state & NETDEV_VHOST_VIRTIO_WORKAROUND) {
        smap_add(args, "userspace-tso", "disabled");
    }
    smap_add_format(args, "n_rxq", "%d", dev->up.n_rxq);
    smap_add_format(args, "n_txq", "%d", dev->up.n_txq);
    smap_add(args, "tx_flush_mode",
             vhost_txp_mode_to_string(dev->txp_cfg.mode));
    smap_add_format(args, "tx_flush_interval", "%"PRIu32,
                    dev->txp_cfg.interval_us);
    smap_add(args, "tx_coalesce",
             dev->txp_cfg.coalesce_kicks ? "kicks" : "packets");
    if (dev->txp_cfg.watermark) {
        smap_add_format(args, "tx_kick_watermark", "%"PRIu32,
                        dev->txp_cfg.watermark);
    } else {
        smap_add(args, "tx_kick_watermark", "auto");
    }
    if (dev->txp_cfg.mode == VHOST_TXP_ADAPTIVE) {
        smap_add_format(args, "tx_flush_interval_min", "%"PRIu32,
                        dev->txp_cfg.min_us);
        smap_add_format(args, "tx_flush_interval_max", "%"PRIu32,
                        dev->txp_cfg.max_us);
    }
    if (dev->txp_cfg.error) {
        smap_add(args, "tx_flush_error", dev->txp_cfg.error);
    }
    if (netdev_vhost_notify_enabled()) {
        /* Only when on: the default status stays stock's keys and ours. */
        smap_add(args, "kick_thread", "true");
    }
    if (netdev_vhost_notify_error()) {
        /* Main thread, as netdev_vhost_set_other_config(). */
        smap_add(args, "vhost_kick_thread_error",
                 netdev_vhost_notify_error());
    }
    const char *default_error = netdev_vhost_txp_defaults()->error;
    if (default_error) {
        /* Main thread, as netdev_vhost_set_other_config(). */
        smap_add(args, "tx_flush_default_error", default_error);
    }
    if (dev->path_error) {
        smap_add(args, "vhost_server_path_error", dev->path_error);
    }
    if (dev->retries_error) {
        smap_add(args, "tx_retries_error", dev->retries_error);
    }
    if (dev->max_qp_error) {
        smap_add(args, "vhost_max_queue_pairs_error", dev->max_qp_error);
    }
    if (dev->client && vid < 0 && dev->vhost_id) {
        char *problem = netdev_vhost_socket_path_problem(dev->vhost_id);

        if (problem) {
            smap_add_nocopy(args, xstrdup("socket_error"), problem);
        }
    }
    netdev_vhost_stats_status(dev, args);
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

void
netdev_vhost_register(const struct smap *ovs_other_config)
{
    static const struct netdev_class *classes[] = {
        &netdev_vhost_server_class,
        &netdev_vhost_client_class,
    };
    const struct netdev_vhost_txp_cfg *def;
    struct ds taken = DS_EMPTY_INITIALIZER;

    netdev_vhost_events_init();
    netdev_vhost_fence_init();
    netdev_vhost_options_read_global(ovs_other_config);
    netdev_vhost_mempool_read_config(ovs_other_config);
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
    unixctl_command_register("netdev-vhost/set-admin-state",
                             "[port] up|down", 1, 2,
                             netdev_vhost_unixctl_admin_state, NULL);
    def = netdev_vhost_txp_defaults();
    char interval[48];
    if (def->mode == VHOST_TXP_ADAPTIVE) {
        snprintf(interval, sizeof interval, "%"PRIu32" to %"PRIu32" us",
                 def->min_us, def->max_us);
    } else {
        snprintf(interval, sizeof interval, "%"PRIu32" us",
                 def->interval_us);
    }
    VLOG_INFO("netdev-vhost %s took over port types: %s (tx flush default: "
              "%s, %s; auto coalesces %s)", netdev_vhost_version,
              ds_cstr(&taken), vhost_txp_mode_to_string(def->mode),
              interval, def->coalesce_kicks ? "kicks" : "packets");
    ds_destroy(&taken);
}
