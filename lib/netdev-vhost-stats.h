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

#ifndef NETDEV_VHOST_STATS_H
#define NETDEV_VHOST_STATS_H 1

/* Statistics of netdev-vhost ports: one table of values (name, kind,
 * unit) that feeds the netdev_class statistics, the custom statistics,
 * the port's status, and the operator commands netdev-vhost/show, /stats
 * and /clear-stats (lib/netdev-vhost-unixctl.c).
 *
 * As OVS keeps them: the statistics (Interface:statistics) hold counters
 * only, and they only grow; clear-stats resets a snapshot that our own
 * commands subtract (as dpif-netdev/pmd-stats-clear does), and the maxima
 * and delay distributions that only our commands show.  Gauges (values
 * at this moment) are in our commands, and whether a queue is enabled
 * also in the status.  The layout is in ovs-netdev-vhost(7), "Counters".
 * Main thread, except netdev_vhost_vring_stat() and the histogram
 * helpers. */

#include <stdint.h>

struct ds;
struct histogram;
struct json;
struct netdev;
struct netdev_custom_stats;
struct netdev_stats;
struct netdev_vhost;
struct smap;

/* Returns DPDK's per-vring statistic 'stat' (its name without the
 * "tx_q<N>_" prefix, e.g. "guest_notifications_suppressed", DPDK 23.11+) of
 * the rx vring of queue pair 'q' of device 'vid', or 0 if unknown (no
 * device; DPDK's statistics are enabled only on client ports, as in stock
 * OVS).  Any thread but a PMD thread (it takes the library's vring
 * lock). */
uint64_t netdev_vhost_vring_stat(int vid, int q, const char *stat);

/* netdev_class 'get_stats': sums of the queue pairs' and the port's
 * counters.  Main thread; takes the port's mutex.  Always returns 0. */
int netdev_vhost_get_stats(const struct netdev *, struct netdev_stats *);

/* netdev_class 'get_custom_stats': appends to 'cs' the port counters of
 * the table, DPDK's per-vring statistics (stock names, rx_q<N>_... and
 * tx_q<N>_...), and the queue counters of the table as tx_q<N>_<name>, for
 * the port's queue pairs: counters only, as they are (never less a
 * clear-stats).  Main thread; takes the port's mutex and each queue's
 * tx_lock in turn.  Always returns 0. */
int netdev_vhost_get_custom_stats(const struct netdev *,
                                  struct netdev_custom_stats *cs);

/* Adds to 'status' (the netdev_class 'get_status' map) the state of each
 * queue pair that changes only with the port (OVS refreshes the status
 * only then, vswitchd/bridge.c iface_refresh_netdev_status()):
 * tx_q<N>_enabled, "true" or "false".  Main thread, dev->mutex held. */
void netdev_vhost_stats_status(struct netdev_vhost *dev,
                               struct smap *status);

/* netdev-vhost/show for 'dev': with 'json' NULL, appends the human table
 * to 'ds' (a port line, the negotiated features if connected, the tx
 * policy, then tables of one line per queue pair); else adds to the JSON
 * object 'json' a member named after the port, an object with the same
 * facts and a "queues" array (every queue value by its name), and leaves
 * 'ds' alone.  Counters are less their values at the last clear-stats.
 * Main thread, no lock held (takes the port's). */
void netdev_vhost_stats_show(struct netdev_vhost *dev, struct ds *ds,
                             struct json *json);

/* netdev-vhost/stats of 'netdev': its netdev statistics and every value of
 * the table (but the few that only netdev-vhost/show prints) read now
 * (the database copy is refreshed only every 5 s), the clearable counters
 * less their values at the last clear-stats, in name order: with 'json'
 * NULL, one "  name: value" line each appended to 'ds'; else one integer
 * member each added to the JSON object 'json'.  Main thread. */
void netdev_vhost_stats_format(struct netdev *netdev, struct ds *ds,
                               struct json *json);

/* netdev-vhost/clear-stats on 'dev': from now on our commands show the
 * clearable counters less their values now (the statistics themselves
 * are not touched: they only grow), and the maxima and delay histograms
 * start again empty.  Main thread, no lock held (takes the port's mutex
 * and every tx_lock). */
void netdev_vhost_stats_clear(struct netdev_vhost *dev);

/* The 'pct' (1..100) percentile of the samples of delay histogram 'h' by
 * nearest rank: the upper wall of the bucket that holds it, but at most
 * 'max' (the largest sample, us, kept beside the histogram); 0 if 'h'
 * holds no sample.  Any thread, on a copy or under the owner's lock.
 * OVS computes no percentile of a histogram itself (pmd-perf-show prints
 * the buckets). */
uint64_t netdev_vhost_delay_hist_percentile(const struct histogram *h,
                                            unsigned int pct, uint64_t max);

#endif /* netdev-vhost-stats.h */
