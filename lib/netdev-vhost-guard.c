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

/* The ring guard's side outside the PMD threads (see
 * lib/netdev-vhost-guard.h for the protocol): withdraw the vring pointers
 * of a port and wait for the PMD threads, then load them again.  Runs in
 * DPDK's vhost-events thread (the message hooks and device callbacks of
 * lib/netdev-vhost-events.c) and in the main thread. */

#include <config.h>

#include "netdev-vhost-guard.h"
#include "netdev-vhost-private.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_pause.h>
#include <rte_vhost.h>

#include "openvswitch/vlog.h"
#include "util.h"

#define this_module (*VLM_netdev_vhost)

/* Spins with rte_pause() this many times before it yields the CPU while it
 * waits for a PMD thread to leave a section (the ring question, a dequeue):
 * a few microseconds, far longer than the section itself takes.  A PMD
 * thread preempted inside must get the CPU back, which matters when it
 * shares a core with the waiting thread. */
#define WAIT_SPINS 4096

bool netdev_vhost_membarrier_ok;

static int
membarrier(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0, 0);
}

void
netdev_vhost_fence_init(void)
{
    int cmds = membarrier(MEMBARRIER_CMD_QUERY);

    netdev_vhost_membarrier_ok =
        (cmds >= 0 && cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED
         && !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED));
    VLOG_INFO("PMD-side fences: %s",
              netdev_vhost_membarrier_ok
              ? "compiler barriers (membarrier on the control side)"
              : "full fences (no expedited membarrier)");
}

void
netdev_vhost_heavy_fence(void)
{
    if (netdev_vhost_membarrier_ok
        && !membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
        return;
    }
    atomic_thread_fence(memory_order_seq_cst);
}

int
netdev_vhost_wait_while_set(atomic_bool *flag)
{
    int n = 0;

    for (;;) {
        bool set;

        atomic_read_explicit(flag, &set, memory_order_seq_cst);
        if (!set) {
            return !n ? 0 : n <= WAIT_SPINS ? 1 : 2;
        }
        if (++n <= WAIT_SPINS) {
            rte_pause();
        } else {
            sched_yield();
        }
    }
}

void
netdev_vhost_guard_close(struct netdev_vhost *dev)
{
    int waited = 0;

    atomic_store_explicit(&dev->rings_valid, false, memory_order_seq_cst);
    netdev_vhost_heavy_fence();
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        int w = netdev_vhost_wait_while_set(&dev->qps[q].tx.reading);

        waited = MAX(waited, w);
    }
    if (waited) {
        netdev_vhost_cov_pending(NETDEV_VHOST_COV_RING_GUARD_WAIT, 1);
    }
    if (waited > 1) {
        netdev_vhost_cov_pending(NETDEV_VHOST_COV_RING_GUARD_LONG_WAIT, 1);
    }
}

void
netdev_vhost_guard_open(struct netdev_vhost *dev, int vid)
{
    uint16_t n_vrings = rte_vhost_get_vring_num(vid);
    uint64_t features = 0;

    rte_vhost_get_negotiated_features(vid, &features);
    dev->features = features;
    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct rte_vhost_vring *vr = &dev->qps[q].tx.vring;
        int vring = netdev_vhost_tx_vring(q);

        if (vring >= n_vrings || rte_vhost_get_vhost_vring(vid, vring, vr)) {
            memset(vr, 0, sizeof *vr);
        }
    }
    atomic_store_explicit(&dev->rings_valid, true, memory_order_seq_cst);
}
