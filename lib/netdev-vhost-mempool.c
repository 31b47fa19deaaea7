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

/* Mempools of dp_packets shared by netdev-vhost ports with the same NUMA
 * node and MTU (see lib/netdev-vhost-mempool.h).  Main thread: called by
 * the class's reconfigure and destruct (lib/netdev-vhost.c). */

#include <config.h>

#include "netdev-vhost-mempool.h"

#include <inttypes.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "dp-packet.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "util.h"

/* Logs as the class does (module "netdev_vhost", defined in
 * lib/netdev-vhost-registry.c). */
extern struct vlog_module *VLM_netdev_vhost;
#define this_module (*VLM_netdev_vhost)

#define NETDEV_VHOST_N_MBUF (4096 * 4)
#define NETDEV_VHOST_MBUF_ALIGN 1024

static struct ovs_mutex mp_mutex = OVS_MUTEX_INITIALIZER;
static struct ovs_list mp_list OVS_GUARDED_BY(mp_mutex)
    = OVS_LIST_INITIALIZER(&mp_list);

static void
mbuf_init_dp_packet(struct rte_mempool *mp OVS_UNUSED, void *arg OVS_UNUSED,
                    void *obj, unsigned int idx OVS_UNUSED)
{
    dp_packet_init_dpdk((struct dp_packet *) obj);
}

struct netdev_vhost_mempool *
netdev_vhost_mempool_get(int numa_id, int mtu)
{
    struct netdev_vhost_mempool *vmp;
    char name[RTE_MEMPOOL_NAMESIZE];

    ovs_mutex_lock(&mp_mutex);
    LIST_FOR_EACH (vmp, node, &mp_list) {
        if (vmp->numa_id == numa_id && vmp->mtu == mtu) {
            vmp->refcount++;
            ovs_mutex_unlock(&mp_mutex);
            return vmp;
        }
    }

    uint32_t buf_size = ROUND_UP(MTU_TO_MAX_FRAME_LEN(mtu),
                                 NETDEV_VHOST_MBUF_ALIGN)
                        + RTE_PKTMBUF_HEADROOM;
    uint16_t priv_size = ROUND_UP(sizeof(struct dp_packet)
                                  - sizeof(struct rte_mbuf),
                                  RTE_MBUF_PRIV_ALIGN);
    snprintf(name, sizeof name, "ovs_vhost_%d_%d", numa_id, mtu);
    struct rte_mempool *mp = rte_pktmbuf_pool_create(
        name, NETDEV_VHOST_N_MBUF, RTE_MEMPOOL_CACHE_MAX_SIZE, priv_size,
        buf_size, numa_id);
    if (!mp) {
        VLOG_ERR("Failed to create mempool \"%s\" with %d mbufs of %"PRIu32
                 " bytes on numa %d: %s", name, NETDEV_VHOST_N_MBUF,
                 buf_size, numa_id, rte_strerror(rte_errno));
        ovs_mutex_unlock(&mp_mutex);
        return NULL;
    }
    rte_mempool_obj_iter(mp, mbuf_init_dp_packet, NULL);
    VLOG_INFO("Created mempool \"%s\" with %d mbufs for MTU %d on numa %d",
              name, NETDEV_VHOST_N_MBUF, mtu, numa_id);

    vmp = xzalloc(sizeof *vmp);
    vmp->mp = mp;
    vmp->numa_id = numa_id;
    vmp->mtu = mtu;
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
     * ports' queues otherwise.  Unused pools are retried on the next put. */
    struct netdev_vhost_mempool *p;
    LIST_FOR_EACH_SAFE (p, node, &mp_list) {
        if (!p->refcount && rte_mempool_full(p->mp)) {
            ovs_list_remove(&p->node);
            rte_mempool_free(p->mp);
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
