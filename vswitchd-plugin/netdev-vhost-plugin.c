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

/* The plug-in glue of our ovs-vswitchd.  OVS has no run-time loader for
 * netdev providers, so ovs-vswitchd is linked from OVS's unmodified
 * vswitchd objects and libraries plus lib/libnetdev-vhost.a, with
 *
 *   -Wl,--wrap=netdev_dpdk_register: after OVS registered its DPDK classes
 *     (right after EAL initialization), ours replace the vhost ones;
 *   -Wl,--wrap=dpdk_init: bridge_run() passes the Open_vSwitch table's
 *     other_config on every run; we pick up the vhost-tx-flush defaults;
 *   -Wl,--wrap=unixctl_command_register: netdev-dpdk's
 *     "netdev-dpdk/get-mempool-info" gets our ports' answer in front of it
 *     (it rejects classes other than its own; OVS cannot unregister or
 *     re-register a command).
 *
 * See DESIGN-NOTES.md section 2. */

#include <config.h>

#include <stdbool.h>

#include <string.h>

#include "dpdk.h"
#include "netdev-dpdk.h"
#include "netdev-vhost.h"
#include "unixctl.h"

void __real_netdev_dpdk_register(const struct smap *);
void __wrap_netdev_dpdk_register(const struct smap *);
void __real_dpdk_init(const struct smap *);
void __wrap_dpdk_init(const struct smap *);

void __real_unixctl_command_register(const char *name, const char *usage,
                                     int min_args, int max_args,
                                     unixctl_cb_func *cb, void *aux);
void __wrap_unixctl_command_register(const char *name, const char *usage,
                                     int min_args, int max_args,
                                     unixctl_cb_func *cb, void *aux);

static bool registered;

/* netdev-dpdk's handler of "netdev-dpdk/get-mempool-info" and its aux. */
static unixctl_cb_func *dpdk_mempool_info_cb;
static void *dpdk_mempool_info_aux;

/* "netdev-dpdk/get-mempool-info [PORT]": ours for our ports, else
 * netdev-dpdk's.  Main thread (unixctl). */
static void
mempool_info(struct unixctl_conn *conn, int argc, const char *argv[],
             void *aux OVS_UNUSED)
{
    if (!netdev_vhost_unixctl_mempool_info(conn, argc, argv)) {
        dpdk_mempool_info_cb(conn, argc, argv, dpdk_mempool_info_aux);
    }
}

/* Every unixctl command OVS registers passes here (main thread, at
 * start); all but one go to OVS's own registration unchanged. */
void
__wrap_unixctl_command_register(const char *name, const char *usage,
                                int min_args, int max_args,
                                unixctl_cb_func *cb, void *aux)
{
    if (!strcmp(name, "netdev-dpdk/get-mempool-info")
        && !dpdk_mempool_info_cb) {
        dpdk_mempool_info_cb = cb;
        dpdk_mempool_info_aux = aux;
        cb = mempool_info;
        aux = NULL;
    }
    __real_unixctl_command_register(name, usage, min_args, max_args, cb,
                                    aux);
}

/* Main thread, once, from dpdk_init() after a successful EAL init. */
void
__wrap_netdev_dpdk_register(const struct smap *ovs_other_config)
{
    __real_netdev_dpdk_register(ovs_other_config);
    netdev_vhost_register(ovs_other_config);
    registered = true;
}

/* Main thread, on every bridge run. */
void
__wrap_dpdk_init(const struct smap *ovs_other_config)
{
    __real_dpdk_init(ovs_other_config);
    if (registered) {
        netdev_vhost_set_other_config(ovs_other_config);
    }
}
