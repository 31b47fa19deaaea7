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

/* Mempools of dp_packets for netdev-vhost ports, sized as stock OVS sizes
 * its own (see lib/netdev-vhost-mempool.h).  Main thread: called by the
 * class's register, reconfigure and destruct (lib/netdev-vhost.c). */

#include <config.h>

#include "netdev-vhost-mempool.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp-packet.h"
#include "openvswitch/ofp-parse.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "smap.h"
#include "util.h"

/* Logs as the class does (module "netdev_vhost", defined in
 * lib/netdev-vhost-registry.c). */
extern struct vlog_module *VLM_netdev_vhost;
#define this_module (*VLM_netdev_vhost)

/* Stock's buffer alignment and queue sizes (lib/netdev-dpdk.c:
 * NETDEV_DPDK_MBUF_ALIGN; NIC_PORT_DEFAULT_RXQ_SIZE and _TXQ_SIZE, which
 * stock's per-port sizing uses for its vhost ports too). */
#define NETDEV_VHOST_MBUF_ALIGN 1024
#define NETDEV_VHOST_MP_RXQ_SIZE 2048
#define NETDEV_VHOST_MP_TXQ_SIZE 2048

/* As stock: the count can be halved down to the minimum, and every count
 * tried is a multiple of the cache size, as DPDK advises. */
BUILD_ASSERT_DECL(NETDEV_VHOST_MAX_NB_MBUF
                  % ROUND_DOWN_POW2(NETDEV_VHOST_MAX_NB_MBUF
                                    / NETDEV_VHOST_MIN_NB_MBUF) == 0);
BUILD_ASSERT_DECL((NETDEV_VHOST_MAX_NB_MBUF
                   / ROUND_DOWN_POW2(NETDEV_VHOST_MAX_NB_MBUF
                                     / NETDEV_VHOST_MIN_NB_MBUF))
                  % RTE_MEMPOOL_CACHE_MAX_SIZE == 0);

static struct ovs_mutex mp_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list mp_list OVS_GUARDED_BY(mp_mutex)
    = OVS_LIST_INITIALIZER(&mp_list);

/* other_config:per-port-memory and shared-mempool-config, read once at
 * DPDK initialization (netdev_vhost_mempool_read_config()), main thread;
 * 'per_port_memory' is read by any thread afterwards. */
static bool per_port_memory;
struct user_mempool {
    int adj_mtu;                /* FRAME_LEN_TO_MTU(buf_size(MTU)). */
    int numa_id;                /* INT_MAX: every NUMA node. */
};
static struct user_mempool *user_mempools;
static size_t n_user_mempools;

/* Numbers the names of per-port pools ("ovs_vhost_p<N>"), 'mp_mutex'. */
static unsigned int per_port_serial OVS_GUARDED_BY(mp_mutex);

/* The data room of an mbuf for 'mtu', as stock's dpdk_buf_size(): the
 * largest frame with two VLAN tags, rounded up to 1 kB (NIC drivers'
 * granularity), plus the headroom. */
static uint32_t
buf_size(int mtu)
{
    return ROUND_UP(MTU_TO_MAX_FRAME_LEN(mtu), NETDEV_VHOST_MBUF_ALIGN)
           + RTE_PKTMBUF_HEADROOM;
}

bool
netdev_vhost_mempool_per_port(void)
{
    return per_port_memory;
}

void
netdev_vhost_mempool_read_config(const struct smap *ovs_other_config)
{
    const char *cfg = smap_get(ovs_other_config, "shared-mempool-config");

    per_port_memory = smap_get_bool(ovs_other_config, "per-port-memory",
                                    false);
    free(user_mempools);
    user_mempools = NULL;
    n_user_mempools = 0;
    if (cfg) {
        /* Stock's parse_user_mempools_list(): "MTU[:NUMA]" entries; a
         * bad one drops them all. */
        char *copy = xstrdup(cfg), *list = copy, *key, *value;
        bool bad = false;

        while (ofputil_parse_key_value(&list, &key, &value)) {
            int mtu, numa;

            if (!str_to_int(key, 0, &mtu) || mtu < 0) {
                bad = true;
                break;
            }
            if (!str_to_int(value, 0, &numa)) {
                numa = INT_MAX;
            } else if (numa < 0) {
                bad = true;
                break;
            }
            user_mempools = xrealloc(user_mempools, (n_user_mempools + 1)
                                                    * sizeof *user_mempools);
            user_mempools[n_user_mempools].adj_mtu
                = FRAME_LEN_TO_MTU(buf_size(mtu));
            user_mempools[n_user_mempools].numa_id = numa;
            n_user_mempools++;
        }
        free(copy);
        if (bad) {
            /* Stock has logged its warning; say what our ports do. */
            VLOG_WARN("shared-mempool-config \"%s\" is invalid: vhost ports "
                      "use no configured shared mempool either", cfg);
            free(user_mempools);
            user_mempools = NULL;
            n_user_mempools = 0;
        }
    }
    VLOG_INFO("vhost port mempools: %s%s%s", per_port_memory
              ? "per port memory" : "shared memory",
              n_user_mempools && !per_port_memory
              ? ", shared-mempool-config " : "",
              n_user_mempools && !per_port_memory ? cfg : "");
}

/* Stock's dpdk_get_user_adjusted_mtu(): the smallest MTU of a
 * shared-mempool-config entry for 'numa_id' whose mbufs hold 'adj_mtu',
 * else 'adj_mtu'. */
static int
user_adjusted_mtu(int adj_mtu, int numa_id)
{
    int best = INT_MAX;

    for (size_t i = 0; i < n_user_mempools; i++) {
        const struct user_mempool *u = &user_mempools[i];

        if (adj_mtu <= u->adj_mtu && u->adj_mtu < best
            && (u->numa_id == INT_MAX || u->numa_id == numa_id)) {
            best = u->adj_mtu;
        }
    }
    return best == INT_MAX ? adj_mtu : best;
}

/* Stock's dpdk_calculate_mbufs(). */
static unsigned int
calculate_mbufs(int adj_mtu, int n_qp)
{
    if (!per_port_memory) {
        return (adj_mtu >= RTE_ETHER_MTU ? NETDEV_VHOST_MAX_NB_MBUF
                                        : NETDEV_VHOST_MIN_NB_MBUF);
    }
    /* Packets that fill the port's rx queues, that may wait in other
     * ports' tx queues, that PMD threads hold, and a margin. */
    return n_qp * NETDEV_VHOST_MP_RXQ_SIZE + n_qp * NETDEV_VHOST_MP_TXQ_SIZE
           + MIN(RTE_MAX_LCORE, n_qp) * NETDEV_MAX_BURST
           + NETDEV_VHOST_MIN_NB_MBUF;
}

static void
mbuf_init_dp_packet(struct rte_mempool *mp OVS_UNUSED, void *arg OVS_UNUSED,
                    void *obj, unsigned int idx OVS_UNUSED)
{
    dp_packet_init_dpdk((struct dp_packet *) obj);
}

/* Stock's dpdk_mp_create(): 'n_mbufs', then half as many while DPDK has
 * not the memory, down to NETDEV_VHOST_MIN_NB_MBUF.  Returns the pool
 * with its size in '*n_mbufs', or NULL with rte_errno set. */
static struct rte_mempool *
create_pool(const char *name, const char *what, unsigned int *n_mbufs,
            uint32_t room, int numa_id)
{
    uint16_t priv_size = ROUND_UP(sizeof(struct dp_packet)
                                  - sizeof(struct rte_mbuf),
                                  RTE_MBUF_PRIV_ALIGN);
    unsigned int n = *n_mbufs;

    for (;;) {
        struct rte_mempool *mp = rte_pktmbuf_pool_create(
            name, n, RTE_MEMPOOL_CACHE_MAX_SIZE, priv_size, room, numa_id);

        if (mp) {
            rte_mempool_obj_iter(mp, mbuf_init_dp_packet, NULL);
            VLOG_INFO("Created mempool \"%s\" with %u mbufs of %"PRIu32
                      " bytes for %s on numa %d", name, n, room, what,
                      numa_id);
            *n_mbufs = n;
            return mp;
        }
        int err = rte_errno;
        if (err != ENOMEM || n / 2 < NETDEV_VHOST_MIN_NB_MBUF) {
            VLOG_ERR("Failed to create mempool \"%s\" with %u mbufs of %"
                     PRIu32" bytes for %s on numa %d: %s", name, n, room,
                     what, numa_id, rte_strerror(err));
            rte_errno = err;
            return NULL;
        }
        VLOG_INFO("Not enough memory for mempool \"%s\" with %u mbufs for "
                  "%s: trying %u mbufs", name, n, what, n / 2);
        n /= 2;
    }
}

struct netdev_vhost_mempool *
netdev_vhost_mempool_get(const char *port, int numa_id, int mtu, int n_qp)
{
    struct netdev_vhost_mempool *vmp;
    char name[RTE_MEMPOOL_NAMESIZE];
    int adj_mtu = FRAME_LEN_TO_MTU(buf_size(mtu));

    ovs_mutex_lock(&mp_mutex);
    if (!per_port_memory) {
        adj_mtu = user_adjusted_mtu(adj_mtu, numa_id);
    }
    unsigned int n_mbufs = calculate_mbufs(adj_mtu, n_qp);
    LIST_FOR_EACH (vmp, node, &mp_list) {
        bool fits = (per_port_memory
                     ? (vmp->port && !strcmp(vmp->port, port)
                        && vmp->n_qp == n_qp)
                     : !vmp->port);

        if (fits && vmp->numa_id == numa_id && vmp->mtu == adj_mtu) {
            vmp->refcount++;
            ovs_mutex_unlock(&mp_mutex);
            return vmp;
        }
    }

    char *what;
    if (per_port_memory) {
        snprintf(name, sizeof name, "ovs_vhost_p%u", ++per_port_serial);
        what = xasprintf("port %s (MTU %d, %d queue pair%s)", port, mtu,
                         n_qp, n_qp == 1 ? "" : "s");
    } else {
        snprintf(name, sizeof name, "ovs_vhost_%d_%d", numa_id, adj_mtu);
        what = xasprintf("MTU %d", mtu);
    }
    struct rte_mempool *mp = create_pool(name, what, &n_mbufs,
                                         MTU_TO_FRAME_LEN(adj_mtu), numa_id);
    free(what);
    if (!mp) {
        ovs_mutex_unlock(&mp_mutex);
        return NULL;
    }

    vmp = xzalloc(sizeof *vmp);
    vmp->mp = mp;
    vmp->numa_id = numa_id;
    vmp->mtu = adj_mtu;
    vmp->n_mbufs = n_mbufs;
    vmp->port = per_port_memory ? xstrdup(port) : NULL;
    vmp->n_qp = per_port_memory ? n_qp : 0;
    vmp->refcount = 1;
    ovs_list_push_back(&mp_list, &vmp->node);
    ovs_mutex_unlock(&mp_mutex);
    return vmp;
}

void
netdev_vhost_mempool_put(struct netdev_vhost_mempool *vmp)
{
    if (!vmp) {
        return;
    }
    ovs_mutex_lock(&mp_mutex);
    vmp->refcount--;
    /* Free only when every mbuf is back: packets may still sit in other
     * ports' queues otherwise.  Unused pools are retried on the next put,
     * as stock's dpdk_mp_sweep(). */
    struct netdev_vhost_mempool *p;
    LIST_FOR_EACH_SAFE (p, node, &mp_list) {
        if (!p->refcount && rte_mempool_full(p->mp)) {
            VLOG_DBG("Freeing mempool \"%s\"", p->mp->name);
            ovs_list_remove(&p->node);
            rte_mempool_free(p->mp);
            free(p->port);
            free(p);
        }
    }
    ovs_mutex_unlock(&mp_mutex);
}

unsigned int
netdev_vhost_mempool_in_use(const struct netdev_vhost_mempool *vmp)
{
    return vmp ? rte_mempool_in_use_count(vmp->mp) : 0;
}

unsigned int
netdev_vhost_mempool_overfreed(const struct netdev_vhost_mempool *vmp)
{
    if (!vmp) {
        return 0;
    }

    const struct rte_mempool *mp = vmp->mp;
    /* The pool driver's own count (what rte_mempool_ops_get_count()
     * returns; that one is not exported by the shared library of 22.11),
     * then the caches, as rte_mempool_avail_count() adds them, but without
     * its clamp. */
    uint64_t n_free = rte_mempool_get_ops(mp->ops_index)->get_count(mp);

    if (mp->cache_size) {
        for (unsigned int lcore = 0; lcore < RTE_MAX_LCORE; lcore++) {
            n_free += mp->local_cache[lcore].len;
        }
    }
    return n_free > mp->size ? n_free - mp->size : 0;
}
