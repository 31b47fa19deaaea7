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

#ifndef VHOST_MODERATION_H
#define VHOST_MODERATION_H 1

/* Adaptive kick moderation of one vhost tx queue (tx-flush-mode=adaptive):
 * the coalescing interval of the queue follows what the queue sees, as NIC
 * interrupt moderation does (Linux lib/dim/net_dim.c: sample every N
 * events, compare with the previous sample, step through a few profiles,
 * park at the edges).
 *
 * The input is one call per burst the queue sends: how many packets, and
 * whether the guest would have been woken for it at the floor interval
 * ("wanted": the guest's ring asked for an interrupt, or a kick was asked
 * for or already held).  Every VHOST_MOD_SAMPLE_EVENTS bursts (at least
 * VHOST_MOD_SAMPLE_MIN_US apart) or after VHOST_MOD_SAMPLE_MAX_US, a sample
 * closes and gives a target profile from how many of those wake-ups came
 * within one ceiling of the one before (the wake-ups a ceiling-long
 * interval would fold), or the floor if the sample carried fewer than
 * VHOST_MOD_MIN_PPS packets per second; the interval steps towards it
 * (DESIGN-NOTES.md section 11 has the rule and why).
 *
 * It is pure: time is passed in (microseconds of a monotonic clock) and
 * the caller applies the interval (lib/vhost-tx-policy.h staging deadline,
 * lib/vhost-kick.h kick deferral), so tests/test-vhost-moderation.c drives
 * it with a fake clock.  The caller owns locking: one struct vhost_mod is
 * used by one thread at a time (the queue's tx lock). */

#include <stdbool.h>
#include <stdint.h>

/* Profiles: floor + (ceiling - floor) * {0, 1, 2, 4, 8} / 8. */
#define VHOST_MOD_N_PROFILES 5

/* A sample closes after this many bursts (net_dim's DIM_NEVENTS, 64)... */
#define VHOST_MOD_SAMPLE_EVENTS 64
/* ...but not before this long (us), so that one sample averages over at
 * least 1 ms at any rate... */
#define VHOST_MOD_SAMPLE_MIN_US 1000
/* ...and at the first burst this long (us) after it started, so that a low
 * rate is recognised within 10 ms. */
#define VHOST_MOD_SAMPLE_MAX_US 10000
/* A burst this long (us) after the one before finds an idle queue: back to
 * the floor at once, unless it is a full burst (NETDEV_MAX_BURST, 32
 * packets: a backlog, the PMD thread was held up, the traffic was not
 * idle). */
#define VHOST_MOD_IDLE_US 100000
#define VHOST_MOD_FULL_BURST 32

/* Fewer wanted bursts than this in a sample: the floor (too few to say). */
#define VHOST_MOD_MIN_WANTED 8
/* Fewer close wake-ups than this per second in a sample: the floor.  This
 * many kicks is what an interval must save to be worth any delay: 2000
 * kicks of about 1.3 us each (DESIGN-NOTES.md section 3) are 0.26% of the PMD
 * thread, and as many guest wake-ups (VM exit, interrupt injection,
 * softirq: a few us each) about 1% of a vCPU.  A stream of 1 kpps whose
 * sender sometimes sends two packets close together stays at the floor. */
#define VHOST_MOD_MIN_CLOSE_PS 2000
/* Fewer packets than this per second in a sample: the floor, whatever
 * the wake-ups.  A low-rate queue's latency is what its guest notices
 * and its kicks are bounded by its packets; a NIC's adaptive moderation
 * keeps such a queue in its lowest-latency class as well (Intel's
 * igb/ixgbe ITR classes, by packets and bytes per interrupt).  With a
 * ceiling longer than the mean gap of a random (Poisson) stream, most of
 * its wake-ups come within one ceiling of the one before even at
 * 10 kpps: a 90 us ceiling then added about 8 us of median latency there
 * in the project's benchmark.  16000 leaves room above a 10 kpps stream
 * that comes in clusters: the benchmark's Poisson stream runs at 11.1
 * kpps between its pauses, and a sample of 64 of its packets measures
 * above 16000 per second about once in 300.  Packets, not bytes: a
 * queue of large frames or TSO segments under 16000 per second is not
 * moderated either. */
#define VHOST_MOD_MIN_PPS 16000

/* Option ranges, microseconds: tx-flush-interval-min 0..1000000 (0: a kick
 * at once, nothing staged), tx-flush-interval-max 1..1000000, min <= max. */
#define VHOST_MOD_FLOOR_MIN 0
#define VHOST_MOD_CEILING_MIN 1
#define VHOST_MOD_BOUND_MAX 1000000
#define VHOST_MOD_FLOOR_DEFAULT 0
#define VHOST_MOD_CEILING_DEFAULT 50

/* Counters of one queue, since creation or the last clear. */
struct vhost_mod_stats {
    uint64_t samples;           /* Samples closed. */
    uint64_t wakeups;           /* Bursts recorded as waking the guest at
                                 * the floor ('wanted' of
                                 * vhost_mod_burst()). */
    uint64_t changes;           /* Interval changes. */
    uint64_t last_wakeups_ps;   /* Last sample: wanted bursts per second. */
    uint64_t last_pps;          /* Last sample: packets per second. */
    uint64_t last_close_pct;    /* Last sample: % of wanted bursts within
                                 * the ceiling of the previous one. */
    uint64_t ring_full;         /* Returns to the floor because the guest's
                                 * ring was full (vhost_mod_ring_full()). */
};

struct vhost_mod {
    uint32_t floor_us;          /* 0..1000000. */
    uint32_t ceiling_us;        /* floor_us..1000000, at least 1. */
    int profile;                /* 0..VHOST_MOD_N_PROFILES - 1. */
    int prev_target;            /* Target of the previous sample, or -1. */
    bool started;               /* 'start_us' is valid. */
    long long int start_us;     /* Start of the open sample. */
    long long int last_burst_us;    /* Time of the last burst. */
    uint32_t bursts;            /* Of the open sample. */
    uint64_t packets;           /* Of the open sample. */
    uint64_t wanted;            /* Of the open sample. */
    uint64_t close;             /* ...of 'wanted', within the ceiling of
                                 * the wanted burst before. */
    bool last_wanted_known;     /* 'last_wanted_us' is valid. */
    long long int last_wanted_us;   /* Time of the last wanted burst. */
    struct vhost_mod_stats stats;
};

void vhost_mod_init(struct vhost_mod *, uint32_t floor_us,
                    uint32_t ceiling_us);
bool vhost_mod_set_bounds(struct vhost_mod *, uint32_t floor_us,
                          uint32_t ceiling_us);
bool vhost_mod_burst(struct vhost_mod *, uint32_t n_packets, bool wanted,
                     long long int now_us);
bool vhost_mod_ring_full(struct vhost_mod *, long long int now_us);
uint32_t vhost_mod_interval(const struct vhost_mod *);
uint32_t vhost_mod_profile_us(const struct vhost_mod *, int profile);
int vhost_mod_target(uint64_t wanted, uint64_t close,
                     long long int elapsed_us);
void vhost_mod_clear_stats(struct vhost_mod *);
char *vhost_mod_parse_bound(const char *name, const char *s,
                            uint32_t min_us, uint32_t *us);

#endif /* vhost-moderation.h */
