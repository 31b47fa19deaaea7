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
 *     "netdev-dpdk/get-mempool-info" and "netdev-dpdk/set-admin-state" get
 *     our ports' answer in front of them (they reject classes other than
 *     their own; OVS cannot unregister or re-register a command);
 *   -Wl,--wrap=print_dpdk_version: "ovs-vswitchd --version" names this
 *     build after OVS's and DPDK's versions.
 *
 * See DESIGN-NOTES.md section 2. */

#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_version.h>

#include "dpdk.h"
#include "netdev-dpdk.h"
#include "netdev-vhost.h"
#include "openvswitch/vlog.h"
#include "unixctl.h"

/* Logs as the class does (module "netdev_vhost", defined in
 * lib/netdev-vhost-registry.c). */
extern struct vlog_module *VLM_netdev_vhost;
#define this_module (*VLM_netdev_vhost)

void __real_netdev_dpdk_register(const struct smap *);
void __wrap_netdev_dpdk_register(const struct smap *);
void __real_dpdk_init(const struct smap *);
void __wrap_dpdk_init(const struct smap *);

void __real_print_dpdk_version(void);
void __wrap_print_dpdk_version(void);

void __real_unixctl_command_register(const char *name, const char *usage,
                                     int min_args, int max_args,
                                     unixctl_cb_func *cb, void *aux);
void __wrap_unixctl_command_register(const char *name, const char *usage,
                                     int min_args, int max_args,
                                     unixctl_cb_func *cb, void *aux);

static bool registered;

/* netdev-dpdk's handlers of "netdev-dpdk/get-mempool-info" and
 * "netdev-dpdk/set-admin-state", and their aux. */
static unixctl_cb_func *dpdk_mempool_info_cb;
static void *dpdk_mempool_info_aux;
static unixctl_cb_func *dpdk_admin_state_cb;
static void *dpdk_admin_state_aux;

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

/* "netdev-dpdk/set-admin-state [PORT] up|down": ours for our ports (and,
 * without PORT, for ours and then netdev-dpdk's), else netdev-dpdk's.
 * Main thread (unixctl). */
static void
admin_state(struct unixctl_conn *conn, int argc, const char *argv[],
            void *aux OVS_UNUSED)
{
    if (!netdev_vhost_unixctl_dpdk_admin_state(conn, argc, argv)) {
        dpdk_admin_state_cb(conn, argc, argv, dpdk_admin_state_aux);
    }
}

/* Every unixctl command OVS registers passes here (main thread, at
 * start); all but two go to OVS's own registration unchanged. */
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
    } else if (!strcmp(name, "netdev-dpdk/set-admin-state")
               && !dpdk_admin_state_cb) {
        dpdk_admin_state_cb = cb;
        dpdk_admin_state_aux = aux;
        cb = admin_state;
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

/* "ovs-vswitchd --version": OVS's lines ("ovs-vswitchd (Open vSwitch)
 * VERSION", then DPDK's version, printed here), then ours.  Main thread,
 * before anything else runs. */
void
__wrap_print_dpdk_version(void)
{
    __real_print_dpdk_version();
    printf("ovs-netdev-vhost %s (netdev-vhost class for dpdkvhostuser, "
           "dpdkvhostuserclient)\n", netdev_vhost_version);
}

/* Main thread, on every bridge run; the first one logs which build this
 * is, whether or not DPDK gets initialized. */
void
__wrap_dpdk_init(const struct smap *ovs_other_config)
{
    static bool logged;

    if (!logged) {
        logged = true;
        VLOG_INFO("netdev-vhost build of ovs-vswitchd: ovs-netdev-vhost %s, "
                  "Open vSwitch %s, %s", netdev_vhost_version, VERSION,
                  rte_version());
    }
    __real_dpdk_init(ovs_other_config);
    if (registered) {
        netdev_vhost_set_other_config(ovs_other_config);
    }
}
