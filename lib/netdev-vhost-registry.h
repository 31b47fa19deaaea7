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

#ifndef NETDEV_VHOST_REGISTRY_H
#define NETDEV_VHOST_REGISTRY_H 1

/* The port registry of the netdev-vhost class (lib/netdev-vhost-registry.c):
 * the list of all ports, its mutex, and the ways to find a port by its
 * name, its socket path or its rte_vhost device id.  The class adds a port
 * when it constructs it and removes it when it destructs it
 * (lib/netdev-vhost.c); the rte_vhost callbacks (lib/netdev-vhost-events.c),
 * the operator commands (lib/netdev-vhost-unixctl.c) and the option
 * defaults (lib/netdev-vhost-options.c) find ports here.  The registry
 * calls no other file of the class.  Nothing here is for use outside lib/.
 *
 * netdev_vhost_mutex is the outermost lock of the class (the lock order is
 * in lib/netdev-vhost-private.h; struct netdev_vhost's 'mutex' is declared
 * OVS_ACQ_AFTER it). */

#include <stdbool.h>

#include "ovs-thread.h"

struct netdev;
struct netdev_vhost;

/* Protects the list of all ports and each port's 'list_node' and, with
 * dev->mutex, its 'registered_id'.  Taken by the main thread and by DPDK's
 * vhost-events thread (the rte_vhost callbacks), never by PMD threads. */
extern struct ovs_mutex netdev_vhost_mutex;

/* Adds 'dev', constructed far enough to be found by name, to the list.
 * Main thread, netdev_vhost_mutex not held. */
void netdev_vhost_registry_add(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex);

/* Removes 'dev' from the list: no thread finds it afterwards.  Main
 * thread, netdev_vhost_mutex not held. */
void netdev_vhost_registry_remove(struct netdev_vhost *dev)
    OVS_EXCLUDED(netdev_vhost_mutex);

/* Sets the socket path by which netdev_vhost_find_by_ifname() finds 'dev'
 * (its 'registered_id') to 'id', a malloc'd string that 'dev' takes, or
 * NULL (not findable by path), and returns the old value for the caller to
 * free.  Takes netdev_vhost_mutex and then dev->mutex: the vhost-events
 * thread reads the path under the first, the main thread under the second.
 * Main thread, neither lock held. */
char *netdev_vhost_registry_set_ifname(struct netdev_vhost *dev, char *id)
    OVS_EXCLUDED(netdev_vhost_mutex);

/* Returns the port whose registered socket path is 'ifname', or NULL.
 * Any thread, netdev_vhost_mutex held. */
struct netdev_vhost *netdev_vhost_find_by_ifname(const char *ifname)
    OVS_REQUIRES(netdev_vhost_mutex);

/* Returns the port named 'name', or NULL.  Any thread, netdev_vhost_mutex
 * held. */
struct netdev_vhost *netdev_vhost_find_by_name(const char *name)
    OVS_REQUIRES(netdev_vhost_mutex);

/* Returns the port whose running device id is 'vid', or NULL.  Any
 * thread, netdev_vhost_mutex held. */
struct netdev_vhost *netdev_vhost_find_by_vid(int vid)
    OVS_REQUIRES(netdev_vhost_mutex);

/* Returns the netdev-vhost port named 'name' with a reference the caller
 * must release with netdev_close(), or NULL if there is no such port or it
 * is not of our classes (a port of another class by that name: NULL, its
 * reference released here).  Main thread, netdev_vhost_mutex not held. */
struct netdev *netdev_vhost_lookup(const char *name)
    OVS_EXCLUDED(netdev_vhost_mutex);

/* Calls 'cb' with every netdev-vhost port in name order, each held by a
 * reference for the duration of the call, without netdev_vhost_mutex held
 * ('cb' may take any lock of the class).  Main thread, no lock held. */
void netdev_vhost_for_each(void (*cb)(struct netdev_vhost *, void *aux),
                           void *aux)
    OVS_EXCLUDED(netdev_vhost_mutex);

/* Calls 'cb' with every netdev-vhost port in the order the ports were
 * added, with netdev_vhost_mutex held throughout: 'cb' may take dev->mutex
 * and the locks below it, never netdev_vhost_mutex.  No port is added or
 * removed meanwhile.  Main thread, netdev_vhost_mutex not held. */
void netdev_vhost_for_each_locked(void (*cb)(struct netdev_vhost *,
                                             void *aux),
                                  void *aux)
    OVS_EXCLUDED(netdev_vhost_mutex);

#endif /* netdev-vhost-registry.h */
