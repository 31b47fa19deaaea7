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

#ifndef NETDEV_VHOST_MEMPOOL_H
#define NETDEV_VHOST_MEMPOOL_H 1

/* Mempools of dp_packets for netdev-vhost ports: one DPDK mempool per NUMA
 * node and MTU, shared by the ports that need it and reference counted.
 * No netdev knowledge.  The main thread gets and puts them (reconfigure,
 * destruct); PMD threads allocate from 'mp' directly. */

#include <rte_ether.h>

#include "openvswitch/list.h"

struct rte_mempool;

/* Frame sizes of an MTU, as stock netdev-dpdk: with and without room for
 * two VLAN tags. */
#define ETHER_HDR_MAX_LEN (RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN \
                           + 2 * RTE_VLAN_HLEN)
#define MTU_TO_FRAME_LEN(MTU) ((MTU) + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN)
#define MTU_TO_MAX_FRAME_LEN(MTU) ((MTU) + ETHER_HDR_MAX_LEN)

struct netdev_vhost_mempool {
    struct ovs_list node;       /* In the list of all pools, 'mp_mutex'. */
    struct rte_mempool *mp;     /* Read by PMD threads. */
    int numa_id;
    int mtu;
    int refcount;               /* Ports using it, 'mp_mutex'. */
};

/* Returns a reference to the mempool for 'numa_id' and 'mtu' (bytes, 68
 * to 9702), creating it (NETDEV_VHOST_N_MBUF mbufs, each initialised as a
 * dp_packet) if none exists.  Returns NULL and logs if DPDK cannot create
 * it.  Main thread; release with netdev_vhost_mempool_put(). */
struct netdev_vhost_mempool *netdev_vhost_mempool_get(int numa_id, int mtu);

/* Releases a reference taken by netdev_vhost_mempool_get(); NULL is
 * ignored.  Frees every unused pool whose mbufs are all back (packets may
 * still sit in other ports' queues; unused pools are retried on the next
 * put).  Main thread. */
void netdev_vhost_mempool_put(struct netdev_vhost_mempool *);

/* Returns the number of mbufs of 'vmp' currently allocated (in use), 0 for
 * NULL, for the leak checks of the tests.  Any thread. */
unsigned int netdev_vhost_mempool_in_use(const struct netdev_vhost_mempool *);

/* Returns how many more free mbufs 'vmp' holds than it has (its common
 * pool plus every lcore's cache, beyond its size), 0 for NULL: mbufs freed
 * more often than they were allocated.  Always 0 unless something freed
 * an mbuf twice, which corrupts the pool (one mbuf is then handed out to
 * two users).  rte_mempool_in_use_count() cannot tell: DPDK clamps the
 * free count at the pool's size (22.11 and 24.11 rte_mempool_avail_count()).
 * For the checks of the tests; the caches are read racily, as DPDK reads
 * them, so read it when the port is idle.  Any thread. */
unsigned int netdev_vhost_mempool_overfreed(
    const struct netdev_vhost_mempool *);

#endif /* netdev-vhost-mempool.h */
