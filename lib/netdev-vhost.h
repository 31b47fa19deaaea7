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

#ifndef NETDEV_VHOST_H
#define NETDEV_VHOST_H 1

/* Public entry points of the netdev-vhost class, called by the
 * ovs-vswitchd plug-in (vswitchd-plugin/netdev-vhost-plugin.c). */

#include <stdbool.h>

struct smap;

/* Version of ovs-netdev-vhost, e.g. "0.1.0". */
extern const char netdev_vhost_version[];

/* Replaces OVS's own "dpdkvhostuser" and "dpdkvhostuserclient" netdev
 * classes by ours.  Must be called from the main thread, after DPDK's EAL
 * was initialized and netdev-dpdk registered its classes (i.e. right after
 * netdev_dpdk_register()), with the Open_vSwitch table's other_config.
 * Reads vhost-sock-dir, vhost-iommu-support and vhost-postcopy-support as
 * stock OVS 3.1 does, and the vhost-tx-flush-* defaults.  Logs and keeps
 * the stock classes if a class cannot be registered. */
void netdev_vhost_register(const struct smap *ovs_other_config);

/* Applies the Open_vSwitch table's other_config to all vhost ports
 * (lib/netdev-vhost-options.c):
 * other_config:vhost-tx-flush-mode and vhost-tx-flush-interval are the
 * defaults of ports without their own options.  Main thread only; cheap
 * when nothing changed (called on every bridge run).  A bad value is
 * logged once and the previous default kept. */
void netdev_vhost_set_other_config(const struct smap *ovs_other_config);

struct unixctl_conn;

/* OVS's "netdev-dpdk/get-mempool-info PORT" for a netdev-vhost PORT:
 * netdev-dpdk's handler answers only for its own classes ("Not a DPDK
 * Interface"), so vswitchd-plugin/netdev-vhost-plugin.c puts this in front
 * of it.  Replies as stock OVS 3.5 does for a vhost port (netdev-dpdk.c,
 * netdev_dpdk_get_mempool_info()): the pool's rte_mempool_dump() and its
 * counts, or the error "Not allocated" before a guest connected.  Returns
 * false, replying nothing, when the call is not for one of our ports (no
 * port argument, or another class): the caller hands it to netdev-dpdk.
 * Main thread. */
bool netdev_vhost_unixctl_mempool_info(struct unixctl_conn *conn, int argc,
                                       const char *argv[]);

/* OVS's "netdev-dpdk/set-admin-state [PORT] up|down" for netdev-vhost
 * ports: netdev-dpdk's handler answers only for its own classes ("Not a
 * DPDK Interface"), so vswitchd-plugin/netdev-vhost-plugin.c puts this in
 * front of it.  With one of our ports as PORT, sets its admin state as
 * stock does for a vhost port (NETDEV_UP; see lib/netdev-vhost.c) and
 * replies "OK"; without PORT, sets that of every netdev-vhost port and
 * replies nothing, for netdev-dpdk to do the same for its ports and reply.
 * Returns false, replying nothing, when netdev-dpdk must answer (no PORT,
 * a port of another class, or a state other than up or down).  Main
 * thread. */
bool netdev_vhost_unixctl_dpdk_admin_state(struct unixctl_conn *conn,
                                           int argc, const char *argv[]);

#endif /* netdev-vhost.h */
