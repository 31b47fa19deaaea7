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

/* Statistics of netdev-vhost ports: one table of counters (name, unit,
 * clearable or not) that feeds the netdev_class statistics, the custom
 * statistics, and the operator commands netdev-vhost/show, /stats and
 * /clear-stats (lib/netdev-vhost-unixctl.c).  Main thread, except
 * netdev_vhost_vring_stat(). */

#include <stdint.h>

struct ds;
struct netdev;
struct netdev_custom_stats;
struct netdev_stats;
struct netdev_vhost;

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
 * the port's queue pairs.  Main thread; takes the port's mutex and each
 * queue's tx_lock in turn.  Always returns 0. */
int netdev_vhost_get_custom_stats(const struct netdev *,
                                  struct netdev_custom_stats *cs);

/* Appends the human table of netdev-vhost/show for 'dev' to 'ds': a port
 * line, the negotiated features if connected, the tx policy, then one line
 * per queue pair.  Main thread, no lock held (takes the port's). */
void netdev_vhost_stats_show(struct netdev_vhost *dev, struct ds *ds);

/* Appends netdev-vhost/stats of 'netdev' to 'ds': its netdev statistics
 * and custom statistics read now (the database copy is refreshed only
 * every 5 s), one "  name: value" line each, in name order.  Main
 * thread. */
void netdev_vhost_stats_format(struct netdev *netdev, struct ds *ds);

/* Resets the clearable counters of 'dev' (netdev-vhost/clear-stats):
 * the tx policy's counters, the kicks (by offsets: the counters are
 * written by the threads that kick, DPDK's cannot be reset), the drops of
 * netdev-vhost/show and the skipped questions.  Main thread, no lock held
 * (takes the port's mutex and every tx_lock). */
void netdev_vhost_stats_clear(struct netdev_vhost *dev);

#endif /* netdev-vhost-stats.h */
