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

/* Unit test of the tx policy (lib/vhost-tx-policy.c) with a fake clock.
 * Packets are small integers cast to pointers; the send and drop callbacks
 * print what they get and check that every packet handed in comes out
 * exactly once, in order.  Usage: test-vhost-tx-policy SCENARIO. */

#include "vhost-tx-policy.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OVS_UNUSED
#define OVS_UNUSED __attribute__((__unused__))
#endif

#define MAX_PKTS 1000

static long long int now;       /* Fake clock, microseconds. */
static int next_in = 1;         /* Id of the next packet handed in. */
static int next_out = 1;        /* Id the next packet out must have. */
static int seen[MAX_PKTS];      /* Times each id came out. */
static int errors;
static int aux_cookie;          /* Passed as 'aux'; callbacks check it. */

static void
error(const char *msg, int id)
{
    printf("error: %s (packet %d)\n", msg, id);
    errors++;
}

static void
receive(const char *what, void *aux, void **pkts, int n)
{
    if (aux != &aux_cookie) {
        error("wrong aux", 0);
    }
    if (n < 1 || n > VHOST_TXP_MAX_STAGED) {
        error("bad count", n);
    }
    printf("%s n=%d:", what, n);
    for (int i = 0; i < n; i++) {
        int id = (int) (intptr_t) pkts[i];

        printf(" %d", id);
        if (id < 1 || id >= next_in) {
            error("never handed in", id);
            continue;
        }
        if (id != next_out) {
            error("out of order", id);
        }
        seen[id]++;
        next_out = id + 1;
    }
    printf("\n");
}

static void
send_cb(void *aux, void **pkts, int n)
{
    receive("send", aux, pkts, n);
}

static void
drop_cb(void *aux, void **pkts, int n)
{
    receive("drop", aux, pkts, n);
}

static void
print_stats(const struct vhost_txp *q)
{
    const struct vhost_txp_stats *s = &q->stats;

    printf("stats: bursts=%llu bursts_intr=%llu sent_immediate=%llu "
           "staged=%llu deadline=%llu full=%llu guest=%llu reconfigure=%llu "
           "staged_drops=%llu max_wait_us=%llu n_staged=%d\n",
           (unsigned long long) s->bursts,
           (unsigned long long) s->bursts_intr,
           (unsigned long long) s->sent_immediate,
           (unsigned long long) s->staged,
           (unsigned long long) s->flushes[VHOST_TXP_FLUSH_DEADLINE],
           (unsigned long long) s->flushes[VHOST_TXP_FLUSH_FULL],
           (unsigned long long) s->flushes[VHOST_TXP_FLUSH_GUEST],
           (unsigned long long) s->flushes[VHOST_TXP_FLUSH_RECONFIG],
           (unsigned long long) s->staged_drops,
           (unsigned long long) s->max_wait_us,
           q->n_staged);
}

/* Prints what is staged and when it is due. */
static void
show(const struct vhost_txp *q)
{
    long long int deadline = vhost_txp_deadline(q);

    if (deadline == LLONG_MAX) {
        printf("t=%lld: n_staged=%d deadline=none\n", now, q->n_staged);
    } else {
        printf("t=%lld: n_staged=%d deadline=%lld\n",
               now, q->n_staged, deadline);
    }
}

static void
init(struct vhost_txp *q, enum vhost_txp_mode mode, uint32_t interval_us)
{
    vhost_txp_init(q, mode, interval_us);
    printf("init mode=%s interval_us=%u needs_query=%d\n",
           vhost_txp_mode_to_string(q->mode), q->interval_us,
           vhost_txp_needs_query(q));
}

/* Hands 'n' new packets to the policy as one burst at time 'now'. */
static void
burst(struct vhost_txp *q, bool wants_intr, int n)
{
    void **pkts = malloc((n ? n : 1) * sizeof *pkts);

    if (!pkts || next_in + n >= MAX_PKTS) {
        abort();
    }
    if (n) {
        printf("t=%lld: burst wants_intr=%d pkts=%d..%d\n",
               now, wants_intr, next_in, next_in + n - 1);
    } else {
        printf("t=%lld: burst wants_intr=%d pkts=none\n", now, wants_intr);
    }
    for (int i = 0; i < n; i++) {
        pkts[i] = (void *) (intptr_t) next_in++;
    }
    vhost_txp_burst(q, wants_intr, pkts, n, now, send_cb, &aux_cookie);
    /* The caller keeps the array: scribble on it to catch a policy that
     * kept a pointer into it. */
    memset(pkts, 0, (n ? n : 1) * sizeof *pkts);
    free(pkts);
}

static void
run(struct vhost_txp *q)
{
    bool flushed;

    printf("t=%lld: run\n", now);
    flushed = vhost_txp_run(q, now, send_cb, &aux_cookie);
    printf("run returned %s\n", flushed ? "true" : "false");
}

static void
flush(struct vhost_txp *q, enum vhost_txp_reason reason)
{
    printf("t=%lld: flush reason=%s\n", now,
           vhost_txp_reason_to_string(reason));
    vhost_txp_flush(q, reason, now, send_cb, &aux_cookie);
}

static void
drop(struct vhost_txp *q)
{
    printf("t=%lld: drop\n", now);
    vhost_txp_drop(q, drop_cb, &aux_cookie);
}

static void
set_config(struct vhost_txp *q, enum vhost_txp_mode mode,
           uint32_t interval_us)
{
    printf("t=%lld: set_config mode=%s interval_us=%u\n", now,
           vhost_txp_mode_to_string(mode), interval_us);
    vhost_txp_set_config(q, mode, interval_us, now, send_cb, &aux_cookie);
    printf("now mode=%s interval_us=%u needs_query=%d\n",
           vhost_txp_mode_to_string(q->mode), q->interval_us,
           vhost_txp_needs_query(q));
}

/* Every packet handed in came out exactly once, in order, and nothing is
 * left staged. */
static void
check_conservation(const struct vhost_txp *q)
{
    int bad = q->n_staged != 0;

    for (int id = 1; id < next_in; id++) {
        if (seen[id] != 1) {
            printf("conservation: packet %d came out %d times\n",
                   id, seen[id]);
            bad = 1;
        }
    }
    if (q->n_staged) {
        printf("conservation: %d packets still staged\n", q->n_staged);
    }
    if (bad || errors) {
        printf("conservation: FAILED\n");
        errors++;
    } else {
        printf("conservation: ok\n");
    }
}

static void
test_immediate(struct vhost_txp *q)
{
    init(q, VHOST_TXP_IMMEDIATE, 50);
    now = 0;
    burst(q, false, 3);
    show(q);
    now = 10;
    burst(q, false, 0);
    burst(q, false, 32);
    /* Even a 'wants_intr' that the caller should not have asked for does
     * not make immediate mode stage. */
    now = 20;
    burst(q, true, 2);
    show(q);
    now = 1000;
    run(q);
}

static void
test_timed_deadline(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, 50);
    now = 0;
    burst(q, true, 3);
    show(q);
    now = 20;
    burst(q, true, 2);
    show(q);
    now = 49;
    run(q);
    now = 50;
    run(q);
    show(q);
    now = 60;
    burst(q, true, 1);
    /* The next burst finds the stage overdue: it is sent first. */
    now = 200;
    burst(q, true, 2);
    show(q);
    now = 250;
    run(q);
    show(q);
}

static void
test_auto_toggle(struct vhost_txp *q)
{
    init(q, VHOST_TXP_AUTO, 50);
    now = 0;
    burst(q, true, 3);
    now = 10;
    burst(q, true, 2);
    show(q);
    /* The guest stops wanting interrupts: staged first, then the burst. */
    now = 20;
    burst(q, false, 2);
    show(q);
    now = 30;
    burst(q, false, 1);
    now = 40;
    burst(q, true, 2);
    now = 45;
    burst(q, true, 0);
    show(q);
    now = 60;
    burst(q, false, 1);
    show(q);
}

static void
test_full(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, 1000);
    now = 0;
    burst(q, true, 20);
    show(q);
    /* The 32nd packet fills the stage; the other 8 start a new one. */
    now = 5;
    burst(q, true, 20);
    show(q);
    now = 1004;
    run(q);
    now = 1005;
    run(q);
}

static void
test_big_burst(struct vhost_txp *q)
{
    init(q, VHOST_TXP_IMMEDIATE, 50);
    now = 0;
    burst(q, false, 70);
    set_config(q, VHOST_TXP_TIMED, 50);
    now = 10;
    burst(q, true, 3);
    burst(q, true, 70);
    show(q);
    now = 60;
    run(q);
}

static void
test_run_deadline(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, 50);
    now = 100;
    run(q);
    burst(q, true, 2);
    show(q);
    now = 149;
    run(q);
    now = 150;
    run(q);
    now = 151;
    run(q);
    now = 200;
    burst(q, true, 1);
    now = 260;
    run(q);
    run(q);
}

static void
test_interval_bounds(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, VHOST_TXP_INTERVAL_MIN);
    now = 0;
    burst(q, true, 1);
    show(q);
    run(q);
    now = 1;
    run(q);

    set_config(q, VHOST_TXP_TIMED, VHOST_TXP_INTERVAL_MAX);
    now = 10;
    burst(q, true, 1);
    show(q);
    now = 1000009;
    run(q);
    now = 1000010;
    run(q);

    /* Out of range values are clamped, not trusted. */
    set_config(q, VHOST_TXP_TIMED, 0);
    set_config(q, VHOST_TXP_TIMED, VHOST_TXP_INTERVAL_MAX + 1);
}

static void
parse_one(const char *s)
{
    uint32_t value = 77;
    char *error_msg = vhost_txp_parse_interval(s, &value);

    if (s) {
        printf("parse \"%s\": ", s);
    } else {
        printf("parse NULL: ");
    }
    if (error_msg) {
        printf("error: %s (value %u)\n", error_msg, value);
        free(error_msg);
    } else {
        printf("ok %u\n", value);
    }
}

static void
test_parse_interval(struct vhost_txp *q OVS_UNUSED)
{
    static const char *inputs[] = {
        "1", "50", "1000000", "007",
        "0", "1000001", "4294967296", "99999999999999999999",
        "abc", "", "-1", "+5", " 5", "5 ", "5us", "0x10", "1.5", "1e3",
    };

    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        parse_one(inputs[i]);
    }
    parse_one(NULL);
}

static void
mode_one(const char *s)
{
    enum vhost_txp_mode mode = VHOST_TXP_TIMED;
    bool ok = vhost_txp_mode_from_string(s, &mode);

    if (s) {
        printf("mode \"%s\": ", s);
    } else {
        printf("mode NULL: ");
    }
    printf("%s %s\n", ok ? "ok" : "invalid", vhost_txp_mode_to_string(mode));
}

static void
test_names(struct vhost_txp *q)
{
    static const char *inputs[] = {
        "auto", "immediate", "timed", "Auto", "TIMED", "", "timed ", "off",
    };

    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        mode_one(inputs[i]);
    }
    mode_one(NULL);
    for (int r = 0; r <= VHOST_TXP_N_REASONS; r++) {
        printf("reason %d: %s\n", r, vhost_txp_reason_to_string(r));
    }
    init(q, VHOST_TXP_AUTO, VHOST_TXP_INTERVAL_DEFAULT);
    init(q, VHOST_TXP_IMMEDIATE, VHOST_TXP_INTERVAL_DEFAULT);
    init(q, VHOST_TXP_TIMED, VHOST_TXP_INTERVAL_DEFAULT);
}

static void
test_reconfigure(struct vhost_txp *q)
{
    init(q, VHOST_TXP_AUTO, 50);
    now = 0;
    burst(q, true, 3);
    /* No change: nothing happens. */
    now = 10;
    set_config(q, VHOST_TXP_AUTO, 50);
    show(q);
    now = 20;
    set_config(q, VHOST_TXP_AUTO, 100);
    now = 30;
    burst(q, true, 2);
    now = 40;
    set_config(q, VHOST_TXP_TIMED, 100);
    now = 50;
    burst(q, true, 2);
    now = 60;
    set_config(q, VHOST_TXP_IMMEDIATE, 100);
    /* Nothing staged: no flush counted. */
    now = 70;
    set_config(q, VHOST_TXP_AUTO, 100);
    now = 80;
    burst(q, false, 1);
    /* Disable or destroy of the queue while it can still send. */
    now = 90;
    burst(q, true, 2);
    now = 95;
    flush(q, VHOST_TXP_FLUSH_RECONFIG);
}

static void
test_drop(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, 50);
    now = 0;
    burst(q, true, 5);
    now = 10;
    drop(q);
    show(q);
    /* Nothing staged: no callback, no counter. */
    drop(q);
    flush(q, VHOST_TXP_FLUSH_RECONFIG);
    now = 20;
    burst(q, true, 2);
    now = 25;
    flush(q, VHOST_TXP_FLUSH_RECONFIG);
    now = 30;
    burst(q, true, 1);
    now = 100;
    /* The queue is gone: even an overdue stage is dropped, not sent. */
    drop(q);
}

static void
test_max_wait(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, 100);
    now = 0;
    burst(q, true, 1);
    now = 30;
    flush(q, VHOST_TXP_FLUSH_RECONFIG);
    print_stats(q);
    now = 40;
    burst(q, true, 1);
    now = 250;
    run(q);
    print_stats(q);
    now = 300;
    burst(q, true, 1);
    /* A clock that went backwards does not count as a wait. */
    now = 290;
    flush(q, VHOST_TXP_FLUSH_RECONFIG);
    print_stats(q);
    /* Clearing the statistics leaves staged packets alone. */
    now = 400;
    burst(q, true, 2);
    vhost_txp_clear_stats(q);
    print_stats(q);
    now = 410;
    flush(q, VHOST_TXP_FLUSH_DEADLINE);
}

/* Adaptive mode (lib/vhost-moderation.h sets the interval): at interval 0
 * nothing is staged even when the guest wants interrupts, and the ring's
 * answer is not needed (the caller counts the bursts the guest wanted an
 * interrupt for afterwards, vhost_txp_note_intr()); a new interval from
 * the moderation flushes nothing, moves the deadline of what is staged
 * and needs the answer again; back to 0, what is staged is due at once,
 * and the answer is needed until nothing is staged. */
static void
test_adaptive(struct vhost_txp *q)
{
    init(q, VHOST_TXP_ADAPTIVE, 0);
    now = 0;
    burst(q, true, 2);
    show(q);
    /* At the floor the caller asks nothing and learns afterwards. */
    burst(q, false, 1);
    vhost_txp_note_intr(q);
    printf("t=%lld: note_intr -> bursts_intr=%llu\n", now,
           (unsigned long long) q->stats.bursts_intr);
    now = 10;
    vhost_txp_set_interval(q, 25);
    printf("t=%lld: set_interval 25 -> interval_us=%u needs_query=%d\n",
           now, q->interval_us, vhost_txp_needs_query(q));
    burst(q, true, 3);
    show(q);
    now = 20;
    vhost_txp_set_interval(q, 50);
    printf("t=%lld: set_interval 50 -> interval_us=%u\n", now,
           q->interval_us);
    show(q);
    now = 40;
    run(q);
    now = 50;
    burst(q, false, 1);
    burst(q, true, 1);
    vhost_txp_set_interval(q, 0);
    printf("t=%lld: set_interval 0 -> interval_us=%u needs_query=%d\n",
           now, q->interval_us, vhost_txp_needs_query(q));
    show(q);
    run(q);
    printf("t=%lld: nothing staged -> needs_query=%d\n", now,
           vhost_txp_needs_query(q));
    /* Only adaptive mode takes the moderation's interval. */
    set_config(q, VHOST_TXP_AUTO, 0);
    vhost_txp_set_interval(q, 7);
    printf("auto: set_interval 7 -> interval_us=%u\n", q->interval_us);
}

/* The staging watermark (tx-kick-watermark): 10 flushes at the 10th staged
 * packet, also inside a burst; 32 and above and 0 ("auto") leave only the
 * full-burst rule. */
static void
test_watermark(struct vhost_txp *q)
{
    init(q, VHOST_TXP_TIMED, 1000);
    vhost_txp_set_watermark(q, 10);
    printf("set_watermark 10 -> %u\n", q->watermark);
    now = 0;
    burst(q, true, 4);
    show(q);
    burst(q, true, 8);
    show(q);
    burst(q, true, 20);
    show(q);
    vhost_txp_set_watermark(q, 32);
    printf("set_watermark 32 -> %u\n", q->watermark);
    burst(q, true, 30);
    show(q);
    vhost_txp_set_watermark(q, 0);
    printf("set_watermark 0 -> %u\n", q->watermark);
    now = 1000;
    run(q);
    printf("watermark flushes %llu\n",
           (unsigned long long) q->stats.flushes[VHOST_TXP_FLUSH_WATERMARK]);
}

/* The guest's ring overflowed (vhost_txp_ring_full()): auto mode stages
 * nothing for VHOST_RING_FULL_HOLDOFF_US (10000 us), sending what is
 * staged first and keeping the order, then stages again; adaptive mode the
 * same; timed mode stages as its option says. */
static void
test_ring_full(struct vhost_txp *q)
{
    const long long int h = VHOST_RING_FULL_HOLDOFF_US;

    printf("hold-off %d us\n", VHOST_RING_FULL_HOLDOFF_US);
    init(q, VHOST_TXP_AUTO, 50);
    now = 0;
    burst(q, true, 4);
    show(q);
    vhost_txp_ring_full(q, 5);
    now = 6;
    burst(q, true, 4);
    show(q);
    now = h + 4;
    burst(q, true, 2);
    show(q);
    now = h + 5;
    burst(q, true, 2);
    show(q);
    now = h + 55;
    run(q);
    printf("ring_full_bursts %llu\n",
           (unsigned long long) q->stats.ring_full_bursts);
    init(q, VHOST_TXP_ADAPTIVE, 50);
    vhost_txp_ring_full(q, 2 * h);
    now = 2 * h;
    burst(q, true, 3);
    show(q);
    printf("ring_full_bursts %llu\n",
           (unsigned long long) q->stats.ring_full_bursts);
    init(q, VHOST_TXP_TIMED, 50);
    vhost_txp_ring_full(q, 3 * h);
    now = 3 * h;
    burst(q, true, 3);
    show(q);
    now = 3 * h + 50;
    run(q);
    printf("ring_full_bursts %llu\n",
           (unsigned long long) q->stats.ring_full_bursts);
}

/* Which bursts the ring's answer can change (vhost_txp_answer_matters()):
 * in auto and adaptive modes all but whole full bursts with nothing staged
 * and no watermark; in immediate and timed modes none.  A full burst with
 * nothing staged goes out in the same call whether the guest wants an
 * interrupt or not; with a packet staged, or a watermark, it does not. */
static void
test_answer_matters(struct vhost_txp *q)
{
    static const int sizes[] = { 0, 1, 31, 32, 33, 64, 96 };
    static const enum vhost_txp_mode modes[] = {
        VHOST_TXP_AUTO, VHOST_TXP_ADAPTIVE, VHOST_TXP_IMMEDIATE,
        VHOST_TXP_TIMED,
    };

    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        init(q, modes[m], 50);
        printf("%s:", vhost_txp_mode_to_string(q->mode));
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            printf(" n=%d:%d", sizes[i],
                   vhost_txp_answer_matters(q, sizes[i]));
        }
        printf("\n");
    }
    init(q, VHOST_TXP_AUTO, 50);
    now = 0;
    burst(q, true, 32);
    burst(q, false, 32);
    show(q);
    burst(q, true, 1);
    printf("one staged: n=32:%d\n", vhost_txp_answer_matters(q, 32));
    burst(q, true, 32);
    show(q);
    now = 50;
    run(q);
    vhost_txp_set_watermark(q, 10);
    printf("watermark 10: n=32:%d\n", vhost_txp_answer_matters(q, 32));
    burst(q, true, 32);
    show(q);
    now = 100;
    run(q);
}

static const struct {
    const char *name;
    void (*run)(struct vhost_txp *);
} scenarios[] = {
    { "answer-matters", test_answer_matters },
    { "watermark", test_watermark },
    { "immediate", test_immediate },
    { "timed-deadline", test_timed_deadline },
    { "auto-toggle", test_auto_toggle },
    { "full", test_full },
    { "big-burst", test_big_burst },
    { "run-deadline", test_run_deadline },
    { "interval-bounds", test_interval_bounds },
    { "parse-interval", test_parse_interval },
    { "names", test_names },
    { "reconfigure", test_reconfigure },
    { "drop", test_drop },
    { "max-wait", test_max_wait },
    { "adaptive", test_adaptive },
    { "ring-full", test_ring_full },
};

int
main(int argc, char *argv[])
{
    size_t n = sizeof scenarios / sizeof scenarios[0];

    if (argc == 2) {
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(argv[1], scenarios[i].name)) {
                struct vhost_txp q;

                memset(&q, 0xa5, sizeof q);
                vhost_txp_init(&q, VHOST_TXP_AUTO, 50);
                scenarios[i].run(&q);
                print_stats(&q);
                check_conservation(&q);
                return errors ? 1 : 0;
            }
        }
    }

    fprintf(stderr, "usage: %s SCENARIO\nscenarios:", argv[0]);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, " %s", scenarios[i].name);
    }
    fprintf(stderr, "\n");
    return 2;
}
