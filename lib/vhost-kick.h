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

#ifndef VHOST_KICK_H
#define VHOST_KICK_H 1

/* Kick moderation of one vhost tx queue (one vring): coalesce kicks, not
 * packets.
 *
 * With DPDK 23.11 and later the packets of every burst go into the guest's
 * used ring at once, and DPDK asks its device op guest_notify() whether the
 * backend takes over the kick (the used buffer notification, an eventfd
 * write on the vring's callfd) it has decided the guest wants.  This module
 * answers that question and tells the PMD thread when a taken-over kick is
 * due: at most one kick per interval per queue, the first one after a quiet
 * interval at once, later ones coalesced into one at the end of the
 * interval, and a due kick postponed only while the guest's ring says it
 * does not want one (the caller asks the ring, lib/vhost-ring.h).
 *
 * It is pure: time is passed in (microseconds of a monotonic clock), the
 * ring question is answered by the caller, and delivering the kick
 * (rte_vhost_notify_guest()) is the caller's job, so
 * tests/test-vhost-kick.c drives it with a fake clock.  The caller owns
 * locking: one struct vhost_kick is used by one thread at a time (the
 * queue's tx lock).
 *
 * Rules: DPDK 24.11 lib/vhost (guest_notify, irq_pending, see
 * DESIGN-NOTES.md section 8 "Deferred kicks"); virtio 1.1, 2.6.7.2 and
 * 2.7.10 for the ring question. */

#include <stdbool.h>
#include <stdint.h>
#include "vhost-ring.h"

/* What the caller of vhost_kick_request() tells DPDK's guest_notify(). */
enum vhost_kick_action {
    VHOST_KICK_NOW,     /* Return false: the library kicks at once. */
    VHOST_KICK_DEFER,   /* Return true: we deliver it later. */
};

/* Counters of one queue, since creation or the last clear. */
struct vhost_kick_stats {
    uint64_t requests;       /* Kicks DPDK decided the guest wants. */
    uint64_t immediate;      /* ...left to the library at once (first
                              * kick after a quiet interval). */
    uint64_t taken_over;     /* ...taken over (deferred). */
    uint64_t coalesced;      /* ...of which folded into a kick already
                              * pending (never delivered on their own). */
    uint64_t delivered;      /* Deferred kicks delivered by us. */
    uint64_t postponed;      /* Due kicks held back because the guest's
                              * ring did not want one (once per kick). */
    uint64_t discarded;      /* Pending kicks forgotten because the
                              * virtqueue went away (vhost_kick_reset()). */
    uint64_t max_delay_us;   /* Longest time from the first taken-over
                              * request to delivery of a kick, us. */
    uint64_t watermark;      /* Delivered kicks that went out before their
                              * interval ended because the ring reached
                              * its watermark (vhost_kick_placed()). */
    uint64_t ring_full;      /* Kicks that went out at once, or before
                              * their interval ended, because the guest's
                              * ring overflowed in the last
                              * VHOST_RING_FULL_HOLDOFF_US
                              * (vhost_kick_ring_full()). */
};

/* The ring watermark of a held kick: a held kick is due at once, before
 * its interval ends, when the packets placed in the guest's ring since the
 * last kick reach 'placed', or when the free entries of the guest's ring
 * fall below one burst (VHOST_KICK_FREE_MIN): a guest asleep on a filling
 * ring would otherwise drop what does not fit.  NIC interrupt moderation
 * fires the same way after rx-frames packets (ethtool -C), whatever its
 * timer says.  Packets, 1..VHOST_KICK_WATERMARK_MAX; 0 (the default,
 * tx-kick-watermark=auto): a quarter of the ring the guest set up, so
 * that three quarters are left for what arrives while the guest wakes up
 * (64 packets on a 256-entry ring leave 192, 38 us at 5 Mpps; half the
 * ring lost packets that a kick per burst did not lose in the closed-loop
 * model of tests/test-vhost-moderation.c, at 2 Mpps in bursts with a
 * 20 us wake-up). */
#define VHOST_KICK_WATERMARK_MAX 32768
#define VHOST_KICK_FREE_MIN 32

/* Moderation state of one queue.
 *
 * Invariant: stats.taken_over == stats.delivered + stats.coalesced
 *                                + stats.discarded + (pending ? 1 : 0). */
struct vhost_kick {
    uint32_t interval_us;       /* 1..1000000: at most one kick per
                                 * interval; 0 (adaptive moderation at a
                                 * floor of 0): every kick at once. */
    bool pending;               /* A taken-over kick awaits delivery. */
    bool postpone_counted;      /* 'stats.postponed' counted this one. */
    long long int pending_us;   /* First request of the pending kick. */
    long long int last_kick_us; /* Last kick that went out (ours or the
                                 * library's); LLONG_MIN before the first. */
    bool deferring;             /* The caller takes kicks over (auto or
                                 * adaptive mode with deferred kicks). */
    bool point_known;           /* 'point_used' is valid. */
    uint16_t point_used;        /* Split ring: used->idx when the last kick
                                 * went out, for the EVENT_IDX "still
                                 * wanted" question (vhost-ring.h). */
    uint32_t watermark;         /* 0 (a quarter of the ring) or 1..32768:
                                 * see VHOST_KICK_WATERMARK_MAX. */
    uint32_t placed;            /* Packets placed since the last kick went
                                 * out (saturating). */
    bool kicked_in_burst;       /* A kick went out (VHOST_KICK_NOW) during
                                 * the enqueue vhost_kick_placed() is told
                                 * of next: its packets are covered. */
    bool early;                 /* The pending kick reached the watermark
                                 * or the ring overflowed: due at once. */
    bool early_full;            /* 'early' because the ring overflowed. */
    bool early_unwritten;       /* 'early' because a kick let go at once
                                 * was not written
                                 * (vhost_kick_unwritten()). */
    long long int full_until_us; /* Hold nothing before this time: the
                                  * ring overflowed (LLONG_MIN: never). */
    struct vhost_kick_stats stats;
};

void vhost_kick_init(struct vhost_kick *, uint32_t interval_us);
void vhost_kick_set_interval(struct vhost_kick *, uint32_t interval_us);
enum vhost_kick_action vhost_kick_request(struct vhost_kick *,
                                          long long int now_us);
enum vhost_kick_action vhost_kick_request_now(struct vhost_kick *,
                                              long long int now_us);
long long int vhost_kick_deadline(const struct vhost_kick *);
bool vhost_kick_due(const struct vhost_kick *, long long int now_us);
void vhost_kick_unwritten(struct vhost_kick *, long long int now_us);
bool vhost_kick_run(struct vhost_kick *, bool wants_intr,
                    long long int now_us);
void vhost_kick_delivered(struct vhost_kick *, long long int now_us);
void vhost_kick_reset(struct vhost_kick *);
void vhost_kick_clear_stats(struct vhost_kick *);
void vhost_kick_set_deferring(struct vhost_kick *, bool deferring);
void vhost_kick_note_point(struct vhost_kick *, uint16_t used_idx);
void vhost_kick_forget_point(struct vhost_kick *);
bool vhost_kick_get_point(const struct vhost_kick *, uint16_t *used_idx);
void vhost_kick_set_watermark(struct vhost_kick *, uint32_t watermark);
void vhost_kick_placed(struct vhost_kick *, uint32_t n, uint32_t ring_size,
                       uint32_t free_entries);
uint32_t vhost_kick_watermark_effective(uint32_t watermark,
                                        uint32_t ring_size);
void vhost_kick_ring_full(struct vhost_kick *, long long int now_us);

#endif /* vhost-kick.h */
