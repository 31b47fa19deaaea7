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

/* Unit test of the kick moderation (lib/vhost-kick.c) with a fake clock.
 * Each scenario prints every step and the counters; tests/unit.at compares
 * the output exactly.  Usage: test-vhost-kick SCENARIO. */

#include "vhost-kick.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct vhost_kick k;
static int errors;

static void
request(long long int t)
{
    enum vhost_kick_action a = vhost_kick_request(&k, t);

    printf("t=%lld: request -> %s\n", t,
           a == VHOST_KICK_NOW ? "now" : "defer");
}

/* One PMD loop: delivers the pending kick if it is due and wanted. */
static void
loop(long long int t, int wants)
{
    long long int deadline = vhost_kick_deadline(&k);

    if (vhost_kick_run(&k, wants, t)) {
        vhost_kick_delivered(&k, t);
        printf("t=%lld: loop wants=%d -> delivered\n", t, wants);
    } else if (deadline != LLONG_MAX) {
        printf("t=%lld: loop wants=%d -> held (deadline %lld)\n",
               t, wants, deadline);
    } else {
        printf("t=%lld: loop wants=%d -> nothing pending\n", t, wants);
    }
}

static void
check_invariant(void)
{
    const struct vhost_kick_stats *s = &k.stats;

    if (s->taken_over != s->delivered + s->coalesced + s->discarded
                         + (k.pending ? 1 : 0)) {
        printf("error: taken_over does not balance\n");
        errors++;
    }
    if (s->requests != s->immediate + s->taken_over) {
        printf("error: requests do not balance\n");
        errors++;
    }
}

static void
print_stats(void)
{
    const struct vhost_kick_stats *s = &k.stats;

    check_invariant();
    printf("stats: requests=%llu immediate=%llu taken_over=%llu "
           "coalesced=%llu delivered=%llu postponed=%llu discarded=%llu "
           "max_delay_us=%llu pending=%d\n",
           (unsigned long long) s->requests,
           (unsigned long long) s->immediate,
           (unsigned long long) s->taken_over,
           (unsigned long long) s->coalesced,
           (unsigned long long) s->delivered,
           (unsigned long long) s->postponed,
           (unsigned long long) s->discarded,
           (unsigned long long) s->max_delay_us, k.pending);
}

/* First kick after a quiet interval at once, later ones coalesced into
 * one at the end of the interval. */
static void
scenario_coalesce(void)
{
    vhost_kick_init(&k, 50);
    loop(0, 1);
    request(0);
    request(10);
    request(30);
    loop(49, 1);
    loop(50, 1);
    loop(51, 1);
    request(60);
    loop(99, 1);
    loop(100, 1);
    request(300);
    request(349);
    loop(349, 1);
    loop(360, 1);
}

/* A due kick the guest does not want is held, re-asked on every loop and
 * delivered as soon as the guest wants it. */
static void
scenario_postpone(void)
{
    vhost_kick_init(&k, 50);
    request(0);
    request(5);
    loop(50, 0);
    loop(60, 0);
    loop(1000, 0);
    request(1001);
    loop(1002, 1);
    request(1003);
    loop(1051, 0);
    loop(1052, 1);
}

/* The device went away with a kick pending: it is discarded, and the
 * first kick of the next connection goes out at once. */
static void
scenario_reset(void)
{
    vhost_kick_init(&k, 50);
    request(0);
    request(1);
    vhost_kick_reset(&k);
    printf("reset\n");
    loop(100, 1);
    request(102);
    request(103);
    loop(152, 1);
}

/* A new interval moves the deadline of the pending kick; the interval
 * bounds 1 and 1000000 us. */
static void
scenario_interval(void)
{
    vhost_kick_init(&k, 1000000);
    request(0);
    request(1);
    loop(999999, 1);
    vhost_kick_set_interval(&k, 1);
    printf("interval 1\n");
    loop(2, 1);
    request(2);
    request(3);
    loop(3, 1);
    vhost_kick_clear_stats(&k);
    printf("cleared\n");
}

static void
print_point(const char *step)
{
    uint16_t used;
    bool known = vhost_kick_get_point(&k, &used);

    printf("%s: point %s", step, known ? "known" : "unknown");
    if (known) {
        printf(" used=%u", used);
    }
    printf("\n");
}

/* The point of the last kick (the split ring's used index, for the
 * EVENT_IDX question) is forgotten whenever deferral turns off or on (the
 * library kicked unseen meanwhile, so a point kept from before could be
 * more than 65535 entries old) and when the device goes away; noting a new
 * one makes it known again. */
static void
scenario_point(void)
{
    vhost_kick_init(&k, 50);
    print_point("init");
    vhost_kick_set_deferring(&k, true);
    vhost_kick_note_point(&k, 100);
    print_point("deferring, noted 100");
    vhost_kick_set_deferring(&k, true);
    print_point("deferring again");
    vhost_kick_set_deferring(&k, false);
    print_point("not deferring");
    vhost_kick_set_deferring(&k, true);
    print_point("deferring");
    vhost_kick_note_point(&k, 65535);
    print_point("noted 65535");
    vhost_kick_forget_point(&k);
    print_point("forgotten");
    vhost_kick_note_point(&k, 7);
    vhost_kick_reset(&k);
    print_point("noted 7, reset");
    /* A queue whose kicks are never taken over (vIOMMU): every request is
     * counted as written at once, also within the interval. */
    printf("t=0: request_now -> %s\n",
           vhost_kick_request_now(&k, 0) == VHOST_KICK_NOW ? "now" : "defer");
    printf("t=1: request_now -> %s\n",
           vhost_kick_request_now(&k, 1) == VHOST_KICK_NOW ? "now" : "defer");
}

static void
placed(long long int t, uint32_t n, uint32_t size, uint32_t free_entries)
{
    char free_s[16];

    vhost_kick_placed(&k, n, size, free_entries);
    snprintf(free_s, sizeof free_s, "%"PRIu32, free_entries);
    printf("t=%lld: placed %"PRIu32" (ring %"PRIu32", free %s) -> since "
           "kick %"PRIu32", %s\n", t, n, size,
           free_entries == UINT32_MAX ? "unknown" : free_s, k.placed,
           !k.pending ? "nothing pending"
           : vhost_kick_due(&k, t) ? "due" : "held");
}

/* The ring watermark: a held kick is due at once when the packets placed
 * since the last kick reach the watermark (a quarter of the ring by default, never
 * more than the ring) or the ring's free entries fall below one burst (half
 * the ring on small rings); a kick the guest does not want is still
 * postponed; a watermark kick delivered at or after its deadline is not
 * counted as early; the packets of a burst whose kick went out at once
 * are covered by it. */
static void
scenario_watermark(void)
{
    static const uint32_t eff[][2] = {
        { 0, 256 }, { 0, 0 }, { 0, 1 }, { 64, 256 }, { 1000, 256 },
        { 5, 0 }, { 32768, 32768 },
    };

    for (size_t i = 0; i < sizeof eff / sizeof eff[0]; i++) {
        printf("effective watermark %"PRIu32" on ring %"PRIu32": %"PRIu32
               "\n", eff[i][0], eff[i][1],
               vhost_kick_watermark_effective(eff[i][0], eff[i][1]));
    }
    vhost_kick_init(&k, 50);
    vhost_kick_set_deferring(&k, true);
    request(0);
    placed(0, 32, 256, UINT32_MAX);
    request(1);
    placed(1, 16, 256, UINT32_MAX);
    placed(2, 16, 256, 200);
    placed(3, 16, 256, UINT32_MAX);
    placed(4, 16, 256, UINT32_MAX);
    loop(4, 1);
    printf("watermark kicks %llu\n",
           (unsigned long long) k.stats.watermark);
    request(10);
    placed(10, 8, 256, 40);
    placed(11, 8, 256, 31);
    loop(11, 0);
    loop(12, 1);
    printf("watermark kicks %llu\n",
           (unsigned long long) k.stats.watermark);
    vhost_kick_set_watermark(&k, 1000);
    request(100);
    placed(100, 32, 256, UINT32_MAX);
    request(101);
    placed(101, 200, 256, UINT32_MAX);
    placed(102, 56, 256, UINT32_MAX);
    loop(151, 1);
    printf("watermark kicks %llu\n",
           (unsigned long long) k.stats.watermark);
    vhost_kick_set_watermark(&k, 0);
    request(300);
    placed(300, 4, 32, 30);
    request(301);
    placed(301, 4, 32, 17);
    placed(302, 4, 32, 15);
    loop(302, 1);
    request(303);
    placed(303, 100, 0, UINT32_MAX);
    vhost_kick_reset(&k);
    printf("reset: since kick %"PRIu32", due %d\n", k.placed,
           vhost_kick_due(&k, 303));
    printf("watermark kicks %llu\n",
           (unsigned long long) k.stats.watermark);
}

/* The guest's ring overflowed: for VHOST_RING_FULL_HOLDOFF_US (10000
 * us), or one interval if that is longer (20000 us at the end), nothing is
 * held.  A kick held at the overflow is due at once; requests inside the
 * hold-off go out at once even within the interval; the first request at
 * the end of the hold-off is held again; a reset forgets the hold-off.
 * Each early or immediate kick the hold-off caused is counted in
 * ring_full, none in watermark. */
static void
scenario_ring_full(void)
{
    const long long int h = VHOST_RING_FULL_HOLDOFF_US;

    vhost_kick_init(&k, 50);
    vhost_kick_set_deferring(&k, true);
    printf("hold-off %d us\n", VHOST_RING_FULL_HOLDOFF_US);
    request(0);
    request(10);
    loop(11, 1);
    vhost_kick_ring_full(&k, 12);
    printf("t=12: ring full -> %s\n", vhost_kick_due(&k, 12)
           ? "due" : "not due");
    loop(12, 1);
    request(20);
    request(h + 11);
    request(h + 12);
    request(h + 20);
    loop(h + 62, 1);
    vhost_kick_ring_full(&k, 2 * h);
    vhost_kick_reset(&k);
    request(2 * h + 1);
    request(2 * h + 2);
    loop(2 * h + 51, 1);
    /* An interval longer than the hold-off: the hold-off is one
     * interval. */
    vhost_kick_set_interval(&k, 2 * h);
    vhost_kick_ring_full(&k, 3 * h);
    request(3 * h + 1);
    request(5 * h - 1);
    request(5 * h + 1);
    loop(7 * h - 1, 1);
    printf("ring_full kicks %llu, watermark kicks %llu\n",
           (unsigned long long) k.stats.ring_full,
           (unsigned long long) k.stats.watermark);
    print_stats();
}

/* Random requests and loops with random ring answers: the counters
 * balance after every step, a due kick the guest wants is delivered on
 * that very loop, and no kick goes out less than an interval after the
 * previous one. */
static void
scenario_random(void)
{
    long long int t = 0, last = LLONG_MIN;
    unsigned int seed = 1;
    int late = 0, early = 0;

    vhost_kick_init(&k, 50);
    for (int i = 0; i < 1000000; i++) {
        int wants = rand_r(&seed) % 8 != 0;

        t += rand_r(&seed) % 7;             /* Loop period 0..6 us. */
        if (rand_r(&seed) % 3 == 0
            && vhost_kick_request(&k, t) == VHOST_KICK_NOW) {
            early += last != LLONG_MIN && t - last < 50;
            last = t;
        }
        bool due = vhost_kick_due(&k, t);
        if (vhost_kick_run(&k, wants, t)) {
            vhost_kick_delivered(&k, t);
            early += t - last < 50;
            last = t;
        } else if (due && wants) {
            late++;
        }
        check_invariant();
        if (errors) {
            break;
        }
    }
    printf("loops=1000000 balanced=%s late=%d early=%d delivered>0=%d\n",
           errors ? "no" : "yes", late, early, k.stats.delivered > 0);
}

int
main(int argc, char *argv[])
{
    static const struct {
        const char *name;
        void (*run)(void);
    } scenarios[] = {
        { "coalesce", scenario_coalesce },
        { "postpone", scenario_postpone },
        { "reset", scenario_reset },
        { "interval", scenario_interval },
        { "random", scenario_random },
        { "point", scenario_point },
        { "watermark", scenario_watermark },
        { "ring-full", scenario_ring_full },
    };

    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (!strcmp(argv[1], scenarios[i].name)) {
            scenarios[i].run();
            if (strcmp(argv[1], "random")) {
                print_stats();
            }
            return errors ? 1 : 0;
        }
    }
    fprintf(stderr, "%s: unknown scenario %s\n", argv[0], argv[1]);
    return 2;
}
