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

/* The interrupt-aware tx policy of one vhost tx queue (see
 * vhost-tx-policy.h): per burst, send now or stage, and when to flush what
 * is staged.  Pure standard C: the clock, the send and the drop are the
 * caller's.
 *
 * Common rules for every function below: one thread at a time per struct
 * vhost_txp (the caller locks); times are microseconds of the caller's
 * monotonic clock; the send and drop callbacks must not call back into the
 * same struct vhost_txp. */

#include "vhost-tx-policy.h"

#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t
clamp_interval(enum vhost_txp_mode mode, uint32_t interval_us)
{
    if (mode == VHOST_TXP_ADAPTIVE && !interval_us) {
        return 0;
    }
    return (interval_us < VHOST_TXP_INTERVAL_MIN ? VHOST_TXP_INTERVAL_MIN
            : interval_us > VHOST_TXP_INTERVAL_MAX ? VHOST_TXP_INTERVAL_MAX
            : interval_us);
}

static bool
deadline_reached(const struct vhost_txp *q, long long int now_us)
{
    return q->n_staged > 0 && now_us >= q->oldest_us + q->interval_us;
}

/* Initializes 'q' as an empty queue policy in 'mode' with a flush interval
 * of 'interval_us' microseconds (VHOST_TXP_INTERVAL_MIN..MAX; values outside
 * are clamped, except 0 in adaptive mode), nothing staged and all
 * statistics zero.  Before any other use of 'q', by the thread that creates
 * it. */
void
vhost_txp_init(struct vhost_txp *q, enum vhost_txp_mode mode,
               uint32_t interval_us)
{
    memset(q, 0, sizeof *q);
    q->mode = mode;
    q->interval_us = clamp_interval(mode, interval_us);
    q->full_until_us = LLONG_MIN;
}

/* Changes 'q' to 'mode' and 'interval_us' (microseconds,
 * VHOST_TXP_INTERVAL_MIN..MAX; values outside are clamped, except 0 in
 * adaptive mode).  If either
 * changes while packets are staged, they are first sent through 'send'
 * (reason VHOST_TXP_FLUSH_RECONFIG), so no packet is lost or reordered
 * across the change.  'now_us' is the current time.  The packets sent
 * belong to 'send' afterwards.  One thread at a time per 'q' (caller
 * locks). */
void
vhost_txp_set_config(struct vhost_txp *q, enum vhost_txp_mode mode,
                     uint32_t interval_us, long long int now_us,
                     vhost_txp_send_func *send, void *aux)
{
    interval_us = clamp_interval(mode, interval_us);
    if (mode != q->mode || interval_us != q->interval_us) {
        vhost_txp_flush(q, VHOST_TXP_FLUSH_RECONFIG, now_us, send, aux);
        q->mode = mode;
        q->interval_us = interval_us;
    }
}

static void
send_now(struct vhost_txp *q, void **pkts, int n,
         vhost_txp_send_func *send, void *aux)
{
    q->stats.sent_immediate += n;
    while (n > 0) {
        int chunk = n < VHOST_TXP_MAX_STAGED ? n : VHOST_TXP_MAX_STAGED;

        send(aux, pkts, chunk);
        pkts += chunk;
        n -= chunk;
    }
}

static void
stage(struct vhost_txp *q, void **pkts, int n, long long int now_us,
      vhost_txp_send_func *send, void *aux)
{
    q->stats.staged += n;
    for (int i = 0; i < n; i++) {
        if (!q->n_staged) {
            q->oldest_us = now_us;
        }
        q->staged[q->n_staged++] = pkts[i];
        if (q->n_staged >= VHOST_TXP_MAX_STAGED) {
            vhost_txp_flush(q, VHOST_TXP_FLUSH_FULL, now_us, send, aux);
        } else if (q->watermark
                   && (uint32_t) q->n_staged >= q->watermark) {
            vhost_txp_flush(q, VHOST_TXP_FLUSH_WATERMARK, now_us, send, aux);
        }
    }
}

/* Hands the burst of 'n' packets in 'pkts' (normally 0 to
 * NETDEV_MAX_BURST, any n >= 0 is handled) to the policy at time 'now_us'.
 * 'wants_intr' is the ring's answer in auto and adaptive mode (see
 * vhost_txp_needs_query()); the caller passes false in immediate mode, in
 * adaptive mode when vhost_txp_needs_query() is false, in auto and
 * adaptive mode when it does not stage (deferred kicks: DPDK asks the
 * ring after the enqueue), and true in timed mode.
 *
 * In immediate mode, or in auto or adaptive mode when the guest does not
 * want interrupts (adaptive: also while the interval is 0; both: also for
 * VHOST_RING_FULL_HOLDOFF_US after the guest's ring overflowed,
 * vhost_txp_ring_full()), whatever is staged is sent first (reason
 * VHOST_TXP_FLUSH_GUEST), then the burst, in chunks of at most
 * VHOST_TXP_MAX_STAGED packets.  Otherwise the burst is staged: packets
 * staged longer than the interval are sent first
 * (VHOST_TXP_FLUSH_DEADLINE), and every VHOST_TXP_MAX_STAGED staged
 * packets are sent at once (VHOST_TXP_FLUSH_FULL).  Order is always kept.
 *
 * Packets sent belong to 'send'; packets staged belong to 'q' until a
 * later flush or vhost_txp_drop().  The caller keeps ownership of the
 * 'pkts' array itself.  One thread at a time per 'q' (caller locks). */
void
vhost_txp_burst(struct vhost_txp *q, bool wants_intr,
                void **pkts, int n, long long int now_us,
                vhost_txp_send_func *send, void *aux)
{
    bool staging = (q->mode == VHOST_TXP_TIMED
                    || (q->mode == VHOST_TXP_AUTO && wants_intr)
                    || (q->mode == VHOST_TXP_ADAPTIVE && wants_intr
                        && q->interval_us));

    q->stats.bursts++;
    if (wants_intr) {
        q->stats.bursts_intr++;
    }
    if (staging && q->mode != VHOST_TXP_TIMED
        && now_us < q->full_until_us) {
        /* The guest's ring overflowed a moment ago: see
         * vhost_txp_ring_full(). */
        staging = false;
        q->stats.ring_full_bursts++;
    }

    if (!staging) {
        vhost_txp_flush(q, VHOST_TXP_FLUSH_GUEST, now_us, send, aux);
        send_now(q, pkts, n, send, aux);
        return;
    }

    if (deadline_reached(q, now_us)) {
        vhost_txp_flush(q, VHOST_TXP_FLUSH_DEADLINE, now_us, send, aux);
    }
    stage(q, pkts, n, now_us, send, aux);
    if (deadline_reached(q, now_us)) {
        vhost_txp_flush(q, VHOST_TXP_FLUSH_DEADLINE, now_us, send, aux);
    }
}

/* The caller's send callback found the guest's ring without room for some
 * packets at 'now_us' (they were dropped and counted): the guest cannot
 * keep up, and packets staged now would wait while it has nothing to do.
 * In auto and adaptive modes 'q' stages nothing for the next
 * VHOST_RING_FULL_HOLDOFF_US, or the next interval if that is longer:
 * bursts (and what is staged, first) are sent
 * at once, counted in stats.ring_full_bursts.  Timed mode stages as its
 * option says.  The rule of a held kick (vhost_kick_ring_full()) for DPDK
 * 22.11, which has no deferred kicks.  One thread at a time per 'q'
 * (caller locks). */
void
vhost_txp_ring_full(struct vhost_txp *q, long long int now_us)
{
    q->full_until_us = now_us + vhost_ring_full_holdoff(q->interval_us);
}

/* Sets the staging watermark of 'q' (tx-kick-watermark as a number of
 * packets; 0 for "auto"): a queue with 'watermark' packets staged is
 * flushed at once (VHOST_TXP_FLUSH_WATERMARK), the same rule that delivers
 * a held kick early (lib/vhost-kick.h, vhost_kick_placed()).  Staging
 * holds at most VHOST_TXP_MAX_STAGED packets and flushes a full burst
 * anyway, so only a watermark of 1..31 changes anything; "auto" (0)
 * leaves staging at a full burst (a quarter of the 256 entries and more
 * of the rings guests set up is 64 and more).  Applies from
 * the next staged packet.  One thread at a time per 'q' (caller locks). */
void
vhost_txp_set_watermark(struct vhost_txp *q, uint32_t watermark)
{
    q->watermark = watermark < VHOST_TXP_MAX_STAGED ? watermark : 0;
}

/* Adaptive moderation (lib/vhost-moderation.h) moved the interval of 'q'
 * to 'interval_us' (0 to VHOST_TXP_INTERVAL_MAX; 0 means stage nothing
 * more).  Unlike vhost_txp_set_config() nothing is flushed here: staged
 * packets keep their staging time and are due at the new deadline (at
 * once if it passed), flushed by the next burst or vhost_txp_run(), in
 * order.  Only in adaptive mode; in other modes it does nothing.  One
 * thread at a time per 'q' (caller locks). */
void
vhost_txp_set_interval(struct vhost_txp *q, uint32_t interval_us)
{
    if (q->mode == VHOST_TXP_ADAPTIVE) {
        q->interval_us = clamp_interval(q->mode, interval_us);
    }
}

/* Sends the staged packets through 'send' (reason VHOST_TXP_FLUSH_DEADLINE)
 * if the oldest of them was staged 'interval_us' or more microseconds
 * before 'now_us'.  Returns true if it sent, false otherwise.
 *
 * Meant to be called on every PMD loop iteration (also when no traffic
 * arrives) so that no packet stays staged longer than the interval plus one
 * loop.  Packets sent belong to 'send' afterwards.  One thread at a time
 * per 'q' (caller locks); it may be another thread than the one that
 * calls vhost_txp_burst(). */
bool
vhost_txp_run(struct vhost_txp *q, long long int now_us,
              vhost_txp_send_func *send, void *aux)
{
    if (deadline_reached(q, now_us)) {
        vhost_txp_flush(q, VHOST_TXP_FLUSH_DEADLINE, now_us, send, aux);
        return true;
    }
    return false;
}

/* Sends all staged packets, in order, with a single call to 'send', counts
 * the flush under 'reason' and records how long the oldest packet waited
 * ('now_us' - staging time, microseconds, negative clamped to 0) in
 * stats.max_wait_us.  Does nothing, and counts nothing, if nothing is
 * staged.  Packets sent belong to 'send' afterwards.  One thread at a
 * time per 'q' (caller locks). */
void
vhost_txp_flush(struct vhost_txp *q, enum vhost_txp_reason reason,
                long long int now_us,
                vhost_txp_send_func *send, void *aux)
{
    long long int wait_us;
    int n = q->n_staged;

    if (!n) {
        return;
    }

    wait_us = now_us - q->oldest_us;
    if (wait_us > 0 && (uint64_t) wait_us > q->stats.max_wait_us) {
        q->stats.max_wait_us = wait_us;
    }
    if ((unsigned int) reason < VHOST_TXP_N_REASONS) {
        q->stats.flushes[reason]++;
    }

    q->n_staged = 0;
    send(aux, q->staged, n);
}

/* Hands all staged packets, in order, to 'drop' with a single call and
 * counts them in stats.staged_drops.  For when the queue can no longer send
 * (vring disabled, device gone).  Does nothing if nothing is staged.  The
 * packets belong to 'drop' afterwards.  One thread at a time per 'q'
 * (caller locks). */
void
vhost_txp_drop(struct vhost_txp *q, vhost_txp_drop_func *drop, void *aux)
{
    int n = q->n_staged;

    if (!n) {
        return;
    }
    q->stats.staged_drops += n;
    q->n_staged = 0;
    drop(aux, q->staged, n);
}

/* Returns the time, in microseconds of the caller's clock, at which the
 * staged packets must be sent (staging time of the oldest plus the
 * interval), or LLONG_MAX if nothing is staged.  For poll_timer_wait_until()
 * style scheduling.  Does not modify 'q'; same locking as the rest. */
long long int
vhost_txp_deadline(const struct vhost_txp *q)
{
    return q->n_staged ? q->oldest_us + q->interval_us : LLONG_MAX;
}

/* Returns true if vhost_txp_burst() needs the ring's answer (auto mode,
 * and adaptive mode while its interval is above 0 or something is
 * staged), false if the caller may skip the guest memory read (immediate:
 * never stages; timed: always stages; adaptive at interval 0 with nothing
 * staged: sends every burst at once whatever the answer).  A caller that
 * skips it in adaptive mode learns whether the guest wanted an interrupt
 * from the library's kick after the burst (vhost_txp_note_intr()).  Does
 * not modify 'q'; same locking as the rest. */
bool
vhost_txp_needs_query(const struct vhost_txp *q)
{
    return (q->mode == VHOST_TXP_AUTO
            || (q->mode == VHOST_TXP_ADAPTIVE
                && (q->interval_us || q->n_staged)));
}

/* Counts in stats.bursts_intr the last burst handed to vhost_txp_burst(),
 * whose 'wants_intr' the caller passed as false without asking the ring
 * (vhost_txp_needs_query() was false), because the guest turned out to
 * want an interrupt for it: the library kicked the guest when it placed
 * the burst.  Changes nothing else.  One thread at a time per 'q' (caller
 * locks). */
void
vhost_txp_note_intr(struct vhost_txp *q)
{
    q->stats.bursts_intr++;
}

/* Returns true if the ring's answer can change what vhost_txp_burst() does
 * with a burst of 'n' packets now: false in immediate and timed modes
 * (vhost_txp_needs_query()) and, in auto and adaptive modes, for a burst
 * of a whole number of full bursts (n a multiple of VHOST_TXP_MAX_STAGED,
 * n > 0) while nothing is staged and no staging watermark is set: staged,
 * such a burst would be flushed whole at once (VHOST_TXP_FLUSH_FULL), so
 * the same packets go out in the same calls either way and only the
 * counters differ (sent_immediate, or staged and flush_full).  Lets the
 * caller skip a read of the guest's ring, a cache line the guest writes on
 * every refill.  Does not modify 'q'; same locking as the rest. */
bool
vhost_txp_answer_matters(const struct vhost_txp *q, int n)
{
    if (!vhost_txp_needs_query(q)) {
        return false;
    }
    return (n <= 0 || n % VHOST_TXP_MAX_STAGED
            || q->n_staged || q->watermark);
}

/* Sets all statistics of 'q' to zero.  Staged packets are not affected.
 * One thread at a time per 'q' (caller locks). */
void
vhost_txp_clear_stats(struct vhost_txp *q)
{
    memset(&q->stats, 0, sizeof q->stats);
}

/* Returns the tx-flush-mode option spelling of 'mode' ("auto",
 * "immediate", "timed", "adaptive"), or "unknown" for a value outside the
 * enum.  The string is static.  Any thread. */
const char *
vhost_txp_mode_to_string(enum vhost_txp_mode mode)
{
    switch (mode) {
    case VHOST_TXP_AUTO:
        return "auto";
    case VHOST_TXP_IMMEDIATE:
        return "immediate";
    case VHOST_TXP_TIMED:
        return "timed";
    case VHOST_TXP_ADAPTIVE:
        return "adaptive";
    }
    return "unknown";
}

/* Parses 's', one of "auto", "immediate", "timed", "adaptive"
 * (case-sensitive), into
 * '*mode' and returns true.  Returns false and leaves '*mode' unchanged for
 * any other string, including NULL.  Any thread. */
bool
vhost_txp_mode_from_string(const char *s, enum vhost_txp_mode *mode)
{
    static const enum vhost_txp_mode modes[] = {
        VHOST_TXP_AUTO, VHOST_TXP_IMMEDIATE, VHOST_TXP_TIMED,
        VHOST_TXP_ADAPTIVE,
    };

    if (!s) {
        return false;
    }
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (!strcmp(s, vhost_txp_mode_to_string(modes[i]))) {
            *mode = modes[i];
            return true;
        }
    }
    return false;
}

/* Returns the statistics spelling of 'reason' ("deadline", "full",
 * "guest", "reconfigure", "watermark"), or "unknown" for a value outside
 * the enum.  The string is static.  Any thread. */
const char *
vhost_txp_reason_to_string(enum vhost_txp_reason reason)
{
    switch (reason) {
    case VHOST_TXP_FLUSH_DEADLINE:
        return "deadline";
    case VHOST_TXP_FLUSH_FULL:
        return "full";
    case VHOST_TXP_FLUSH_GUEST:
        return "guest";
    case VHOST_TXP_FLUSH_RECONFIG:
        return "reconfigure";
    case VHOST_TXP_FLUSH_WATERMARK:
        return "watermark";
    case VHOST_TXP_N_REASONS:
        break;
    }
    return "unknown";
}

/* Returns a malloc()'d string formatted from 'format' like printf().
 * Aborts if out of memory, like OVS's xasprintf(). */
static char * __attribute__((format(printf, 1, 2)))
error_message(const char *format, ...)
{
    va_list args;
    char *msg;
    int len;

    va_start(args, format);
    len = vsnprintf(NULL, 0, format, args);
    va_end(args);

    msg = len >= 0 ? malloc(len + 1) : NULL;
    if (!msg) {
        abort();
    }

    va_start(args, format);
    vsnprintf(msg, len + 1, format, args);
    va_end(args);
    return msg;
}

/* Parses option 'name' (for the message, e.g. "tx-flush-interval") with
 * value 's': a decimal integer number of microseconds from 'min_us' to
 * 'max_us', with no sign, no leading or trailing white space and nothing
 * else.
 *
 * On success stores the value in '*us' and returns NULL.  On error leaves
 * '*us' unchanged and returns an error message that the caller must
 * free().  A NULL 's' is "not a number".  Any thread. */
char *
vhost_txp_parse_us(const char *name, const char *s, uint32_t min_us,
                   uint32_t max_us, uint32_t *us)
{
    unsigned long int value = 0;
    const char *p;

    if (!s || !*s) {
        return error_message("%s \"%s\" is not a number", name, s ? s : "");
    }
    for (p = s; *p; p++) {
        if (*p < '0' || *p > '9') {
            return error_message("%s \"%s\" is not a number", name, s);
        }
        /* Saturate: once above the maximum, more digits change nothing. */
        if (value <= max_us) {
            value = value * 10 + (*p - '0');
        }
    }
    if (value < min_us || value > max_us) {
        return error_message("%s \"%s\" out of range (%"PRIu32" to %"PRIu32
                             " us)", name, s, min_us, max_us);
    }
    *us = value;
    return NULL;
}

/* Parses the tx-flush-interval option 's': vhost_txp_parse_us() from
 * VHOST_TXP_INTERVAL_MIN to VHOST_TXP_INTERVAL_MAX. */
char *
vhost_txp_parse_interval(const char *s, uint32_t *interval_us)
{
    return vhost_txp_parse_us("tx-flush-interval", s, VHOST_TXP_INTERVAL_MIN,
                              VHOST_TXP_INTERVAL_MAX, interval_us);
}
