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

/* Operator commands of netdev-vhost: "ovs-appctl netdev-vhost/show
 * [PORT]", "netdev-vhost/stats PORT" and "netdev-vhost/clear-stats
 * [PORT]".  Thin handlers run by the main thread (unixctl): they find the
 * ports in the registry (lib/netdev-vhost-registry.h) and leave reading,
 * formatting and clearing the counters, with the locking that needs, to
 * lib/netdev-vhost-stats.c. */

#include <config.h>

#include "netdev-vhost-unixctl.h"
#include "netdev-vhost.h"
#include "netdev-vhost-private.h"
#include "netdev-vhost-mempool.h"
#include "netdev-vhost-registry.h"
#include "netdev-vhost-stats.h"

#include <errno.h>
#include <stdio.h>

#include <rte_mempool.h>

#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "unixctl.h"
#include "util.h"

static void
show_port(struct netdev_vhost *dev, void *ds)
{
    netdev_vhost_stats_show(dev, ds);
}

static void
clear_port(struct netdev_vhost *dev, void *aux OVS_UNUSED)
{
    netdev_vhost_stats_clear(dev);
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

static void
netdev_vhost_unixctl_stats(struct unixctl_conn *conn, int argc OVS_UNUSED,
                           const char *argv[], void *aux OVS_UNUSED)
{
    struct netdev *netdev = netdev_vhost_lookup(argv[1]);
    struct ds ds = DS_EMPTY_INITIALIZER;

    if (!netdev) {
        unixctl_command_reply_error(conn, "no such netdev-vhost port");
        return;
    }
    netdev_vhost_stats_format(netdev, &ds);
    netdev_close(netdev);
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

bool
netdev_vhost_unixctl_mempool_info(struct unixctl_conn *conn, int argc,
                                  const char *argv[])
{
    if (argc != 2) {
        return false;
    }

    struct netdev *netdev = netdev_vhost_lookup(argv[1]);
    if (!netdev) {
        return false;
    }

    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    char *response = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&response, &size);

    if (!stream) {
        char *error = xasprintf("Unable to open memstream: %s.",
                                ovs_strerror(errno));

        unixctl_command_reply_error(conn, error);
        free(error);
    } else {
        bool allocated;

        ovs_mutex_lock(&dev->mutex);
        allocated = dev->mp != NULL;
        if (allocated) {
            rte_mempool_dump(stream, dev->mp->mp);
            fprintf(stream, "    count: avail (%u), in use (%u)\n",
                    rte_mempool_avail_count(dev->mp->mp),
                    rte_mempool_in_use_count(dev->mp->mp));
        }
        ovs_mutex_unlock(&dev->mutex);
        fclose(stream);
        if (allocated) {
            unixctl_command_reply(conn, response);
        } else {
            unixctl_command_reply_error(conn, "Not allocated");
        }
    }
    free(response);
    netdev_close(netdev);
    return true;
}
