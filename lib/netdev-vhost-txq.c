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

/* The transmit half of a queue pair (see netdev-vhost-txq.h).  Every
 * acquisition of a tx_lock is here, in txq_lock() and txq_trylock(), and
 * every release in txq_unlock(), which also keeps the port's two queue
 * maps (staged packets, held kicks) and the published time of the queue's
 * next work in step with the queue.  Every flush or drop of staged packets
 * goes through txq_flush_locked(). */

#include <config.h>

#include "netdev-vhost-txq.h"

#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include "coverage.h"
#include "dp-packet.h"
#include "netdev-provider.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-private.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "timeval.h"
#include "util.h"
#include "vhost-ring.h"

#define this_module (*VLM_netdev_vhost)

COVERAGE_DEFINE(netdev_vhost_query_skipped);
COVERAGE_DEFINE(netdev_vhost_kick_not_delivered);

/* Contention for a tx_lock counts in stock's coverage counter
 * vhost_tx_contention (lib/netdev-dpdk.c COVERAGE_DEFINE(), OVS 3.1 and
 * 3.5, linked into our ovs-vswitchd), which alerts key on: not in a
 * counter of our own name.  A coverage counter's per-thread count is
 * static to its file, so ours is counted here per thread, and the stock
 * counter's count function (which each thread calls to collect its own
 * counts, lib/coverage.c coverage_try_clear()) is chained once to add it:
 * tx_contention_count(). */
extern struct coverage_counter counter_vhost_tx_contention;
DEFINE_STATIC_PER_THREAD_DATA(unsigned int, tx_contention, 0);
static unsigned int (*stock_tx_contention_count)(void);

static unsigned int
tx_contention_count(void)
{
    unsigned int *countp = tx_contention_get();
    unsigned int n = *countp;
    /* Published before this function (netdev_vhost_txq_coverage_init()),
     * read by threads that may have loaded 'count' without ordering. */
    unsigned int (*stock)(void) = __atomic_load_n(&stock_tx_contention_count,
                                                  __ATOMIC_ACQUIRE);

    *countp = 0;
    return n + (stock ? stock() : 0);
}

void
netdev_vhost_txq_coverage_init(void)
{
    static struct ovsthread_once once = OVSTHREAD_ONCE_INITIALIZER;

    if (ovsthread_once_start(&once)) {
        /* 'count' is a const member (lib/coverage.h) of an object that is
         * not const (COVERAGE_DEFINE() defines it in writable data, and
         * coverage.c reads it through a pointer each time). */
        unsigned int (**count)(void)
            = CONST_CAST(unsigned int (**)(void),
                         &counter_vhost_tx_contention.count);

        __atomic_store_n(&stock_tx_contention_count, *count,
                         __ATOMIC_RELEASE);
        __atomic_store_n(count, tx_contention_count, __ATOMIC_RELEASE);
        ovsthread_once_done(&once);
    }
}

/* Records 'us' (microseconds; negative counts as 0) in histogram 'h' of a
 * queue.  With the queue's tx_lock; at most 31 comparisons
 * (histogram_add_sample(), lib/dpif-netdev-perf.h). */
static void
delay_record(struct histogram *h, long long int us)
{
    histogram_add_sample(h, (us <= 0 ? 0
                             : us >= UINT32_MAX ? UINT32_MAX
                             : (uint32_t) us));
}

/* TSC cycles per microsecond (rte_get_tsc_hz()), for the rxqs' waits in
 * netdev_vhost_txq_run_due() and the clock of adaptive moderation
 * (mod_clock_us()); set by the main thread when the first port is made,
 * before any PMD thread polls one. */
static uint64_t tsc_per_us;

/* The longest wait of an rxq, us (see netdev_vhost_txq_run_due()). */
#define TXQ_WAIT_MAX_US 1000

/* What a queue held when it was locked, for txq_unlock(): only a change
 * writes the port's queue maps. */
#define TXQ_HELD_STAGED 1u      /* Packets staged. */
#define TXQ_HELD_KICK   2u      /* A deferred kick held. */

static inline struct netdev_vhost_txq *
txq_get(struct netdev_vhost *dev, int q)
{
    return &dev->qps[q].tx;
}

static unsigned int
txq_held(const struct netdev_vhost_txq *txq)
{
    return ((txq->txp.n_staged ? TXQ_HELD_STAGED : 0)
            | (txq->kq.kick.pending ? TXQ_HELD_KICK : 0));
}

/* Takes the tx_lock of queue pair 'q' of 'dev'; returns what the queue
 * holds (TXQ_HELD_*), for txq_unlock(). */
static unsigned int
txq_lock(struct netdev_vhost *dev, int q)
    OVS_ACQUIRES(dev->qps[q].tx.lock) OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);

    rte_spinlock_lock(&txq->lock.sl);
    return txq_held(txq);
}

/* As txq_lock(), but only if no other thread holds the lock: returns false
 * then, with '*held' unchanged. */
static bool
txq_trylock(struct netdev_vhost *dev, int q, unsigned int *held)
    OVS_TRY_LOCK(true, dev->qps[q].tx.lock) OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);

    if (!rte_spinlock_trylock(&txq->lock.sl)) {
        return false;
    }
    *held = txq_held(txq);
    return true;
}

/* When queue 'txq', holding 'held' (TXQ_HELD_*), next has work for
 * netdev_vhost_txq_run_due(): see 'due' in struct netdev_vhost_txq. */
static long long int
txq_due(const struct netdev_vhost_txq *txq, unsigned int held)
{
    long long int due = LLONG_MAX;

    if (held & TXQ_HELD_STAGED) {
        due = vhost_txp_deadline(&txq->txp);
    }
    if (held & TXQ_HELD_KICK) {
        due = MIN(due, (txq->kq.kick.early ? LLONG_MIN
                        : vhost_kick_deadline(&txq->kq.kick)));
    }
    return due;
}

/* Sets or clears queue 'q' in 'map'.  With the queue's tx_lock. */
static void
qmap_set(struct netdev_vhost_qmap *map, int q, bool on)
{
    atomic_uint64_t *word = &map->bits[q / 64];
    uint64_t bit = UINT64_C(1) << (q % 64);
    uint64_t orig;

    if (on) {
        atomic_or_explicit(word, bit, &orig, memory_order_relaxed);
    } else {
        atomic_and_explicit(word, ~bit, &orig, memory_order_relaxed);
    }
}

/* Brings the port's queue maps and the published time of the next work
 * ('due') of queue pair 'q' up to date, 'before' being what it held when
 * it was locked, and releases its tx_lock.  A queue that held nothing and
 * holds nothing (a polling guest's) writes none of them. */
static void
txq_unlock(struct netdev_vhost *dev, int q, unsigned int before)
    OVS_RELEASES(dev->qps[q].tx.lock) OVS_NO_THREAD_SAFETY_ANALYSIS
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    unsigned int after = txq_held(txq);
    unsigned int changed = before ^ after;

    if (OVS_UNLIKELY(changed & TXQ_HELD_STAGED)) {
        qmap_set(&dev->staged, q, after & TXQ_HELD_STAGED);
    }
    if (OVS_UNLIKELY(changed & TXQ_HELD_KICK)) {
        qmap_set(&dev->kick_pending, q, after & TXQ_HELD_KICK);
    }
    if (before | after) {
        long long int due = txq_due(txq, after), old;

        atomic_read_relaxed(&txq->due, &old);
        atomic_store_relaxed(&txq->due, due);
        if (due < old || changed) {
            /* Ends the rxqs' waits (netdev_vhost_txq_run_due()): a
             * deadline moved earlier, or the queue maps changed (a poller
             * that read the two maps between a clear and a set saw
             * neither bit of this queue). */
            uint32_t orig;

            atomic_add_explicit(&dev->due_seq, 1, &orig,
                                memory_order_release);
        }
    }
    rte_spinlock_unlock(&txq->lock.sl);
}

/* Kick state of a queue (struct netdev_vhost_kickq). */

/* Initialises 'kq' for 'interval_us' (1..1000000), its adaptive
 * moderation between the default bounds, off. */
static void
kickq_init(struct netdev_vhost_kickq *kq, uint32_t interval_us)
{
    memset(kq, 0, sizeof *kq);
    vhost_kick_init(&kq->kick, interval_us);
    vhost_mod_init(&kq->mod, VHOST_MOD_FLOOR_DEFAULT,
                   NETDEV_VHOST_DEFAULT_CEILING_US);
}

/* Whether the queue of 'kq' hands its kicks to the notification thread:
 * the option on, a deferred-kicks build, no vIOMMU (see
 * netdev_vhost_txq_connect()).  With the queue's tx_lock. */
static void
kickq_set_thread(struct netdev_vhost_kickq *kq)
{
    kq->thread = (NETDEV_VHOST_HAS_DEFERRED_KICKS && !kq->iommu
                  && netdev_vhost_notify_enabled());
}

/* Applies the tx policy of a queue to its kick state: 'defer' (auto or
 * adaptive mode with deferred kicks), 'adaptive' (tx-flush-mode=adaptive,
 * with bounds 'min_us' 0..1000000 and 'max_us' min_us..1000000, at least
 * 1) and the fixed 'interval_us' (1..1000000) of the other modes.  Returns
 * the interval now in force, microseconds: 'interval_us', or in adaptive
 * mode the moderation's current one (entering adaptive mode starts at the
 * floor), for the staging policy.  With the queue's tx_lock.  A held kick
 * stays held and is delivered at its deadline whatever the new mode.
 * When deferral turns on or off, the point of the last kick is forgotten
 * (vhost_kick_set_deferring()). */
static uint32_t
kickq_configure(struct netdev_vhost_kickq *kq, bool defer, bool adaptive,
                uint32_t interval_us, uint32_t min_us, uint32_t max_us)
{
    kq->defer = NETDEV_VHOST_HAS_DEFERRED_KICKS && defer;
    kickq_set_thread(kq);
    vhost_kick_set_deferring(&kq->kick, kq->defer);
    if (adaptive) {
        if (!kq->adaptive) {
            struct vhost_mod_stats stats = kq->mod.stats;

            /* Start at the floor: no added delay until traffic says. */
            vhost_mod_init(&kq->mod, min_us, max_us);
            kq->mod.stats = stats;
        } else {
            vhost_mod_set_bounds(&kq->mod, min_us, max_us);
        }
        interval_us = vhost_mod_interval(&kq->mod);
    }
    kq->adaptive = adaptive;
    vhost_kick_set_interval(&kq->kick, interval_us);
    return interval_us;
}

/* The clock of adaptive moderation's samples, microseconds: the TSC (as
 * DPDK's rte_get_tsc_cycles(); constant and invariant on the hosts this
 * runs on, as DPDK's own timers assume) over its rate.  Read on every
 * burst of an adaptive queue, where OVS's time_usec() (clock_gettime(),
 * about 27 ns through the vDSO with kvm-clock on these machines) cost
 * twice what this does; only vhost_mod_*() compares its readings, never
 * with time_usec()'s.  Any thread, after netdev_vhost_txq_init(). */
static inline long long int
mod_clock_us(void)
{
    return rte_get_tsc_cycles() / tsc_per_us;
}

/* Adaptive mode: records a burst of 'n_packets' that the queue sent now
 * (mod_clock_us()), 'wanted' if the guest would have been woken for it at
 * the floor (see vhost_mod_burst()), of whose packets (or of the staged
 * packets the burst flushed) 'ring_full' found no room in the guest's
 * ring (vhost_mod_ring_full(): back to the floor), and applies an
 * interval change to the kick deferral and to 'txp''s staging deadline.
 * With the queue's tx_lock.  Both builds. */
static void
kickq_moderate(struct netdev_vhost_kickq *kq, struct vhost_txp *txp,
               uint32_t n_packets, bool wanted, uint32_t ring_full)
{
    long long int now_us = mod_clock_us();
    bool changed = vhost_mod_burst(&kq->mod, n_packets, wanted, now_us);

    if (OVS_UNLIKELY(ring_full)) {
        changed |= vhost_mod_ring_full(&kq->mod, now_us);
    }
    if (changed) {
        uint32_t us = vhost_mod_interval(&kq->mod);

        /* A held kick becomes due one new interval after the last kick;
         * staged packets one new interval after the oldest was staged. */
        vhost_kick_set_interval(&kq->kick, us);
        vhost_txp_set_interval(txp, us);
    }
}

/* The buckets of the delay histograms, microseconds: the inclusive upper
 * bound of each (struct histogram, lib/dpif-netdev-perf.h).  Three per
 * decade, at 1.5, 3.5 and 7.5 times a power of ten, so that a round
 * interval (1, 2, 3 or 5 times a power of ten, as tx-flush-interval is
 * usually set) and the delays just past it (a flush or kick at its
 * deadline, plus a poll) fall inside one bucket, not on an edge.  OVS
 * sets its own walls with static functions of lib/dpif-netdev-perf.c
 * (histogram_walls_set_log()) that a plugin cannot call. */
static const uint32_t delay_walls[] = {
    0, 1, 2, 3, 7,
    15, 35, 75,
    150, 350, 750,
    1500, 3500, 7500,
    15000, 35000, 75000,
    150000, 350000, 750000,
    1500000, 3500000, 7500000,
    15000000, 35000000, 75000000,
    150000000, 350000000, 750000000,
    1500000000, 3500000000u,
    UINT32_MAX,
};
BUILD_ASSERT_DECL(ARRAY_SIZE(delay_walls) == NUM_BINS);

void
netdev_vhost_delay_hist_init(struct histogram *h)
{
    memcpy(h->wall, delay_walls, sizeof h->wall);
    memset(h->bin, 0, sizeof h->bin);
}

void
netdev_vhost_txq_init(struct netdev_vhost *dev, int q,
                      enum vhost_txp_mode mode, uint32_t interval_us)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);

    rte_spinlock_init(&txq->lock.sl);
    atomic_init(&txq->reading, false);
    atomic_init(&txq->due, LLONG_MAX);
    vhost_txp_init(&txq->txp, mode, interval_us);
    kickq_init(&txq->kq, interval_us);
    netdev_vhost_notifyq_init(&txq->kq.nq, q, dev->numa_id);
    netdev_vhost_delay_hist_init(&txq->kick_delay);
    netdev_vhost_delay_hist_init(&txq->wait);
    if (!tsc_per_us) {
        /* EAL is up: ports exist only with dpdk-init. */
        tsc_per_us = MAX(rte_get_tsc_hz() / 1000000, 1);
    }
    if (!q) {
        atomic_init(&dev->due_seq, 0);
        for (int w = 0; w < ARRAY_SIZE(dev->staged.bits); w++) {
            atomic_init(&dev->staged.bits[w], 0);
            atomic_init(&dev->kick_pending.bits[w], 0);
        }
    }
}

/* The ring question, both forms, under the ring guard (DESIGN-NOTES.md
 * section 4): reads the driver's event suppression fields of queue pair
 * 'q' of 'dev' (device id 'vid'; vring 2q, the guest's rx vring), with
 * the queue's tx_lock held.
 *
 *   - 'held_kick' false: does the driver want a used buffer notification
 *     for a burst placed now (virtio 1.1 sections 2.6.7.2 and 2.7.10,
 *     lib/vhost-ring.h)?  False while the rings are being changed (the
 *     burst then goes out at once, always safe; counted as a skipped
 *     query).  (utilities/ovs-vhost-bench measures this function by its
 *     name.)
 *
 *   - 'held_kick' true: does the driver still want the kick held since the
 *     last one (vhost_split_kick_wanted(), from the point of that kick)?
 *     True while the rings are being changed or the point is unknown: a
 *     kick too many is always safe. */
static bool
guest_wants_interrupt(struct netdev_vhost *dev, struct netdev_vhost_txq *txq,
                      int vid, int q, bool held_kick)
{
    bool answer = held_kick;
    bool asked = false;

    if (OVS_LIKELY(netdev_vhost_guard_enter(&txq->reading, &dev->rings_valid)
                   && txq->vring.avail && txq->vring.used)) {
        bool event_idx = dev->features & (1ULL << VIRTIO_RING_F_EVENT_IDX);

        if (dev->features & (1ULL << VIRTIO_F_RING_PACKED)) {
            /* One read of the driver's event suppression structure; the
             * device's used position (DPDK keeps the wrap counter in bit
             * 15) is needed only for DESC, which DPDK guests never use. */
            struct vring_packed_desc_event ev;
            uint16_t last_avail = 0, last_used = 0;

            memcpy(&ev, (const void *) txq->vring.driver_event, sizeof ev);
            if (held_kick) {
                answer = vhost_packed_kick_wanted(&ev);
            } else {
                if ((ev.flags & 3) == VRING_PACKED_EVENT_FLAG_DESC) {
                    rte_vhost_get_vring_base(vid, netdev_vhost_tx_vring(q),
                                             &last_avail, &last_used);
                }
                answer = vhost_packed_wants_interrupt(&ev, txq->vring.size,
                                                      last_used & 0x7fff,
                                                      last_used >> 15);
            }
        } else if (held_kick) {
            uint16_t point;

            if (vhost_kick_get_point(&txq->kq.kick, &point) || !event_idx) {
                answer = vhost_split_kick_wanted(txq->vring.avail,
                                                 txq->vring.used,
                                                 txq->vring.size, event_idx,
                                                 point);
            }
        } else {
            answer = vhost_split_wants_interrupt(txq->vring.avail,
                                                 txq->vring.used,
                                                 txq->vring.size, event_idx);
        }
        asked = true;
    } else if (!held_kick) {
        txq->queries_skipped++;
        COVERAGE_INC(netdev_vhost_query_skipped);
    }
    netdev_vhost_guard_exit(&txq->reading);
    if (!held_kick) {
        txq->last_wants_intr = answer;
        txq->answer_known = asked;
    }
    return answer;
}

/* The room left in the guest's rx vring of queue pair 'q' of 'dev', for
 * the ring watermark of a held kick (vhost_kick_placed()): its size in
 * '*size' (0 if unknown) and in '*free_entries' the descriptors the driver
 * made available that the device has not used yet (split ring: avail->idx
 * minus used->idx, virtio 1.1 section 2.6; UINT32_MAX if unknown: a packed
 * ring, whose free descriptors no index tells, or rings being changed).
 * Under the ring guard, with the queue's tx_lock held. */
static void
ring_room(struct netdev_vhost *dev, struct netdev_vhost_txq *txq,
          uint32_t *size, uint32_t *free_entries)
{
    *size = 0;
    *free_entries = UINT32_MAX;
    if (netdev_vhost_guard_enter(&txq->reading, &dev->rings_valid)
        && txq->vring.avail && txq->vring.used) {
        *size = txq->vring.size;
        if (!(dev->features & (1ULL << VIRTIO_F_RING_PACKED))) {
            uint16_t avail = __atomic_load_n(&txq->vring.avail->idx,
                                             __ATOMIC_ACQUIRE);
            uint16_t used = __atomic_load_n(&txq->vring.used->idx,
                                            __ATOMIC_RELAXED);

            *free_entries = (uint16_t) (avail - used);
        }
    }
    netdev_vhost_guard_exit(&txq->reading);
}

/* The guest's avail->idx of 'txq' into '*idx' (0 if unknown), and
 * whether it was read ('*known'; false also while the rings are being
 * changed).  Returns false for a packed ring, whose driver writes no such
 * index.  Under the ring guard, with the queue's tx_lock held; read only
 * when a held kick or held packets go out, or a packet is dropped, never
 * per burst. */
static bool
ring_avail_idx(struct netdev_vhost *dev, struct netdev_vhost_txq *txq,
               bool *known, uint16_t *idx)
{
    *known = false;
    *idx = 0;
    if (dev->features & (1ULL << VIRTIO_F_RING_PACKED)) {
        return false;
    }
    if (netdev_vhost_guard_enter(&txq->reading, &dev->rings_valid)
        && txq->vring.avail) {
        *idx = __atomic_load_n(&txq->vring.avail->idx, __ATOMIC_ACQUIRE);
        *known = true;
    }
    netdev_vhost_guard_exit(&txq->reading);
    return true;
}

/* A held kick was delivered or held packets were placed in the guest's
 * ring: drops count as moderation's until the guest answers
 * (lib/vhost-ring.h, struct vhost_ring_answer).  With the tx_lock. */
static void
drop_answer_wait(struct netdev_vhost *dev, struct netdev_vhost_txq *txq)
{
    bool known;
    uint16_t idx;
    bool track = ring_avail_idx(dev, txq, &known, &idx);

    vhost_ring_answer_wait(&txq->drop_answer, track, known, idx);
}

/* Sending and dropping. */

struct enqueue_ctx {
    struct netdev_vhost *dev;
    struct netdev_vhost_txq *txq;
    int vid;
    int q;
    long long int now;          /* time_usec() of the caller, if a flush
                                 * may send staged packets. */
    uint32_t placed;            /* Packets placed in the ring so far. */
    uint32_t dropped;           /* Packets the ring had no room for. */
    bool kick_held;             /* A kick of the queue was held when the
                                 * send began (deferred kicks). */
};

/* Counts in drops_moderated the 'n' packets just refused by the guest's
 * full ring if moderation held something for the guest: they had been
 * held in the stage ('held'), a kick was held when the send began, or the
 * guest has not answered the last held kick or staged flush (see struct
 * vhost_ring_answer, lib/vhost-ring.h).  Not a bound of what moderation
 * costs (see there).  With the tx_lock. */
static void
count_moderated_drops(struct enqueue_ctx *ctx, bool held, int n)
{
    struct netdev_vhost_txq *txq = ctx->txq;
    bool moderated = held || ctx->kick_held;

    if (!moderated && txq->drop_answer.waiting) {
        bool known;
        uint16_t idx;

        ring_avail_idx(ctx->dev, txq, &known, &idx);
        moderated = vhost_ring_answer_outstanding(&txq->drop_answer, known,
                                                  idx);
    }
    if (moderated) {
        netdev_vhost_counter_add(&txq->drops_moderated, n);
    }
}

/* Frees the 'n' mbufs of a burst the library has copied into the guest's
 * ring (or that found no room there), as the stock netdev-dpdk.c of the
 * OVS we build against does in netdev_dpdk_vhost_send(): OVS 3.1 one by
 * one with the inline rte_pktmbuf_free(), OVS 3.5 with one
 * rte_pktmbuf_free_bulk() (both read in their sources; versions between
 * take the bulk call).  With DPDK 22.11 (Debian 12) the bulk call, a
 * function of the shared librte_mbuf that reaches the lcore id through
 * __tls_get_addr(), took 4.0% to 4.8% of the PMD thread's samples in a
 * testpmd io loop, where OVS 3.1's inline frees took about 2.5%; with
 * OVS 3.5 and DPDK 24.11 the bulk call was measured the cheaper (polling
 * loop 0.976x -> 0.988x stock).  PMD threads, inside the queue's
 * tx_lock. */
static inline void
free_sent(struct rte_mbuf **pkts, int n)
{
#if NETDEV_VHOST_OVS_VERSION_NUM > 30100
    rte_pktmbuf_free_bulk(pkts, n);
#else
    for (int i = 0; i < n; i++) {
        rte_pktmbuf_free(pkts[i]);
    }
#endif
}

/* vhost_txp_send_func: places 'n' mbufs in the guest's rx vring of the
 * context's queue pair with up to tx-retries-max retries, then frees them
 * (rte_vhost_enqueue_burst() copies).  With the queue's tx_lock. */
static void
enqueue_cb(void *aux, void **pkts_, int n)
{
    struct enqueue_ctx *ctx = aux;
    struct rte_mbuf **pkts = (struct rte_mbuf **) pkts_;
    struct netdev_vhost_txq *txq = ctx->txq;
    int sent = 0, retries = 0, max_retries;
    uint64_t bytes = 0;

    if (pkts_ == txq->txp.staged) {
        /* A flush: vhost_txp_flush() hands over the staged array itself,
         * once per flush, with the staging time of its oldest packet still
         * in 'oldest_us' (lib/vhost-tx-policy.c).  Where it records
         * max_wait_us. */
        delay_record(&txq->wait, ctx->now - txq->txp.oldest_us);
    }
    if (OVS_LIKELY(ctx->vid >= 0)) {
        atomic_read_relaxed(&ctx->dev->tx_retries_max, &max_retries);
        /* DPDK's guest_notify() and guest_notified() on this thread are
         * for this enqueue only: the latter counts its kicks
         * (lib/netdev-vhost-kick.c).  Every enqueue, both builds. */
        netdev_vhost_kick_enqueue_begin(ctx->dev, ctx->q, ctx->vid);
        for (;;) {
            int k = rte_vhost_enqueue_burst(ctx->vid,
                                            netdev_vhost_tx_vring(ctx->q),
                                            pkts + sent, n - sent);
            sent += k;
            if (!k || sent >= n || retries >= max_retries) {
                break;
            }
            retries++;
        }
        netdev_vhost_kick_enqueue_end(sent);
    }
    for (int i = 0; i < sent; i++) {
        bytes += rte_pktmbuf_pkt_len(pkts[i]);
    }
    free_sent(pkts, n);
    /* Held packets: a flush of the stage whose oldest packet waited (a
     * burst that filled the stage and went out in the same call was
     * never held: it went out as stock would send it). */
    bool held = (pkts_ == txq->txp.staged
                 && ctx->now > txq->txp.oldest_us);

    if (OVS_UNLIKELY(sent < n) && ctx->vid >= 0) {
        count_moderated_drops(ctx, held, n - sent);
    }
    if (held && sent) {
        drop_answer_wait(ctx->dev, txq);
    }
    ctx->placed += sent;
    ctx->dropped += n - sent;
    netdev_vhost_counter_add(&txq->packets, sent);
    netdev_vhost_counter_add(&txq->bytes, bytes);
    netdev_vhost_counter_add(&txq->dropped, n - sent);
    netdev_vhost_counter_add(&txq->retries, retries);
}

/* vhost_txp_drop_func: frees staged mbufs of a queue that is gone and
 * counts them in the queue's staged_dropped.  With the queue's tx_lock. */
static void
drop_cb(void *aux, void **pkts, int n)
{
    struct enqueue_ctx *ctx = aux;

    netdev_vhost_counter_add(&ctx->txq->staged_dropped, n);
    netdev_vhost_cov_pending(NETDEV_VHOST_COV_STAGED_DROPS, n);
    rte_pktmbuf_free_bulk((struct rte_mbuf **) pkts, n);
}

/* The one flush of a tx queue: empties queue pair 'q' of 'dev' as 'how'
 * says; when the device is gone, drops and counts instead (as staged
 * drops).  'now' is time_usec() or, for NETDEV_VHOST_TXQ_DROP, anything.
 * The device id is read here, with the queue's tx_lock held, as on every
 * tx path: destroy_device() takes every tx_lock after it withdrew the id,
 * so no thread uses the id of a gone device afterwards. */
static void
txq_flush_locked(struct netdev_vhost *dev, int q, long long int now,
                 enum netdev_vhost_txq_flush how)
    OVS_REQUIRES(dev->qps[q].tx.lock)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    int vid = netdev_vhost_get_vid(dev);
    struct enqueue_ctx ctx = { .dev = dev, .txq = txq, .vid = vid,
                               .q = q, .now = now };

    if (!txq->txp.n_staged) {
        return;
    }
    if (how == NETDEV_VHOST_TXQ_DROP || vid < 0) {
        netdev_vhost_cov_pending(NETDEV_VHOST_COV_FLUSH_ON_DESTROY, 1);
        vhost_txp_drop(&txq->txp, drop_cb, &ctx);
    } else if (how == NETDEV_VHOST_TXQ_ALL) {
        vhost_txp_flush(&txq->txp, VHOST_TXP_FLUSH_RECONFIG, now, enqueue_cb,
                        &ctx);
    } else {
        vhost_txp_run(&txq->txp, now, enqueue_cb, &ctx);
    }
    if (OVS_UNLIKELY(ctx.dropped) && how != NETDEV_VHOST_TXQ_DROP
        && vid >= 0) {
        /* A flush that found the guest's ring full starts the hold-off as
         * a burst does (netdev_vhost_txq_send()). */
        vhost_txp_ring_full(&txq->txp, now);
        if (NETDEV_VHOST_HAS_DEFERRED_KICKS && txq->kq.defer) {
            vhost_kick_ring_full(&txq->kq.kick, now);
        }
    }
}

/* Held kicks (deferred-kick builds; nothing is ever held otherwise). */

/* Delivers the held kick of queue pair 'q' of 'dev' if it is due and the
 * guest's ring still wants it (else it is postponed to the next call).
 * 'vid' is the device id read under the queue's tx_lock; 'now_us' a
 * time_usec() reading.  PMD threads. */
static void
kick_run_locked(struct netdev_vhost *dev, int q, int vid,
                long long int now_us)
    OVS_REQUIRES(dev->qps[q].tx.lock)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    struct netdev_vhost_kickq *kq = &txq->kq;

    if (!vhost_kick_due(&kq->kick, now_us) || vid < 0) {
        return;
    }
    /* The caller's enqueue (if any) published its used entries with the
     * library's full fence before the library asked guest_notify(); this
     * fence orders our ring read after them also on the rxq_recv path. */
    atomic_thread_fence(memory_order_seq_cst);
    bool wanted = guest_wants_interrupt(dev, txq, vid, q, true);

    if (wanted && netdev_vhost_get_vid(dev) != vid) {
        /* The ring guard was closed because the device is being destroyed
         * (destroy_device() withdraws the id before it closes the guard):
         * netdev_vhost_txq_teardown() delivers the kick once this thread
         * has let go of the tx_lock, and counts it once, as a teardown
         * kick. */
        return;
    }
    if (!vhost_kick_run(&kq->kick, wanted, now_us)) {
        return;
    }
    /* With the notification thread it writes the kick (and clears DPDK's
     * latch); for the moderation it went out now. */
    bool handed = kq->thread && netdev_vhost_kick_handoff(kq, vid);

    if (handed || netdev_vhost_kick_deliver(vid, q)) {
        kq->handed_held += handed;
        /* Where vhost_kick_delivered() records max_delay_us. */
        delay_record(&txq->kick_delay, now_us - kq->kick.pending_us);
        vhost_kick_delivered(&kq->kick, now_us);
        netdev_vhost_kick_note_used(dev, q);
        drop_answer_wait(dev, txq);
    } else {
        kq->not_delivered++;
        COVERAGE_INC(netdev_vhost_kick_not_delivered);
    }
}

/* The kick DPDK asked for during a send of several enqueues
 * (netdev_vhost_kick_fold_begin(), lib/netdev-vhost-kick.h), taken over
 * with DPDK's latch set: asked of the moderation once for the whole send
 * at 'now_us', then held like any other, or written now (by the
 * notification thread when the queue uses it).  A kick that cannot be
 * written now becomes a held kick due at once (vhost_kick_unwritten()), so
 * that kick_run_locked() tries it again.  PMD threads, with the queue's
 * tx_lock; 'vid' read under it. */
static void
kick_fold_locked(struct netdev_vhost *dev, int q, int vid,
                 long long int now_us)
    OVS_REQUIRES(dev->qps[q].tx.lock)
{
    struct netdev_vhost_kickq *kq = &txq_get(dev, q)->kq;

    if (vhost_kick_request(&kq->kick, now_us) != VHOST_KICK_NOW) {
        return;
    }
    netdev_vhost_kick_note_used(dev, q);
    if (kq->thread && netdev_vhost_kick_handoff(kq, vid)) {
        return;
    }
    if (netdev_vhost_kick_deliver(vid, q)) {
        /* As guest_notified() counts the kicks DPDK writes. */
        netdev_vhost_counter_add(&kq->kicks, 1);
    } else {
        vhost_kick_unwritten(&kq->kick, now_us);
        kq->not_delivered++;
        COVERAGE_INC(netdev_vhost_kick_not_delivered);
    }
}

/* Entry points. */

static void
count_down_drops(struct netdev_vhost *dev, struct dp_packet_batch *batch,
                 int cnt)
{
    rte_spinlock_lock(&dev->stats_lock);
    dev->tx_down_drops += cnt;
    rte_spinlock_unlock(&dev->stats_lock);
    dp_packet_delete_batch(batch, true);
}

/* May the burst of 'cnt' packets to 'txq' go out on the last answer of the
 * ring question, without reading the guest's ring again?  Yes when that
 * answer, given by this connection's guest, was "no interrupt wanted" (a
 * polling guest, or one busy polling) and the answer cannot change what
 * is sent (vhost_txp_answer_matters(): a full burst with nothing staged
 * goes out whole at once either way).  The kick is DPDK's decision either
 * way: it reads the ring itself after the enqueue.  An interrupt guest
 * (last answer "yes") is asked on every burst where the question is asked
 * at all (vhost_txp_needs_query(): not in adaptive mode at its floor,
 * where DPDK's kick gives the answer after the burst), so that adaptive
 * moderation's sample stays fresh.
 *
 * Why: the question reads avail->flags (or used_event), a cache line the
 * guest writes on every refill; a polling guest fed full bursts paid a
 * cache miss per burst for an answer that changed nothing (4% of the PMD
 * thread's samples in a testpmd io loop with DPDK 22.11).  With the
 * queue's tx_lock held; PMD threads. */
static bool
reuse_answer(const struct netdev_vhost_txq *txq, int cnt)
{
    return (txq->answer_known && !txq->last_wants_intr
            && !vhost_txp_answer_matters(&txq->txp, cnt));
}

/* Staging at adaptive's floor, where netdev_vhost_txq_send() did not ask
 * the guest's ring: returns true if the guest wanted an interrupt for the
 * burst just sent, that is, if DPDK kicked it while it placed the burst
 * ('txq->kq.kicks', counted by its guest_notified() op on this thread,
 * moved from 'kicks_before'; DPDK's rule is the ring's, virtio 1.1
 * section 2.6.7.2, DPDK 22.11 lib/vhost/vhost.h vhost_vring_call_split()
 * and _packed(), which also kick once while their used_event snapshot is
 * not yet valid).  One send is one wake-up however many of its enqueue
 * calls (retries, chunks of 32) kicked, so the moderation's wake-ups
 * equal the kicks when every send is one enqueue.  Counts the burst in
 * the policy's bursts_intr then, and keeps the answer for the
 * statistics' "wants" (not for reuse_answer(): it was learnt after the
 * burst, not asked before it).  With the queue's tx_lock; PMD threads. */
static bool
kick_wanted_after_send(struct netdev_vhost_txq *txq, uint64_t kicks_before)
{
    bool kicked = netdev_vhost_counter_get(&txq->kq.kicks) != kicks_before;

    if (kicked) {
        vhost_txp_note_intr(&txq->txp);
    }
    txq->last_wants_intr = kicked;
    txq->answer_known = false;
    return kicked;
}

void
netdev_vhost_txq_send(struct netdev_vhost *dev, int q,
                      struct dp_packet_batch *batch, int cnt)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    unsigned int before;

    if (OVS_UNLIKELY(!txq_trylock(dev, q, &before))) {
        (*tx_contention_get())++;     /* vhost_tx_contention. */
        before = txq_lock(dev, q);
    }
    /* Again under the lock: see txq_flush_locked(). */
    int vid = netdev_vhost_get_vid(dev);
    if (OVS_UNLIKELY(vid < 0)) {
        txq_unlock(dev, q, before);
        count_down_drops(dev, batch, cnt);
        return;
    }

    struct enqueue_ctx ctx = { .dev = dev, .txq = txq, .vid = vid,
                               .q = q };
    bool defer = NETDEV_VHOST_HAS_DEFERRED_KICKS && txq->kq.defer;
    bool wants = txq->txp.mode == VHOST_TXP_TIMED;

    /* Deferred kicks (auto, DPDK 23.11+): the burst goes out at once and
     * DPDK asks guest_notify() whether to kick; nothing to ask the ring
     * here.  Staging at adaptive's floor (interval 0, nothing staged):
     * the burst goes out at once whatever the answer, and whether the
     * guest wanted an interrupt for it is DPDK's kick during the enqueue
     * (kick_wanted_after_send()); nothing to ask either. */
    bool asked = !defer && vhost_txp_needs_query(&txq->txp);
    uint64_t kicks_before = 0;

    if (asked) {
        if (reuse_answer(txq, cnt)) {
            txq->queries_reused++;
        } else {
            wants = guest_wants_interrupt(dev, txq, vid, q, false);
        }
    } else if (!defer && txq->kq.adaptive) {
        kicks_before = netdev_vhost_counter_get(&txq->kq.kicks);
    }
    /* The clock is read only when staging is in play: a polling guest
     * costs one ring read per burst (adaptive at its floor: none, but a
     * read of the kick counter before and after, and the moderation's
     * TSC read) and nothing else. */
    long long int now = wants || txq->txp.n_staged ? time_usec() : 0;
    ctx.now = now;
    /* Adaptive mode: whether this burst would wake the guest at the floor
     * (lib/vhost-moderation.h).  With deferred kicks: DPDK asks
     * guest_notify() during the enqueue, or a kick is already held (DPDK
     * then asks nothing). */
    uint64_t kick_requests = txq->kq.kick.stats.requests;
    bool kick_held = txq->kq.kick.pending;

    ctx.kick_held = defer && kick_held;
    /* More than one enqueue's worth (OVS 4.0 batches): one kick decision
     * for the whole send (lib/netdev-vhost-kick.h). */
    bool fold = defer && cnt > VHOST_TXP_MAX_STAGED;

    if (OVS_UNLIKELY(fold)) {
        netdev_vhost_kick_fold_begin();
    }
    vhost_txp_burst(&txq->txp, wants, (void **) batch->packets, cnt, now,
                    enqueue_cb, &ctx);
    if (OVS_UNLIKELY(fold) && netdev_vhost_kick_fold_end()) {
        kick_fold_locked(dev, q, vid, time_usec());
    }
    if (OVS_UNLIKELY(txq->kq.adaptive)) {
        bool wanted = (defer
                       ? kick_held || txq->kq.kick.stats.requests
                                      != kick_requests
                       : asked
                       ? wants
                       : kick_wanted_after_send(txq, kicks_before));

        kickq_moderate(&txq->kq, &txq->txp, cnt, wanted, ctx.dropped);
    }
    if (OVS_UNLIKELY(ctx.dropped)) {
        /* The guest's ring overflowed: hold nothing on this queue for a
         * while (lib/vhost-ring.h, VHOST_RING_FULL_HOLDOFF_US; after
         * adaptive moderation went back to its floor, so that the
         * hold-off follows the floor's interval).  A held kick becomes due
         * at once and goes out below. */
        long long int full_now = now ? now : time_usec();

        vhost_txp_ring_full(&txq->txp, full_now);
        if (defer) {
            vhost_kick_ring_full(&txq->kq.kick, full_now);
        }
    }
    if (defer) {
        /* The ring watermark: a held kick is due at once when the ring
         * fills (lib/vhost-kick.h).  The ring is read only while a kick is
         * held, so a polling guest's bursts read nothing more. */
        uint32_t size = 0, free_entries = UINT32_MAX;

        if (OVS_UNLIKELY(txq->kq.kick.pending)) {
            ring_room(dev, txq, &size, &free_entries);
        }
        vhost_kick_placed(&txq->kq.kick, ctx.placed, size, free_entries);
    }
    if (defer && OVS_UNLIKELY(txq->kq.kick.pending && txq->kq.kick.early)) {
        /* The watermark made the held kick due: deliver it now, as this
         * thread holds the lock.  A kick due at its deadline is left to
         * netdev_vhost_txq_run_due() on the port's next rxq_recv, so that
         * a burst while a kick is held reads no clock. */
        kick_run_locked(dev, q, vid, time_usec());
    }
    txq_unlock(dev, q, before);
}

bool
netdev_vhost_txq_any_pending(const struct netdev_vhost *dev)
{
    return (netdev_vhost_qmap_any(&dev->staged)
            || (NETDEV_VHOST_HAS_DEFERRED_KICKS
                && netdev_vhost_qmap_any(&dev->kick_pending)));
}

uint64_t
netdev_vhost_txq_run_due(struct netdev_vhost *dev,
                         struct netdev_vhost_txq_wait *wait)
{
    uint64_t tsc = rte_get_tsc_cycles();
    uint32_t seq;

    atomic_read_explicit(&dev->due_seq, &seq, memory_order_acquire);
    if (seq == wait->seq && tsc < wait->until_tsc) {
        return 0;
    }

    long long int now = time_usec();
    long long int next = LLONG_MAX;     /* Earliest deadline left. */

    for (int w = 0; w < ARRAY_SIZE(dev->staged.bits); w++) {
        uint64_t staged, kicks = 0;

        atomic_read_relaxed(&dev->staged.bits[w], &staged);
        if (NETDEV_VHOST_HAS_DEFERRED_KICKS) {
            atomic_read_relaxed(&dev->kick_pending.bits[w], &kicks);
        }
        for (uint64_t bits = staged | kicks; bits;
             bits = zero_rightmost_1bit(bits)) {
            int q = w * 64 + raw_ctz(bits);
            struct netdev_vhost_txq *txq = txq_get(dev, q);
            unsigned int before;
            long long int due;

            /* The lock is taken only once the published time of the
             * queue's next work (a relaxed read: a stale value delays it
             * by one poll at most) has come, so that the rx PMD thread
             * writes no tx_lock line while a held kick or staged packets
             * wait for their deadline. */
            atomic_read_relaxed(&txq->due, &due);
            if (due > now) {
                next = MIN(next, due);
                continue;
            }
            if (!txq_trylock(dev, q, &before)) {
                next = LLONG_MIN;       /* Again on the next poll. */
                continue;
            }
            /* Again with the lock: the state is the lock holder's. */
            if (txq->txp.n_staged && vhost_txp_deadline(&txq->txp) <= now) {
                /* Debug level, rate-limited: says which thread flushed
                 * (the log line's thread name); the tests check it. */
                static struct vlog_rate_limit due_rl
                    = VLOG_RATE_LIMIT_INIT(5, 5);

                VLOG_DBG_RL(&due_rl, "%s: tx queue %d: %d staged packets "
                            "flushed at their deadline",
                            netdev_get_name(&dev->up), q, txq->txp.n_staged);
                txq_flush_locked(dev, q, now, NETDEV_VHOST_TXQ_DUE);
            }
            if (txq->kq.kick.pending) {
                kick_run_locked(dev, q, netdev_vhost_get_vid(dev), now);
            }
            txq_unlock(dev, q, before);
            /* What is left (this thread's own store in txq_unlock()): a
             * kick the guest did not want yet is asked about again on the
             * next poll. */
            atomic_read_relaxed(&txq->due, &due);
            next = MIN(next, due);
        }
    }
    wait->seq = seq;
    if (next > now) {
        uint64_t cycles = MIN(next - now, TXQ_WAIT_MAX_US) * tsc_per_us;

        /* 31/32 of it: an overstated TSC rate ends the wait early, not
         * late. */
        wait->until_tsc = tsc + cycles - cycles / 32;
    } else {
        wait->until_tsc = 0;
    }
    return MAX(rte_get_tsc_cycles() - tsc, 1);
}

void
netdev_vhost_txq_flush(struct netdev_vhost *dev, int q,
                       enum netdev_vhost_txq_flush how)
{
    long long int now = how == NETDEV_VHOST_TXQ_DROP ? 0 : time_usec();
    unsigned int before = txq_lock(dev, q);

    txq_flush_locked(dev, q, now, how);
    txq_unlock(dev, q, before);
}

void
netdev_vhost_flush_all(struct netdev_vhost *dev, bool drop)
{
    long long int now = time_usec();

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        unsigned int before = txq_lock(dev, q);

        txq_flush_locked(dev, q, now, drop ? NETDEV_VHOST_TXQ_DROP
                                           : NETDEV_VHOST_TXQ_ALL);
        txq_unlock(dev, q, before);
    }
}

void
netdev_vhost_txq_set_policy(struct netdev_vhost *dev,
                            enum vhost_txp_mode mode, uint32_t interval_us,
                            bool coalesce_kicks, uint32_t min_us,
                            uint32_t max_us, uint32_t watermark)
{
    long long int now = time_usec();
    bool adaptive = mode == VHOST_TXP_ADAPTIVE;
    /* Deferred kicks: auto no longer stages (the policy is told that the
     * guest never wants interrupts, see netdev_vhost_txq_send()), so what
     * it staged is flushed by the mode change to auto below as for a
     * switch to immediate. */
    bool defer = (NETDEV_VHOST_HAS_DEFERRED_KICKS && coalesce_kicks
                  && (mode == VHOST_TXP_AUTO || adaptive));

    for (int q = 0; q < NETDEV_VHOST_MAX_QP; q++) {
        struct netdev_vhost_txq *txq = txq_get(dev, q);
        unsigned int before = txq_lock(dev, q);
        int vid = netdev_vhost_get_vid(dev);
        struct enqueue_ctx ctx = { .dev = dev, .txq = txq, .vid = vid,
                                   .q = q, .now = now };

        if (txq->txp.n_staged && vid < 0) {
            txq_flush_locked(dev, q, now, NETDEV_VHOST_TXQ_DROP);
        }

        uint32_t q_interval = kickq_configure(&txq->kq, defer, adaptive,
                                              interval_us, min_us, max_us);

        vhost_txp_set_config(&txq->txp, mode, q_interval, now, enqueue_cb,
                             &ctx);
        vhost_kick_set_watermark(&txq->kq.kick, watermark);
        vhost_txp_set_watermark(&txq->txp, watermark);
        if (defer && txq->txp.n_staged) {
            vhost_txp_flush(&txq->txp, VHOST_TXP_FLUSH_RECONFIG, now,
                            enqueue_cb, &ctx);
        }
        if (mode == VHOST_TXP_IMMEDIATE) {
            /* Nothing is held from now on: a wait left by the last held
             * kick or flush would count the drops of a mode that holds
             * nothing. */
            vhost_ring_answer_forget(&txq->drop_answer);
        }
        txq_unlock(dev, q, before);
    }
}

bool
netdev_vhost_txq_connect(struct netdev_vhost *dev, int q, uint64_t features)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    unsigned int before = txq_lock(dev, q);
    bool iommu;

    /* With a vIOMMU no kick is taken over: rte_vhost_notify_guest() does
     * nothing while the virtqueue is not accessible (an IOTLB miss after
     * an IOTLB_INVALIDATE of the ring) and never translates the ring again
     * itself (DPDK 24.11 lib/vhost/vhost.c rte_vhost_notify_guest(),
     * vhost.h vhost_vring_inject_irq()), so a held kick could wait without
     * bound, and DPDK's irq_pending latch, left set at teardown, would
     * silence the queue after a driver restart.  Every kick of such a
     * guest goes out at once, written by the library as stock. */
    vhost_kick_reset(&txq->kq.kick);
    /* The last answer was the previous guest's. */
    txq->answer_known = false;
    vhost_ring_answer_forget(&txq->drop_answer);
    iommu = features & (1ULL << VIRTIO_F_IOMMU_PLATFORM);
    txq->kq.iommu = iommu;
    kickq_set_thread(&txq->kq);
    netdev_vhost_notify_connect(&txq->kq.nq);
    txq_unlock(dev, q, before);
    return iommu;
}

bool
netdev_vhost_txq_teardown(struct netdev_vhost *dev, int q, int vid)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    unsigned int before = txq_lock(dev, q);
    struct netdev_vhost_kickq *kq = &txq->kq;
    bool delivered = false;

    /* Kicks handed to the notification thread are written (or found
     * unwritable) before the id can be reused: DPDK frees the device only
     * after destroy_device() returns. */
    bool dropped = netdev_vhost_notify_quiesce(&kq->nq);

    if (NETDEV_VHOST_HAS_DEFERRED_KICKS && (kq->kick.pending || dropped)) {
        /* DPDK calls destroy_device() without a virtqueue lock held
         * (GET_VRING_BASE, RESET_OWNER, connection closed) and before it
         * closes the callfds: the kick can still be written.  No PMD
         * thread can deliver it any more: the id is withdrawn and every
         * tx_lock was taken since. */
        delivered = netdev_vhost_kick_deliver(vid, q);
        if (delivered) {
            long long int now = time_usec();

            if (kq->kick.pending) {
                delay_record(&txq->kick_delay, now - kq->kick.pending_us);
                vhost_kick_delivered(&kq->kick, now);
            } else {
                /* The thread's kick: counted as written here. */
                kq->teardown_written++;
            }
            kq->teardown_delivered++;
        }
    }
    vhost_kick_reset(&kq->kick);
    txq_unlock(dev, q, before);
    return delivered;
}

void
netdev_vhost_txq_read_stats(struct netdev_vhost *dev, int q,
                            struct netdev_vhost_txq_stats *st)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    unsigned int before = txq_lock(dev, q);

    st->txp = txq->txp.stats;
    st->kick = txq->kq.kick.stats;
    st->mod = txq->kq.mod.stats;
    st->n_staged = txq->txp.n_staged;
    st->show_drops = (netdev_vhost_counter_get(&txq->dropped)
                      + txq->txp.stats.staged_drops);
    st->queries_skipped = txq->queries_skipped;
    st->queries_reused = txq->queries_reused;
    st->kicks_not_delivered = txq->kq.not_delivered;
    st->kicks_teardown = txq->kq.teardown_delivered;
    st->kicks_handed = netdev_vhost_counter_get(&txq->kq.handed);
    st->handed_held = txq->kq.handed_held;
    st->kicks_thread = netdev_vhost_counter_get(&txq->kq.nq.written);
    st->teardown_written = txq->kq.teardown_written;
    st->kick_pending = txq->kq.kick.pending;
    st->wants_intr = txq->last_wants_intr;
    st->enabled = txq->enabled;
    st->interval_us = (txq->kq.adaptive ? vhost_mod_interval(&txq->kq.mod)
                       : txq->txp.interval_us);
    st->kick_delay = txq->kick_delay;
    st->wait = txq->wait;
    txq_unlock(dev, q, before);
}

void
netdev_vhost_txq_clear_stats(struct netdev_vhost *dev, int q)
{
    struct netdev_vhost_txq *txq = txq_get(dev, q);
    unsigned int before = txq_lock(dev, q);

    txq->txp.stats.max_wait_us = 0;
    txq->kq.kick.stats.max_delay_us = 0;
    memset(txq->kick_delay.bin, 0, sizeof txq->kick_delay.bin);
    memset(txq->wait.bin, 0, sizeof txq->wait.bin);
    txq_unlock(dev, q, before);
}
