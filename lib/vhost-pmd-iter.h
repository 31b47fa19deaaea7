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

#ifndef VHOST_PMD_ITER_H
#define VHOST_PMD_ITER_H 1

/* Which PMD iterations were idle, as dpif-netdev counts them, seen from
 * the rxqs of one netdev class.
 *
 * dpif-netdev's PMD thread polls every enabled rxq of its poll list once
 * per iteration, in the list's order (pmd_thread_main(),
 * lib/dpif-netdev.c of OVS 3.1 to 4.0), and counts the iteration's cycles
 * as busy when any rxq received packets or it sent packets from its
 * output batches, as idle otherwise (pmd_perf_end_iteration(),
 * lib/dpif-netdev-perf.c).  Work an rxq_recv does besides receiving (our
 * deferred kicks and staged flushes) is therefore in OVS's busy cycles
 * when its iteration was busy, and hidden in the idle cycles otherwise.
 * These functions tell the two apart after the iteration ended, without
 * any call from dpif-netdev: an rxq polled a second time by the same
 * thread starts the thread's next iteration.  That finds the start of an
 * iteration only if every rxq's last poll was in the thread's last
 * iteration, so when the thread loads its poll list, and when it looks
 * again whether a port's rxqs are enabled (both between two iterations,
 * through the class's rxq_enabled), each of our rxqs is marked as polled
 * in the last iteration (vhost_pmd_iter_listed()).
 *
 * Exact when every rxq of the PMD thread is of this class and dpif-netdev
 * holds no output batches (other_config:tx-flush-interval 0, the
 * default).  Otherwise an iteration in which only another class's rxq
 * received, or in which dpif-netdev flushed held output batches, looks
 * idle here, and the idle work is an upper bound.  Work is judged at the
 * rxq's next poll: the work of an rxq's last poll before it is disabled
 * waits for its next poll, and is lost if the rxq goes away; an rxq that
 * moved to another PMD thread has its last work judged against that
 * thread's iterations (one poll's work either way).  The iteration in
 * which a PMD thread leaves for a reload is counted neither busy nor idle
 * by dpif-netdev; its idle work here counts as idle.
 *
 * Pure functions over plain memory, unit-tested in
 * tests/test-vhost-pmd-iter.c. */

#include <stdbool.h>
#include <stdint.h>

/* One PMD thread's view of its iterations.  Zero-initialized; used only
 * by its thread (thread-local). */
struct vhost_pmd_iter {
    uint64_t iter;              /* The current iteration. */
    uint64_t rx_bits;           /* Bit d: an rxq received packets in
                                 * iteration 'iter' - d (d < 64). */
};

/* One rxq's part.  Zero-initialized; written only by the thread that
 * polls the rxq. */
struct vhost_pmd_iter_rxq {
    uint64_t seen;              /* Iteration of the rxq's last poll. */
    uint64_t work_iter;         /* Iteration of 'work'. */
    uint64_t work;              /* Cycles of work not yet judged. */
};

/* Was iteration 'i' (at most 'it->iter') busy?  Known for the last 64
 * iterations; an older one is reported idle (its work then counts as
 * idle: an upper bound). */
static inline bool
vhost_pmd_iter_was_busy(const struct vhost_pmd_iter *it, uint64_t i)
{
    uint64_t d = it->iter - i;

    return d < 64 && (it->rx_bits >> d) & 1;
}

/* At the start of every poll of 'rxq' by 'it''s thread: starts the next
 * iteration if 'rxq' was polled in this one, and returns the cycles of
 * work 'rxq' recorded in an iteration that has ended and was idle (0 if
 * none; work of a busy iteration is forgotten, OVS counted it). */
static inline uint64_t
vhost_pmd_iter_poll(struct vhost_pmd_iter *it, struct vhost_pmd_iter_rxq *rxq)
{
    uint64_t idle_work = 0;

    if (rxq->seen == it->iter) {
        it->iter++;
        it->rx_bits <<= 1;
    }
    rxq->seen = it->iter;
    if (rxq->work && rxq->work_iter != it->iter) {
        if (!vhost_pmd_iter_was_busy(it, rxq->work_iter)) {
            idle_work = rxq->work;
        }
        rxq->work = 0;
    }
    return idle_work;
}

/* 'rxq' did 'cycles' of work in its current poll (after
 * vhost_pmd_iter_poll() in the same poll). */
static inline void
vhost_pmd_iter_work(const struct vhost_pmd_iter *it,
                    struct vhost_pmd_iter_rxq *rxq, uint64_t cycles)
{
    rxq->work += cycles;
    rxq->work_iter = it->iter;
}

/* Between two iterations of 'it''s thread, 'rxq' is in the thread's poll
 * list: its next poll is in the next iteration, which the first poll of
 * any rxq so marked (or polled in the last iteration) starts. */
static inline void
vhost_pmd_iter_listed(const struct vhost_pmd_iter *it,
                      struct vhost_pmd_iter_rxq *rxq)
{
    rxq->seen = it->iter;
}

/* An rxq of 'it''s thread received packets in the current iteration (it
 * returns them to dpif-netdev). */
static inline void
vhost_pmd_iter_rx(struct vhost_pmd_iter *it)
{
    it->rx_bits |= 1;
}

#endif /* vhost-pmd-iter.h */
