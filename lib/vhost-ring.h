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

#ifndef VHOST_RING_H
#define VHOST_RING_H 1

/* The ring question: does the guest's virtio driver want a used buffer
 * notification (a kick through the callfd) for what the device is about to
 * place in the used ring of this virtqueue?
 *
 * Pure functions over a snapshot of the driver-written suppression fields.
 * They read guest memory through the pointers they are given and touch no
 * DPDK runtime state, so they are unit-tested with rings built in plain
 * memory (tests/test-vhost-ring.c).  The caller (lib/netdev-vhost.c) must
 * guarantee that the pointers stay mapped for the duration of the call
 * (see the ring guard there). */

#include <stdbool.h>
#include <stdint.h>
#include <linux/virtio_ring.h>

/* After the guest's ring overflowed (an enqueue found no room for some
 * packets, which were dropped), moderation holds nothing on that queue for
 * this many microseconds, or for one interval (tx-flush-interval) if that
 * is longer: a held kick goes out at once
 * (vhost_kick_ring_full()) and a staging queue sends at once
 * (vhost_txp_ring_full()).  A guest whose ring overflows cannot keep up:
 * every microsecond it sleeps with packets waiting costs packets, and
 * coalescing saves it nothing.  The same length as adaptive moderation's
 * longest sample (VHOST_MOD_SAMPLE_MAX_US, lib/vhost-moderation.h).  It
 * was 1 ms (the shortest sample); at the sender's maximum a staging queue
 * (DPDK 22.11) whose guest had no EVENT_IDX then lost clearly more than
 * stock (DESIGN-NOTES.md, "Overflow hold-off"). */
#define VHOST_RING_FULL_HOLDOFF_US 10000

/* The hold-off after an overflow (see VHOST_RING_FULL_HOLDOFF_US) of a
 * queue whose interval is 'interval_us' (0..1000000), microseconds. */
static inline long long int
vhost_ring_full_holdoff(uint32_t interval_us)
{
    return (interval_us > VHOST_RING_FULL_HOLDOFF_US
            ? interval_us : VHOST_RING_FULL_HOLDOFF_US);
}

/* The 16-bit window check of the virtio 1.1 spec, 2.6.7.2 "Used Buffer
 * Notification Suppression" (and Linux's vring_need_event()): true if
 * moving the used index from 'old_idx' to 'new_idx' passes 'event_idx'.
 * All arithmetic is modulo 2^16. */
static inline bool
vhost_ring_need_event(uint16_t event_idx, uint16_t new_idx, uint16_t old_idx)
{
    return (uint16_t) (new_idx - event_idx - 1)
           < (uint16_t) (new_idx - old_idx);
}

/* Split virtqueue (virtio 1.1, 2.6.7 "Used Buffer Notification
 * Suppression").
 *
 * 'avail' and 'used' point to the driver area and device area of a vring
 * of 'size' entries (1 to 32768, a power of 2).  'event_idx' says whether
 * VIRTIO_RING_F_EVENT_IDX was negotiated.
 *
 * Without EVENT_IDX the driver wants a notification unless avail->flags has
 * VRING_AVAIL_F_NO_INTERRUPT.  With EVENT_IDX the flag is ignored and the
 * driver wants one when used_event (the u16 after avail->ring[size]) lies
 * within 'size' entries ahead of used->idx, i.e. placing the next 'size'
 * used entries would pass it.
 *
 * Thread-safety: any thread, as long as the ring memory stays mapped. */
bool vhost_split_wants_interrupt(const struct vring_avail *avail,
                                 const struct vring_used *used,
                                 uint16_t size, bool event_idx);

/* Packed virtqueue (virtio 1.1, 2.7.10 "Driver and Device Event
 * Suppression").
 *
 * 'driver_event' points to the driver event suppression structure of a
 * ring of 'size' entries (1 to 32768).  'used_idx' (0 to size - 1) and
 * 'used_wrap' are the position and wrap counter where the device writes
 * its next used descriptor.
 *
 * ENABLE: wants a notification.  DISABLE: does not.  DESC: wants one when
 * the descriptor at the offset and wrap counter in off_wrap lies within
 * 'size' entries ahead of (or at) the device's next used position.
 * Reserved flag value 3: treated as ENABLE (never lose a wake-up).
 *
 * Thread-safety: any thread, as long as the ring memory stays mapped. */
bool vhost_packed_wants_interrupt(
    const struct vring_packed_desc_event *driver_event,
    uint16_t size, uint16_t used_idx, bool used_wrap);

/* The question for a held kick (lib/vhost-kick.h): a kick that the device
 * decided the guest wanted was postponed; does the driver still want one
 * now?  Split virtqueue.  Without EVENT_IDX: unless avail->flags has
 * VRING_AVAIL_F_NO_INTERRUPT.  With EVENT_IDX: if used_event lies in the
 * used entries placed since the last kick that actually went out, when
 * used->idx was 'used_at_kick' (not the device's last decision point: a
 * driver that moved used_event past the new entries is polling and finds
 * them itself; one that moved it back into them is waiting for a kick).
 * Virtio 1.1, 2.6.7.2.  Thread-safety: any thread, ring memory mapped; the
 * caller issues a full fence after publishing used entries and before
 * asking, as for vhost_split_wants_interrupt(). */
bool vhost_split_kick_wanted(const struct vring_avail *avail,
                             const struct vring_used *used,
                             uint16_t size, bool event_idx,
                             uint16_t used_at_kick);

/* The same for a packed virtqueue (virtio 1.1, 2.7.10): unless the driver
 * event flags say DISABLE.  DESC is answered "wanted": the device's used
 * position at the last kick is not tracked for packed rings, and a kick
 * too many costs a syscall, a kick too few a stuck queue. */
bool vhost_packed_kick_wanted(
    const struct vring_packed_desc_event *driver_event);

/* Moderation's share of the packets a guest's ring had no room for.
 *
 * A held kick (lib/vhost-kick.h) or staged packets (lib/vhost-tx-policy.h)
 * reach a sleeping guest later than stock's kick after every burst would.
 * Until the guest answers that kick (its driver puts a buffer back in the
 * avail ring: Linux virtio-net refills after its NAPI poll, a DPDK virtio
 * PMD in rte_eth_rx_burst()), a packet its full ring refuses may be the
 * delay's doing; once it answered, later drops come from how fast it
 * takes packets, which moderation does not change.  The caller counts a
 * drop as moderation's when a kick was held or the packets had been
 * staged, or while vhost_ring_answer_outstanding() says the guest has not
 * answered the last held kick or staged flush.  Not a bound either way: a
 * guest woken by stock's kick might have dropped some of them too, and the
 * ring may still refuse packets to a guest woken late after it answered
 * (at the sender's maximum, Debian 13, this count was 0 in runs where the
 * guest received 0.9959x of the share stock's got;
 * Documentation/benchmark.md).  Split rings only: a packed ring's driver
 * writes no avail index, so there the caller counts only drops while
 * something is held ('known' false).
 *
 * Pure: the caller reads avail->idx (acquire load, under the ring guard)
 * and owns the locking (one thread at a time: the queue's tx lock).
 * Virtio 1.1, 2.6.6 "The Virtqueue Available Ring". */
struct vhost_ring_answer {
    bool waiting;               /* A held kick or staged packets went out
                                 * and the guest has not answered yet. */
    bool idx_known;             /* 'avail_idx' was read: else the first
                                 * index read at a drop becomes it. */
    uint16_t avail_idx;         /* avail->idx when they went out. */
};

/* A held kick was delivered, or staged packets were placed, at a moment
 * when the guest's avail->idx was 'avail_idx'.  'track' false (a packed
 * ring, which has no such index): nothing is tracked until the next call.
 * 'known' false (split ring, the index could not be read: the ring was
 * being changed): the wait starts without an index, and the first one
 * read at a drop stands for it (that drop counts, the side that does not
 * flatter moderation). */
static inline void
vhost_ring_answer_wait(struct vhost_ring_answer *a, bool track, bool known,
                       uint16_t avail_idx)
{
    a->waiting = track;
    a->idx_known = known;
    a->avail_idx = avail_idx;
}

/* Nothing is tracked any more: the guest reconnected, or the queue's mode
 * holds nothing now (immediate). */
static inline void
vhost_ring_answer_forget(struct vhost_ring_answer *a)
{
    a->waiting = false;
}

/* The guest's ring refused packets with avail->idx at 'avail_idx'
 * ('known' false: it could not be read, the ring is being changed): true
 * while the guest has not answered the last vhost_ring_answer_wait(), and
 * also when 'known' is false while waiting (counted as moderation's, the
 * side that does not flatter it).  An answer seen ends the wait.  The
 * index is compared only at drops, so a guest that refilled exactly 65536
 * buffers since the wait began is taken for one that did not answer (an
 * overcount, never an undercount). */
static inline bool
vhost_ring_answer_outstanding(struct vhost_ring_answer *a, bool known,
                              uint16_t avail_idx)
{
    if (!a->waiting) {
        return false;
    }
    if (known && !a->idx_known) {
        a->idx_known = true;
        a->avail_idx = avail_idx;
    } else if (known && avail_idx != a->avail_idx) {
        a->waiting = false;
        return false;
    }
    return true;
}

#endif /* vhost-ring.h */
