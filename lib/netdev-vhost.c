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
 * path.  This file owns the class tables, the port list, construction and
 * destruction, the vhost-user sockets, configuration, status, the QoS
 * hooks and registration; the main thread runs it, called by OVS's netdev
 * layer and the ovs-vswitchd plug-in (vswitchd-plugin/).
 *
 * The other files: lib/netdev-vhost-datapath.c (send and rxq_recv, PMD
 * threads), lib/netdev-vhost-events.c (the rte_vhost callbacks, DPDK's
 * vhost-events thread), lib/netdev-vhost-guard.[ch] (the ring guard),
 * lib/netdev-vhost-mempool.[ch], lib/netdev-vhost-stats.[ch],
 * lib/netdev-vhost-unixctl.[ch] (operator commands),
 * lib/netdev-vhost-qos.[ch] (policers), and the pure lib/vhost-ring.[ch]
 * (the ring question) and lib/vhost-tx-policy.[ch] (send now or stage). */

#include <config.h>

#include "netdev-vhost.h"
#include "netdev-vhost-private.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-mempool.h"
#include "netdev-vhost-qos.h"
#include "netdev-vhost-stats.h"
#include "netdev-vhost-unixctl.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_vhost.h>
#include <rte_version.h>

#include "coverage.h"
#include "dirs.h"
#include "fatal-signal.h"
#include "netdev-provider.h"
#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/list.h"
#include "openvswitch/vlog.h"
#include "packets.h"
#include "smap.h"
#include "userspace-tso.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_vhost);

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
 * with staged packets, the ring guard) are counted here, by any thread
 * (netdev_vhost_cov_pending()), and the main thread adds them to the
 * coverage counters in netdev_vhost_class_run().  Static storage: starts
 * at zero. */
atomic_uint netdev_vhost_cov_counts[NETDEV_VHOST_N_COV];

const char netdev_vhost_version[] = NETDEV_VHOST_VERSION;

#define NETDEV_VHOST_MAX_PKT_LEN 9728

/* Size of the longest vhost-user socket path with its terminating null
 * byte: that of sun_path in struct sockaddr_un (108 bytes on Linux). */
#define NETDEV_VHOST_SOCK_PATH_MAX \
    sizeof(((struct sockaddr_un *) NULL)->sun_path)

/* All netdev-vhost ports. */
struct ovs_mutex netdev_vhost_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list vhost_list OVS_GUARDED_BY(netdev_vhost_mutex)
    = OVS_LIST_INITIALIZER(&vhost_list);

/* Global configuration from the Open_vSwitch table. */
static char *vhost_sock_dir;
static bool vhost_iommu_enabled;
static bool vhost_postcopy_enabled;
static enum vhost_txp_mode default_txp_mode = VHOST_TXP_AUTO;
static uint32_t default_txp_interval = VHOST_TXP_INTERVAL_DEFAULT;
/* other_config:vhost-tx-flush-interval-min, -max: the bounds of adaptive
 * mode (lib/vhost-moderation.h). */
static uint32_t default_txp_min = VHOST_MOD_FLOOR_DEFAULT;
static uint32_t default_txp_max = VHOST_MOD_CEILING_DEFAULT;
/* other_config:vhost-tx-coalesce: what auto mode coalesces by default,
 * kicks (true: DPDK 23.11+ builds, lib/netdev-vhost-kick.h) or packets. */
static bool default_txp_coalesce_kicks = NETDEV_VHOST_HAS_DEFERRED_KICKS;
static char *default_txp_error;

static const struct netdev_class netdev_vhost_server_class;
static const struct netdev_class netdev_vhost_client_class;

static bool
is_vhost_class(const struct netdev_class *class)
{
    return class == &netdev_vhost_server_class
           || class == &netdev_vhost_client_class;
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

struct netdev_vhost *
netdev_vhost_find_by_ifname(const char *ifname)
    OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (dev->registered_id && !strcmp(dev->registered_id, ifname)) {
            return dev;
        }
    }
    return NULL;
}

struct netdev_vhost *
netdev_vhost_find_by_name(const char *name) OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (!strcmp(netdev_get_name(&dev->up), name)) {
            return dev;
        }
    }
    return NULL;
}

struct netdev_vhost *
netdev_vhost_find_by_vid(int vid) OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (netdev_vhost_get_vid(dev) == vid) {
            return dev;
        }
    }
    return NULL;
}

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
    /* DPDK's per-virtqueue statistics on server and client ports alike
     * (stock: client ports only): the kick counters are DPDK's
     * (guest_notifications, _suppressed).  They cost DPDK a few cycles per
     * packet in every enqueue and dequeue (DESIGN-NOTES.md section 6). */
    uint64_t flags = RTE_VHOST_USER_LINEARBUF_SUPPORT
                     | RTE_VHOST_USER_NET_STATS_ENABLE;
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

/* Applies the tx policy options of 'dev', or the defaults where it has
 * none, to its queues. */
static void
txp_cfg_apply(struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    struct netdev_vhost_txp_cfg *cfg = &dev->txp_cfg;
    enum vhost_txp_mode mode = cfg->mode_set ? cfg->mode : default_txp_mode;
    uint32_t interval = cfg->interval_set ? cfg->interval_us
                                          : default_txp_interval;

    bool kicks = cfg->coalesce_set ? cfg->coalesce_kicks
                                   : default_txp_coalesce_kicks;
    uint32_t min = cfg->min_set ? cfg->min_us : default_txp_min;
    uint32_t max = cfg->max_set ? cfg->max_us : default_txp_max;

    cfg->mode = mode;
    cfg->interval_us = interval;
    cfg->coalesce_kicks = kicks;
    /* An Interface's floor above a later other_config ceiling: the
     * ceiling is raised to the floor (the parser rejects it only within
     * one record). */
    cfg->min_us = min;
    cfg->max_us = MAX(min, max);
    netdev_vhost_txq_set_policy(dev, mode, interval, kicks, cfg->min_us,
                                cfg->max_us);
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
        netdev_vhost_txq_init(dev, q, default_txp_mode,
                              default_txp_interval);
        atomic_init(&dev->qps[q].rx_busy, false);
        atomic_init(&dev->tx_map[q], -1);
    }
    dev->txp_cfg.mode = default_txp_mode;
    dev->txp_cfg.interval_us = default_txp_interval;
    dev->max_queue_pairs = NETDEV_VHOST_MAX_QUEUE_PAIRS_DEF;
    dev->virtio_state = NETDEV_VHOST_VIRTIO_CLEAN;
    dev->txp_cfg.min_us = default_txp_min;
    dev->txp_cfg.max_us = default_txp_max;

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
    if (strlen(vhost_sock_dir) + 1 + strlen(name)
        >= NETDEV_VHOST_SOCK_PATH_MAX) {
        VLOG_ERR("vhost-user socket path '%s/%s' is too long (at most %"
                 PRIuSIZE" bytes)", vhost_sock_dir, name,
                 NETDEV_VHOST_SOCK_PATH_MAX - 1);
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

/* Appends 'msg' (malloc'd or NULL, taken) to '*error' (malloc'd or NULL),
 * separated by "; ". */
static void
error_append(char **error, char *msg)
{
    if (!msg) {
        return;
    }
    if (!*error) {
        *error = msg;
    } else {
        char *both = xasprintf("%s; %s", *error, msg);

        free(*error);
        free(msg);
        *error = both;
    }
}

/* Parses option "<key_prefix><name>" of 'args' (tx-flush-interval-min or
 * -max, 'min_us' the least value) into '*set' and '*us' (absent: '*set'
 * false; invalid: both unchanged).  Returns NULL or a malloc'd message
 * starting with 'msg_prefix'. */
static char *
parse_bound_option(const struct smap *args, const char *key_prefix,
                   const char *msg_prefix, const char *name,
                   uint32_t min_us, bool *set, uint32_t *us)
{
    char *key = xasprintf("%s%s", key_prefix, name);
    const char *value = smap_get(args, key);
    char *error = NULL;

    free(key);
    if (!value) {
        *set = false;
    } else {
        uint32_t v;
        char *e = vhost_mod_parse_bound(name, value, min_us, &v);

        if (!e) {
            *set = true;
            *us = v;
        } else {
            error = xasprintf("%s%s", msg_prefix, e);
            free(e);
        }
    }
    return error;
}

/* The one parser of the tx policy options: reads the options
 * "<key_prefix>tx-flush-mode" (auto, immediate, timed, adaptive),
 * "<key_prefix>tx-flush-interval" (see vhost_txp_parse_interval()),
 * "<key_prefix>tx-coalesce" and "<key_prefix>tx-flush-interval-min" /
 * "-max" (adaptive bounds, vhost_mod_parse_bound(); the two together,
 * with 'def_min' / 'def_max' for one that is absent, must have min <= max,
 * else both are kept as they were) of 'args' into 'cfg', leaving what is
 * invalid as it was; an option that is absent clears its '*_set'.  Error
 * messages start with 'msg_prefix'.  With 'first_only', stops at the first
 * bad option; otherwise reports all, separated by "; ".  Returns NULL or a
 * malloc'd error message.  Main thread. */
static char *
parse_txp_options(const struct smap *args, const char *key_prefix,
                  const char *msg_prefix, bool first_only,
                  uint32_t def_min, uint32_t def_max,
                  struct netdev_vhost_txp_cfg *cfg)
{
    char *mode_key = xasprintf("%stx-flush-mode", key_prefix);
    char *interval_key = xasprintf("%stx-flush-interval", key_prefix);
    const char *mode_s = smap_get(args, mode_key);
    const char *interval_s = smap_get(args, interval_key);
    char *error = NULL;

    free(mode_key);
    free(interval_key);
    if (!mode_s) {
        cfg->mode_set = false;
    } else {
        enum vhost_txp_mode mode;

        if (vhost_txp_mode_from_string(mode_s, &mode)) {
            cfg->mode_set = true;
            cfg->mode = mode;
        } else {
            error = xasprintf("%stx-flush-mode \"%s\" is not one of auto, "
                              "immediate, timed, adaptive", msg_prefix,
                              mode_s);
        }
    }
    if (error && first_only) {
        return error;
    }
    if (!interval_s) {
        cfg->interval_set = false;
    } else {
        uint32_t us;
        char *e = vhost_txp_parse_interval(interval_s, &us);

        if (!e) {
            cfg->interval_set = true;
            cfg->interval_us = us;
        } else {
            char *msg = xasprintf("%s%s", msg_prefix, e);

            free(e);
            if (!error) {
                error = msg;
            } else {
                char *both = xasprintf("%s; %s", error, msg);
                free(error);
                free(msg);
                error = both;
            }
        }
    }
    if (error && first_only) {
        return error;
    }

    char *coalesce_key = xasprintf("%stx-coalesce", key_prefix);
    const char *coalesce_s = smap_get(args, coalesce_key);
    char *msg = NULL;

    free(coalesce_key);
    if (!coalesce_s) {
        cfg->coalesce_set = false;
    } else if (!strcmp(coalesce_s, "packets")) {
        cfg->coalesce_set = true;
        cfg->coalesce_kicks = false;
    } else if (!strcmp(coalesce_s, "kicks")
               && NETDEV_VHOST_HAS_DEFERRED_KICKS) {
        cfg->coalesce_set = true;
        cfg->coalesce_kicks = true;
    } else if (!strcmp(coalesce_s, "kicks")) {
        msg = xasprintf("%stx-coalesce \"kicks\" needs DPDK 23.11 or later "
                        "(this build: %s)", msg_prefix, rte_version());
    } else {
        msg = xasprintf("%stx-coalesce \"%s\" is not one of kicks, "
                        "packets", msg_prefix, coalesce_s);
    }
    error_append(&error, msg);
    if (error && first_only) {
        return error;
    }

    bool min_set = cfg->min_set, max_set = cfg->max_set;
    uint32_t min_us = cfg->min_us, max_us = cfg->max_us;
    char *min_e = parse_bound_option(args, key_prefix, msg_prefix,
                                     "tx-flush-interval-min",
                                     VHOST_MOD_FLOOR_MIN, &min_set, &min_us);
    char *max_e = parse_bound_option(args, key_prefix, msg_prefix,
                                     "tx-flush-interval-max",
                                     VHOST_MOD_CEILING_MIN, &max_set,
                                     &max_us);

    /* Either half invalid, or min above max: the pair stays as it was. */
    if (!min_e && !max_e) {
        uint32_t eff_min = min_set ? min_us : def_min;
        uint32_t eff_max = max_set ? max_us : def_max;

        if (eff_min > eff_max) {
            min_e = xasprintf("%stx-flush-interval-min %"PRIu32" is above "
                              "%stx-flush-interval-max %"PRIu32, msg_prefix,
                              eff_min, msg_prefix, eff_max);
        } else {
            cfg->min_set = min_set;
            cfg->max_set = max_set;
            cfg->min_us = eff_min;
            cfg->max_us = eff_max;
        }
    }
    error_append(&error, min_e);
    error_append(&error, max_e);
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

/* Returns the tx policy settings that 'cfg' keeps, as the words of a
 * rejection message: "PREFIXtx-flush-mode=M PREFIXtx-flush-interval=N
 * PREFIXtx-coalesce=C", and the adaptive bounds in adaptive mode.  PREFIX
 * is "" for Interface options and "vhost-" for other_config defaults.  The
 * caller frees the string.  Any thread. */
static char *
txp_kept_string(const char *prefix, const struct netdev_vhost_txp_cfg *cfg)
{
    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_format(&s, "%stx-flush-mode=%s %stx-flush-interval=%"PRIu32
                  " %stx-coalesce=%s", prefix,
                  vhost_txp_mode_to_string(cfg->mode), prefix,
                  cfg->interval_us, prefix,
                  cfg->coalesce_kicks ? "kicks" : "packets");
    if (cfg->mode == VHOST_TXP_ADAPTIVE) {
        ds_put_format(&s, " %stx-flush-interval-min=%"PRIu32
                      " %stx-flush-interval-max=%"PRIu32, prefix,
                      cfg->min_us, prefix, cfg->max_us);
    }
    return ds_steal_cstr(&s);
}

/* The other_config tx policy defaults were rejected or accepted again:
 * every port's status (key "tx_flush_default_error") changes, so tell OVS
 * to read it again.  Main thread. */
static void
default_txp_error_changed(void)
{
    struct netdev_vhost *dev;

    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        netdev_change_seq_changed(&dev->up);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);
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
        } else if (path[0] != '/'
                   || strlen(path) >= NETDEV_VHOST_SOCK_PATH_MAX) {
            msg = xasprintf("%s: vhost-server-path \"%s\" must be an "
                            "absolute path shorter than %"PRIuSIZE" bytes",
                            name, path, NETDEV_VHOST_SOCK_PATH_MAX);
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

    /* options:vhost-max-queue-pairs, client ports, as stock OVS 3.5
     * (netdev_dpdk_vhost_client_set_config()): the number of queue pairs a
     * VDUSE device offers, 1 to 128.  DPDK applies it only to VDUSE
     * devices (paths under /dev/vduse/), which this class does not drive:
     * accepted and validated, without effect on vhost-user sockets.  Stock
     * silently takes the default for a bad value; we keep the previous one
     * and say why.  OVS 3.1 builds ignore it, as stock 3.1. */
    const char *max_qp_s = (NETDEV_VHOST_HAS_VIRTIO_RECOVERY
                            ? smap_get(args, "vhost-max-queue-pairs")
                            : NULL);
    int max_qp = NETDEV_VHOST_MAX_QUEUE_PAIRS_DEF;

    if (dev->client && max_qp_s
        && (!str_to_int(max_qp_s, 10, &max_qp)
            || max_qp < NETDEV_VHOST_MAX_QUEUE_PAIRS_MIN
            || max_qp > NETDEV_VHOST_MAX_QUEUE_PAIRS_MAX)) {
        char *msg = xasprintf("vhost-max-queue-pairs \"%s\" is not a number "
                              "from %d to %d", max_qp_s,
                              NETDEV_VHOST_MAX_QUEUE_PAIRS_MIN,
                              NETDEV_VHOST_MAX_QUEUE_PAIRS_MAX);
        if (note_change(&dev->max_qp_error, msg)) {
            VLOG_ERR("%s: %s; keeping vhost-max-queue-pairs=%d", name, msg,
                     dev->max_queue_pairs);
        }
        free(msg);
    } else if (NETDEV_VHOST_HAS_VIRTIO_RECOVERY && dev->client) {
        note_change(&dev->max_qp_error, NULL);
        if (max_qp != dev->max_queue_pairs) {
            dev->max_queue_pairs = max_qp;
            VLOG_INFO("%s: vhost-max-queue-pairs set to %d (effective only "
                      "for VDUSE devices, not for vhost-user sockets)", name,
                      max_qp);
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

    char *error = parse_txp_options(args, "", "", false, default_txp_min,
                                    default_txp_max, &dev->txp_cfg);
    if (error && !nullable_string_is_equal(error, dev->txp_cfg.error)) {
        char *kept = txp_kept_string("", &dev->txp_cfg);
        VLOG_ERR("%s: %s; keeping %s", name, error, kept);
        free(kept);
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
    struct netdev_vhost_txp_cfg cfg = { .mode_set = false };
    char *error = parse_txp_options(ovs_other_config, "vhost-",
                                    "other_config:vhost-", true,
                                    VHOST_MOD_FLOOR_DEFAULT,
                                    VHOST_MOD_CEILING_DEFAULT, &cfg);
    enum vhost_txp_mode mode = cfg.mode_set ? cfg.mode : VHOST_TXP_AUTO;
    uint32_t interval = cfg.interval_set ? cfg.interval_us
                                         : VHOST_TXP_INTERVAL_DEFAULT;
    bool kicks = cfg.coalesce_set ? cfg.coalesce_kicks
                                  : NETDEV_VHOST_HAS_DEFERRED_KICKS;
    uint32_t min = cfg.min_set ? cfg.min_us : VHOST_MOD_FLOOR_DEFAULT;
    uint32_t max = cfg.max_set ? cfg.max_us : VHOST_MOD_CEILING_DEFAULT;

    if (error) {
        if (!nullable_string_is_equal(error, default_txp_error)) {
            struct netdev_vhost_txp_cfg kept_cfg = {
                .mode = default_txp_mode,
                .interval_us = default_txp_interval,
                .coalesce_kicks = default_txp_coalesce_kicks,
                .min_us = default_txp_min,
                .max_us = default_txp_max,
            };
            char *kept = txp_kept_string("vhost-", &kept_cfg);
            VLOG_ERR("%s; keeping %s", error, kept);
            free(kept);
            free(default_txp_error);
            default_txp_error = error;
            default_txp_error_changed();
        } else {
            free(error);
        }
        return;
    }
    if (default_txp_error) {
        free(default_txp_error);
        default_txp_error = NULL;
        default_txp_error_changed();
    }
    if (mode == default_txp_mode && interval == default_txp_interval
        && kicks == default_txp_coalesce_kicks && min == default_txp_min
        && max == default_txp_max) {
        return;
    }
    default_txp_mode = mode;
    default_txp_interval = interval;
    default_txp_coalesce_kicks = kicks;
    default_txp_min = min;
    default_txp_max = max;
    char bounds[64] = "";
    if (mode == VHOST_TXP_ADAPTIVE || min != VHOST_MOD_FLOOR_DEFAULT
        || max != VHOST_MOD_CEILING_DEFAULT) {
        snprintf(bounds, sizeof bounds, ", adaptive %"PRIu32" to %"PRIu32
                 " us", min, max);
    }
    VLOG_INFO("vhost tx flush default: mode %s, interval %"PRIu32" us%s%s",
              vhost_txp_mode_to_string(mode), interval,
              kicks == NETDEV_VHOST_HAS_DEFERRED_KICKS ? ""
              : kicks ? ", coalescing kicks" : ", coalescing packets",
              bounds);

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
     * netdev-dpdk/get-mempool-info says "Not allocated". */
    if (!dev->mp && netdev_vhost_get_vid(dev) < 0) {
        dev->mtu = dev->requested_mtu;
        dev->numa_id = dev->requested_numa_id;
    } else if (!dev->mp || dev->mtu != dev->requested_mtu
        || dev->numa_id != dev->requested_numa_id) {
        struct netdev_vhost_mempool *mp = netdev_vhost_mempool_get(
            dev->requested_numa_id, dev->requested_mtu);
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
    if (dev->txp_cfg.mode == VHOST_TXP_ADAPTIVE) {
        smap_add_format(args, "tx_flush_interval_min", "%"PRIu32,
                        dev->txp_cfg.min_us);
        smap_add_format(args, "tx_flush_interval_max", "%"PRIu32,
                        dev->txp_cfg.max_us);
    }
    if (dev->txp_cfg.error) {
        smap_add(args, "tx_flush_error", dev->txp_cfg.error);
    }
    if (default_txp_error) {
        /* Main thread, as netdev_vhost_set_other_config(). */
        smap_add(args, "tx_flush_default_error", default_txp_error);
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

    netdev_vhost_events_init();
    netdev_vhost_fence_init();
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
              "%s, %"PRIu32" us; auto coalesces %s)", netdev_vhost_version,
              ds_cstr(&taken), vhost_txp_mode_to_string(default_txp_mode),
              default_txp_interval,
              default_txp_coalesce_kicks ? "kicks" : "packets");
    ds_destroy(&taken);
}

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
