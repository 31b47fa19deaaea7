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

#ifndef VHOST_TX_POLICY_H
#define VHOST_TX_POLICY_H 1

/* The interrupt-aware tx policy of one vhost tx queue (one vring).
 *
 * Per burst it decides: send now, or stage and send later so that one kick
 * (one guest interrupt) covers many packets.  It is pure: packets are opaque
 * pointers, time is passed in by the caller (microseconds of a monotonic
 * clock), and sending is a callback.  No DPDK or OVS runtime state is
 * touched, so tests/test-vhost-tx-policy.c drives it with a fake clock.
 *
 * The caller (lib/netdev-vhost.c) owns locking: one struct vhost_txp is used
 * by one thread at a time.  Rules: DESIGN-NOTES.md section 4; seed 002
 * ("vhost: Expose virtio interrupt need on rte_vhost API"). */

#include <stdbool.h>
#include <stdint.h>
#include "vhost-ring.h"

/* Largest number of packets staged per queue (one full burst). */
#define VHOST_TXP_MAX_STAGED 32

/* Flush interval, microseconds. */
#define VHOST_TXP_INTERVAL_MIN 1
#define VHOST_TXP_INTERVAL_MAX 1000000
#define VHOST_TXP_INTERVAL_DEFAULT 50

enum vhost_txp_mode {
    VHOST_TXP_AUTO,       /* Stage only while the guest wants interrupts. */
    VHOST_TXP_IMMEDIATE,  /* Never stage. */
    VHOST_TXP_TIMED,      /* Always stage. */
    VHOST_TXP_ADAPTIVE,   /* As auto, with the interval of adaptive
                           * moderation (lib/vhost-moderation.h), which
                           * may be 0: then nothing is staged. */
};

/* Why staged packets were flushed. */
enum vhost_txp_reason {
    VHOST_TXP_FLUSH_DEADLINE,   /* Oldest staged packet reached interval. */
    VHOST_TXP_FLUSH_FULL,       /* VHOST_TXP_MAX_STAGED packets staged. */
    VHOST_TXP_FLUSH_GUEST,      /* A burst that is not staged (guest
                                 * stopped wanting interrupts in auto). */
    VHOST_TXP_FLUSH_RECONFIG,   /* Mode or interval change (also to
                                 * immediate), queue disable, destroy. */
    VHOST_TXP_FLUSH_WATERMARK,  /* 'watermark' packets staged (below
                                 * VHOST_TXP_MAX_STAGED). */
    VHOST_TXP_N_REASONS
};

/* Counters of one queue.  All counts since creation or the last clear. */
struct vhost_txp_stats {
    uint64_t bursts;            /* Bursts handed to vhost_txp_burst(). */
    uint64_t bursts_intr;       /* ...of which found 'wants_intr' true,
                                 * or were counted afterwards
                                 * (vhost_txp_note_intr()). */
    uint64_t sent_immediate;    /* Packets sent without staging. */
    uint64_t staged;            /* Packets that were staged. */
    uint64_t flushes[VHOST_TXP_N_REASONS];  /* Flush calls by reason. */
    uint64_t staged_drops;      /* Staged packets dropped, not sent. */
    uint64_t max_wait_us;       /* Longest a packet waited staged, us. */
    uint64_t ring_full_bursts;  /* Bursts sent at once, not staged, because
                                 * the guest's ring overflowed in the last
                                 * VHOST_RING_FULL_HOLDOFF_US
                                 * (vhost_txp_ring_full()). */
};

/* Called with packets to send now, in order.  Takes ownership of all 'n'
 * (1 to VHOST_TXP_MAX_STAGED) packets in 'pkts', not of the array, which
 * it must not keep.  Must not call back into the same struct vhost_txp. */
typedef void vhost_txp_send_func(void *aux, void **pkts, int n);

/* Called with staged packets that can no longer be sent (the queue is
 * gone).  Takes ownership of all 'n' packets, as for the send callback. */
typedef void vhost_txp_drop_func(void *aux, void **pkts, int n);

struct vhost_txp {
    enum vhost_txp_mode mode;
    uint32_t interval_us;       /* VHOST_TXP_INTERVAL_MIN..MAX; in adaptive
                                 * mode also 0 (never stage). */
    int n_staged;               /* 0..VHOST_TXP_MAX_STAGED. */
    uint32_t watermark;         /* Flush at this many staged packets
                                 * (tx-kick-watermark, 1..31); 0 or
                                 * VHOST_TXP_MAX_STAGED and above: at a
                                 * full burst only. */
    long long int oldest_us;    /* Staging time of staged[0], valid only
                                 * while 'n_staged' > 0. */
    long long int full_until_us; /* Auto and adaptive modes stage nothing
                                  * before this time: the guest's ring
                                  * overflowed (LLONG_MIN: never). */
    void *staged[VHOST_TXP_MAX_STAGED];
    struct vhost_txp_stats stats;
};

void vhost_txp_init(struct vhost_txp *, enum vhost_txp_mode,
                    uint32_t interval_us);
void vhost_txp_set_config(struct vhost_txp *, enum vhost_txp_mode,
                          uint32_t interval_us,
                          long long int now_us,
                          vhost_txp_send_func *, void *aux);
void vhost_txp_burst(struct vhost_txp *, bool wants_intr,
                     void **pkts, int n, long long int now_us,
                     vhost_txp_send_func *, void *aux);
void vhost_txp_set_interval(struct vhost_txp *, uint32_t interval_us);
void vhost_txp_set_watermark(struct vhost_txp *, uint32_t watermark);
bool vhost_txp_run(struct vhost_txp *, long long int now_us,
                   vhost_txp_send_func *, void *aux);
void vhost_txp_flush(struct vhost_txp *, enum vhost_txp_reason,
                     long long int now_us,
                     vhost_txp_send_func *, void *aux);
void vhost_txp_drop(struct vhost_txp *, vhost_txp_drop_func *, void *aux);
long long int vhost_txp_deadline(const struct vhost_txp *);
bool vhost_txp_needs_query(const struct vhost_txp *);
void vhost_txp_note_intr(struct vhost_txp *);
bool vhost_txp_answer_matters(const struct vhost_txp *, int n);
void vhost_txp_ring_full(struct vhost_txp *, long long int now_us);
void vhost_txp_clear_stats(struct vhost_txp *);

const char *vhost_txp_mode_to_string(enum vhost_txp_mode);
bool vhost_txp_mode_from_string(const char *, enum vhost_txp_mode *);
const char *vhost_txp_reason_to_string(enum vhost_txp_reason);
char *vhost_txp_parse_us(const char *name, const char *, uint32_t min_us,
                         uint32_t max_us, uint32_t *us);
char *vhost_txp_parse_interval(const char *, uint32_t *interval_us);

#endif /* vhost-tx-policy.h */
