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

#ifndef NETDEV_VHOST_OPTIONS_H
#define NETDEV_VHOST_OPTIONS_H 1

/* The options of netdev-vhost ports (lib/netdev-vhost-options.c): the
 * Interface options of a port (options:vhost-server-path, tx-retries-max,
 * vhost-max-queue-pairs, n_rxq, tx-flush-mode, tx-flush-interval,
 * tx-coalesce, tx-flush-interval-min and -max), and the Open_vSwitch
 * table's other_config: vhost-sock-dir, vhost-iommu-support and
 * vhost-postcopy-support as stock OVS 3.1, and the tx policy defaults
 * (vhost-tx-flush-mode, ... with the same names as the Interface options
 * and the prefix "vhost-").  One parser serves Interface options and
 * defaults.  A bad value is logged once, shown in the port's status (see
 * the error members of struct netdev_vhost) and the previous setting kept.
 * Main thread only: the class's set_config, construct and register
 * (lib/netdev-vhost.c) and the plug-in's bridge run call it. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "netdev-vhost-private.h"

struct smap;

/* Size of the longest vhost-user socket path with its terminating null
 * byte: that of sun_path in struct sockaddr_un (108 bytes on Linux). */
#define NETDEV_VHOST_SOCK_PATH_MAX \
    sizeof(((struct sockaddr_un *) NULL)->sun_path)

/* Reads the global vhost-user settings of the Open_vSwitch table's
 * 'ovs_other_config' as stock OVS 3.1 does: vhost-sock-dir (relative to
 * OVS's run directory; one with ".." or missing is logged, and a bad one
 * replaced by the run directory), vhost-iommu-support and
 * vhost-postcopy-support (booleans, default false).  Main thread, once,
 * before any port is constructed (netdev_vhost_register()). */
void netdev_vhost_options_read_global(const struct smap *ovs_other_config);

/* The directory of server ports' sockets, as read by
 * netdev_vhost_options_read_global() (never NULL after it).  Main
 * thread. */
const char *netdev_vhost_sock_dir(void);

/* other_config:vhost-iommu-support and vhost-postcopy-support, for client
 * ports.  Main thread. */
bool netdev_vhost_iommu_enabled(void);
bool netdev_vhost_postcopy_enabled(void);

/* The tx policy defaults of ports without their own options: 'mode',
 * 'interval_us', 'coalesce_kicks', 'min_us' and 'max_us' (other_config, or
 * the built-in defaults: adaptive, VHOST_TXP_INTERVAL_DEFAULT, kicks in a
 * NETDEV_VHOST_DEFERRED_KICKS build, VHOST_MOD_FLOOR_DEFAULT,
 * NETDEV_VHOST_DEFAULT_CEILING_US), and 'error', the message of the last
 * rejected other_config or NULL (status key "tx_flush_default_error").
 * The '_set' members are not used.  Main thread; valid until the next
 * netdev_vhost_set_other_config(). */
const struct netdev_vhost_txp_cfg *netdev_vhost_txp_defaults(void);

/* Applies the tx policy options of 'dev' ('dev->txp_cfg'), or the defaults
 * where it has none, to its queues (netdev_vhost_txq_set_policy()), and
 * stores the effective values in 'dev->txp_cfg'.  Main thread, dev->mutex
 * held. */
void netdev_vhost_txp_cfg_apply(struct netdev_vhost *dev)
    OVS_REQUIRES(dev->mutex);

/* The body of the class's set_config: applies the Interface options 'args'
 * to 'dev'.  Returns EINVAL, with '*errp' set (a malloc'd message the
 * caller frees; OVS puts it in the Interface's error column), only for a
 * new client port without a valid vhost-server-path.  Bad options never
 * fail an existing port (OVS deletes ports whose set_config fails): each
 * is logged (once per value), shown in status ("vhost_server_path_error",
 * "tx_retries_error", "vhost_max_queue_pairs_error", "tx_flush_error") and
 * the previous setting kept; returns 0.  Main thread, dev->mutex held. */
int netdev_vhost_options_set(struct netdev_vhost *dev,
                             const struct smap *args, char **errp)
    OVS_REQUIRES(dev->mutex);

/* Returns why a client port cannot connect to 'path' yet, or NULL: its
 * directory does not exist, or 'path' exists but is not a socket.  (A
 * missing socket in an existing directory is normal: the guest is not up
 * yet.)  The caller frees the message.  Main thread. */
char *netdev_vhost_socket_path_problem(const char *path);

#endif /* netdev-vhost-options.h */
