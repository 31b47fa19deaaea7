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
 * rte_vhost_notify_guest() call that writes a held kick.  The decisions
 * are lib/vhost-kick.c's (pure), when to deliver lib/netdev-vhost-txq.c's;
 * this file only connects them to rte_vhost.  See netdev-vhost-kick.h. */

#include <config.h>

#include "netdev-vhost-kick.h"

#include <rte_vhost.h>

#include "netdev-vhost-guard.h"
#include "netdev-vhost-private.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"

const char *
netdev_vhost_kick_mechanism(void)
{
    return NETDEV_VHOST_HAS_DEFERRED_KICKS ? "deferred kicks"
                                           : "staged packets";
}

#if NETDEV_VHOST_DEFERRED_KICKS

/* What the thread that is inside rte_vhost_enqueue_burst() or
 * rte_vhost_notify_guest() tells the device ops DPDK calls on that same
 * thread from there. */
struct kick_tls {
    struct netdev_vhost *dev;   /* Enqueue in progress, or NULL. */
    int q;                      /* ...on this queue pair... */
    int vid;                    /* ...of this device. */
    bool probe;                 /* Inside our rte_vhost_notify_guest(). */
    bool notified;              /* ...and DPDK wrote the eventfd. */
};

DEFINE_STATIC_PER_THREAD_DATA(struct kick_tls, kick_tls,
                              { NULL, 0, -1, false, false });

/* Records used->idx of queue pair 'q' as the point of the kick that is
 * going out now (split ring; see vhost_split_kick_wanted()).  Reads the
 * ring under the ring guard; if the guard is closed the point is unknown
 * and the next held kick is delivered without asking. */
void
netdev_vhost_kick_note_used(struct netdev_vhost *dev, int q)
{
    struct netdev_vhost_txq *txq = &dev->qps[q].tx;
    struct vhost_kick *kick = &txq->kq.kick;

    vhost_kick_forget_point(kick);
    /* 'dev->features' too is written by the vhost-events thread while the
     * guard is closed (netdev_vhost_guard_open()): read it inside. */
    if (netdev_vhost_guard_enter(&txq->reading, &dev->rings_valid)
        && txq->vring.used
        && !(dev->features & (1ULL << VIRTIO_F_RING_PACKED))) {
        vhost_kick_note_point(kick, __atomic_load_n(&txq->vring.used->idx,
                                                    __ATOMIC_RELAXED));
    }
    netdev_vhost_guard_exit(&txq->reading);
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

void
netdev_vhost_kick_enqueue_begin(struct netdev_vhost *dev, int q, int vid)
{
    struct kick_tls *t = kick_tls_get();

    t->dev = dev;
    t->q = q;
    t->vid = vid;
}

void
netdev_vhost_kick_enqueue_end(void)
{
    kick_tls_get()->dev = NULL;
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
 * over, and only in auto mode; anything else (the guest's tx vrings after
 * a dequeue, immediate and timed modes) is left to DPDK, as stock. */
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
        return false;
    }
    if ((kq->iommu
         ? vhost_kick_request_now(&kq->kick, time_usec())
         : vhost_kick_request(&kq->kick, time_usec())) == VHOST_KICK_NOW) {
        /* DPDK has published the used entries (fence included) before it
         * asked: the point of this kick is the used index now. */
        netdev_vhost_kick_note_used(dev, t->q);
        return false;
    }
    /* Held: the caller's txq_unlock() (lib/netdev-vhost-txq.c) marks the
     * queue in the port's held-kick map when the enqueue is over. */
    return true;
}

/* rte_vhost_device_ops 'guest_notified': DPDK wrote a kick's eventfd on
 * device 'vid'.  Called on the thread that wrote it; only our own
 * rte_vhost_notify_guest() call (netdev_vhost_kick_deliver()) listens. */
void
netdev_vhost_guest_notified(int vid)
{
    struct kick_tls *t = kick_tls_get();

    if (t->probe && t->vid == vid) {
        t->notified = true;
    }
}

#else  /* !NETDEV_VHOST_DEFERRED_KICKS */

void
netdev_vhost_kick_enqueue_begin(struct netdev_vhost *dev OVS_UNUSED,
                                int q OVS_UNUSED, int vid OVS_UNUSED)
{
}

void
netdev_vhost_kick_enqueue_end(void)
{
}

bool
netdev_vhost_guest_notify(int vid OVS_UNUSED, uint16_t queue_id OVS_UNUSED)
{
    return false;
}

void
netdev_vhost_guest_notified(int vid OVS_UNUSED)
{
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
