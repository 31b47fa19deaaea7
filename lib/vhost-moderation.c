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

/* Adaptive kick moderation of one vhost tx queue: the pure sampler and
 * stepper behind tx-flush-mode=adaptive (see vhost-moderation.h).
 * Pure standard C; the clock is the caller's.
 *
 * The shape is Linux lib/dim/net_dim.c's (net_dim(), net_dim_decision(),
 * net_dim_step()): a sample closes every N events, its statistics are
 * compared with the previous sample's, the profile index moves one step
 * at a time and parks at the edges.  Unlike net_dim, which climbs towards
 * whatever gives more bytes per ms by trial, the direction here comes
 * from the sample itself: how the guest would be woken at the floor
 * interval names a target profile, because for kicks that
 * is what an interval trades against: the share of those wake-ups that
 * came within one ceiling of the one before (DESIGN-NOTES.md section
 * 11).
 *
 * Common rules for every function below: one thread at a time per struct
 * vhost_mod (the caller locks); times are microseconds of the caller's
 * monotonic clock. */

#include "vhost-moderation.h"
#include "vhost-tx-policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Eighths of (ceiling - floor) above the floor, per profile. */
static const uint32_t profile_eighths[VHOST_MOD_N_PROFILES] = {
    0, 1, 2, 4, 8,
};

static void
clamp_bounds(uint32_t *floor_us, uint32_t *ceiling_us)
{
    if (*floor_us > VHOST_MOD_BOUND_MAX) {
        *floor_us = VHOST_MOD_BOUND_MAX;
    }
    if (*ceiling_us < VHOST_MOD_CEILING_MIN) {
        *ceiling_us = VHOST_MOD_CEILING_MIN;
    }
    if (*ceiling_us > VHOST_MOD_BOUND_MAX) {
        *ceiling_us = VHOST_MOD_BOUND_MAX;
    }
    if (*ceiling_us < *floor_us) {
        *ceiling_us = *floor_us;
    }
}

/* Initializes 'm' at the floor (profile 0), no sample open, no previous
 * sample, zeroed counters, with bounds 'floor_us' (0..1000000) and
 * 'ceiling_us' (floor_us..1000000, at least 1; out-of-range values are
 * clamped).  Before 'm' is shared. */
void
vhost_mod_init(struct vhost_mod *m, uint32_t floor_us, uint32_t ceiling_us)
{
    memset(m, 0, sizeof *m);
    clamp_bounds(&floor_us, &ceiling_us);
    m->floor_us = floor_us;
    m->ceiling_us = ceiling_us;
    m->prev_target = -1;
}

/* Changes the bounds of 'm' (clamped as in vhost_mod_init()), keeping the
 * profile index and the open sample: the interval becomes the same
 * profile between the new bounds.  Returns true if the interval changed
 * (counted in stats.changes). */
bool
vhost_mod_set_bounds(struct vhost_mod *m, uint32_t floor_us,
                     uint32_t ceiling_us)
{
    uint32_t old = vhost_mod_interval(m);

    clamp_bounds(&floor_us, &ceiling_us);
    m->floor_us = floor_us;
    m->ceiling_us = ceiling_us;
    if (vhost_mod_interval(m) != old) {
        m->stats.changes++;
        return true;
    }
    return false;
}

/* Returns the interval, in microseconds, of profile 'profile' (0 to
 * VHOST_MOD_N_PROFILES - 1, clamped) between the bounds of 'm': the floor
 * for 0, the ceiling for the last, 1/8, 1/4 and 1/2 of the way between
 * them for the others (rounded down). */
uint32_t
vhost_mod_profile_us(const struct vhost_mod *m, int profile)
{
    uint64_t span = m->ceiling_us - m->floor_us;

    if (profile < 0) {
        profile = 0;
    } else if (profile >= VHOST_MOD_N_PROFILES) {
        profile = VHOST_MOD_N_PROFILES - 1;
    }
    return m->floor_us + span * profile_eighths[profile] / 8;
}

/* Returns the current coalescing interval of 'm', microseconds: the kick
 * deferral interval (lib/vhost-kick.h) or the staging deadline
 * (lib/vhost-tx-policy.h) the caller applies.  0 means no moderation: every
 * kick at once, nothing staged. */
uint32_t
vhost_mod_interval(const struct vhost_mod *m)
{
    return vhost_mod_profile_us(m, m->profile);
}

/* Returns the target profile of a sample that lasted 'elapsed_us'
 * microseconds (clamped to at least 1) and saw 'wanted' bursts for which
 * the guest would have been woken at the floor, 'close' of which came
 * within the ceiling of the wanted burst before them: the wake-ups an
 * interval of one ceiling would have folded into an earlier kick.  The
 * last profile (ceiling) when at least 1/2 of the wake-ups are close (the
 * ceiling at least halves the kicks), one profile less for each halving of
 * that share, down to 1/16.  The floor below 1/16, with fewer than
 * VHOST_MOD_MIN_WANTED wanted bursts (too few to tell; at most 800 per
 * second), or with fewer than VHOST_MOD_MIN_CLOSE_PS close wake-ups per
 * second (an interval would save too few kicks to be worth any delay).
 * Regular traffic spaced more than the ceiling apart has no close
 * wake-ups and stays at the floor at any rate; traffic spaced closer,
 * at VHOST_MOD_MIN_CLOSE_PS or more wake-ups per second, goes to the
 * ceiling.  (vhost_mod_burst() targets the floor without asking this
 * when a sample carried fewer than VHOST_MOD_MIN_PPS packets per
 * second.) */
int
vhost_mod_target(uint64_t wanted, uint64_t close, long long int elapsed_us)
{
    if (elapsed_us < 1) {
        elapsed_us = 1;
    }
    if (wanted < VHOST_MOD_MIN_WANTED
        || close * 1000000 < (uint64_t) VHOST_MOD_MIN_CLOSE_PS * elapsed_us) {
        return 0;
    }
    for (int k = 1; k < VHOST_MOD_N_PROFILES; k++) {
        /* close / wanted >= 1 / 2^k. */
        if (close << k >= wanted) {
            return VHOST_MOD_N_PROFILES - k;
        }
    }
    return 0;
}

/* The decision of a closed sample with target 't' (net_dim_decision()'s
 * place).  Upwards one profile per sample (net_dim_step()), and only if
 * the previous sample's target was above the current profile too: one
 * noisy sample does not add delay.  Downwards at once to the higher of the
 * two samples' targets if both are at least two profiles below, or both
 * are the floor: latency comes back within two samples, and a share of
 * close wake-ups that wavers around one threshold does not flap between
 * neighbouring profiles (as net_dim parks on top until the statistics
 * change).  Otherwise, and at the edges, the profile parks. */
static void
decide(struct vhost_mod *m, int t)
{
    int prev = m->prev_target;
    int higher = prev > t ? prev : t;

    if (t > m->profile && prev > m->profile) {
        m->profile++;
    } else if (prev >= 0 && higher < m->profile
               && (higher <= m->profile - 2 || higher == 0)) {
        m->profile = higher;
    }
    m->prev_target = t;
}

static void
sample_restart(struct vhost_mod *m, long long int now_us)
{
    m->start_us = now_us;
    m->bursts = 0;
    m->packets = 0;
    m->wanted = 0;
    m->close = 0;
}

/* Records one burst of 'n_packets' sent on the queue at 'now_us';
 * 'wanted' is true if the guest would have been woken for it at the floor
 * (staging: the ring said the guest wants an interrupt; deferred kicks:
 * DPDK asked guest_notify(), or a kick was already held).  Closes the open
 * sample when it has VHOST_MOD_SAMPLE_EVENTS bursts and lasted
 * VHOST_MOD_SAMPLE_MIN_US, or lasted VHOST_MOD_SAMPLE_MAX_US; the next
 * sample starts at 'now_us'.  A sample of fewer than VHOST_MOD_MIN_PPS
 * packets per second targets the floor; otherwise vhost_mod_target()
 * decides.  Returns true if the interval changed
 * (vhost_mod_interval(); counted in stats.changes): the caller applies it.
 * A burst of fewer than VHOST_MOD_FULL_BURST packets VHOST_MOD_IDLE_US or
 * more after the one before (an idle queue) brings the floor back at once
 * and starts a new sample.  A clock that
 * goes backwards counts as no time passed. */
bool
vhost_mod_burst(struct vhost_mod *m, uint32_t n_packets, bool wanted,
                long long int now_us)
{
    uint32_t old = vhost_mod_interval(m);
    bool idle_reset = false;

    if (!m->started) {
        m->started = true;
        m->start_us = now_us;
    } else if (now_us - m->last_burst_us >= VHOST_MOD_IDLE_US
               && n_packets < VHOST_MOD_FULL_BURST) {
        /* An idle queue: what the open sample saw is stale, and nothing
         * is coming to fold into a kick.  Back to the floor at once.  (A
         * full burst after the gap is a backlog: the PMD thread was held
         * up, on a shared core, while traffic went on.) */
        m->profile = 0;
        m->prev_target = 0;
        sample_restart(m, now_us);
        idle_reset = true;
    }
    m->last_burst_us = now_us;
    m->bursts++;
    m->packets += n_packets;
    if (wanted) {
        if (m->last_wanted_known
            && now_us - m->last_wanted_us <= (long long int) m->ceiling_us) {
            m->close++;
        }
        m->last_wanted_known = true;
        m->last_wanted_us = now_us;
        m->wanted++;
        m->stats.wakeups++;
    }

    long long int elapsed = now_us - m->start_us;
    if (elapsed < 1) {
        elapsed = 1;
    }
    if (elapsed >= VHOST_MOD_SAMPLE_MAX_US
        || (m->bursts >= VHOST_MOD_SAMPLE_EVENTS
            && elapsed >= VHOST_MOD_SAMPLE_MIN_US)) {
        /* A low packet rate: the floor (VHOST_MOD_MIN_PPS). */
        int t = (m->packets * 1000000 < (uint64_t) VHOST_MOD_MIN_PPS * elapsed
                 ? 0 : vhost_mod_target(m->wanted, m->close, elapsed));

        m->stats.samples++;
        m->stats.last_wakeups_ps = m->wanted * 1000000 / elapsed;
        m->stats.last_pps = m->packets * 1000000 / elapsed;
        m->stats.last_close_pct = m->wanted ? 100 * m->close / m->wanted
                                            : 0;
        decide(m, t);
        sample_restart(m, now_us);
    } else if (!idle_reset) {
        return false;
    }

    if (vhost_mod_interval(m) != old) {
        m->stats.changes++;
        return true;
    }
    return false;
}

/* The guest's ring had no room for some packets of a burst sent at
 * 'now_us' (the caller counted them as dropped): the guest does not keep
 * up with what one kick per interval gives it, so any interval above the
 * floor costs packets.  Back to the floor at once, and a new sample
 * starts, so that the next decision sees the floor's wake-ups only
 * (counted in stats.ring_full when the interval was above the floor).
 * Returns true if the interval changed (stats.changes): the caller
 * applies it.  The ring is the resource NIC moderation watches too: a
 * NIC's rx-frames fires before its timer. */
bool
vhost_mod_ring_full(struct vhost_mod *m, long long int now_us)
{
    uint32_t old = vhost_mod_interval(m);

    m->profile = 0;
    m->prev_target = 0;
    m->started = true;
    sample_restart(m, now_us);
    if (vhost_mod_interval(m) != old) {
        m->stats.ring_full++;
        m->stats.changes++;
        return true;
    }
    return false;
}

/* Zeroes the counters of 'm'; the profile and the open sample are kept. */
void
vhost_mod_clear_stats(struct vhost_mod *m)
{
    memset(&m->stats, 0, sizeof m->stats);
}

/* Parses option 'name' (for the message, e.g. "tx-flush-interval-min")
 * with value 's': a decimal integer number of microseconds from 'min_us'
 * to VHOST_MOD_BOUND_MAX, digits only (no sign, no white space).  On
 * success stores it in '*us' and returns NULL; on error leaves '*us'
 * unchanged and returns a message the caller must free().  A NULL 's' is
 * "not a number".  Any thread. */
char *
vhost_mod_parse_bound(const char *name, const char *s, uint32_t min_us,
                      uint32_t *us)
{
    return vhost_txp_parse_us(name, s, min_us, VHOST_MOD_BOUND_MAX, us);
}
