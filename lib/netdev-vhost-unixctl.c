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
 * [PORT]", "netdev-vhost/stats PORT" (both also as JSON, "ovs-appctl
 * --format json", with OVS 3.3+) and "netdev-vhost/clear-stats
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
#include "netdev-vhost-txq.h"

#include <errno.h>
#include <stdio.h>

#include <rte_mempool.h>

#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/json.h"
#include "unixctl.h"
#include "util.h"

/* JSON output: "ovs-appctl --format json" (OVS 3.3+: the unixctl
 * connection carries the client's output format, lib/unixctl.h
 * unixctl_command_get_output_format()), in builds whose OVS has it
 * (NETDEV_VHOST_UNIXCTL_JSON, a configure check of lib/unixctl.h).
 * Otherwise, and for "--format text", the text. */
static bool
want_json(struct unixctl_conn *conn OVS_UNUSED)
{
#if NETDEV_VHOST_UNIXCTL_JSON
    return (unixctl_command_get_output_format(conn)
            == UNIXCTL_OUTPUT_FMT_JSON);
#else
    return false;
#endif
}

/* Replies 'json' if it is not NULL (taking it), else 'text'. */
static void
reply(struct unixctl_conn *conn, const struct ds *text, struct json *json)
{
#if NETDEV_VHOST_UNIXCTL_JSON
    if (json) {
        unixctl_command_reply_json(conn, json);
        return;
    }
#endif
    json_destroy(json);
    unixctl_command_reply(conn, text ? ds_cstr_ro(text) : "");
}

struct show_ctx {
    struct ds ds;
    struct json *json;          /* NULL: text. */
};

static void
show_port(struct netdev_vhost *dev, void *ctx_)
{
    struct show_ctx *ctx = ctx_;

    netdev_vhost_stats_show(dev, &ctx->ds, ctx->json);
}

static void
clear_port(struct netdev_vhost *dev, void *aux OVS_UNUSED)
{
    netdev_vhost_stats_clear(dev);
}

/* Runs 'cb' with 'aux' on the port named argv[1], or on every port if
 * there is no argument.  Returns false, having replied an error, if there
 * is no such port. */
static bool
run_on_ports(struct unixctl_conn *conn, int argc, const char *argv[],
             void (*cb)(struct netdev_vhost *, void *), void *aux)
{
    if (argc > 1) {
        struct netdev *netdev = netdev_vhost_lookup(argv[1]);

        if (!netdev) {
            unixctl_command_reply_error(conn, "no such netdev-vhost port");
            return false;
        }
        cb(netdev_vhost_cast(netdev), aux);
        netdev_close(netdev);
    } else {
        netdev_vhost_for_each(cb, aux);
    }
    return true;
}

static void
netdev_vhost_unixctl_show(struct unixctl_conn *conn, int argc,
                          const char *argv[], void *aux OVS_UNUSED)
{
    struct show_ctx ctx = { DS_EMPTY_INITIALIZER,
                            want_json(conn) ? json_object_create() : NULL };

    if (run_on_ports(conn, argc, argv, show_port, &ctx)) {
        reply(conn, &ctx.ds, ctx.json);
    } else {
        json_destroy(ctx.json);
    }
    ds_destroy(&ctx.ds);
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

    struct json *json = want_json(conn) ? json_object_create() : NULL;

    netdev_vhost_stats_format(netdev, &ds, json);
    netdev_close(netdev);
    reply(conn, &ds, json);
    ds_destroy(&ds);
}

static void
netdev_vhost_unixctl_clear_stats(struct unixctl_conn *conn, int argc,
                                 const char *argv[], void *aux OVS_UNUSED)
{
    if (run_on_ports(conn, argc, argv, clear_port, NULL)) {
        unixctl_command_reply(conn, "");
    }
}

void
netdev_vhost_unixctl_register(void)
{
    /* What operators see: stock's coverage counter name for contention on
     * a vhost port's tx queue also counts ours. */
    netdev_vhost_txq_coverage_init();
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
