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

/* Kick moderation of one vhost tx queue: the pure state machine behind
 * DPDK's guest_notify() device op.  See vhost-kick.h for the model; the
 * DPDK glue that calls it lives in the port class. */

#include "vhost-kick.h"

#include <limits.h>
#include <string.h>

/* Initializes 'k' with no kick pending, no kick sent yet (so the first
 * request goes out at once) and zeroed counters.  'interval_us' is the
 * least time between two kicks of the queue, 1 to 1000000 us
 * (tx-flush-interval).  Thread-safety: before 'k' is shared. */
void
vhost_kick_init(struct vhost_kick *k, uint32_t interval_us)
{
    memset(k, 0, sizeof *k);
    k->interval_us = interval_us;
    k->last_kick_us = LLONG_MIN;
    k->full_until_us = LLONG_MIN;
}

/* Changes the interval of 'k' to 'interval_us' (1 to 1000000 us, or 0 from
 * adaptive moderation: every request then goes out at once).  A pending
 * kick stays pending; its deadline follows the new interval (with 0 it is
 * due at once).
 * Thread-safety: the caller holds the queue's tx lock. */
void
vhost_kick_set_interval(struct vhost_kick *k, uint32_t interval_us)
{
    k->interval_us = interval_us;
}

/* DPDK has decided that the guest wants a kick on this queue (it calls
 * guest_notify() only then: DPDK 24.11 lib/vhost/vhost.h,
 * vhost_vring_call_split() and vhost_vring_call_packed()).  Returns
 * VHOST_KICK_NOW when no kick went out in the last interval, or the
 * guest's ring overflowed in the last VHOST_RING_FULL_HOLDOFF_US
 * (vhost_kick_ring_full()): the caller returns false and the library
 * writes the eventfd at once.  Otherwise the
 * kick is taken over (VHOST_KICK_DEFER: the caller returns true) and
 * becomes, or is folded into, the pending kick, which the caller delivers
 * with rte_vhost_notify_guest() once vhost_kick_run() says so.  A deferred
 * kick must be delivered: DPDK's irq_pending latch stays set until then and
 * silences the queue.  'now_us' is a monotonic time in microseconds.
 * Thread-safety: the thread that runs the enqueue, under the tx lock. */
enum vhost_kick_action
vhost_kick_request(struct vhost_kick *k, long long int now_us)
{
    k->stats.requests++;
    if (k->pending) {
        k->stats.taken_over++;
        k->stats.coalesced++;
        return VHOST_KICK_DEFER;
    }
    bool quiet = (k->last_kick_us == LLONG_MIN
                  || now_us - k->last_kick_us
                     >= (long long int) k->interval_us);

    if (quiet || now_us < k->full_until_us) {
        if (!quiet) {
            k->stats.ring_full++;
        }
        k->last_kick_us = now_us;
        k->stats.immediate++;
        k->kicked_in_burst = true;
        return VHOST_KICK_NOW;
    }
    k->pending = true;
    k->early = false;
    k->early_full = false;
    k->early_unwritten = false;
    k->postpone_counted = false;
    k->pending_us = now_us;
    k->stats.taken_over++;
    return VHOST_KICK_DEFER;
}

/* The kick vhost_kick_request() let go at 'now_us' (VHOST_KICK_NOW) was
 * not written: the caller, which writes it itself (a folded send,
 * netdev_vhost_kick_fold_end()), found the virtqueue inaccessible for a
 * moment, and DPDK's latch is still set.  The kick becomes a pending one,
 * due at once (vhost_kick_due()), counted as taken over instead of
 * immediate, so that the caller's held-kick path delivers it (no kick is
 * lost).  Nothing if a kick is pending already.  Thread-safety: under the
 * tx lock. */
void
vhost_kick_unwritten(struct vhost_kick *k, long long int now_us)
{
    if (k->pending) {
        return;
    }
    if (k->stats.immediate) {
        k->stats.immediate--;
    }
    k->stats.taken_over++;
    k->pending = true;
    k->early = true;
    k->early_full = false;
    k->early_unwritten = true;
    k->postpone_counted = false;
    k->pending_us = now_us;
}

/* As vhost_kick_request() for a queue whose kicks are never taken over
 * (a guest behind a vIOMMU, see netdev_vhost_txq_connect()): counts
 * the request as one the library writes at once and records the kick's
 * time; always VHOST_KICK_NOW.  A kick already pending is left as it is.
 * Thread-safety: the thread that runs the enqueue, under the tx lock. */
enum vhost_kick_action
vhost_kick_request_now(struct vhost_kick *k, long long int now_us)
{
    k->stats.requests++;
    k->stats.immediate++;
    k->last_kick_us = now_us;
    k->kicked_in_burst = true;
    return VHOST_KICK_NOW;
}

/* Returns the time (us) at which the pending kick of 'k' becomes due: one
 * interval after the last kick that went out.  LLONG_MAX when none is
 * pending.  Thread-safety: under the tx lock. */
long long int
vhost_kick_deadline(const struct vhost_kick *k)
{
    return k->pending ? k->last_kick_us + k->interval_us : LLONG_MAX;
}

/* True if a kick is pending on 'k' and due at 'now_us' (its interval
 * ended, or the ring reached its watermark: vhost_kick_placed()).  Cheap:
 * touches no guest memory, so the caller asks the ring only when this is
 * true.  Thread-safety: under the tx lock. */
bool
vhost_kick_due(const struct vhost_kick *k, long long int now_us)
{
    return k->pending && (k->early || now_us >= vhost_kick_deadline(k));
}

/* Called on every PMD loop of the port with 'wants_intr', the guest's ring
 * answer (lib/vhost-ring.h; for EVENT_IDX measured from the used index of
 * the last kick delivered, not DPDK's signalled_used), when
 * vhost_kick_due() is true.  Returns true if the caller must now deliver
 * the pending kick (rte_vhost_notify_guest()) and then call
 * vhost_kick_delivered().  A due kick the guest does not want is postponed
 * (counted once per kick) and asked about again on the next loop: the
 * driver re-checks its ring after it re-enables notifications, so holding
 * the kick loses no wake-up (virtio 1.1, 2.6.7.2 and 2.7.10).
 * Thread-safety: under the tx lock. */
bool
vhost_kick_run(struct vhost_kick *k, bool wants_intr, long long int now_us)
{
    if (!vhost_kick_due(k, now_us)) {
        return false;
    }
    if (!wants_intr) {
        if (!k->postpone_counted) {
            k->postpone_counted = true;
            k->stats.postponed++;
        }
        return false;
    }
    return true;
}

/* Records that the caller delivered the pending kick of 'k' at 'now_us'.
 * Thread-safety: under the tx lock. */
void
vhost_kick_delivered(struct vhost_kick *k, long long int now_us)
{
    if (!k->pending) {
        return;
    }
    long long int delay = now_us - k->pending_us;

    if (k->early && !k->early_unwritten && now_us < vhost_kick_deadline(k)) {
        if (k->early_full) {
            k->stats.ring_full++;
        } else {
            k->stats.watermark++;
        }
    }
    k->pending = false;
    k->early = false;
    k->early_full = false;
    k->early_unwritten = false;
    k->placed = 0;
    k->last_kick_us = now_us;
    k->stats.delivered++;
    if (delay > 0 && (uint64_t) delay > k->stats.max_delay_us) {
        k->stats.max_delay_us = delay;
    }
}

/* The virtqueue of 'k' went away (device destroyed: DPDK frees the
 * virtqueue and a new connection starts with its irq_pending latch clear).
 * Forgets a pending kick, counted as discarded, and the time of the last
 * kick, so the first kick of the next connection goes out at once.
 * Thread-safety: under the tx lock, once no thread can deliver to the old
 * virtqueue any more. */
void
vhost_kick_reset(struct vhost_kick *k)
{
    if (k->pending) {
        k->pending = false;
        k->stats.discarded++;
    }
    k->early = false;
    k->early_full = false;
    k->early_unwritten = false;
    k->placed = 0;
    k->kicked_in_burst = false;
    k->last_kick_us = LLONG_MIN;
    k->full_until_us = LLONG_MIN;
    k->point_known = false;
}

/* Zeroes the counters of 'k'; the pending state is kept.
 * Thread-safety: under the tx lock. */
void
vhost_kick_clear_stats(struct vhost_kick *k)
{
    memset(&k->stats, 0, sizeof k->stats);
}

/* Tells 'k' whether the caller takes the queue's kicks over ('deferring':
 * auto or adaptive mode in a deferred-kicks build) or leaves every kick to
 * the library (immediate and timed modes, staging builds).  On a change the
 * kick point is forgotten: while the caller does not defer, the library
 * writes kicks the caller never sees, so a point noted before could lie
 * any number of entries (also more than 65535) behind the used index, and
 * the EVENT_IDX window measured from it (vhost_split_kick_wanted()) would
 * answer wrongly and postpone a kick the guest wants.  With the point
 * unknown the next held kick is delivered without asking, which is always
 * safe.  Thread-safety: under the tx lock. */
void
vhost_kick_set_deferring(struct vhost_kick *k, bool deferring)
{
    if (k->deferring != deferring) {
        k->deferring = deferring;
        k->point_known = false;
    }
}

/* Records 'used_idx' (the split ring's used->idx, 0..65535, read after the
 * kick's used entries were published) as the point of the kick that is
 * going out now.  Thread-safety: under the tx lock. */
void
vhost_kick_note_point(struct vhost_kick *k, uint16_t used_idx)
{
    k->point_used = used_idx;
    k->point_known = true;
}

/* Forgets the kick point (the ring could not be read, or the ring is
 * packed, which needs none).  Thread-safety: under the tx lock. */
void
vhost_kick_forget_point(struct vhost_kick *k)
{
    k->point_known = false;
}

/* Returns true and the point of the last kick in '*used_idx' if it is
 * known, false otherwise ('*used_idx' is then 0).  Thread-safety: under
 * the tx lock. */
bool
vhost_kick_get_point(const struct vhost_kick *k, uint16_t *used_idx)
{
    *used_idx = k->point_known ? k->point_used : 0;
    return k->point_known;
}

/* Sets the ring watermark of 'k' (see VHOST_KICK_WATERMARK_MAX): 0 for a
 * quarter of the ring, else 1..VHOST_KICK_WATERMARK_MAX packets (larger values are
 * taken as the maximum).  A pending kick that the new watermark makes due
 * is delivered by the next vhost_kick_placed() that finds it reached.
 * Thread-safety: under the tx lock. */
void
vhost_kick_set_watermark(struct vhost_kick *k, uint32_t watermark)
{
    k->watermark = (watermark > VHOST_KICK_WATERMARK_MAX
                    ? VHOST_KICK_WATERMARK_MAX : watermark);
}

/* Returns the watermark in force for 'watermark' (0: a quarter of the
 * ring, see VHOST_KICK_WATERMARK_MAX) on a ring of 'ring_size' entries (1..32768;
 * 0 if unknown): never more than the ring holds; 0 (no placed-packets
 * rule) if 'watermark' is 0 and the ring size is unknown.  Any thread. */
uint32_t
vhost_kick_watermark_effective(uint32_t watermark, uint32_t ring_size)
{
    if (!watermark) {
        return ring_size / 4 ? ring_size / 4 : ring_size;
    }
    return ring_size && watermark > ring_size ? ring_size : watermark;
}

/* The caller's enqueue placed 'n' packets (0..) in the guest's ring of
 * 'ring_size' entries (0 if unknown), which has 'free_entries' entries the
 * guest made available and the device has not used yet (UINT32_MAX if
 * unknown: packed ring, or rings being changed).  Counts the packets
 * placed since the last kick (those of an enqueue during which a kick went
 * out at once are covered by it and restart the count at 0) and, if a kick
 * is pending, makes it due at once (vhost_kick_due()) when that count
 * reaches the watermark (vhost_kick_watermark_effective()) or the free
 * entries fall below VHOST_KICK_FREE_MIN (half the ring on rings of fewer
 * than 64 entries).  The caller calls it after every enqueue of a
 * deferring queue, also with 'n' 0.  Thread-safety: under the tx lock. */
void
vhost_kick_placed(struct vhost_kick *k, uint32_t n, uint32_t ring_size,
                  uint32_t free_entries)
{
    if (k->kicked_in_burst) {
        k->kicked_in_burst = false;
        k->placed = 0;
        if (!k->pending) {
            return;
        }
        /* A held kick taken over after the immediate one of this burst
         * (a retried enqueue): count this burst's packets for it. */
    }
    k->placed = (k->placed > UINT32_MAX - n ? UINT32_MAX : k->placed + n);
    if (!k->pending || k->early) {
        return;
    }

    uint32_t wm = vhost_kick_watermark_effective(k->watermark, ring_size);
    uint32_t free_min = (ring_size && ring_size < 2 * VHOST_KICK_FREE_MIN
                         ? ring_size / 2 : VHOST_KICK_FREE_MIN);

    if ((wm && k->placed >= wm) || free_entries < free_min) {
        k->early = true;
    }
}

/* The caller's enqueue found the guest's ring without room for some
 * packets at 'now_us' (they were dropped and counted): the guest cannot
 * keep up, and a kick held now would let it sleep on the work that is
 * waiting.  For the next VHOST_RING_FULL_HOLDOFF_US, or the next interval
 * if that is longer, every kick DPDK asks for goes out at once (vhost_kick_request() returns VHOST_KICK_NOW), and
 * a kick held now is due at once (vhost_kick_due()); each counted in
 * stats.ring_full.  Adaptive moderation returns to its floor on the same
 * event (vhost_mod_ring_full()).  Thread-safety: under the tx lock. */
void
vhost_kick_ring_full(struct vhost_kick *k, long long int now_us)
{
    k->full_until_us = now_us + vhost_ring_full_holdoff(k->interval_us);
    if (k->pending && !k->early) {
        k->early = true;
        k->early_full = true;
    }
}
