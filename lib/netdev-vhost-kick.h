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

#ifndef NETDEV_VHOST_KICK_H
#define NETDEV_VHOST_KICK_H 1

/* Deferred kicks: the glue between DPDK's kick offload (the guest_notify
 * device op and rte_vhost_notify_guest(), DPDK 23.11 and later) and the
 * pure kick moderation of lib/vhost-kick.h.  In auto mode every burst goes
 * into the guest's used ring at once; when DPDK decides that the guest
 * wants a kick, guest_notify() hands it to vhost-kick, which lets it go at
 * once (first kick after a quiet interval) or holds it, and a PMD thread
 * delivers a held kick at the end of the interval.
 *
 * Threads: guest_notify()/guest_notified() run on whichever thread is
 * inside rte_vhost_enqueue_burst() or rte_vhost_notify_guest(); the
 * delivery runs on PMD threads (netdev_vhost_send(), rxq_recv) under the
 * queue's tx_lock, and once in the vhost-events thread when the device is
 * destroyed.  See DESIGN-NOTES.md "Deferred kicks" for the rules (DPDK
 * 24.11 lib/vhost/vhost.h vhost_vring_inject_irq(), lib/vhost/vhost.c
 * rte_vhost_notify_guest()).
 *
 * With DPDK 22.11 (no NETDEV_VHOST_DEFERRED_KICKS) everything here
 * compiles to nothing and auto mode stages packets instead. */

#include <stdbool.h>
#include <stdint.h>

#include "vhost-kick.h"
#include "vhost-moderation.h"

struct netdev_vhost;
struct vhost_txp;

/* Per tx queue (the guest's rx vring 2q) kick state.  Every member is
 * protected by the queue pair's tx_lock. */
struct netdev_vhost_kickq {
    bool defer;                 /* Auto mode in a deferred-kicks build:
                                 * guest_notify() takes kicks over. */
    bool iommu;                 /* The connection negotiated
                                 * VIRTIO_F_IOMMU_PLATFORM: no kick is taken
                                 * over (netdev_vhost_guest_notify()). */
    struct vhost_kick kick;     /* Moderation state, the point of the
                                 * last kick and the counters. */
    uint64_t not_delivered;     /* rte_vhost_notify_guest() calls that
                                 * wrote no eventfd (virtqueue not
                                 * accessible); retried on the next loop. */
    uint64_t teardown_delivered;/* Pending kicks delivered when the device
                                 * was destroyed (in kick.stats.delivered
                                 * too). */
    bool adaptive;              /* tx-flush-mode=adaptive: 'mod' sets the
                                 * interval of 'kick' (deferred kicks) or
                                 * of the queue's staging (both builds). */
    struct vhost_mod mod;       /* Adaptive moderation state and counters
                                 * (lib/vhost-moderation.h); kept across
                                 * connections. */
};

#if NETDEV_VHOST_DEFERRED_KICKS
#define NETDEV_VHOST_HAS_DEFERRED_KICKS true
#else
#define NETDEV_VHOST_HAS_DEFERRED_KICKS false
#endif

/* Name of the mechanism auto mode uses in this build: "deferred kicks"
 * (DPDK 23.11+) or "staged packets" (DPDK 22.11). */
const char *netdev_vhost_kick_mechanism(void);

/* Initialises 'kq' for 'interval_us' (1..1000000), its adaptive
 * moderation between the default bounds, off.  Main thread, at port
 * construction, before any PMD thread may see the queue. */
void netdev_vhost_kickq_init(struct netdev_vhost_kickq *kq,
                             uint32_t interval_us);

/* Applies the tx policy of a queue: 'defer' (auto or adaptive mode with
 * deferred kicks), 'adaptive' (tx-flush-mode=adaptive, with bounds
 * 'min_us' 0..1000000 and 'max_us' min_us..1000000, at least 1) and the
 * fixed 'interval_us' (1..1000000) of the other modes.  Returns the
 * interval now in force, microseconds: 'interval_us', or in adaptive mode
 * the moderation's current one (entering adaptive mode starts at the
 * floor), for the staging policy.  Caller holds the queue's tx_lock.  A
 * pending kick stays pending and is delivered at its deadline whatever
 * the new mode.  When deferral turns on or off, the point of the last kick
 * is forgotten (vhost_kick_set_deferring()). */
uint32_t netdev_vhost_kickq_configure(struct netdev_vhost_kickq *kq,
                                      bool defer, bool adaptive,
                                      uint32_t interval_us, uint32_t min_us,
                                      uint32_t max_us);

/* Adaptive mode: records a burst of 'n_packets' that queue 'kq' sent at
 * 'now_us' (time_usec()), 'wanted' if the guest would have been woken for
 * it at the floor (see vhost_mod_burst()), and applies an interval change
 * to the kick deferral and to 'txp''s staging deadline.  PMD thread (tx
 * path), under the queue's tx_lock.  Both builds. */
void netdev_vhost_kickq_moderate(struct netdev_vhost_kickq *kq,
                                 struct vhost_txp *txp, uint32_t n_packets,
                                 bool wanted, long long int now_us);

/* Brackets rte_vhost_enqueue_burst() on queue pair 'q' of 'dev' (device
 * id 'vid'): guest_notify() answers only for the enqueue of the calling
 * thread that is between these two.  PMD or main thread, under the
 * queue's tx_lock. */
void netdev_vhost_kick_enqueue_begin(struct netdev_vhost *dev, int q,
                                     int vid);
void netdev_vhost_kick_enqueue_end(void);

/* Delivers the pending kick of queue pair 'q' of 'dev' if it is due and
 * the guest's ring still wants it (else it is postponed to the next call).
 * 'vid' is the device id read under the queue's tx_lock, which the caller
 * holds; 'now_us' a time_usec() reading.  PMD threads. */
void netdev_vhost_kick_run_locked(struct netdev_vhost *dev, int q, int vid,
                                  long long int now_us);

/* Runs netdev_vhost_kick_run_locked() for every queue of 'dev' with a
 * pending kick, skipping queues whose tx_lock another thread holds (that
 * thread runs it).  PMD threads, from rxq_recv of any rxq of the port, so
 * that a held kick goes out also when no more traffic comes and whichever
 * PMD polls the port. */
void netdev_vhost_kick_run(struct netdev_vhost *dev);

/* The device 'vid' of 'dev' is being destroyed (destroy_device(), vhost-
 * events thread, after the id was withdrawn and with queue pair 'q''s
 * tx_lock held): delivers its held kick, if any, while the virtqueue and
 * its callfd still exist, because DPDK's irq_pending latch survives
 * GET_VRING_BASE and would silence the queue after a driver restart.
 * Returns true if it wrote a kick (the caller adds it to the connection's
 * kick count, which it read before). */
bool netdev_vhost_kick_teardown_locked(struct netdev_vhost *dev, int q,
                                       int vid);

/* A new device was created on 'dev' (new_device(), before the id is
 * published): the new virtqueues start with their latch clear, so the first
 * kick of the connection goes out at once.  Caller holds the tx_lock. */
void netdev_vhost_kickq_reset(struct netdev_vhost_kickq *kq);

/* Tells 'kq' whether the new connection's guest negotiated
 * VIRTIO_F_IOMMU_PLATFORM ('features' are the negotiated virtio features).
 * With a vIOMMU no kick is taken over: rte_vhost_notify_guest() does
 * nothing while the virtqueue is not accessible (an IOTLB miss after an
 * IOTLB_INVALIDATE of the ring) and never translates the ring again
 * itself (DPDK 24.11 lib/vhost/vhost.c rte_vhost_notify_guest(),
 * vhost.h vhost_vring_inject_irq()), so a held kick could wait without
 * bound, and DPDK's irq_pending latch, left set at teardown, would silence
 * the queue after a driver restart.  Every kick of such a guest goes out
 * at once, written by the library as stock.  new_device(), vhost-events
 * thread, before the id is published, with the queue's tx_lock held.
 * Returns true if the flag is set. */
bool netdev_vhost_kickq_set_features(struct netdev_vhost_kickq *kq,
                                     uint64_t features);

/* rte_vhost_device_ops members (DPDK 23.07+ guest_notify, guest_notified):
 * see netdev-vhost-kick.c. */
bool netdev_vhost_guest_notify(int vid, uint16_t queue_id);
void netdev_vhost_guest_notified(int vid);

#endif /* netdev-vhost-kick.h */
