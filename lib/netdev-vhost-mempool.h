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

/* Mempools of dp_packets for netdev-vhost ports, sized and shared as stock
 * OVS sizes and shares those of its own DPDK ports (lib/netdev-dpdk.c of
 * OVS 3.1 and 3.5, dpdk_mp_get(), dpdk_calculate_mbufs(), dpdk_mp_create(),
 * identical in both):
 *
 *   - shared memory (the default): one pool per NUMA node and mbuf size,
 *     shared by the ports whose MTU rounds up to that size, or to the size
 *     of the smallest fitting other_config:shared-mempool-config entry;
 *     MAX_NB_MBUF (262144) mbufs for a size that carries a 1500-byte MTU,
 *     else MIN_NB_MBUF (16384);
 *   - other_config:per-port-memory=true: one pool per port, of
 *     n_qp * 2048 (rx) + n_qp * 2048 (tx) + n_qp * 32 + MIN_NB_MBUF mbufs
 *     for a guest with n_qp queue pairs;
 *   - when DPDK has not the memory (ENOMEM), the count is halved until the
 *     pool fits or would fall below MIN_NB_MBUF.
 *
 * Pools are reference counted.  No netdev knowledge.  The main thread gets
 * and puts them (reconfigure, destruct); PMD threads allocate from 'mp'
 * directly. */

#include <stdbool.h>

#include <rte_ether.h>

#include "openvswitch/list.h"

struct rte_mempool;
struct smap;

/* Frame sizes of an MTU, as stock netdev-dpdk: with and without room for
 * two VLAN tags. */
#define ETHER_HDR_MAX_LEN (RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN \
                           + 2 * RTE_VLAN_HLEN)
#define MTU_TO_FRAME_LEN(MTU) ((MTU) + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN)
#define MTU_TO_MAX_FRAME_LEN(MTU) ((MTU) + ETHER_HDR_MAX_LEN)
#define FRAME_LEN_TO_MTU(LEN) ((LEN) - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN)

/* Stock's bounds of a pool's size (lib/netdev-dpdk.c, OVS 3.1 and 3.5). */
#define NETDEV_VHOST_MAX_NB_MBUF (4096 * 64)
#define NETDEV_VHOST_MIN_NB_MBUF (4096 * 4)

struct netdev_vhost_mempool {
    struct ovs_list node;       /* In the list of all pools, 'mp_mutex'. */
    struct rte_mempool *mp;     /* Read by PMD threads. */
    int numa_id;
    int mtu;                    /* The MTU its mbuf size was made for:
                                 * FRAME_LEN_TO_MTU() of the data room. */
    unsigned int n_mbufs;       /* Its size, after any fallback. */
    char *port;                 /* Per-port pool: the port's name (malloc'd);
                                 * NULL for a shared pool. */
    int n_qp;                   /* Per-port pool: the queue pairs it was
                                 * sized for; 0 for a shared pool. */
    int refcount;               /* Ports using it, 'mp_mutex'. */
};

/* Reads other_config:per-port-memory (boolean, default false) and
 * other_config:shared-mempool-config ("MTU[:NUMA],..." as stock: a bad
 * entry is logged and then no entry is used) of the Open_vSwitch table's
 * 'ovs_other_config', once, as stock OVS reads them at DPDK initialization
 * (netdev_dpdk_register(): changing them takes a restart, as in stock).
 * Main thread, before the first netdev_vhost_mempool_get(). */
void netdev_vhost_mempool_read_config(const struct smap *ovs_other_config);

/* True if other_config:per-port-memory was true at DPDK initialization.
 * Any thread. */
bool netdev_vhost_mempool_per_port(void);

/* Returns a reference to the mempool for port 'port' (its name) with MTU
 * 'mtu' (bytes, 68 to 9702) on 'numa_id' for a guest with 'n_qp' queue
 * pairs (1 to 128), the rules above deciding which pool that is: an
 * existing one that fits (shared memory: same NUMA node and mbuf size;
 * per-port memory: the port's own pool of the same size), else a new one,
 * each mbuf initialised as a dp_packet.  Returns NULL, with rte_errno set,
 * and logs if DPDK cannot create it even at the smallest size.  Main
 * thread; release with netdev_vhost_mempool_put(). */
struct netdev_vhost_mempool *netdev_vhost_mempool_get(const char *port,
                                                      int numa_id, int mtu,
                                                      int n_qp);

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
