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

#ifndef NETDEV_VHOST_GUARD_H
#define NETDEV_VHOST_GUARD_H 1

/* The ring guard of netdev-vhost (DESIGN-NOTES.md section 4; seed 001):
 * guest memory is read only while the vrings are valid.
 *
 * A PMD thread reads the driver's notification suppression fields in guest
 * memory.  vhost-user messages (SET_MEM_TABLE, SET_VRING_ADDR, IOTLB
 * updates, GET_VRING_BASE, ...) may unmap or move that memory at any time.
 * Before the library handles any message, the vhost-events thread clears
 * 'rings_valid' (netdev_vhost_guard_close()) and waits until no PMD thread
 * is between its store to 'reading' and its load of 'rings_valid'
 * (netdev_vhost_guard_enter(); a Dekker handshake whose PMD side costs a
 * compiler barrier and whose message side a membarrier(2), see
 * netdev_vhost_light_fence()).  After the message it
 * reloads the ring pointers and sets 'rings_valid' again
 * (netdev_vhost_guard_open()).  The PMD half is inline here; the other
 * half is in lib/netdev-vhost-guard.c, called by the message hooks and
 * device callbacks of lib/netdev-vhost-events.c. */

#include <stdbool.h>

#include "ovs-atomic.h"
#include "util.h"

struct netdev_vhost;

/* The fences of the Dekker handshakes (the ring guard here; 'rx_busy'
 * against destroy_device()) are asymmetric: the PMD side, run on every
 * burst or poll, needs only a compiler barrier, and the rare side (a
 * vhost-user message, a device teardown) runs membarrier(2)
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED, which makes every running thread of
 * the process execute a full memory barrier before it returns (Linux 4.14
 * and later; the scheme of liburcu's urcu-memb flavour).  Where the kernel
 * does not offer it, both sides use a sequentially consistent fence, as
 * before.  'netdev_vhost_membarrier_ok' is set once by
 * netdev_vhost_fence_init() before any PMD thread exists, then only
 * read. */
extern bool netdev_vhost_membarrier_ok;

/* Registers the process for expedited private membarriers.  Main thread,
 * once, at class registration (before PMD threads are created).  Logs
 * which fence the PMD threads use. */
void netdev_vhost_fence_init(void);

/* PMD side of a handshake: orders the caller's store of its "inside" flag
 * before its loads of the state another thread may withdraw.  PMD
 * threads. */
static inline void
netdev_vhost_light_fence(void)
{
    if (OVS_LIKELY(netdev_vhost_membarrier_ok)) {
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_thread_fence(memory_order_seq_cst);
    }
}

/* Rare side of a handshake: orders the caller's withdrawal before its
 * loads of the PMD threads' "inside" flags, against every light fence.
 * Any thread but a PMD thread (a system call when membarrier is used). */
void netdev_vhost_heavy_fence(void);

/* PMD side: announces a read of guest memory guarded by '*reading' (the
 * queue's flag) and returns whether '*rings_valid' (the port's) allows it.
 * The caller reads the rings only if true, and calls
 * netdev_vhost_guard_exit() in either case.  PMD thread, with the queue's
 * tx_lock held. */
static inline bool
netdev_vhost_guard_enter(atomic_bool *reading, atomic_bool *rings_valid)
{
    bool valid;

    atomic_store_explicit(reading, true, memory_order_relaxed);
    netdev_vhost_light_fence();
    atomic_read_explicit(rings_valid, &valid, memory_order_acquire);
    return valid;
}

/* PMD side: ends the read that netdev_vhost_guard_enter() announced. */
static inline void
netdev_vhost_guard_exit(atomic_bool *reading)
{
    atomic_store_explicit(reading, false, memory_order_release);
}

/* Waits until '*flag' (a PMD thread's "inside" flag, stored before it
 * reads the state the caller has just withdrawn, with a full fence between
 * the two) is false: first spinning, then yielding the CPU.  Returns 0 if
 * it did not wait, 1 if it waited only spinning, 2 if it had to yield.
 * Any thread but a PMD thread. */
int netdev_vhost_wait_while_set(atomic_bool *flag);

/* Message side: marks the rings of 'dev' invalid and waits until no PMD
 * thread reads them any more; counts the waits (coverage counters
 * netdev_vhost_ring_guard_wait and ..._long_wait).  vhost-events thread,
 * vid_map_mutex held. */
void netdev_vhost_guard_close(struct netdev_vhost *dev);

/* Message side: reloads the negotiated features and the tx vrings of
 * device 'vid' into 'dev' and marks them valid again.  vhost-events
 * thread, vid_map_mutex held, 'vid' the port's current device. */
void netdev_vhost_guard_open(struct netdev_vhost *dev, int vid);

#endif /* netdev-vhost-guard.h */
