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

/* Deferred kicks (DPDK 23.11+): DPDK's guest_notify device op, the
 * delivery of held kicks by PMD threads and their delivery at device
 * teardown.  The decisions are lib/vhost-kick.c's (pure); this file only
 * connects them to rte_vhost.  See netdev-vhost-kick.h. */

#include <config.h>

#include "netdev-vhost-kick.h"

#include <rte_vhost.h>

#include "coverage.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-private.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"
#include "vhost-ring.h"
#include "vhost-tx-policy.h"

const char *
netdev_vhost_kick_mechanism(void)
{
    return NETDEV_VHOST_HAS_DEFERRED_KICKS ? "deferred kicks"
                                           : "staged packets";
}

void
netdev_vhost_kickq_init(struct netdev_vhost_kickq *kq, uint32_t interval_us)
{
    memset(kq, 0, sizeof *kq);
    vhost_kick_init(&kq->kick, interval_us);
    vhost_mod_init(&kq->mod, VHOST_MOD_FLOOR_DEFAULT,
                   VHOST_MOD_CEILING_DEFAULT);
}

uint32_t
netdev_vhost_kickq_configure(struct netdev_vhost_kickq *kq, bool defer,
                             bool adaptive, uint32_t interval_us,
                             uint32_t min_us, uint32_t max_us)
{
    kq->defer = NETDEV_VHOST_HAS_DEFERRED_KICKS && defer;
    vhost_kick_set_deferring(&kq->kick, kq->defer);
    if (adaptive) {
        if (!kq->adaptive) {
            struct vhost_mod_stats stats = kq->mod.stats;

            /* Start at the floor: no added delay until traffic says. */
            vhost_mod_init(&kq->mod, min_us, max_us);
            kq->mod.stats = stats;
        } else {
            vhost_mod_set_bounds(&kq->mod, min_us, max_us);
        }
        interval_us = vhost_mod_interval(&kq->mod);
    }
    kq->adaptive = adaptive;
    vhost_kick_set_interval(&kq->kick, interval_us);
    return interval_us;
}

void
netdev_vhost_kickq_moderate(struct netdev_vhost_kickq *kq,
                            struct vhost_txp *txp, uint32_t n_packets,
                            bool wanted, long long int now_us)
{
    if (vhost_mod_burst(&kq->mod, n_packets, wanted, now_us)) {
        uint32_t us = vhost_mod_interval(&kq->mod);

        /* A held kick becomes due one new interval after the last kick;
         * staged packets one new interval after the oldest was staged. */
        vhost_kick_set_interval(&kq->kick, us);
        vhost_txp_set_interval(txp, us);
    }
}

void
netdev_vhost_kickq_reset(struct netdev_vhost_kickq *kq)
{
    vhost_kick_reset(&kq->kick);
}

bool
netdev_vhost_kickq_set_features(struct netdev_vhost_kickq *kq,
                                uint64_t features)
{
    kq->iommu = features & (1ULL << VIRTIO_F_IOMMU_PLATFORM);
    return kq->iommu;
}

#if NETDEV_VHOST_DEFERRED_KICKS

COVERAGE_DEFINE(netdev_vhost_kick_not_delivered);

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

static void
kick_pending_set(struct netdev_vhost *dev, int q, bool pending)
{
    atomic_uint64_t *word = &dev->kick_pending.bits[q / 64];
    uint64_t bit = UINT64_C(1) << (q % 64);
    uint64_t orig;

    if (pending) {
        atomic_or_explicit(word, bit, &orig, memory_order_relaxed);
    } else {
        atomic_and_explicit(word, ~bit, &orig, memory_order_relaxed);
    }
}

/* Records used->idx of queue pair 'q' as the point of the kick that is
 * going out now (split ring; see vhost_split_kick_wanted()).  Reads the
 * ring under the ring guard; if the guard is closed the point is unknown
 * and the next held kick is delivered without asking. */
static void
kick_note_used(struct netdev_vhost *dev, struct netdev_vhost_qp *qp)
{
    struct vhost_kick *kick = &qp->kq.kick;

    vhost_kick_forget_point(kick);
    /* 'dev->features' too is written by the vhost-events thread while the
     * guard is closed (netdev_vhost_guard_open()): read it inside. */
    if (netdev_vhost_guard_enter(&qp->reading, &dev->rings_valid)
        && qp->vring.used
        && !(dev->features & (1ULL << VIRTIO_F_RING_PACKED))) {
        vhost_kick_note_point(kick, __atomic_load_n(&qp->vring.used->idx,
                                                    __ATOMIC_RELAXED));
    }
    netdev_vhost_guard_exit(&qp->reading);
}

/* True if the guest's driver still wants the held kick of 'qp' (see
 * vhost-ring.h).  Under the ring guard; true when the rings cannot be read
 * (being changed) or the point of the last kick is unknown: delivering a
 * kick too many is always safe. */
static bool
kick_still_wanted(struct netdev_vhost *dev, struct netdev_vhost_qp *qp)
{
    bool wanted = true;

    if (netdev_vhost_guard_enter(&qp->reading, &dev->rings_valid)
        && qp->vring.avail && qp->vring.used) {
        if (dev->features & (1ULL << VIRTIO_F_RING_PACKED)) {
            wanted = vhost_packed_kick_wanted(
                (const struct vring_packed_desc_event *)
                qp->vring.driver_event);
        } else {
            bool event_idx = dev->features & (1ULL << VIRTIO_RING_F_EVENT_IDX);
            uint16_t point;

            if (vhost_kick_get_point(&qp->kq.kick, &point) || !event_idx) {
                wanted = vhost_split_kick_wanted(qp->vring.avail,
                                                 qp->vring.used,
                                                 qp->vring.size, event_idx,
                                                 point);
            }
        }
    }
    netdev_vhost_guard_exit(&qp->reading);
    return wanted;
}

/* Writes the held kick of queue pair 'q' with rte_vhost_notify_guest().
 * Returns true if DPDK wrote the eventfd (it then calls guest_notified()
 * on this thread and clears its irq_pending latch); false if it did
 * nothing (virtqueue not accessible: the latch stays set, so the kick
 * stays held and is tried again). */
static bool
kick_deliver(int vid, int q)
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

    struct netdev_vhost_qp *qp = &dev->qps[t->q];

    if (!qp->kq.defer) {
        return false;
    }
    if ((qp->kq.iommu
         ? vhost_kick_request_now(&qp->kq.kick, time_usec())
         : vhost_kick_request(&qp->kq.kick, time_usec())) == VHOST_KICK_NOW) {
        /* DPDK has published the used entries (fence included) before it
         * asked: the point of this kick is the used index now. */
        kick_note_used(dev, qp);
        return false;
    }
    kick_pending_set(dev, t->q, true);
    return true;
}

/* rte_vhost_device_ops 'guest_notified': DPDK wrote a kick's eventfd on
 * device 'vid'.  Called on the thread that wrote it; only our own
 * rte_vhost_notify_guest() call (kick_deliver()) listens. */
void
netdev_vhost_guest_notified(int vid)
{
    struct kick_tls *t = kick_tls_get();

    if (t->probe && t->vid == vid) {
        t->notified = true;
    }
}

void
netdev_vhost_kick_run_locked(struct netdev_vhost *dev, int q, int vid,
                             long long int now_us)
{
    struct netdev_vhost_qp *qp = &dev->qps[q];
    struct netdev_vhost_kickq *kq = &qp->kq;

    if (!vhost_kick_due(&kq->kick, now_us) || vid < 0) {
        return;
    }
    /* The caller's enqueue (if any) published its used entries with the
     * library's full fence before the library asked guest_notify(); this
     * fence orders our ring read after them also on the rxq_recv path. */
    atomic_thread_fence(memory_order_seq_cst);
    bool wanted = kick_still_wanted(dev, qp);

    if (wanted && netdev_vhost_get_vid(dev) != vid) {
        /* The ring guard was closed because the device is being destroyed
         * (destroy_device() withdraws the id before it closes the guard):
         * netdev_vhost_kick_teardown_locked() delivers the kick once this
         * thread has let go of the tx_lock, and counts it once, as a
         * teardown kick. */
        return;
    }
    if (!vhost_kick_run(&kq->kick, wanted, now_us)) {
        return;
    }
    if (kick_deliver(vid, q)) {
        vhost_kick_delivered(&kq->kick, now_us);
        kick_note_used(dev, qp);
        kick_pending_set(dev, q, false);
    } else {
        kq->not_delivered++;
        COVERAGE_INC(netdev_vhost_kick_not_delivered);
    }
}

void
netdev_vhost_kick_run(struct netdev_vhost *dev)
{
    long long int now = time_usec();

    for (int w = 0; w < ARRAY_SIZE(dev->kick_pending.bits); w++) {
        uint64_t bits;

        atomic_read_relaxed(&dev->kick_pending.bits[w], &bits);
        for (; bits; bits = zero_rightmost_1bit(bits)) {
            int q = w * 64 + raw_ctz(bits);
            struct netdev_vhost_qp *qp = &dev->qps[q];

            if (!rte_spinlock_trylock(&qp->tx_lock)) {
                continue;
            }
            netdev_vhost_kick_run_locked(dev, q, netdev_vhost_get_vid(dev),
                                         now);
            rte_spinlock_unlock(&qp->tx_lock);
        }
    }
}

bool
netdev_vhost_kick_teardown_locked(struct netdev_vhost *dev, int q, int vid)
{
    struct netdev_vhost_kickq *kq = &dev->qps[q].kq;
    bool delivered = false;

    if (kq->kick.pending) {
        /* DPDK calls destroy_device() without a virtqueue lock held
         * (GET_VRING_BASE, RESET_OWNER, connection closed) and before it
         * closes the callfds: the kick can still be written. */
        delivered = kick_deliver(vid, q);
        if (delivered) {
            vhost_kick_delivered(&kq->kick, time_usec());
            kq->teardown_delivered++;
        }
    }
    netdev_vhost_kickq_reset(kq);
    kick_pending_set(dev, q, false);
    return delivered;
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

void
netdev_vhost_kick_run_locked(struct netdev_vhost *dev OVS_UNUSED,
                             int q OVS_UNUSED, int vid OVS_UNUSED,
                             long long int now_us OVS_UNUSED)
{
}

void
netdev_vhost_kick_run(struct netdev_vhost *dev OVS_UNUSED)
{
}

bool
netdev_vhost_kick_teardown_locked(struct netdev_vhost *dev OVS_UNUSED,
                                  int q OVS_UNUSED, int vid OVS_UNUSED)
{
    return false;
}

#endif /* NETDEV_VHOST_DEFERRED_KICKS */
