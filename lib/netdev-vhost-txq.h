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

#ifndef NETDEV_VHOST_TXQ_H
#define NETDEV_VHOST_TXQ_H 1

/* The transmit half of a queue pair: our side of the guest's rx vring 2q
 * (virtio 1.1 section 5.1.2).  This unit owns the queue's tx_lock (it is
 * the only code that takes it), the tx policy's staging (lib/vhost-tx-
 * policy.h), the held kicks of deferred-kick builds (lib/vhost-kick.h; the
 * DPDK guest_notify glue stays in lib/netdev-vhost-kick.c), the question
 * to the guest's ring, the flush and kick deadlines, and the queue's
 * counters.
 *
 * Threads: netdev_vhost_txq_send() runs on PMD threads (several may share a
 * queue: the tx_lock serializes them); netdev_vhost_txq_run_due() on the
 * PMD thread that polls any rxq of the port; the rest on the main thread
 * (configuration, statistics) or the vhost-events thread (device
 * creation and teardown).  Every function here takes and releases the
 * tx_lock itself: no caller holds it.
 *
 * Lock order: a tx_lock nests inside dev->mutex (the main thread's
 * configuration and statistics) and is never held together with another
 * queue's tx_lock.  Inside it: DPDK's per-virtqueue access_lock, which
 * rte_vhost_enqueue_burst() and rte_vhost_notify_guest() take (DPDK
 * 22.11 and 24.11 lib/vhost/virtio_net.c, vhost.c): we rely on the
 * vhost-user message thread taking no tx_lock while it holds an
 * access_lock (destroy_device() runs with no virtqueue lock held, DPDK
 * 24.11 lib/vhost/vhost_user.c). */

#include <stdbool.h>
#include <stdint.h>

#include <rte_spinlock.h>
#include <rte_vhost.h>

#include "dpif-netdev-perf.h"
#include "netdev-vhost-kick.h"
#include "openvswitch/compiler.h"
#include "ovs-atomic.h"
#include "util.h"
#include "vhost-pmd-iter.h"
#include "vhost-tx-policy.h"

struct dp_packet_batch;
struct netdev_vhost;

/* Largest number of queue pairs per port (DPDK 22.11 VHOST_MAX_QUEUE_PAIRS
 * is 128). */
#define NETDEV_VHOST_MAX_QP 128

/* A set of queue pairs of a port, one bit each: the queues with staged
 * packets, and the queues holding a deferred kick.  A bit is set and
 * cleared only by the holder of that queue's tx_lock, on a change between
 * none and some (txq_unlock() in lib/netdev-vhost-txq.c), not per burst;
 * any thread reads it without a lock (every rxq_recv of the port).  A
 * cache line of its own, so that the PMD threads' reads of the port's
 * other fields do not bounce with it. */
struct netdev_vhost_qmap {
    atomic_uint64_t bits[NETDEV_VHOST_MAX_QP / 64];
} __attribute__((aligned(64)));

/* True if 'map' names some queue pair.  Any thread; one relaxed read per
 * 64 queue pairs. */
static inline bool
netdev_vhost_qmap_any(const struct netdev_vhost_qmap *map)
{
    for (int w = 0; w < ARRAY_SIZE(map->bits); w++) {
        uint64_t bits;

        atomic_read_relaxed(CONST_CAST(atomic_uint64_t *, &map->bits[w]),
                            &bits);
        if (bits) {
            return true;
        }
    }
    return false;
}

/* A queue's tx_lock: DPDK's spinlock, in a type that clang's thread safety
 * analysis knows as a lock (OVS_LOCKABLE), so that the annotations of the
 * helpers in lib/netdev-vhost-txq.c are checked (-Wthread-safety). */
struct OVS_LOCKABLE netdev_vhost_tx_lock {
    rte_spinlock_t sl;
};

/* The transmit half of a queue pair, written by the sending PMD threads
 * on every burst: one group of cache lines of its own inside struct
 * netdev_vhost_qp (lib/netdev-vhost-private.h), apart from the rx side,
 * which the polling PMD thread writes on every rxq_recv.
 *
 * 'lock' (the queue's tx_lock) protects every member up to the ring guard,
 * except the atomics, which any thread may read without it. */
struct netdev_vhost_txq {
    struct netdev_vhost_tx_lock lock;   /* The queue's tx_lock. */
    bool enabled;               /* Guest enabled vring 2q (written by the
                                 * main thread under dev->mutex; read by
                                 * any thread). */
    bool last_wants_intr;       /* Answer of the last ring question. */
    bool answer_known;          /* 'last_wants_intr' is an answer of the
                                 * guest connected now (reset at
                                 * netdev_vhost_txq_connect()). */
    struct vhost_txp txp;       /* Staging and policy counters. */
    struct netdev_vhost_kickq kq;   /* Deferred kicks and adaptive
                                 * moderation (lib/netdev-vhost-kick.h). */
    uint64_t queries_skipped;   /* Ring questions not asked: ring being
                                 * changed. */
    uint64_t queries_reused;    /* Ring questions not asked: a full burst
                                 * with nothing staged took the last
                                 * answer, "no" (netdev_vhost_txq_send()). */
    atomic_llong due;           /* When the queue next has work for
                                 * netdev_vhost_txq_run_due(), as of the
                                 * last unlock that saw packets staged or a
                                 * kick held: the earlier of the staging
                                 * deadline (vhost_txp_deadline()) and the
                                 * held kick's (vhost_kick_deadline(), or
                                 * LLONG_MIN once the ring watermark made
                                 * it due); us, time_usec(); LLONG_MAX:
                                 * none.  Read without the lock, so that a
                                 * queue whose work is ahead costs the rx
                                 * PMD thread no lock write. */
    atomic_uint64_t packets;    /* Placed in the used ring. */
    atomic_uint64_t bytes;
    atomic_uint64_t dropped;    /* Not accepted after retries. */
    atomic_uint64_t staged_dropped; /* Staged, then dropped: the queue or
                                 * device went away.  Unlike the tx
                                 * policy's staged_drops, never cleared. */
    atomic_uint64_t retries;
    atomic_uint64_t drops_moderated; /* Of 'dropped': packets refused by
                                 * the guest's full ring while
                                 * moderation held something for it (see
                                 * 'drop_answer'); never cleared. */
    struct vhost_ring_answer drop_answer; /* Whether the guest answered
                                 * the last held kick or staged flush
                                 * (lib/vhost-ring.h). */

    /* Ring guard (DESIGN-NOTES.md section 4; lib/netdev-vhost-guard.h).
     * The PMD thread sets 'reading' while it reads the driver's
     * suppression fields; the vhost-user message thread clears
     * dev->rings_valid and waits for 'reading' to be false before a
     * message may remap guest memory. */
    atomic_bool reading;
    struct rte_vhost_vring vring;   /* Pointers valid iff rings_valid. */

    /* Distributions of delays, us, since the last clear-stats, in OVS's
     * histogram (lib/dpif-netdev-perf.h; buckets of
     * netdev_vhost_delay_hist_init(), below).  Under
     * the tx_lock, written only when a held kick is delivered or staged
     * packets are flushed, never per packet. */
    struct histogram kick_delay;    /* From the first taken-over request
                                     * of a kick to its delivery. */
    struct histogram wait;          /* How long the oldest packet of a
                                     * flush was staged. */
};

/* A copy of a queue's counters and state, taken under its tx_lock by
 * netdev_vhost_txq_read_stats().  The counters only grow (since the port
 * was made; netdev-vhost/clear-stats subtracts a snapshot where it shows
 * them, lib/netdev-vhost-stats.c); the maxima (max_wait_us,
 * max_delay_us) and the histograms are since the last clear-stats. */
struct netdev_vhost_txq_stats {
    struct vhost_txp_stats txp;
    struct vhost_kick_stats kick;
    struct vhost_mod_stats mod;
    uint64_t n_staged;              /* Staged now, packets. */
    uint64_t show_drops;            /* Packets not accepted after retries
                                     * plus staged drops. */
    uint64_t queries_skipped;
    uint64_t queries_reused;
    uint64_t kicks_not_delivered;
    uint64_t kicks_teardown;
    uint64_t kicks_handed;      /* Handed to the notification thread. */
    uint64_t handed_held;       /* ...of them, held kicks at their
                                 * deadline (in kick.delivered). */
    uint64_t kicks_thread;      /* Written by the notification thread. */
    uint64_t teardown_written;  /* Handed off, written at teardown. */
    bool kick_pending;
    bool wants_intr;                /* Last answer of the ring question. */
    bool enabled;
    uint32_t interval_us;           /* Interval now in force, us. */
    struct histogram kick_delay;    /* See struct netdev_vhost_txq. */
    struct histogram wait;
};

/* Makes contention for our tx_locks count in stock's coverage counter
 * vhost_tx_contention (lib/netdev-dpdk.c), which alerts key on, by
 * chaining its per-thread count function.  Main thread, once, before any
 * PMD thread exists (PMD threads collect coverage counts,
 * lib/dpif-netdev.c): netdev_vhost_register() time, through
 * netdev_vhost_unixctl_register(). */
void netdev_vhost_txq_coverage_init(void);

/* Initialises queue pair 'q' of 'dev' for tx policy 'mode' and
 * 'interval_us' (1..1000000), and with q == 0 also the port's two queue
 * maps (empty).  Main thread, at port construction, before any other
 * thread may see the port. */
void netdev_vhost_txq_init(struct netdev_vhost *dev, int q,
                           enum vhost_txp_mode mode, uint32_t interval_us);

/* netdev_class 'send' after the port checks: places the 'cnt' packets of
 * 'batch' (1..NETDEV_MAX_BURST, DPDK mbufs, offloads prepared) in the
 * guest's rx vring of queue pair 'q' of 'dev' now, stages them by the tx
 * policy, or drops and counts them (tx_down_drops) if the device went
 * away.  Takes ownership of every packet.  Delivers the queue's held kick
 * if it is due.  PMD threads. */
void netdev_vhost_txq_send(struct netdev_vhost *dev, int q,
                           struct dp_packet_batch *batch, int cnt);

/* True if some queue of 'dev' has packets staged or a kick held: then
 * netdev_vhost_txq_run_due() has work to look at.  Any thread. */
bool netdev_vhost_txq_any_pending(const struct netdev_vhost *dev);

/* What one rxq of a port knows of the port's next transmit-side work,
 * for netdev_vhost_txq_run_due(): until the TSC reaches 'until_tsc', and
 * while the port's 'due_seq' is still 'seq', no queue of the port has
 * work due, so a poll reads neither the clock nor a queue.  Written by
 * the PMD thread that polls the rxq. */
struct netdev_vhost_txq_wait {
    uint64_t until_tsc;         /* rte_get_tsc_cycles() value; 0: none. */
    uint32_t seq;               /* The port's 'due_seq' when it was set. */
    atomic_uint64_t due_cycles; /* TSC cycles of this rxq's polls that
                                 * went past the wait (the clock read, the
                                 * scan, the flushes and kicks they did) in
                                 * PMD iterations dpif-netdev counted idle
                                 * (netdev_vhost_counter_add(); the port's
                                 * deferred_work_cycles). */
    struct vhost_pmd_iter_rxq iter; /* Work not yet judged busy or idle
                                     * (lib/vhost-pmd-iter.h). */
};

/* Flushes the staged packets whose deadline passed and delivers the held
 * kicks that are due, of every queue pair of 'dev', in one scan.  PMD
 * threads, from rxq_recv of any rxq of the port, so that nothing stays
 * staged or held when no more traffic comes, whichever PMD thread polls
 * the port; 'wait' is that rxq's (see above): a poll before the earliest
 * published deadline of the port costs one TSC read and two loads, no
 * clock_gettime() (about 100 cycles a call on the test machines, on every
 * poll while a kick is held).  The wait is at most 1 ms of TSC cycles
 * (ample against the drift between the TSC and the monotonic clock),
 * 31/32 of the time to the deadline (a TSC rate that DPDK overstates
 * ends it early, not late), and it ends at once when any queue's
 * deadline moves earlier or the port's queue maps change.  A queue whose
 * tx_lock another thread holds is tried again on the next poll (the
 * send path itself delivers only a kick the ring watermark made due).
 * Returns the TSC cycles of the poll when it went past the wait, from its
 * first TSC read to its end, 0 when it stopped at the wait: the caller
 * adds them to 'wait->due_cycles' once it knows that dpif-netdev counted
 * the poll's PMD iteration as idle (see netdev_vhost_rxq_recv()). */
uint64_t netdev_vhost_txq_run_due(struct netdev_vhost *dev,
                                  struct netdev_vhost_txq_wait *wait);

/* How netdev_vhost_txq_flush() empties a queue.  Every one drops and
 * counts the staged packets instead when the port has no device. */
enum netdev_vhost_txq_flush {
    NETDEV_VHOST_TXQ_DUE,       /* Flush if the deadline passed. */
    NETDEV_VHOST_TXQ_ALL,       /* Flush all (VHOST_TXP_FLUSH_RECONFIG). */
    NETDEV_VHOST_TXQ_DROP,      /* Drop and count as staged drops. */
};

/* Empties queue pair 'q' of 'dev' as 'how' says.  Main thread or
 * vhost-events thread. */
void netdev_vhost_txq_flush(struct netdev_vhost *dev, int q,
                            enum netdev_vhost_txq_flush how);

/* Flushes (or, with 'drop' or no device, drops and counts) everything
 * staged on 'dev'.  Takes every queue's tx_lock once, also of queues with
 * nothing staged: destroy_device() relies on that, to know that no tx
 * path still uses a withdrawn device id.  Main thread or vhost-events
 * thread. */
void netdev_vhost_flush_all(struct netdev_vhost *dev, bool drop);

/* Applies tx policy 'mode' and 'interval_us' (microseconds, as validated
 * by vhost_txp_parse_interval()) and the ring watermark 'watermark'
 * (tx-kick-watermark: 0 for auto, else 1..VHOST_KICK_WATERMARK_MAX
 * packets; lib/vhost-kick.h, vhost_txp_set_watermark()) to every queue
 * pair of 'dev', with
 * deferred kicks instead of staging in auto and adaptive mode if
 * 'coalesce_kicks' (tx-coalesce=kicks; only in a
 * NETDEV_VHOST_DEFERRED_KICKS build), flushing what the new policy no
 * longer stages (dropping it if there is no device).  In adaptive mode the
 * interval moves between 'min_us' and 'max_us' (tx-flush-interval-min,
 * -max; lib/vhost-moderation.h) and 'interval_us' is not used.  Main
 * thread, dev->mutex held. */
void netdev_vhost_txq_set_policy(struct netdev_vhost *dev,
                                 enum vhost_txp_mode mode,
                                 uint32_t interval_us, bool coalesce_kicks,
                                 uint32_t min_us, uint32_t max_us,
                                 uint32_t watermark);

/* A new device was created on 'dev' with negotiated virtio 'features'
 * (new_device(), vhost-events thread, before the id is published): the
 * new virtqueue of queue pair 'q' starts with DPDK's irq_pending latch
 * clear, so its first kick goes out at once, and a guest behind a vIOMMU
 * gets no kick deferred (see netdev_vhost_guest_notify()).  Returns true
 * if the guest negotiated VIRTIO_F_IOMMU_PLATFORM. */
bool netdev_vhost_txq_connect(struct netdev_vhost *dev, int q,
                              uint64_t features);

/* The device 'vid' of 'dev' is being destroyed (destroy_device(), vhost-
 * events thread, after the id was withdrawn and netdev_vhost_flush_all()
 * took every tx_lock): delivers the held kick of queue pair 'q', if any,
 * while the virtqueue and its callfd still exist (DPDK's irq_pending latch
 * survives GET_VRING_BASE and would silence the queue after a driver
 * restart), and forgets the queue's kick state.  Returns true if it wrote
 * a kick. */
bool netdev_vhost_txq_teardown(struct netdev_vhost *dev, int q, int vid);

/* Copies the counters and state of queue pair 'q' of 'dev' into '*st',
 * under its tx_lock.  Main thread, dev->mutex held. */
void netdev_vhost_txq_read_stats(struct netdev_vhost *dev, int q,
                                 struct netdev_vhost_txq_stats *st);

/* netdev-vhost/clear-stats on queue pair 'q' of 'dev': empties its delay
 * histograms and zeroes its maxima (max_wait_us, kicks' max_delay_us),
 * which only our commands show.  Its counters are left alone: they only
 * grow, and the command subtracts a snapshot instead
 * (lib/netdev-vhost-stats.c).  Main thread, dev->mutex held. */
void netdev_vhost_txq_clear_stats(struct netdev_vhost *dev, int q);

/* Sets the buckets of the delay histogram 'h' (OVS's struct histogram,
 * lib/dpif-netdev-perf.h, walls in microseconds: see delay_walls in
 * lib/netdev-vhost-txq.c) and empties it.  Any thread that owns 'h'. */
void netdev_vhost_delay_hist_init(struct histogram *h);

#endif /* netdev-vhost-txq.h */
