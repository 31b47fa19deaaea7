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

/* Deferred kicks (DPDK 23.11+): DPDK's guest_notify device op and the
 * rte_vhost_notify_guest() call that writes a held kick; and, in both
 * builds, the count of the kicks DPDK writes inside our enqueues (its
 * guest_notified device op).  The decisions are lib/vhost-kick.c's
 * (pure), when to deliver lib/netdev-vhost-txq.c's; this file only
 * connects them to rte_vhost.  See netdev-vhost-kick.h. */

#include <config.h>

#include "netdev-vhost-kick.h"

#include <string.h>

#include <rte_vhost.h>

#include "netdev-vhost-guard.h"
#include "netdev-vhost-private.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"
#include "vhost-ring.h"

const char *
netdev_vhost_kick_mechanism(void)
{
    return NETDEV_VHOST_HAS_DEFERRED_KICKS ? "deferred kicks"
                                           : "staged packets";
}

/* What the thread that is inside rte_vhost_enqueue_burst() or
 * rte_vhost_notify_guest() tells the device ops DPDK calls on that same
 * thread from there.  Both builds. */
struct kick_tls {
    struct netdev_vhost *dev;   /* Enqueue in progress, or NULL. */
    int q;                      /* ...on this queue pair... */
    int vid;                    /* ...of this device. */
    bool probe;                 /* Inside our rte_vhost_notify_guest(). */
    bool notified;              /* ...and DPDK wrote the eventfd. */
    bool held;                  /* The enqueue began with a kick of the
                                 * queue held (DPDK's irq_pending latch
                                 * set): DPDK folds what it decides; a
                                 * server port counts it itself. */
    bool point_known;           /* 'used_before' is valid. */
    uint16_t used_before;       /* Split ring: used->idx when the enqueue
                                 * began, if 'held'. */
    bool fold;                  /* A send of several enqueues is in
                                 * progress (netdev_vhost_kick_fold_begin())
                                 * on this thread... */
    bool fold_wanted;           /* ...and DPDK asked for a kick in it. */
};

DEFINE_STATIC_PER_THREAD_DATA(struct kick_tls, kick_tls,
                              { NULL, 0, -1, false, false, false, false,
                                0, false, false });

#if NETDEV_VHOST_DEFERRED_KICKS
/* Reads used->idx of the tx vring of 'txq' of 'dev' into '*idx' under the
 * ring guard; false if the rings are being changed or the ring is packed
 * (no index to read).  'dev->features' too is written by the vhost-events
 * thread while the guard is closed (netdev_vhost_guard_open()): it is
 * read inside.  With the queue's tx_lock. */
static bool
kick_read_used(struct netdev_vhost *dev, struct netdev_vhost_txq *txq,
               uint16_t *idx)
{
    bool ok = false;

    if (netdev_vhost_guard_enter(&txq->reading, &dev->rings_valid)
        && txq->vring.used
        && !(dev->features & (1ULL << VIRTIO_F_RING_PACKED))) {
        *idx = __atomic_load_n(&txq->vring.used->idx, __ATOMIC_RELAXED);
        ok = true;
    }
    netdev_vhost_guard_exit(&txq->reading);
    return ok;
}

/* Would DPDK have decided a kick for the entries the enqueue just placed
 * in the tx vring of 'txq' (those since used index 'used_before' if
 * 'point_known')?  DPDK's own question (DPDK 24.11 lib/vhost/vhost.h
 * vhost_vring_call_split() and _packed(); virtio 1.1 2.6.7.2, 2.7.10),
 * asked again right after the enqueue: split ring without EVENT_IDX,
 * VRING_AVAIL_F_NO_INTERRUPT clear; with EVENT_IDX, used_event among the
 * entries placed; packed ring, the driver's event flags not DISABLE (DESC
 * counts as wanted).  False while the rings are being changed, and for a
 * split ring with EVENT_IDX whose index was not read before.  With the
 * queue's tx_lock. */
static bool
kick_wanted_for_burst(struct netdev_vhost *dev, struct netdev_vhost_txq *txq,
                      bool point_known, uint16_t used_before)
{
    bool wanted = false;

    if (netdev_vhost_guard_enter(&txq->reading, &dev->rings_valid)
        && txq->vring.avail && txq->vring.used) {
        bool event_idx = dev->features & (1ULL << VIRTIO_RING_F_EVENT_IDX);

        if (dev->features & (1ULL << VIRTIO_F_RING_PACKED)) {
            struct vring_packed_desc_event ev;

            memcpy(&ev, (const void *) txq->vring.driver_event, sizeof ev);
            wanted = vhost_packed_kick_wanted(&ev);
        } else if (point_known || !event_idx) {
            wanted = vhost_split_kick_wanted(txq->vring.avail,
                                             txq->vring.used,
                                             txq->vring.size, event_idx,
                                             used_before);
        }
    }
    netdev_vhost_guard_exit(&txq->reading);
    return wanted;
}
#endif

void
netdev_vhost_kick_enqueue_begin(struct netdev_vhost *dev, int q, int vid)
{
    struct kick_tls *t = kick_tls_get();

    t->dev = dev;
    t->q = q;
    t->vid = vid;
#if NETDEV_VHOST_DEFERRED_KICKS
    /* DPDK's latch is set exactly while we hold a kick of the queue
     * (netdev_vhost_guest_notify() returned true and it was not delivered
     * since; in a folded send, also once it took the send's kick over, so
     * that the later enqueues' suppressed requests count as coalesced
     * here as in DPDK's statistics): read only then, so that a polling guest's bursts read no
     * ring here; and only on server ports, where the count is ours (on
     * client ports kicks_coalesced is DPDK's own, see coalesced_now() in
     * lib/netdev-vhost-stats.c). */
    t->held = ((dev->qps[q].tx.kq.kick.pending || t->fold_wanted)
               && !dev->client);
    if (OVS_UNLIKELY(t->held)) {
        t->point_known = kick_read_used(dev, &dev->qps[q].tx,
                                        &t->used_before);
    }
#endif
}

void
netdev_vhost_kick_enqueue_end(int sent OVS_UNUSED)
{
    struct kick_tls *t = kick_tls_get();

#if NETDEV_VHOST_DEFERRED_KICKS
    /* While the latch is set DPDK asks the ring as always after an enqueue
     * that placed packets, and a kick it decides is folded into the held
     * one (guest_notifications_suppressed, counted only where its
     * statistics are enabled): count the same here.  An enqueue that
     * needed retries counts once, where DPDK may count each call. */
    if (OVS_UNLIKELY(t->held) && sent > 0) {
        struct netdev_vhost_txq *txq = &t->dev->qps[t->q].tx;

        if (kick_wanted_for_burst(t->dev, txq, t->point_known,
                                  t->used_before)) {
            netdev_vhost_counter_add(&txq->kq.coalesced, 1);
        }
    }
    t->held = false;
#endif
    t->dev = NULL;
}

/* rte_vhost_device_ops 'guest_notified': DPDK wrote a kick's eventfd on
 * device 'vid' (DPDK 22.11 and 24.11 lib/vhost/vhost.h
 * vhost_vring_call_split() and _packed(), or, 23.11+,
 * vhost_vring_inject_irq() after a successful write; vhost.c
 * rte_vhost_notify_guest()).  Called on the thread that wrote it, right
 * after the write.  Inside our rte_vhost_notify_guest() call
 * (netdev_vhost_kick_deliver()) it tells the caller that the kick was
 * written (counted as delivered by the caller); inside an enqueue of our
 * tx path it counts a kick of the enqueue's queue: an enqueue kicks only
 * its own vring.  Anything else (the guest's tx vrings after a dequeue) is
 * no kick of a tx queue and is not counted.  Never calls into rte_vhost:
 * the virtqueue's access lock is held. */
void
netdev_vhost_guest_notified(int vid)
{
    struct kick_tls *t = kick_tls_get();

    if (t->vid != vid) {
        return;
    }
    if (t->probe) {
        t->notified = true;
    } else if (t->dev) {
        netdev_vhost_counter_add(&t->dev->qps[t->q].tx.kq.kicks, 1);
    }
}

#if NETDEV_VHOST_DEFERRED_KICKS

/* Records used->idx of queue pair 'q' as the point of the kick that is
 * going out now (split ring; see vhost_split_kick_wanted()).  Reads the
 * ring under the ring guard; if the guard is closed the point is unknown
 * and the next held kick is delivered without asking. */
void
netdev_vhost_kick_note_used(struct netdev_vhost *dev, int q)
{
    struct netdev_vhost_txq *txq = &dev->qps[q].tx;
    struct vhost_kick *kick = &txq->kq.kick;

    uint16_t used;

    vhost_kick_forget_point(kick);
    if (kick_read_used(dev, txq, &used)) {
        vhost_kick_note_point(kick, used);
    }
}

/* Writes the held kick of queue pair 'q' with rte_vhost_notify_guest().
 * Returns true if DPDK wrote the eventfd (it then calls guest_notified()
 * on this thread and clears its irq_pending latch); false if it did
 * nothing (virtqueue not accessible: the latch stays set, so the kick
 * stays held and is tried again). */
bool
netdev_vhost_kick_deliver(int vid, int q)
{
    struct kick_tls *t = kick_tls_get();

    t->probe = true;
    t->notified = false;
    t->vid = vid;
    rte_vhost_notify_guest(vid, netdev_vhost_tx_vring(q));
    t->probe = false;
    return t->notified;
}

bool
netdev_vhost_kick_handoff(struct netdev_vhost_kickq *kq, int vid)
{
    if (!netdev_vhost_notify_handoff(&kq->nq, vid)) {
        return false;
    }
    netdev_vhost_counter_add(&kq->handed, 1);
    return true;
}

/* rte_vhost_device_ops 'guest_notify': DPDK has decided that the guest
 * wants a used buffer notification on vring 'queue_id' of device 'vid'
 * and set the virtqueue's irq_pending latch.  Returns true to take the kick
 * over (DPDK then writes nothing and, while the latch stays set, folds
 * later kicks of the queue into it: guest_notifications_suppressed), false
 * to let DPDK write the eventfd now.
 *
 * Called by DPDK on the thread that runs the enqueue, with the
 * virtqueue's access lock held for reading: never calls back into
 * rte_vhost.  Only the enqueue of our own tx path, announced with
 * netdev_vhost_kick_enqueue_begin() under the queue's tx_lock, is taken
 * over, and only in auto mode, or in any mode with the notification
 * thread (other_config:vhost-kick-thread=true: the kick is handed to it at
 * once, or when held, at its deadline); anything else (the guest's tx
 * vrings after a dequeue, immediate and timed modes without the thread) is
 * left to DPDK, as stock. */
bool
netdev_vhost_guest_notify(int vid, uint16_t queue_id)
{
    struct kick_tls *t = kick_tls_get();
    struct netdev_vhost *dev = t->dev;

    if (!dev || t->vid != vid
        || queue_id != netdev_vhost_tx_vring(t->q)) {
        return false;
    }

    struct netdev_vhost_kickq *kq = &dev->qps[t->q].tx.kq;

    if (!kq->defer) {
        /* Immediate or timed mode: with the notification thread the kick
         * goes to it at once; else DPDK writes it now, as stock. */
        return kq->thread && netdev_vhost_kick_handoff(kq, vid);
    }
    if (t->fold && !kq->iommu) {
        /* One of several enqueues of one send: the send asks once, after
         * its last enqueue (netdev_vhost_txq_send()); until then DPDK's
         * latch keeps the later enqueues from asking. */
        t->fold_wanted = true;
        return true;
    }
    if ((kq->iommu
         ? vhost_kick_request_now(&kq->kick, time_usec())
         : vhost_kick_request(&kq->kick, time_usec())) == VHOST_KICK_NOW) {
        /* DPDK has published the used entries (fence included) before it
         * asked: the point of this kick is the used index now. */
        netdev_vhost_kick_note_used(dev, t->q);
        return kq->thread && netdev_vhost_kick_handoff(kq, vid);
    }
    /* Held: the caller's txq_unlock() (lib/netdev-vhost-txq.c) marks the
     * queue in the port's held-kick map when the enqueue is over. */
    return true;
}

void
netdev_vhost_kick_fold_begin(void)
{
    struct kick_tls *t = kick_tls_get();

    t->fold = true;
    t->fold_wanted = false;
}

bool
netdev_vhost_kick_fold_end(void)
{
    struct kick_tls *t = kick_tls_get();
    bool wanted = t->fold_wanted;

    t->fold = false;
    t->fold_wanted = false;
    return wanted;
}

#else  /* !NETDEV_VHOST_DEFERRED_KICKS */

void
netdev_vhost_kick_fold_begin(void)
{
}

bool
netdev_vhost_kick_fold_end(void)
{
    return false;
}

bool
netdev_vhost_kick_handoff(struct netdev_vhost_kickq *kq OVS_UNUSED,
                          int vid OVS_UNUSED)
{
    return false;
}

bool
netdev_vhost_guest_notify(int vid OVS_UNUSED, uint16_t queue_id OVS_UNUSED)
{
    return false;
}

bool
netdev_vhost_kick_deliver(int vid OVS_UNUSED, int q OVS_UNUSED)
{
    return false;
}

void
netdev_vhost_kick_note_used(struct netdev_vhost *dev OVS_UNUSED,
                            int q OVS_UNUSED)
{
}

#endif /* NETDEV_VHOST_DEFERRED_KICKS */
