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

/* Unit test of the idle-iteration bookkeeping (lib/vhost-pmd-iter.h).
 * Plays dpif-netdev's loop over a poll list: each iteration polls every
 * rxq once, in order; a poll first asks vhost_pmd_iter_poll(), then may
 * do work and may receive.  Prints, per iteration, the idle work each
 * rxq reported and a running total, for exact comparison by
 * tests/unit.at.  Usage: test-vhost-pmd-iter SCENARIO. */

#include "vhost-pmd-iter.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_RXQ 3

/* One poll: the work (cycles) the rxq does, and whether it receives. */
struct poll {
    uint64_t work;
    int rx;
};

struct loop {
    struct vhost_pmd_iter it;
    struct vhost_pmd_iter_rxq rxq[MAX_RXQ];
    uint64_t idle_total[MAX_RXQ];
};

/* Runs one iteration of 'n' rxqs in poll-list order; rxq i does
 * 'polls[i]', or is skipped (not polled, as a disabled rxq) if its work is
 * UINT64_MAX. */
static void
iteration(struct loop *l, const struct poll *polls, int n)
{
    printf("iteration:");
    for (int i = 0; i < n; i++) {
        if (polls[i].work == UINT64_MAX) {
            printf(" rxq%d skipped", i);
            continue;
        }
        uint64_t idle = vhost_pmd_iter_poll(&l->it, &l->rxq[i]);

        l->idle_total[i] += idle;
        if (polls[i].work) {
            vhost_pmd_iter_work(&l->it, &l->rxq[i], polls[i].work);
        }
        if (polls[i].rx) {
            vhost_pmd_iter_rx(&l->it);
        }
        printf(" rxq%d idle+%"PRIu64, i, idle);
    }
    printf(" (iter %"PRIu64")\n", l->it.iter);
}

static void
totals(const struct loop *l, int n)
{
    printf("idle work:");
    for (int i = 0; i < n; i++) {
        printf(" rxq%d=%"PRIu64, i, l->idle_total[i]);
    }
    printf("\n");
}

int
main(int argc, char *argv[])
{
    const char *s = argc > 1 ? argv[1] : "";
    struct loop l;

    memset(&l, 0, sizeof l);
    if (!strcmp(s, "two-rxqs")) {
        /* rxq0 the sender's port (receives), rxq1 the receiver's (does
         * deferred work, never receives). */
        static const struct poll p[][2] = {
            { { 0, 1 }, { 100, 0 } },   /* Busy: 100 is OVS's. */
            { { 0, 0 }, { 200, 0 } },   /* Idle: 200 ours. */
            { { 0, 0 }, { 0, 0 } },     /* Idle, no work. */
            { { 0, 1 }, { 400, 0 } },   /* Busy. */
            { { 0, 0 }, { 800, 0 } },   /* Idle. */
            { { 0, 1 }, { 0, 0 } },     /* Busy, judges nothing. */
        };
        for (int i = 0; i < 6; i++) {
            iteration(&l, p[i], 2);
        }
        totals(&l, 2);
    } else if (!strcmp(s, "work-before-rx")) {
        /* The working rxq comes first in the poll list: the iteration's
         * receive comes after the work and still makes it busy. */
        static const struct poll p[][2] = {
            { { 100, 0 }, { 0, 1 } },   /* Busy. */
            { { 200, 0 }, { 0, 0 } },   /* Idle. */
            { { 400, 0 }, { 0, 1 } },   /* Busy. */
            { { 800, 0 }, { 0, 0 } },   /* Idle. */
            { { 0, 0 }, { 0, 0 } },
        };
        for (int i = 0; i < 5; i++) {
            iteration(&l, p[i], 2);
        }
        totals(&l, 2);
    } else if (!strcmp(s, "one-rxq")) {
        /* A PMD thread with one rxq: every poll is an iteration; the rxq
         * that works also receives sometimes. */
        static const struct poll p[][1] = {
            { { 100, 1 } }, { { 200, 0 } }, { { 400, 1 } }, { { 800, 0 } },
            { { 0, 0 } },
        };
        for (int i = 0; i < 5; i++) {
            iteration(&l, p[i], 1);
        }
        totals(&l, 1);
    } else if (!strcmp(s, "skipped")) {
        /* rxq2 works, then is not polled for a while (disabled): its work
         * is judged when it is polled again, exactly up to 63 iterations
         * later. */
        static const struct poll U = { UINT64_MAX, 0 };
        static const struct poll p[][3] = {
            { { 0, 0 }, { 0, 0 }, { 100, 0 } }, /* Idle: 100 ours. */
            { { 0, 1 }, { 0, 0 }, U },          /* Busy. */
            { { 0, 0 }, { 0, 0 }, U },
            { { 0, 0 }, { 0, 0 }, { 200, 1 } }, /* 100 judged; busy. */
            { { 0, 1 }, { 0, 0 }, U },          /* Busy. */
            { { 0, 0 }, { 0, 0 }, U },
            { { 0, 0 }, { 0, 0 }, { 0, 0 } },   /* 200 judged: busy. */
        };
        for (int i = 0; i < 7; i++) {
            iteration(&l, p[i], 3);
        }
        totals(&l, 3);
    } else if (!strcmp(s, "reload")) {
        /* rxq0 (works) joins the poll list in front of rxq1 (receives) at
         * a reload, after rxq1 was polled alone; then rxq0 is disabled
         * and enabled again.  Each load of the list and each new look at
         * whether an rxq is enabled marks the listed rxqs, so that the
         * next iteration starts at the first of them. */
        static const struct poll U = { UINT64_MAX, 0 };
        static const struct poll alone[][2] = {
            { U, { 0, 1 } }, { U, { 0, 0 } }, { U, { 0, 1 } },
        };
        static const struct poll both[][2] = {
            { { 100, 0 }, { 0, 1 } },   /* Busy. */
            { { 200, 0 }, { 0, 0 } },   /* Idle. */
            { { 400, 0 }, { 0, 1 } },   /* Busy. */
            { { 800, 0 }, { 0, 0 } },   /* Idle. */
        };
        for (int i = 0; i < 3; i++) {
            iteration(&l, alone[i], 2);
        }
        printf("reload: rxq0 rxq1 listed\n");
        vhost_pmd_iter_listed(&l.it, &l.rxq[0]);
        vhost_pmd_iter_listed(&l.it, &l.rxq[1]);
        for (int i = 0; i < 4; i++) {
            iteration(&l, both[i], 2);
        }
        for (int i = 0; i < 2; i++) {
            iteration(&l, alone[i], 2);
        }
        printf("rxq0 enabled again: listed\n");
        vhost_pmd_iter_listed(&l.it, &l.rxq[0]);
        for (int i = 0; i < 4; i++) {
            iteration(&l, both[i], 2);
        }
        iteration(&l, (struct poll[2]) { { 0, 0 }, { 0, 0 } }, 2);
        totals(&l, 2);
    } else if (!strcmp(s, "skipped-long")) {
        /* Work in a busy iteration judged 63 and 64 iterations later: the
         * first is known busy, the second is too old and counts as idle
         * (the upper bound). */
        for (int gap = 63; gap <= 64; gap++) {
            struct poll w[2] = { { 0, 1 }, { 300, 0 } };
            struct poll judge[2] = { { 0, 0 }, { 0, 0 } };

            memset(&l, 0, sizeof l);
            printf("gap %d:\n", gap);
            iteration(&l, w, 2);
            for (int i = 1; i < gap; i++) {
                vhost_pmd_iter_poll(&l.it, &l.rxq[0]);   /* Quietly. */
            }
            iteration(&l, judge, 2);
            totals(&l, 2);
        }
    } else {
        fprintf(stderr, "usage: %s two-rxqs|work-before-rx|one-rxq|skipped|"
                "skipped-long|reload\n",
                argv[0]);
        return 1;
    }
    return 0;
}
