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
 * inside rte_vhost_enqueue_burst() or rte_vhost_notify_guest(); when a
 * held kick is delivered (on PMD threads, and once in the vhost-events
 * thread when the device is destroyed) is decided by the transmit queue
 * unit, lib/netdev-vhost-txq.c, under the queue's tx_lock.  See
 * DESIGN-NOTES.md "Deferred kicks" for the rules (DPDK 24.11
 * lib/vhost/vhost.h vhost_vring_inject_irq(), lib/vhost/vhost.c
 * rte_vhost_notify_guest()).
 *
 * Kick counting (both builds): DPDK calls guest_notified() on the thread
 * that wrote a kick's eventfd, right after it; the enqueue context that
 * thread set (netdev_vhost_kick_enqueue_begin()) names the queue, so the
 * port counts its kicks without DPDK's per-virtqueue statistics, which
 * are enabled, as in stock OVS, only on client ports.
 *
 * With DPDK 22.11 (no NETDEV_VHOST_DEFERRED_KICKS) only the enqueue
 * context and guest_notified() remain; auto mode stages packets
 * instead. */

#include <stdbool.h>
#include <stdint.h>

#include "netdev-vhost-notify.h"
#include "ovs-atomic.h"
#include "vhost-kick.h"
#include "vhost-moderation.h"

struct netdev_vhost;
struct vhost_txp;

/* Per tx queue (the guest's rx vring 2q) kick state.  Every member is
 * protected by the queue pair's tx_lock, except that the two atomic
 * counters, written only by the holder of that lock, are read by any
 * thread without it (the main thread's statistics). */
struct netdev_vhost_kickq {
    bool defer;                 /* Auto mode in a deferred-kicks build:
                                 * guest_notify() takes kicks over. */
    bool iommu;                 /* The connection negotiated
                                 * VIRTIO_F_IOMMU_PLATFORM: no kick is taken
                                 * over (netdev_vhost_guest_notify()). */
    bool thread;                /* other_config:vhost-kick-thread=true in
                                 * a deferred-kicks build, no vIOMMU:
                                 * every kick DPDK decides in our enqueue,
                                 * and every held kick when it is due, is
                                 * handed to the notification thread
                                 * (lib/netdev-vhost-notify.h). */
    struct vhost_kick kick;     /* Moderation state, the point of the
                                 * last kick and the counters. */
    uint64_t handed_held;       /* Held kicks handed to the notification
                                 * thread when due (in kick.stats.delivered
                                 * too, but written by the thread: in
                                 * nq.written). */
    atomic_uint64_t handed;     /* Every kick handed to the thread. */
    struct netdev_vhost_notifyq nq; /* Hand-off state. */
    uint64_t not_delivered;     /* rte_vhost_notify_guest() calls that
                                 * wrote no eventfd (virtqueue not
                                 * accessible); retried on the next loop. */
    uint64_t teardown_delivered;/* Pending kicks delivered when the device
                                 * was destroyed (in kick.stats.delivered
                                 * too). */
    uint64_t teardown_written;  /* ...of them, kicks handed to the
                                 * notification thread that it could not
                                 * write (not in kick.stats.delivered). */
    bool adaptive;              /* tx-flush-mode=adaptive: 'mod' sets the
                                 * interval of 'kick' (deferred kicks) or
                                 * of the queue's staging (both builds). */
    struct vhost_mod mod;       /* Adaptive moderation state and counters
                                 * (lib/vhost-moderation.h); kept across
                                 * connections. */
    atomic_uint64_t kicks;      /* Kicks DPDK wrote itself inside an
                                 * enqueue of ours (its guest_notified() op
                                 * on the enqueueing thread), all
                                 * connections, never reset.  The held
                                 * kicks we write are kick.stats.delivered.
                                 * Both builds. */
    atomic_uint64_t coalesced;  /* Bursts placed while a kick of the queue
                                 * was held and that the guest's ring, read
                                 * right after the burst, asked a kick for
                                 * (netdev_vhost_kick_enqueue_end()); all
                                 * connections, never reset.  DPDK 23.11+
                                 * only. */
};

#if NETDEV_VHOST_DEFERRED_KICKS
#define NETDEV_VHOST_HAS_DEFERRED_KICKS true
#else
#define NETDEV_VHOST_HAS_DEFERRED_KICKS false
#endif

/* adaptive's default ceiling (tx-flush-interval-max), microseconds: 90
 * where the kick is deferred and packets go out at once (DPDK 23.11+),
 * 50 where adaptive stages packets (DPDK 22.11), whose every staged packet
 * waits up to the interval.  A Linux guest with EVENT_IDX asks for a kick
 * every 65 us at 100 kpps in the project's benchmark: only a ceiling above
 * that folds its wake-ups (0.85x to 0.89x of stock's PMD cycles per packet
 * at 100 kpps against 0.99x to 1.03x with 50, for 25 to 29 us more median
 * latency there); below 90 regular 10 kpps traffic (100 us apart) stays at
 * the floor.  DESIGN-NOTES.md section 14. */
#define NETDEV_VHOST_DEFAULT_CEILING_US \
    (NETDEV_VHOST_HAS_DEFERRED_KICKS ? 90 : VHOST_MOD_CEILING_DEFAULT)

/* Name of the mechanism auto mode uses in this build: "deferred kicks"
 * (DPDK 23.11+) or "staged packets" (DPDK 22.11). */
const char *netdev_vhost_kick_mechanism(void);

/* Bracket every rte_vhost_enqueue_burst() of our tx path on queue pair
 * 'q' of 'dev' (device id 'vid'), in both builds: the device ops DPDK
 * calls on the calling thread between these two (guest_notify(), DPDK
 * 23.11+; guest_notified(), 22.11 and later) are for that queue.
 * guest_notified() then counts the kick DPDK wrote in the queue's
 * 'kicks'; guest_notify() answers only for such an enqueue.  'sent' is the
 * number of packets the enqueue placed in the ring (retries included):
 * with deferred kicks, a burst placed while a kick of the queue was held
 * is checked against the guest's ring for the queue's 'coalesced' count.
 * PMD, main or vhost-events thread, under the queue's tx_lock. */
void netdev_vhost_kick_enqueue_begin(struct netdev_vhost *dev, int q,
                                     int vid);
void netdev_vhost_kick_enqueue_end(int sent);

/* Writes the held kick of queue pair 'q' of device 'vid' with
 * rte_vhost_notify_guest() (DPDK 23.11+).  Returns true if DPDK wrote the
 * eventfd (it then calls guest_notified() on this thread and clears its
 * irq_pending latch); false if it did nothing (virtqueue not accessible:
 * the latch stays set, so the kick stays held and is tried again).  The
 * caller holds the queue's tx_lock (lib/netdev-vhost-txq.c); always false
 * without deferred kicks. */
bool netdev_vhost_kick_deliver(int vid, int q);

/* Hands a kick of the queue of 'kq' (device 'vid') whose DPDK irq_pending
 * latch is set to the notification thread, which clears the latch and
 * writes the eventfd, and counts it in 'handed'.  False if the thread could
 * not take it: the caller (or DPDK, for a kick decided in the enqueue)
 * writes it now.  With the queue's tx_lock held (PMD threads); DPDK
 * 23.11+ builds only. */
bool netdev_vhost_kick_handoff(struct netdev_vhost_kickq *kq, int vid);

/* Folding the kicks of one send into one (DPDK 23.11+, deferred kicks).
 * DPDK places at most 32 packets per rte_vhost_enqueue_burst() (MAX_PKT_BURST
 * in lib/vhost/vhost.h, every version up to 25.11), so a send of more
 * (OVS 4.0's packet batches have no upper size) is several enqueues, and
 * each would ask for its own kick: the first at once, the next held for an
 * interval.  Between these two calls, guest_notify() takes a kick DPDK
 * decides over without asking the moderation (DPDK's irq_pending latch
 * then keeps the send's later enqueues from asking), and
 * netdev_vhost_kick_fold_end() returns true if it did: the caller then
 * asks the moderation once for the whole send (vhost_kick_request()) and
 * delivers or holds that one kick.  Queues without deferral (immediate or
 * timed mode, vIOMMU guests) are not folded: DPDK writes their kicks as it
 * decides them, as stock.  The thread inside netdev_vhost_txq_send(),
 * under the queue's tx_lock; no-ops without deferred kicks. */
void netdev_vhost_kick_fold_begin(void);
bool netdev_vhost_kick_fold_end(void);

/* Records the used index of queue pair 'q' of 'dev' as the point of the
 * kick going out now (split ring; see vhost_split_kick_wanted()), read
 * under the ring guard; if the guard is closed the point is unknown and
 * the next held kick is delivered without asking.  The thread inside the
 * enqueue or the kick delivery, with the queue's tx_lock held. */
void netdev_vhost_kick_note_used(struct netdev_vhost *dev, int q);

/* rte_vhost_device_ops members: guest_notify (DPDK 23.07+, registered
 * with deferred kicks only) and guest_notified (DPDK 21.11+, registered in
 * both builds): see netdev-vhost-kick.c. */
bool netdev_vhost_guest_notify(int vid, uint16_t queue_id);
void netdev_vhost_guest_notified(int vid);

#endif /* netdev-vhost-kick.h */
