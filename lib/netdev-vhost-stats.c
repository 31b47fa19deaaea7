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

/* Statistics of netdev-vhost ports (see lib/netdev-vhost-stats.h): the
 * table of counters and everything that reads or clears them.  Main
 * thread: the class's get_stats and get_custom_stats (lib/netdev-vhost.c)
 * and the operator commands (lib/netdev-vhost-unixctl.c) call it; the
 * vhost-events thread reads DPDK's count of coalesced kicks (client
 * ports) through netdev_vhost_vring_stat(). */

#include <config.h>

#include "netdev-vhost-stats.h"
#include "netdev-vhost-notify.h"
#include "netdev-vhost-private.h"
#include "netdev-vhost-mempool.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_vhost.h>

#include "dpif-netdev-perf.h"
#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/json.h"
#include "smap.h"
#include "util.h"

/* The counters and other values of a port.  What each one is ('kind')
 * says where it is shown:
 *
 *   - STAT_COUNTER: only grows, from the port's creation (or, for DPDK's,
 *     as DPDK keeps it).  In the netdev statistics (Interface:statistics,
 *     get_custom_stats) if it has a name and is not 'command_only'; our
 *     commands (netdev-vhost/show, /stats) show a 'clearable' one less its
 *     value at the last netdev-vhost/clear-stats, as OVS's
 *     dpif-netdev/pmd-stats-clear does (lib/dpif-netdev-perf.c
 *     pmd_perf_stats_clear(): the raw counters stay, a snapshot is
 *     subtracted when shown).
 *   - STAT_GAUGE: a value at this moment; our commands only.  (Whether a
 *     queue is enabled is also in the port's status, see
 *     netdev_vhost_stats_status(); status is refreshed only when the port
 *     changes, so the other gauges are not.)
 *   - STAT_SINCE_CLEAR: a maximum or a distribution since the port's
 *     creation or the last clear-stats, which resets it; our commands
 *     only.
 *
 * A port value appears once per port, a queue value once per queue pair
 * as tx_q<N>_<name>. */
enum stat_scope {
    STAT_PORT,                  /* Listed before DPDK's vring counters. */
    STAT_QUEUE,                 /* Per queue pair, after DPDK's. */
    STAT_PORT_END,              /* Listed after the queue counters. */
};

enum stat_kind {
    STAT_COUNTER,
    STAT_GAUGE,
    STAT_SINCE_CLEAR,
};

enum stat {
    /* Port counters. */
    ST_TX_FAILURE_DROPS,
    ST_TX_MTU_EXCEEDED_DROPS,
    ST_TX_QOS_DROPS,
    ST_RX_QOS_DROPS,
    ST_TX_INVALID_HWOL_DROPS,
    ST_TX_RETRIES,
    /* Queue values. */
    ST_Q_BURSTS,
    ST_Q_BURSTS_INTR,
    ST_Q_SENT_IMMEDIATE,
    ST_Q_STAGED,
    ST_Q_STAGED_NOW,
    ST_Q_FLUSH_DEADLINE,
    ST_Q_FLUSH_FULL,
    ST_Q_FLUSH_GUEST,
    ST_Q_FLUSH_RECONFIG,
    ST_Q_FLUSH_WATERMARK,
    ST_Q_BURSTS_RING_FULL,
    ST_Q_STAGED_DROPS,
    ST_Q_DROPS_MODERATED,
    ST_Q_KICKS,
    ST_Q_MAX_WAIT_US,
    ST_Q_WAIT_SAMPLES,
    ST_Q_WAIT_P50_US,
    ST_Q_WAIT_P99_US,
    ST_Q_QUERIES_SKIPPED,
    ST_Q_QUERIES_REUSED,
    ST_Q_SHOW_DROPS,
    ST_Q_ENABLED,
    /* Queue values of deferred kicks (NETDEV_VHOST_DEFERRED_KICKS builds
     * only; lib/netdev-vhost-kick.h). */
    ST_Q_KICKS_IMMEDIATE,
    ST_Q_KICKS_TAKEN_OVER,
    ST_Q_KICKS_DELIVERED,
    ST_Q_KICKS_COALESCED,
    ST_Q_KICKS_POSTPONED,
    ST_Q_KICKS_DISCARDED,
    ST_Q_KICKS_NOT_DELIVERED,
    ST_Q_KICKS_TEARDOWN,
    ST_Q_KICKS_PENDING,
    ST_Q_KICKS_MAX_DELAY_US,
    ST_Q_KICK_DELAY_SAMPLES,
    ST_Q_KICK_DELAY_P50_US,
    ST_Q_KICK_DELAY_P99_US,
    ST_Q_KICKS_WATERMARK,
    ST_Q_KICKS_RING_FULL,
    ST_Q_KICKS_HANDED,
    ST_Q_KICKS_THREAD,
    /* Queue values of adaptive moderation (lib/vhost-moderation.h). */
    ST_Q_INTERVAL_US,
    ST_Q_INTERVAL_CHANGES,
    ST_Q_INTERVAL_SAMPLES,
    ST_Q_INTERVAL_RING_FULL,
    ST_Q_INTERVAL_WAKEUPS,
    ST_Q_WAKEUPS_PS,
    ST_Q_CLOSE_PCT,
    ST_Q_PPS,
    /* Port values listed last. */
    ST_MEMPOOL_IN_USE,
    ST_MEMPOOL_OVERFREED,
    ST_MEM_TABLE_MSGS,
    ST_DEFERRED_WORK_CYCLES,
    N_STATS
};

/* The baselines of the queue values live in struct netdev_vhost_qp. */
BUILD_ASSERT_DECL(N_STATS <= NETDEV_VHOST_QSTATS_MAX);

struct stat_def {
    const char *name;           /* tx_q<N>_ suffix for a queue value. */
    enum stat_scope scope;
    enum stat_kind kind;
    bool clearable;             /* STAT_COUNTER that our commands show
                                 * less the last clear-stats' value. */
    const char *unit;           /* Unit and meaning. */
    bool deferred_kicks;        /* Only in NETDEV_VHOST_DEFERRED_KICKS
                                 * builds. */
    bool command_only;          /* Only in netdev-vhost/show (and its JSON
                                 * form), never in netdev-vhost/stats. */
};

static const struct stat_def stat_defs[N_STATS] = {
    [ST_TX_FAILURE_DROPS] = { "ovs_tx_failure_drops", STAT_PORT,
        STAT_COUNTER, false,
        "packets not accepted by the guest after retries, or no mbuf" },
    [ST_TX_MTU_EXCEEDED_DROPS] = { "ovs_tx_mtu_exceeded_drops", STAT_PORT,
        STAT_COUNTER, false, "packets longer than the MTU allows" },
    [ST_TX_QOS_DROPS] = { "ovs_tx_qos_drops", STAT_PORT, STAT_COUNTER,
        false, "packets dropped by egress QoS" },
    [ST_RX_QOS_DROPS] = { "ovs_rx_qos_drops", STAT_PORT, STAT_COUNTER,
        false, "packets dropped by the ingress policer" },
    [ST_TX_INVALID_HWOL_DROPS] = { "ovs_tx_invalid_hwol_drops", STAT_PORT,
        STAT_COUNTER, false, "TSO packets without an L4 header" },
    [ST_TX_RETRIES] = { "ovs_tx_retries", STAT_PORT, STAT_COUNTER, false,
        "enqueue retries (options:tx-retries-max)" },
    [ST_Q_BURSTS] = { "bursts", STAT_QUEUE, STAT_COUNTER, true,
        "send calls" },
    [ST_Q_BURSTS_INTR] = { "bursts_intr", STAT_QUEUE, STAT_COUNTER, true,
        "send calls while the guest wanted interrupts" },
    [ST_Q_SENT_IMMEDIATE] = { "sent_immediate", STAT_QUEUE, STAT_COUNTER,
        true, "packets enqueued without staging" },
    [ST_Q_STAGED] = { "staged", STAT_QUEUE, STAT_COUNTER, true,
        "packets staged" },
    [ST_Q_STAGED_NOW] = { "staged_now", STAT_QUEUE, STAT_GAUGE, false,
        "packets staged at this moment" },
    [ST_Q_FLUSH_DEADLINE] = { "flush_deadline", STAT_QUEUE, STAT_COUNTER,
        true, "flushes: the oldest staged packet reached the interval" },
    [ST_Q_FLUSH_FULL] = { "flush_full", STAT_QUEUE, STAT_COUNTER, true,
        "flushes: a full burst staged" },
    [ST_Q_FLUSH_GUEST] = { "flush_guest", STAT_QUEUE, STAT_COUNTER, true,
        "flushes: the guest stopped wanting interrupts" },
    [ST_Q_FLUSH_RECONFIG] = { "flush_reconfigure", STAT_QUEUE,
        STAT_COUNTER, true, "flushes: reconfigure, disable or destroy" },
    [ST_Q_FLUSH_WATERMARK] = { "flush_watermark", STAT_QUEUE, STAT_COUNTER,
        true,
        "flushes: tx-kick-watermark packets staged (a number below 32)" },
    [ST_Q_BURSTS_RING_FULL] = { "bursts_ring_full", STAT_QUEUE,
        STAT_COUNTER, true, "bursts sent at once, not staged (auto and "
        "adaptive modes), because the guest's ring overflowed in the last "
        "10 ms (or interval)" },
    [ST_Q_STAGED_DROPS] = { "staged_drops", STAT_QUEUE, STAT_COUNTER, true,
        "staged packets dropped: the queue or device went away" },
    [ST_Q_DROPS_MODERATED] = { "drops_moderated", STAT_QUEUE, STAT_COUNTER,
        true, "packets the guest's full ring refused (in tx_dropped) while "
        "moderation held something for it: the packets had waited in the "
        "stage, a kick was held, or (split rings) the guest had not yet put "
        "a buffer back in its avail ring since the last held kick or "
        "staged flush went out.  Not everything moderation may cost (the "
        "ring may still refuse packets to a guest woken late after it "
        "answered), and stock's kick per burst might have lost some of them "
        "too; 0 in immediate mode, and for a "
        "polling guest in every mode but timed" },
    [ST_Q_KICKS] = { "kicks", STAT_QUEUE, STAT_COUNTER, true,
        "guest notifications (eventfd writes to the queue's callfd), all "
        "connections: those DPDK wrote in our enqueues (its "
        "guest_notified() op, DPDK 22.11+), the held ones we "
        "delivered and those the notification thread wrote; every port "
        "type, DPDK statistics or not" },
    [ST_Q_MAX_WAIT_US] = { "max_wait_us", STAT_QUEUE, STAT_SINCE_CLEAR,
        false, "longest a packet stayed staged, microseconds" },
    [ST_Q_WAIT_SAMPLES] = { "wait_samples", STAT_QUEUE, STAT_SINCE_CLEAR,
        false, "flushes of staged packets timed (one per flush: how long "
        "its oldest packet was staged)" },
    [ST_Q_WAIT_P50_US] = { "wait_p50_us", STAT_QUEUE, STAT_SINCE_CLEAR,
        false, "median of those, microseconds (upper bound of its "
        "bucket, at most max_wait_us; 0 without samples)" },
    [ST_Q_WAIT_P99_US] = { "wait_p99_us", STAT_QUEUE, STAT_SINCE_CLEAR,
        false, "99th percentile of those, microseconds (as the median)" },
    [ST_Q_QUERIES_SKIPPED] = { "queries_skipped", STAT_QUEUE, STAT_COUNTER,
        true, "ring questions not asked: the ring was being changed" },
    [ST_Q_QUERIES_REUSED] = { "queries_reused", STAT_QUEUE, STAT_COUNTER,
        true, "ring questions not asked: a full burst with nothing staged, "
        "which goes out at once whatever the answer, took the last answer "
        "(no interrupt wanted)" },
    [ST_Q_SHOW_DROPS] = { "drops", STAT_QUEUE, STAT_COUNTER, true,
        "packets not accepted after retries and staged drops", false,
        true },
    [ST_Q_ENABLED] = { "enabled", STAT_QUEUE, STAT_GAUGE, false,
        "1 if the guest enabled the queue's vring (netdev-vhost/show "
        "prints \"off\" otherwise; status key tx_q<N>_enabled)" },
    [ST_Q_KICKS_IMMEDIATE] = { "kicks_immediate", STAT_QUEUE, STAT_COUNTER,
        true, "kicks DPDK asked for and wrote at once (first after a quiet "
        "interval, or guest_notify() not in auto mode)", true },
    [ST_Q_KICKS_TAKEN_OVER] = { "kicks_taken_over", STAT_QUEUE,
        STAT_COUNTER, true,
        "kicks guest_notify() took over to deliver later", true },
    [ST_Q_KICKS_DELIVERED] = { "kicks_delivered", STAT_QUEUE, STAT_COUNTER,
        true, "taken-over kicks delivered (rte_vhost_notify_guest())",
        true },
    [ST_Q_KICKS_COALESCED] = { "kicks_coalesced", STAT_QUEUE, STAT_COUNTER,
        true,
        "kicks folded into a held one, all connections.  Client ports: "
        "DPDK's guest_notifications_suppressed (its statistics are on "
        "there, as in stock).  Server ports: bursts placed while a kick "
        "was held that the guest's ring, read right after the burst, "
        "asked a kick for (what DPDK counts, but a burst that needed "
        "retries counts once, and a guest that changes its ring's flags "
        "during the burst may be seen otherwise)", true },
    [ST_Q_KICKS_POSTPONED] = { "kicks_postponed", STAT_QUEUE, STAT_COUNTER,
        true, "due kicks held on because the guest's ring did not want one",
        true },
    [ST_Q_KICKS_DISCARDED] = { "kicks_discarded", STAT_QUEUE, STAT_COUNTER,
        true, "held kicks forgotten because the device went away before "
        "they could be written", true },
    [ST_Q_KICKS_NOT_DELIVERED] = { "kicks_not_delivered", STAT_QUEUE,
        STAT_COUNTER, true, "delivery attempts that wrote nothing "
        "(virtqueue not accessible), retried", true },
    [ST_Q_KICKS_TEARDOWN] = { "kicks_teardown", STAT_QUEUE, STAT_COUNTER,
        true, "held kicks delivered when the device was destroyed", true },
    [ST_Q_KICKS_PENDING] = { "kicks_pending", STAT_QUEUE, STAT_GAUGE, false,
        "1 if a kick is held at this moment", true },
    [ST_Q_KICKS_MAX_DELAY_US] = { "kicks_max_delay_us", STAT_QUEUE,
        STAT_SINCE_CLEAR, false, "longest from a kick's take-over to its "
        "delivery, microseconds", true },
    [ST_Q_KICK_DELAY_SAMPLES] = { "kick_delay_samples", STAT_QUEUE,
        STAT_SINCE_CLEAR, false, "held kicks delivered and timed (from "
        "the first taken-over request to the delivery)", true },
    [ST_Q_KICK_DELAY_P50_US] = { "kick_delay_p50_us", STAT_QUEUE,
        STAT_SINCE_CLEAR, false, "median of those delays, microseconds "
        "(upper bound of its bucket, at most kicks_max_delay_us; 0 "
        "without samples)", true },
    [ST_Q_KICK_DELAY_P99_US] = { "kick_delay_p99_us", STAT_QUEUE,
        STAT_SINCE_CLEAR, false, "99th percentile of those delays, "
        "microseconds (as the median)", true },
    [ST_Q_KICKS_WATERMARK] = { "kicks_watermark", STAT_QUEUE, STAT_COUNTER,
        true, "held kicks delivered before their interval ended because "
        "the guest's ring reached the watermark (tx-kick-watermark "
        "packets placed since the last kick, or fewer than 32 free "
        "entries)", true },
    [ST_Q_KICKS_RING_FULL] = { "kicks_ring_full", STAT_QUEUE, STAT_COUNTER,
        true, "kicks that went out at once, or held ones before their "
        "interval ended, because the guest's ring overflowed in the last "
        "10 ms (or interval)", true },
    [ST_Q_KICKS_HANDED] = { "kicks_handed", STAT_QUEUE, STAT_COUNTER,
        true, "kicks a PMD thread handed to the notification thread "
        "(other_config:vhost-kick-thread=true) instead of writing them",
        true },
    [ST_Q_KICKS_THREAD] = { "kicks_thread", STAT_QUEUE, STAT_COUNTER,
        true, "kicks the notification thread wrote (in kicks too); "
        "kicks - kicks_thread were written on the PMD threads (or at "
        "teardown)", true },
    [ST_Q_INTERVAL_US] = { "interval_us", STAT_QUEUE, STAT_GAUGE, false,
        "coalescing interval in force, microseconds (adaptive: the "
        "moderation's current one; else tx-flush-interval)" },
    [ST_Q_INTERVAL_CHANGES] = { "interval_changes", STAT_QUEUE,
        STAT_COUNTER, true, "times adaptive moderation changed the "
        "interval" },
    [ST_Q_INTERVAL_SAMPLES] = { "interval_samples", STAT_QUEUE,
        STAT_COUNTER, true, "samples adaptive moderation closed" },
    [ST_Q_INTERVAL_RING_FULL] = { "interval_ring_full", STAT_QUEUE,
        STAT_COUNTER, true, "times adaptive moderation went back to the "
        "floor because the guest's ring had no room for a packet" },
    [ST_Q_INTERVAL_WAKEUPS] = { "interval_wakeups", STAT_QUEUE,
        STAT_COUNTER, true, "bursts adaptive moderation counted as waking "
        "the guest at the floor, its input (at the floor: the bursts the "
        "guest was kicked for)" },
    [ST_Q_WAKEUPS_PS] = { "wakeups_ps", STAT_QUEUE, STAT_GAUGE, false,
        "last sample: bursts that would wake the guest at the floor, per "
        "second", false, true },
    [ST_Q_CLOSE_PCT] = { "close_pct", STAT_QUEUE, STAT_GAUGE, false,
        "last sample: % of those within one ceiling of the one before",
        false, true },
    [ST_Q_PPS] = { "pps", STAT_QUEUE, STAT_GAUGE, false,
        "last sample: packets per second", false, true },
    [ST_MEMPOOL_IN_USE] = { "ovs_mempool_in_use", STAT_PORT_END, STAT_GAUGE,
        false, "mbufs of the port's mempool in use (0 before the first "
        "guest connected: the pool is made then)" },
    [ST_MEMPOOL_OVERFREED] = { "ovs_mempool_overfreed", STAT_PORT_END,
        STAT_GAUGE, false, "free mbufs of the port's mempool beyond its "
        "size: mbufs freed twice (always 0; anything else means a "
        "corrupted pool)" },
    [ST_MEM_TABLE_MSGS] = { "vhost_mem_table_msgs", STAT_PORT_END,
        STAT_COUNTER, false, "VHOST_USER_SET_MEM_TABLE messages" },
    [ST_DEFERRED_WORK_CYCLES] = { "deferred_work_cycles", STAT_PORT_END,
        STAT_COUNTER, false, "TSC cycles PMD threads spent in this port's "
        "rxq_recv on staged packets and held kicks that were due, in "
        "iterations pmd-stats-show counted idle (no netdev-vhost rxq of "
        "the thread received)" },
};

/* Is 'i' in this build (a deferred-kicks value only with deferred
 * kicks)? */
static bool
stat_in_build(int i)
{
    return !stat_defs[i].deferred_kicks || NETDEV_VHOST_HAS_DEFERRED_KICKS;
}

uint64_t
netdev_vhost_delay_hist_percentile(const struct histogram *h,
                                   unsigned int pct, uint64_t max)
{
    uint64_t n = histogram_samples(h);
    uint64_t rank = (n * pct + 99) / 100;     /* Nearest rank, >= 1. */
    uint64_t sum = 0;

    if (!n) {
        return 0;
    }
    for (int i = 0; i < NUM_BINS; i++) {
        sum += h->bin[i];
        if (sum >= rank) {
            return MIN(h->wall[i], max);
        }
    }
    return max;
}

/* The largest number of statistics DPDK keeps per vring. */
#define VRING_STATS_MAX 32

/* The one reader of DPDK's per-vring statistics: reads those of vring
 * 'vring' of device 'vid' into 'names' and 'stats' (VRING_STATS_MAX each)
 * and returns how many, or 0 if there are none or they cannot be read. */
static int
vring_stats_read(int vid, int vring, struct rte_vhost_stat_name *names,
                 struct rte_vhost_stat *stats)
{
    int n = rte_vhost_vring_stats_get_names(vid, vring, names,
                                            VRING_STATS_MAX);

    if (n <= 0 || n > VRING_STATS_MAX
        || rte_vhost_vring_stats_get(vid, vring, stats, n) != n) {
        return 0;
    }
    return n;
}

uint64_t
netdev_vhost_vring_stat(int vid, int q, const char *stat)
{
    struct rte_vhost_stat_name names[VRING_STATS_MAX];
    struct rte_vhost_stat stats[VRING_STATS_MAX];
    int vring = netdev_vhost_tx_vring(q);
    size_t len = strlen(stat);

    if (vid < 0 || vring >= rte_vhost_get_vring_num(vid)) {
        return 0;
    }

    /* DPDK names them "tx_q<N>_<stat>" (22.11 and 24.11). */
    int n = vring_stats_read(vid, vring, names, stats);
    for (int i = 0; i < n; i++) {
        size_t name_len = strlen(names[i].name);

        if (name_len > len + 1
            && !strcmp(names[i].name + name_len - len, stat)
            && names[i].name[name_len - len - 1] == '_'
            && !strncmp(names[i].name, "tx_q", 4)
            && strspn(names[i].name + 4, "0123456789") == name_len - len - 5
            && stats[i].id < n) {
            return stats[stats[i].id].value;
        }
    }
    return 0;
}

/* Reads the port counters of 'dev' into 'v'.  dev->mutex held. */
static void
port_stats_read(struct netdev_vhost *dev, uint64_t v[N_STATS])
    OVS_REQUIRES(dev->mutex)
{
    uint64_t tx_failure = 0, tx_retries = 0, due_cycles = 0;

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        tx_failure += netdev_vhost_counter_get(&dev->qps[q].tx.dropped);
        tx_retries += netdev_vhost_counter_get(&dev->qps[q].tx.retries);
        due_cycles += netdev_vhost_counter_get(
            &dev->qps[q].rx_wait.due_cycles);
    }
    rte_spinlock_lock(&dev->stats_lock);
    v[ST_TX_FAILURE_DROPS] = tx_failure + dev->tx_failure_drops;
    v[ST_TX_MTU_EXCEEDED_DROPS] = dev->tx_mtu_exceeded_drops;
    v[ST_TX_QOS_DROPS] = dev->tx_qos_drops;
    v[ST_RX_QOS_DROPS] = dev->rx_qos_drops;
    v[ST_TX_INVALID_HWOL_DROPS] = dev->tx_invalid_hwol_drops;
    rte_spinlock_unlock(&dev->stats_lock);
    v[ST_TX_RETRIES] = tx_retries;
    v[ST_MEMPOOL_IN_USE] = netdev_vhost_mempool_in_use(dev->mp);
    v[ST_MEMPOOL_OVERFREED] = netdev_vhost_mempool_overfreed(dev->mp);
    v[ST_MEM_TABLE_MSGS] = netdev_vhost_counter_get(&dev->mem_table_msgs);
    v[ST_DEFERRED_WORK_CYCLES] = due_cycles;
}

/* The part of kicks_coalesced of queue pair 'q' of 'dev' (device id 'vid')
 * that is not the kick module's own (DPDK 23.11+): on client ports DPDK's
 * guest_notifications_suppressed of the current connection (its
 * statistics are enabled there, as in stock OVS); on server ports, where
 * they are not, our own count of the bursts DPDK would have counted so
 * (netdev_vhost_kick_enqueue_end()), all connections.  dev->mutex held. */
static uint64_t
coalesced_now(struct netdev_vhost *dev, int vid, int q)
    OVS_REQUIRES(dev->mutex)
{
    return (dev->client
            ? netdev_vhost_vring_stat(vid, q,
                                      "guest_notifications_suppressed")
            : netdev_vhost_counter_get(&dev->qps[q].tx.kq.coalesced));
}

/* Reads the queue values of queue pair 'q' of 'dev', whose device id is
 * 'vid', into 'v' (raw: counters as they are, not less the last
 * clear-stats), and into '*wants' and '*enabled' the last answer of the
 * ring question and whether the guest enabled the queue.  One copy under
 * the queue's tx_lock; DPDK's kick count is read after it.  dev->mutex
 * held. */
static void
queue_stats_read(struct netdev_vhost *dev, int vid, int q,
                 uint64_t v[N_STATS], bool *wants, bool *enabled)
    OVS_REQUIRES(dev->mutex)
{
    struct netdev_vhost_qp *qp = &dev->qps[q];
    struct netdev_vhost_txq_stats st;

    netdev_vhost_txq_read_stats(dev, q, &st);
    v[ST_Q_KICK_DELAY_SAMPLES] = histogram_samples(&st.kick_delay);
    v[ST_Q_KICK_DELAY_P50_US] = netdev_vhost_delay_hist_percentile(
        &st.kick_delay, 50, st.kick.max_delay_us);
    v[ST_Q_KICK_DELAY_P99_US] = netdev_vhost_delay_hist_percentile(
        &st.kick_delay, 99, st.kick.max_delay_us);
    v[ST_Q_WAIT_SAMPLES] = histogram_samples(&st.wait);
    v[ST_Q_WAIT_P50_US] = netdev_vhost_delay_hist_percentile(
        &st.wait, 50, st.txp.max_wait_us);
    v[ST_Q_WAIT_P99_US] = netdev_vhost_delay_hist_percentile(
        &st.wait, 99, st.txp.max_wait_us);
    v[ST_Q_STAGED_NOW] = st.n_staged;
    v[ST_Q_SHOW_DROPS] = st.show_drops;
    v[ST_Q_QUERIES_SKIPPED] = st.queries_skipped;
    v[ST_Q_QUERIES_REUSED] = st.queries_reused;
    *wants = st.wants_intr;
    *enabled = st.enabled;
    struct vhost_kick_stats ks = st.kick;
    v[ST_Q_KICKS_NOT_DELIVERED] = st.kicks_not_delivered;
    v[ST_Q_KICKS_TEARDOWN] = st.kicks_teardown;
    v[ST_Q_KICKS_PENDING] = st.kick_pending;
    v[ST_Q_INTERVAL_US] = st.interval_us;
    v[ST_Q_INTERVAL_CHANGES] = st.mod.changes;
    v[ST_Q_INTERVAL_SAMPLES] = st.mod.samples;
    v[ST_Q_INTERVAL_RING_FULL] = st.mod.ring_full;
    v[ST_Q_INTERVAL_WAKEUPS] = st.mod.wakeups;
    v[ST_Q_WAKEUPS_PS] = st.mod.last_wakeups_ps;
    v[ST_Q_CLOSE_PCT] = st.mod.last_close_pct;
    v[ST_Q_PPS] = st.mod.last_pps;

    v[ST_Q_ENABLED] = *enabled;
    v[ST_Q_KICKS_IMMEDIATE] = ks.immediate;
    v[ST_Q_KICKS_TAKEN_OVER] = ks.taken_over;
    v[ST_Q_KICKS_DELIVERED] = ks.delivered;
    v[ST_Q_KICKS_POSTPONED] = ks.postponed;
    v[ST_Q_KICKS_DISCARDED] = ks.discarded;
    v[ST_Q_KICKS_MAX_DELAY_US] = ks.max_delay_us;
    v[ST_Q_KICKS_WATERMARK] = ks.watermark;
    v[ST_Q_KICKS_RING_FULL] = ks.ring_full;
    v[ST_Q_KICKS_COALESCED] = (NETDEV_VHOST_HAS_DEFERRED_KICKS
                               ? qp->coalesced_base + ks.coalesced
                                 + coalesced_now(dev, vid, q)
                               : 0);

    v[ST_Q_BURSTS] = st.txp.bursts;
    v[ST_Q_BURSTS_INTR] = st.txp.bursts_intr;
    v[ST_Q_SENT_IMMEDIATE] = st.txp.sent_immediate;
    v[ST_Q_STAGED] = st.txp.staged;
    v[ST_Q_FLUSH_DEADLINE] = st.txp.flushes[VHOST_TXP_FLUSH_DEADLINE];
    v[ST_Q_FLUSH_FULL] = st.txp.flushes[VHOST_TXP_FLUSH_FULL];
    v[ST_Q_FLUSH_GUEST] = st.txp.flushes[VHOST_TXP_FLUSH_GUEST];
    v[ST_Q_FLUSH_RECONFIG] = st.txp.flushes[VHOST_TXP_FLUSH_RECONFIG];
    v[ST_Q_FLUSH_WATERMARK] = st.txp.flushes[VHOST_TXP_FLUSH_WATERMARK];
    v[ST_Q_BURSTS_RING_FULL] = st.txp.ring_full_bursts;
    v[ST_Q_STAGED_DROPS] = st.txp.staged_drops;
    v[ST_Q_DROPS_MODERATED] =
        netdev_vhost_counter_get(&qp->tx.drops_moderated);
    v[ST_Q_MAX_WAIT_US] = st.txp.max_wait_us;
    /* Every kick written to the queue's callfd: by DPDK inside our
     * enqueues, counted by its guest_notified() op, and the held ones we
     * delivered (at their deadline or at teardown).  Both are kept across
     * connections. */
    v[ST_Q_KICKS_HANDED] = st.kicks_handed;
    v[ST_Q_KICKS_THREAD] = st.kicks_thread;
    /* With the notification thread the held kicks handed to it are in
     * 'delivered' (for the moderation they went out) and written by it:
     * counted once, as the thread's. */
    v[ST_Q_KICKS] = (netdev_vhost_counter_get(&qp->tx.kq.kicks) + ks.delivered
                     - st.handed_held + st.kicks_thread
                     + st.teardown_written);
}

/* queue_stats_read() as our commands show it: the clearable counters less
 * their values at the last clear-stats.  dev->mutex held. */
static void
queue_stats_shown(struct netdev_vhost *dev, int vid, int q,
                  uint64_t v[N_STATS], bool *wants, bool *enabled)
    OVS_REQUIRES(dev->mutex)
{
    const uint64_t *base = dev->qps[q].stats_base;

    queue_stats_read(dev, vid, q, v, wants, enabled);
    for (int i = 0; i < N_STATS; i++) {
        if (stat_defs[i].clearable) {
            v[i] = v[i] > base[i] ? v[i] - base[i] : 0;
        }
    }
}

/* Number of queue pairs statistics are reported for. */
static int
stats_n_qp(const struct netdev_vhost *dev)
{
    return MIN(MAX(dev->up.n_txq, dev->up.n_rxq), NETDEV_VHOST_MAX_QP);
}

int
netdev_vhost_get_stats(const struct netdev *netdev, struct netdev_stats *s)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
    uint64_t tx_dropped = 0;

    /* netdev_get_stats() presets every field to all-ones ("unsupported"),
     * so each supported one is assigned. */
    ovs_mutex_lock(&dev->mutex);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        const struct netdev_vhost_qp *qp = &dev->qps[q];

        rx_packets += netdev_vhost_counter_get(&qp->rx_packets);
        rx_bytes += netdev_vhost_counter_get(&qp->rx_bytes);
        tx_packets += netdev_vhost_counter_get(&qp->tx.packets);
        tx_bytes += netdev_vhost_counter_get(&qp->tx.bytes);
        tx_dropped += (netdev_vhost_counter_get(&qp->tx.dropped)
                       + netdev_vhost_counter_get(&qp->tx.staged_dropped));
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

/* Which values stats_collect() lists. */
enum stats_view {
    VIEW_STATISTICS,    /* The netdev statistics: counters only, raw. */
    VIEW_COMMAND,       /* netdev-vhost/stats: every value but the
                         * 'command_only' ones, clearable counters less
                         * the last clear-stats. */
};

static bool
stat_listed(int i, enum stats_view view)
{
    const struct stat_def *d = &stat_defs[i];

    return (stat_in_build(i) && !d->command_only
            && (view == VIEW_COMMAND || d->kind == STAT_COUNTER));
}

/* Appends the port values of 'scope' in 'v' to 'cs'. */
static void
custom_add_port(struct netdev_custom_stats *cs, size_t *allocated,
                enum stat_scope scope, enum stats_view view,
                const uint64_t v[N_STATS])
{
    for (int i = 0; i < N_STATS; i++) {
        if (stat_defs[i].scope == scope && stat_listed(i, view)) {
            custom_add(cs, allocated, stat_defs[i].name, v[i]);
        }
    }
}

/* Appends to 'cs' (of which '*allocated' entries are allocated) the values
 * of 'dev' that 'view' lists: the port values of the table, DPDK's
 * per-vring statistics (stock names, rx_q<N>_... and tx_q<N>_...; only
 * grow, never cleared), the queue values as tx_q<N>_<name>, for the port's
 * queue pairs.  Main thread; takes the port's mutex and each queue's
 * tx_lock in turn. */
static void
stats_collect(struct netdev_vhost *dev, enum stats_view view,
              struct netdev_custom_stats *cs, size_t *allocated)
{
    char name[NETDEV_CUSTOM_STATS_NAME_SIZE];
    uint64_t v[N_STATS];

    ovs_mutex_lock(&dev->mutex);
    int vid = netdev_vhost_get_vid(dev);
    int n_qp = stats_n_qp(dev);

    port_stats_read(dev, v);
    custom_add_port(cs, allocated, STAT_PORT, view, v);

    /* DPDK's per-vring statistics, already named rx_q<N>_... and
     * tx_q<N>_... by the library. */
    if (vid >= 0) {
        uint16_t n_vrings = rte_vhost_get_vring_num(vid);
        for (int vring = 0; vring < MIN(n_vrings, n_qp * VIRTIO_QNUM);
             vring++) {
            struct rte_vhost_stat_name names[VRING_STATS_MAX];
            struct rte_vhost_stat stats[VRING_STATS_MAX];
            int n = vring_stats_read(vid, vring, names, stats);

            for (int i = 0; i < n; i++) {
                custom_add(cs, allocated, names[i].name, stats[i].value);
            }
        }
    }

    for (int q = 0; q < n_qp; q++) {
        bool wants, enabled;

        if (view == VIEW_COMMAND) {
            queue_stats_shown(dev, vid, q, v, &wants, &enabled);
        } else {
            queue_stats_read(dev, vid, q, v, &wants, &enabled);
        }
        for (int i = 0; i < N_STATS; i++) {
            if (stat_defs[i].scope == STAT_QUEUE && stat_listed(i, view)) {
                snprintf(name, sizeof name, "tx_q%d_%s", q,
                         stat_defs[i].name);
                custom_add(cs, allocated, name, v[i]);
            }
        }
    }
    custom_add_port(cs, allocated, STAT_PORT_END, view, v);
    ovs_mutex_unlock(&dev->mutex);
}

int
netdev_vhost_get_custom_stats(const struct netdev *netdev,
                              struct netdev_custom_stats *cs)
{
    size_t allocated = cs->size;

    stats_collect(netdev_vhost_cast(netdev), VIEW_STATISTICS, cs,
                  &allocated);
    return 0;
}

void
netdev_vhost_stats_status(struct netdev_vhost *dev, struct smap *status)
    OVS_REQUIRES(dev->mutex)
{
    int n_qp = stats_n_qp(dev);

    for (int q = 0; q < n_qp; q++) {
        smap_add_nocopy(status, xasprintf("tx_q%d_enabled", q),
                        xstrdup(dev->qps[q].tx.enabled ? "true" : "false"));
    }
}

/* What the tx policy of 'dev' saves kicks with, for netdev-vhost/show.
 * dev->mutex held. */
static const char *
stats_mechanism(const struct netdev_vhost *dev)
    OVS_REQUIRES(dev->mutex)
{
    switch (dev->txp_cfg.mode) {
    case VHOST_TXP_IMMEDIATE:
        return "nothing: every burst at once, DPDK kicks";
    case VHOST_TXP_TIMED:
        return "packets: every burst staged";
    case VHOST_TXP_AUTO:
    case VHOST_TXP_ADAPTIVE:
    default:
        return (dev->txp_cfg.coalesce_kicks
                ? "kicks: every burst at once, at most one kick per interval"
                : "packets: staged while the guest wants interrupts");
    }
}

/* The ring state of a queue as netdev-vhost/show names it. */
static const char *
stats_wants(bool wants, bool enabled)
{
    return !enabled ? "off" : wants ? "yes" : "no";
}

/* The JSON form of netdev-vhost/show for the port of 'dev': an object with
 * the port line's facts and "queues", an array of one object per queue
 * pair with every value of the table (as netdev-vhost/show prints it)
 * under its name without the tx_q<N>_ prefix, plus "txq" and "wants".
 * dev->mutex held. */
static struct json *
stats_show_json(struct netdev_vhost *dev, int vid)
    OVS_REQUIRES(dev->mutex)
{
    struct json *port = json_object_create();
    uint64_t f = dev->features;

    json_object_put_string(port, "type", netdev_get_type(&dev->up));
    json_object_put_string(port, "mode", dev->client ? "client" : "server");
    json_object_put(port, "socket", (dev->vhost_id
                                     ? json_string_create(dev->vhost_id)
                                     : json_null_create()));
    json_object_put(port, "connected", json_boolean_create(vid >= 0));
    if (vid >= 0) {
        json_object_put_format(port, "features", "0x%016"PRIx64, f);
        json_object_put_string(port, "ring",
                               f & (1ULL << VIRTIO_F_RING_PACKED)
                               ? "packed" : "split");
        json_object_put(port, "event_idx", json_boolean_create(
                            f & (1ULL << VIRTIO_RING_F_EVENT_IDX)));
        json_object_put(port, "mergeable_buffers", json_boolean_create(
                            f & (1ULL << VIRTIO_NET_F_MRG_RXBUF)));
    }
    json_object_put(port, "n_rxq", json_integer_create(dev->up.n_rxq));
    json_object_put(port, "n_txq", json_integer_create(dev->up.n_txq));
    json_object_put_string(port, "tx_flush_mode",
                           vhost_txp_mode_to_string(dev->txp_cfg.mode));
    if (dev->txp_cfg.mode == VHOST_TXP_ADAPTIVE) {
        json_object_put(port, "interval_min_us",
                        json_integer_create(dev->txp_cfg.min_us));
        json_object_put(port, "interval_max_us",
                        json_integer_create(dev->txp_cfg.max_us));
    } else {
        json_object_put(port, "interval_us",
                        json_integer_create(dev->txp_cfg.interval_us));
    }
    if (dev->txp_cfg.error) {
        json_object_put_string(port, "error", dev->txp_cfg.error);
    }
    json_object_put_string(port, "coalescing", stats_mechanism(dev));

    struct json *queues = json_array_create_empty();
    int n_qp = stats_n_qp(dev);
    for (int q = 0; q < n_qp; q++) {
        struct json *queue = json_object_create();
        uint64_t v[N_STATS];
        bool wants, enabled;

        queue_stats_shown(dev, vid, q, v, &wants, &enabled);
        json_object_put(queue, "txq", json_integer_create(q));
        json_object_put_string(queue, "wants", stats_wants(wants, enabled));
        for (int i = 0; i < N_STATS; i++) {
            if (stat_defs[i].scope == STAT_QUEUE && stat_in_build(i)) {
                json_object_put(queue, stat_defs[i].name,
                                json_integer_create(v[i]));
            }
        }
        json_array_add(queues, queue);
    }
    json_object_put(port, "queues", queues);
    return port;
}

void
netdev_vhost_stats_show(struct netdev_vhost *dev, struct ds *ds,
                        struct json *json)
{
    const char *name = netdev_get_name(&dev->up);

    ovs_mutex_lock(&dev->mutex);
    int vid = netdev_vhost_get_vid(dev);
    uint64_t f = dev->features;

    if (json) {
        json_object_put(json, name, stats_show_json(dev, vid));
        ovs_mutex_unlock(&dev->mutex);
        return;
    }

    ds_put_format(ds, "%s: type %s, mode %s, socket %s, %s\n", name,
                  netdev_get_type(&dev->up),
                  dev->client ? "client" : "server",
                  dev->vhost_id ? dev->vhost_id : "(none)",
                  vid >= 0 ? "connected" : "disconnected");
    if (vid >= 0) {
        ds_put_format(ds, "  features 0x%016"PRIx64": %s ring, event_idx "
                      "%s, mergeable buffers %s\n", f,
                      f & (1ULL << VIRTIO_F_RING_PACKED)
                      ? "packed" : "split",
                      f & (1ULL << VIRTIO_RING_F_EVENT_IDX) ? "on" : "off",
                      f & (1ULL << VIRTIO_NET_F_MRG_RXBUF) ? "on" : "off");
    }
    bool adaptive = dev->txp_cfg.mode == VHOST_TXP_ADAPTIVE;
    ds_put_format(ds, "  n_rxq %d, n_txq %d, tx flush mode %s, interval ",
                  dev->up.n_rxq, dev->up.n_txq,
                  vhost_txp_mode_to_string(dev->txp_cfg.mode));
    if (adaptive) {
        ds_put_format(ds, "%"PRIu32" to %"PRIu32, dev->txp_cfg.min_us,
                      dev->txp_cfg.max_us);
    } else {
        ds_put_format(ds, "%"PRIu32, dev->txp_cfg.interval_us);
    }
    ds_put_format(ds, " us%s%s\n", dev->txp_cfg.error ? ", error: " : "",
                  dev->txp_cfg.error ? dev->txp_cfg.error : "");
    ds_put_format(ds, "  coalescing %s\n", stats_mechanism(dev));
    if (netdev_vhost_notify_enabled()) {
        int threads;
        uint64_t written, wakeups, cpu_us;

        netdev_vhost_notify_totals(&threads, &written, &wakeups, &cpu_us);
        ds_put_format(ds, "  kicks written by the notification thread "
                      "(%d running: %"PRIu64" kicks of all ports, %"PRIu64
                      " wake-ups, %"PRIu64" ms of CPU)\n", threads, written,
                      wakeups, cpu_us / 1000);
    }

    int n_qp = stats_n_qp(dev);
    if (adaptive) {
        ds_put_format(ds, "  %-4s %-9s %11s %10s %10s %12s %8s %12s\n",
                      "txq", "adaptive:", "interval_us", "changes",
                      "samples", "wakeups/s", "close%", "pps");
        for (int q = 0; q < n_qp; q++) {
            uint64_t v[N_STATS];
            bool wants, enabled;

            queue_stats_shown(dev, vid, q, v, &wants, &enabled);
            ds_put_format(ds, "  %-4d %-9s %11"PRIu64" %10"PRIu64" %10"PRIu64
                          " %12"PRIu64" %8"PRIu64" %12"PRIu64"\n", q,
                          "adaptive:", v[ST_Q_INTERVAL_US],
                          v[ST_Q_INTERVAL_CHANGES], v[ST_Q_INTERVAL_SAMPLES],
                          v[ST_Q_WAKEUPS_PS], v[ST_Q_CLOSE_PCT], v[ST_Q_PPS]);
        }
    }
    if (NETDEV_VHOST_HAS_DEFERRED_KICKS) {
        ds_put_format(ds, "  %-4s %-6s %10s %10s %10s %10s %10s %8s %8s "
                      "%8s %12s\n", "txq", "kicks:", "immediate",
                      "taken_over", "delivered", "coalesced", "postponed",
                      "teardown", "discard", "pending", "max_delay_us");
        for (int q = 0; q < n_qp; q++) {
            uint64_t v[N_STATS];
            bool wants, enabled;

            queue_stats_shown(dev, vid, q, v, &wants, &enabled);
            ds_put_format(ds, "  %-4d %-6s %10"PRIu64" %10"PRIu64" %10"PRIu64
                          " %10"PRIu64" %10"PRIu64" %8"PRIu64" %8"PRIu64
                          " %8"PRIu64" %12"PRIu64"\n", q, "kicks:",
                          v[ST_Q_KICKS_IMMEDIATE], v[ST_Q_KICKS_TAKEN_OVER],
                          v[ST_Q_KICKS_DELIVERED], v[ST_Q_KICKS_COALESCED],
                          v[ST_Q_KICKS_POSTPONED], v[ST_Q_KICKS_TEARDOWN],
                          v[ST_Q_KICKS_DISCARDED], v[ST_Q_KICKS_PENDING],
                          v[ST_Q_KICKS_MAX_DELAY_US]);
        }
    }
    /* The distributions since the last clear-stats: kick delay (deferred
     * kicks) and staging wait, samples, p50, p99, max, microseconds. */
    ds_put_format(ds, "  %-4s %-7s", "txq", "delays:");
    if (NETDEV_VHOST_HAS_DEFERRED_KICKS) {
        ds_put_format(ds, " %12s %10s %10s %10s", "kick_samples",
                      "kick_p50", "kick_p99", "kick_max");
    }
    ds_put_format(ds, " %12s %10s %10s %10s\n", "wait_samples", "wait_p50",
                  "wait_p99", "wait_max");
    for (int q = 0; q < n_qp; q++) {
        uint64_t v[N_STATS];
        bool wants, enabled;

        queue_stats_shown(dev, vid, q, v, &wants, &enabled);
        ds_put_format(ds, "  %-4d %-7s", q, "delays:");
        if (NETDEV_VHOST_HAS_DEFERRED_KICKS) {
            ds_put_format(ds, " %12"PRIu64" %10"PRIu64" %10"PRIu64
                          " %10"PRIu64, v[ST_Q_KICK_DELAY_SAMPLES],
                          v[ST_Q_KICK_DELAY_P50_US], v[ST_Q_KICK_DELAY_P99_US],
                          v[ST_Q_KICKS_MAX_DELAY_US]);
        }
        ds_put_format(ds, " %12"PRIu64" %10"PRIu64" %10"PRIu64" %10"PRIu64
                      "\n", v[ST_Q_WAIT_SAMPLES], v[ST_Q_WAIT_P50_US],
                      v[ST_Q_WAIT_P99_US], v[ST_Q_MAX_WAIT_US]);
    }
    ds_put_format(ds, "  %-4s %-6s %-6s %10s %10s %10s %8s %8s %8s %8s "
                  "%8s %10s %8s %8s\n", "txq", "wants", "intr%",
                  "immediate", "staged", "deadline", "full", "guest",
                  "reconf", "drops", "staged", "kicks", "k/1000p",
                  "max_us");

    for (int q = 0; q < n_qp; q++) {
        uint64_t v[N_STATS];
        bool wants, enabled;

        queue_stats_shown(dev, vid, q, v, &wants, &enabled);

        uint64_t kicks = v[ST_Q_KICKS];
        uint64_t pkts = v[ST_Q_SENT_IMMEDIATE] + v[ST_Q_STAGED];
        ds_put_format(ds, "  %-4d %-6s %5.1f%% %10"PRIu64" %10"PRIu64
                      " %10"PRIu64" %8"PRIu64" %8"PRIu64" %8"PRIu64
                      " %8"PRIu64" %8d %10"PRIu64" %8.1f %8"PRIu64"\n",
                      q, stats_wants(wants, enabled),
                      v[ST_Q_BURSTS]
                      ? 100.0 * v[ST_Q_BURSTS_INTR] / v[ST_Q_BURSTS] : 0.0,
                      v[ST_Q_SENT_IMMEDIATE], v[ST_Q_STAGED],
                      v[ST_Q_FLUSH_DEADLINE], v[ST_Q_FLUSH_FULL],
                      v[ST_Q_FLUSH_GUEST], v[ST_Q_FLUSH_RECONFIG],
                      v[ST_Q_SHOW_DROPS], (int) v[ST_Q_STAGED_NOW], kicks,
                      pkts ? 1000.0 * kicks / pkts : 0.0,
                      v[ST_Q_MAX_WAIT_US]);
    }
    ovs_mutex_unlock(&dev->mutex);
}

static int
compare_counters(const void *a_, const void *b_)
{
    const struct netdev_custom_counter *a = a_;
    const struct netdev_custom_counter *b = b_;

    return strcmp(a->name, b->name);
}

void
netdev_vhost_stats_format(struct netdev *netdev, struct ds *ds,
                          struct json *json)
{
    struct netdev_custom_stats all = { .size = 0, .counters = NULL };
    struct netdev_stats stats;
    size_t allocated = 0;

    if (!netdev_get_stats(netdev, &stats)) {
        custom_add(&all, &allocated, "rx_packets", stats.rx_packets);
        custom_add(&all, &allocated, "rx_bytes", stats.rx_bytes);
        custom_add(&all, &allocated, "rx_dropped", stats.rx_dropped);
        custom_add(&all, &allocated, "tx_packets", stats.tx_packets);
        custom_add(&all, &allocated, "tx_bytes", stats.tx_bytes);
        custom_add(&all, &allocated, "tx_dropped", stats.tx_dropped);
    }
    stats_collect(netdev_vhost_cast(netdev), VIEW_COMMAND, &all, &allocated);

    if (all.size) {
        qsort(all.counters, all.size, sizeof *all.counters,
              compare_counters);
    }
    for (size_t i = 0; i < all.size; i++) {
        const struct netdev_custom_counter *c = &all.counters[i];

        if (i + 1 < all.size && !strcmp(c->name, all.counters[i + 1].name)) {
            continue;           /* The same name twice: the last one. */
        }
        if (json) {
            json_object_put(json, c->name, json_integer_create(c->value));
        } else {
            ds_put_format(ds, "  %s: %"PRIu64"\n", c->name, c->value);
        }
    }
    netdev_free_custom_stats_counters(&all);
}

void
netdev_vhost_stats_clear(struct netdev_vhost *dev)
{
    ovs_mutex_lock(&dev->mutex);
    int vid = netdev_vhost_get_vid(dev);
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        uint64_t v[N_STATS];
        bool wants, enabled;

        /* The counters stay; our commands subtract these from now on. */
        queue_stats_read(dev, vid, q, v, &wants, &enabled);
        memcpy(dev->qps[q].stats_base, v, sizeof v);
        netdev_vhost_txq_clear_stats(dev, q);
    }
    ovs_mutex_unlock(&dev->mutex);
}
