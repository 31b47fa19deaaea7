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

/* The port registry of the netdev-vhost class (see
 * lib/netdev-vhost-registry.h).  It depends on no other file of the class,
 * so that the files that find ports (the rte_vhost callbacks, the operator
 * commands, the option defaults) do not call back into the class file
 * that calls them.
 *
 * For the same reason this file also holds the two definitions every file
 * of the class links to: the log module "netdev_vhost" and the pending
 * coverage counts (lib/netdev-vhost-private.h). */

#include <config.h>

#include "netdev-vhost-registry.h"
#include "netdev-vhost-private.h"

#include <string.h>

#include "netdev.h"
#include "openvswitch/list.h"
#include "openvswitch/vlog.h"
#include "util.h"

/* Every file of the class logs as this module (lib/netdev-vhost-private.h),
 * whichever file its function lives in. */
VLOG_DEFINE_THIS_MODULE(netdev_vhost);

/* Coverage events counted outside the main thread, moved to OVS's
 * coverage counters by the class's run function (lib/netdev-vhost.c).
 * OVS keeps coverage counts per thread and adds a thread's counts up when
 * that thread polls (at most once a second): a count made in DPDK's
 * vhost-events thread shows only at its next poll a second later (the next
 * guest leaving), or never.  Events that may happen there (a guest leaving
 * with staged packets, the ring guard) are counted here, by any thread
 * (netdev_vhost_cov_pending()).  Static storage: starts at zero. */
atomic_uint netdev_vhost_cov_counts[NETDEV_VHOST_N_COV];

/* All netdev-vhost ports, in the order they were added. */
struct ovs_mutex netdev_vhost_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list vhost_list OVS_GUARDED_BY(netdev_vhost_mutex)
    = OVS_LIST_INITIALIZER(&vhost_list);

void
netdev_vhost_registry_add(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex)
{
    ovs_mutex_lock(&netdev_vhost_mutex);
    ovs_list_push_back(&vhost_list, &dev->list_node);
    ovs_mutex_unlock(&netdev_vhost_mutex);
}

void
netdev_vhost_registry_remove(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex)
{
    ovs_mutex_lock(&netdev_vhost_mutex);
    ovs_list_remove(&dev->list_node);
    ovs_mutex_unlock(&netdev_vhost_mutex);
}

char *
netdev_vhost_registry_set_ifname(struct netdev_vhost *dev, char *id)
    OVS_EXCLUDED(netdev_vhost_mutex)
{
    ovs_mutex_lock(&netdev_vhost_mutex);
    ovs_mutex_lock(&dev->mutex);
    char *old = dev->registered_id;
    dev->registered_id = id;
    ovs_mutex_unlock(&dev->mutex);
    ovs_mutex_unlock(&netdev_vhost_mutex);
    return old;
}

struct netdev_vhost *
netdev_vhost_find_by_ifname(const char *ifname)
    OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (dev->registered_id && !strcmp(dev->registered_id, ifname)) {
            return dev;
        }
    }
    return NULL;
}

struct netdev_vhost *
netdev_vhost_find_by_name(const char *name) OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (!strcmp(netdev_get_name(&dev->up), name)) {
            return dev;
        }
    }
    return NULL;
}

struct netdev_vhost *
netdev_vhost_find_by_vid(int vid) OVS_REQUIRES(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (netdev_vhost_get_vid(dev) == vid) {
            return dev;
        }
    }
    return NULL;
}

/* Whether 'netdev' is one of our ports: every netdev of our classes is in
 * the list from its construction until its destruction, and OVS's netdev
 * layer (which the main thread runs) hands out no netdev outside that
 * span. */
static bool
is_registered(const struct netdev *netdev) OVS_EXCLUDED(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;
    bool found = false;

    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (&dev->up == netdev) {
            found = true;
            break;
        }
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);
    return found;
}

struct netdev *
netdev_vhost_lookup(const char *name) OVS_EXCLUDED(netdev_vhost_mutex)
{
    struct netdev *netdev = netdev_from_name(name);

    if (netdev && !is_registered(netdev)) {
        netdev_close(netdev);
        return NULL;
    }
    return netdev;
}

void
netdev_vhost_for_each(void (*cb)(struct netdev_vhost *, void *aux),
                      void *aux)
    OVS_EXCLUDED(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;
    struct netdev_vhost **devs = NULL;
    size_t n = 0, allocated = 0;

    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        if (n >= allocated) {
            devs = x2nrealloc(devs, &allocated, sizeof *devs);
        }
        devs[n++] = dev;
        netdev_ref(&dev->up);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);

    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            if (strcmp(netdev_get_name(&devs[j]->up),
                       netdev_get_name(&devs[i]->up)) < 0) {
                struct netdev_vhost *t = devs[i];
                devs[i] = devs[j];
                devs[j] = t;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        cb(devs[i], aux);
        netdev_close(&devs[i]->up);
    }
    free(devs);
}

void
netdev_vhost_for_each_locked(void (*cb)(struct netdev_vhost *, void *aux),
                             void *aux)
    OVS_EXCLUDED(netdev_vhost_mutex)
{
    struct netdev_vhost *dev;

    ovs_mutex_lock(&netdev_vhost_mutex);
    LIST_FOR_EACH (dev, list_node, &vhost_list) {
        cb(dev, aux);
    }
    ovs_mutex_unlock(&netdev_vhost_mutex);
}
