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

/* Operator commands of netdev-vhost: "ovs-appctl netdev-vhost/show [PORT]"
 * and "ovs-appctl netdev-vhost/clear-stats [PORT]".  They run in the main
 * thread (unixctl) and read the ports through lib/netdev-vhost-private.h;
 * per-queue policy state is copied under each queue's tx_lock. */

#include <config.h>

#include "netdev-vhost-private.h"

#include <inttypes.h>
#include <string.h>

#include "netdev.h"
#include "smap.h"
#include "openvswitch/dynamic-string.h"
#include "unixctl.h"
#include "util.h"

#define VIRTIO_F_RING_PACKED_BIT 34
#define VIRTIO_RING_F_EVENT_IDX_BIT 29
#define VIRTIO_NET_F_MRG_RXBUF_BIT 15

static void
show_port(struct netdev_vhost *dev, void *ds_)
{
    struct ds *ds = ds_;
    const char *name = netdev_get_name(&dev->up);

    ovs_mutex_lock(&dev->mutex);
    int vid = ovsrcu_index_get(&dev->vid);
    uint64_t f = dev->features;

    ds_put_format(ds, "%s: type %s, mode %s, socket %s, %s\n", name,
                  netdev_get_type(&dev->up),
                  dev->client ? "client" : "server",
                  dev->vhost_id ? dev->vhost_id : "(none)",
                  vid >= 0 ? "connected" : "disconnected");
    if (vid >= 0) {
        ds_put_format(ds, "  features 0x%016"PRIx64": %s ring, event_idx "
                      "%s, mergeable buffers %s\n", f,
                      f & (1ULL << VIRTIO_F_RING_PACKED_BIT)
                      ? "packed" : "split",
                      f & (1ULL << VIRTIO_RING_F_EVENT_IDX_BIT) ? "on" : "off",
                      f & (1ULL << VIRTIO_NET_F_MRG_RXBUF_BIT) ? "on" : "off");
    }
    ds_put_format(ds, "  n_rxq %d, n_txq %d, tx flush mode %s, interval %"
                  PRIu32" us%s%s\n", dev->up.n_rxq, dev->up.n_txq,
                  vhost_txp_mode_to_string(dev->txp_cfg.mode),
                  dev->txp_cfg.interval_us,
                  dev->txp_cfg.error ? ", error: " : "",
                  dev->txp_cfg.error ? dev->txp_cfg.error : "");
    ds_put_format(ds, "  %-4s %-6s %-6s %10s %10s %10s %8s %8s %8s %8s "
                  "%8s %10s %8s %8s\n", "txq", "wants", "intr%",
                  "immediate", "staged", "deadline", "full", "guest",
                  "reconf", "drops", "staged", "kicks", "k/1000p",
                  "max_us");

    int n_qp = MIN(MAX(dev->up.n_txq, dev->up.n_rxq), NETDEV_VHOST_MAX_QP);
    for (int q = 0; q < n_qp; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];

        rte_spinlock_lock(&qp->tx_lock);
        struct vhost_txp_stats st = qp->txp.stats;
        int n_staged = qp->txp.n_staged;
        bool wants = qp->last_wants_intr;
        bool enabled = qp->tx_enabled;
        uint64_t drops = qp->tx_dropped - qp->tx_dropped_base
                         + st.staged_drops;
        rte_spinlock_unlock(&qp->tx_lock);

        uint64_t kicks = qp->kicks_base + netdev_vhost_vring_kicks(vid, q);
        uint64_t pkts = st.sent_immediate + st.staged;
        ds_put_format(ds, "  %-4d %-6s %5.1f%% %10"PRIu64" %10"PRIu64
                      " %10"PRIu64" %8"PRIu64" %8"PRIu64" %8"PRIu64
                      " %8"PRIu64" %8d %10"PRIu64" %8.1f %8"PRIu64"\n",
                      q, !enabled ? "off" : wants ? "yes" : "no",
                      st.bursts ? 100.0 * st.bursts_intr / st.bursts : 0.0,
                      st.sent_immediate, st.staged,
                      st.flushes[VHOST_TXP_FLUSH_DEADLINE],
                      st.flushes[VHOST_TXP_FLUSH_FULL],
                      st.flushes[VHOST_TXP_FLUSH_GUEST],
                      st.flushes[VHOST_TXP_FLUSH_RECONFIG],
                      drops, n_staged, kicks,
                      pkts ? 1000.0 * kicks / pkts : 0.0, st.max_wait_us);
    }
    ovs_mutex_unlock(&dev->mutex);
}

static void
clear_port(struct netdev_vhost *dev, void *aux OVS_UNUSED)
{
    /* The device id under the mutex: destroy_device() adds the kicks of
     * the connection to kicks_base and withdraws the id under it, so that
     * the offset below belongs to the id it is used with. */
    ovs_mutex_lock(&dev->mutex);
    int vid = ovsrcu_index_get(&dev->vid);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct netdev_vhost_qp *qp = &dev->qps[q];

        rte_spinlock_lock(&qp->tx_lock);
        vhost_txp_clear_stats(&qp->txp);
        qp->tx_dropped_base = qp->tx_dropped;
        qp->queries = qp->queries_skipped = 0;  /* PMD writes: tx_lock. */
        rte_spinlock_unlock(&qp->tx_lock);
        /* DPDK's kick counter cannot be reset: offset it. */
        qp->kicks_base = -netdev_vhost_vring_kicks(vid, q);
    }
    ovs_mutex_unlock(&dev->mutex);
}

static void
run_on_ports(struct unixctl_conn *conn, int argc, const char *argv[],
             void (*cb)(struct netdev_vhost *, void *), struct ds *ds)
{
    if (argc > 1) {
        struct netdev *netdev = netdev_vhost_lookup(argv[1]);

        if (!netdev) {
            unixctl_command_reply_error(conn, "no such netdev-vhost port");
            return;
        }
        cb(netdev_vhost_cast(netdev), ds);
        netdev_close(netdev);
    } else {
        netdev_vhost_for_each(cb, ds);
    }
    unixctl_command_reply(conn, ds ? ds_cstr(ds) : "");
}

static void
netdev_vhost_unixctl_show(struct unixctl_conn *conn, int argc,
                          const char *argv[], void *aux OVS_UNUSED)
{
    struct ds ds = DS_EMPTY_INITIALIZER;

    run_on_ports(conn, argc, argv, show_port, &ds);
    ds_destroy(&ds);
}

/* "netdev-vhost/stats PORT": the port's netdev statistics and custom
 * statistics read from the netdev now (the database copy is refreshed only
 * every 5 s), one "  name: value" line each, in name order. */
static void
netdev_vhost_unixctl_stats(struct unixctl_conn *conn, int argc OVS_UNUSED,
                           const char *argv[], void *aux OVS_UNUSED)
{
    struct netdev *netdev = netdev_vhost_lookup(argv[1]);
    struct netdev_custom_stats custom = { 0, NULL };
    struct netdev_stats stats;
    struct smap all = SMAP_INITIALIZER(&all);
    struct ds ds = DS_EMPTY_INITIALIZER;

    if (!netdev) {
        unixctl_command_reply_error(conn, "no such netdev-vhost port");
        return;
    }
    if (!netdev_get_stats(netdev, &stats)) {
        smap_add_format(&all, "rx_packets", "%"PRIu64, stats.rx_packets);
        smap_add_format(&all, "rx_bytes", "%"PRIu64, stats.rx_bytes);
        smap_add_format(&all, "rx_dropped", "%"PRIu64, stats.rx_dropped);
        smap_add_format(&all, "tx_packets", "%"PRIu64, stats.tx_packets);
        smap_add_format(&all, "tx_bytes", "%"PRIu64, stats.tx_bytes);
        smap_add_format(&all, "tx_dropped", "%"PRIu64, stats.tx_dropped);
    }
    if (!netdev_get_custom_stats(netdev, &custom)) {
        for (size_t i = 0; i < custom.size; i++) {
            smap_replace_nocopy(&all, custom.counters[i].name,
                                xasprintf("%"PRIu64,
                                          custom.counters[i].value));
        }
    }
    netdev_free_custom_stats_counters(&custom);
    netdev_close(netdev);

    const struct smap_node **nodes = smap_sort(&all);
    for (size_t i = 0; i < smap_count(&all); i++) {
        ds_put_format(&ds, "  %s: %s\n", nodes[i]->key, nodes[i]->value);
    }
    free(nodes);
    smap_destroy(&all);
    unixctl_command_reply(conn, ds_cstr(&ds));
    ds_destroy(&ds);
}

static void
netdev_vhost_unixctl_clear_stats(struct unixctl_conn *conn, int argc,
                                 const char *argv[], void *aux OVS_UNUSED)
{
    run_on_ports(conn, argc, argv, clear_port, NULL);
}

void
netdev_vhost_unixctl_register(void)
{
    unixctl_command_register("netdev-vhost/show", "[port]", 0, 1,
                             netdev_vhost_unixctl_show, NULL);
    unixctl_command_register("netdev-vhost/stats", "port", 1, 1,
                             netdev_vhost_unixctl_stats, NULL);
    unixctl_command_register("netdev-vhost/clear-stats", "[port]", 0, 1,
                             netdev_vhost_unixctl_clear_stats, NULL);
}
