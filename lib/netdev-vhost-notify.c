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

/* The notification thread: see netdev-vhost-notify.h and DESIGN-NOTES.md
 * "The notification thread". */

#include <config.h>

#include "netdev-vhost-notify.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ring.h>

#include "coverage.h"
#include "netdev-vhost-kick.h"
#include "openvswitch/vlog.h"
#include "ovs-numa.h"
#include "ovs-rcu.h"
#include "ovs-thread.h"
#include "smap.h"
#include "timeval.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_vhost_notify);

COVERAGE_DEFINE(netdev_vhost_notify_wakeup);
COVERAGE_DEFINE(netdev_vhost_notify_ring_full);

/* Most NUMA nodes served (node ids 0..NOTIFY_MAX_NUMA - 1; a port on a
 * higher node is served by the first thread). */
#define NOTIFY_MAX_NUMA 8

/* One notification thread.  'ring' and 'wake_fd' are set before the
 * thread starts and never change; 'running' is set (release) last. */
struct notify_thread {
    struct rte_ring *ring;      /* Queues with a kick requested. */
    int wake_fd;                /* eventfd a PMD thread writes to wake the
                                 * thread from its long sleep. */
    pthread_t thread;
    int numa;
    atomic_bool running;
    atomic_bool asleep;         /* In its long sleep (or about to be). */
    atomic_bool wake_sent;      /* 'wake_fd' written since it slept. */
    atomic_uint64_t written;    /* Kicks written, all queues. */
    atomic_uint64_t wakeups;    /* Woken through 'wake_fd'. */
    atomic_uint64_t cpu_us;     /* Its CPU time (getrusage). */
};

static struct notify_thread threads[NOTIFY_MAX_NUMA];
static atomic_bool enabled;
static char *config_error;      /* Main thread only. */
static char *pmd_mask;          /* pmd-cpu-mask the affinity is for. */

bool
netdev_vhost_notify_enabled(void)
{
    bool on;

    atomic_read_relaxed(&enabled, &on);
    return on;
}

const char *
netdev_vhost_notify_error(void)
{
    return config_error;
}

void
netdev_vhost_notifyq_init(struct netdev_vhost_notifyq *nq, int q, int numa)
{
    atomic_init(&nq->req, 0);
    atomic_init(&nq->closing, false);
    atomic_init(&nq->gave_up, false);
    atomic_init(&nq->written, 0);
    atomic_init(&nq->failed, 0);
    nq->vid = -1;
    nq->q = q;
    nq->numa = numa >= 0 && numa < NOTIFY_MAX_NUMA ? numa : 0;
}

/* The thread serving NUMA node 'numa', or else the first one running;
 * NULL if none runs. */
static struct notify_thread *
pick_thread(int numa)
{
    bool running;

    atomic_read_explicit(&threads[numa].running, &running,
                         memory_order_acquire);
    if (running) {
        return &threads[numa];
    }
    for (int i = 0; i < NOTIFY_MAX_NUMA; i++) {
        atomic_read_explicit(&threads[i].running, &running,
                             memory_order_acquire);
        if (running) {
            return &threads[i];
        }
    }
    return NULL;
}

/* Writes the kick(s) requested on 'nq' (DPDK's rte_vhost_notify_guest()
 * through netdev_vhost_kick_deliver(): the library clears its irq_pending
 * latch, then writes the call eventfd).  Once the queue is closing
 * (netdev_vhost_notify_quiesce()) it writes nothing: the device may be
 * going, and its id with it; the request is handed back ('gave_up') to
 * the caller of quiesce, who writes it while the id is still valid.
 * Returns false if the queue must be tried again later (the write did
 * nothing: virtqueue not accessible, or no call fd); it then stays
 * requested. */
static bool
notify_write(struct notify_thread *t, struct netdev_vhost_notifyq *nq)
{
    uint32_t n;

    atomic_read_explicit(&nq->req, &n, memory_order_acquire);
    for (;;) {
        bool closing;

        atomic_read_explicit(&nq->closing, &closing, memory_order_acquire);
        if (closing) {
            atomic_store_explicit(&nq->gave_up, true, memory_order_relaxed);
            atomic_store_explicit(&nq->req, 0, memory_order_release);
            return true;
        }
        if (!netdev_vhost_kick_deliver(nq->vid, nq->q)) {
            atomic_add_relaxed(&nq->failed, 1, &(uint64_t) { 0 });
            return false;
        }
        atomic_add_relaxed(&nq->written, 1, &(uint64_t) { 0 });
        atomic_add_relaxed(&t->written, 1, &(uint64_t) { 0 });
        /* Done unless a kick was requested during the write (the PMD
         * thread that asked it did not enqueue the queue: it counts on
         * this write loop). */
        if (atomic_compare_exchange_strong(&nq->req, &n, 0)) {
            return true;
        }
    }
}

static void
notify_update_cpu(struct notify_thread *t)
{
    struct rusage ru;

    if (!getrusage(RUSAGE_THREAD, &ru)) {
        uint64_t us = ((uint64_t) ru.ru_utime.tv_sec * 1000000
                       + ru.ru_utime.tv_usec
                       + (uint64_t) ru.ru_stime.tv_sec * 1000000
                       + ru.ru_stime.tv_usec);

        atomic_store_relaxed(&t->cpu_us, us);
    }
}

static void *
notify_main(void *t_)
{
    struct notify_thread *t = t_;
    long long int last_work = time_usec();
    const struct timespec nap = { 0, NETDEV_VHOST_NOTIFY_NAP_US * 1000 };

    /* No RCU-protected data is read here: never hold up RCU. */
    ovsrcu_quiesce_start();
    /* Short naps really short: 1 us of timer slack instead of 50 us. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    /* The highest ordinary priority (nice -20), so that a thread that
     * wakes from a nap preempts ordinary threads at once instead of
     * waiting for a busy core's time slice (measured: a p99 kick delay of
     * 4 ms at nice 0, DESIGN-NOTES.md section 18).  Not a real-time
     * class: rte_vhost_notify_guest() spins on the virtqueue's read lock,
     * which the vhost-events thread, an ordinary thread on the same cores,
     * holds for writing during some messages; a real-time spinner would
     * starve it. */
    if (setpriority(PRIO_PROCESS, (id_t) syscall(SYS_gettid), -20)) {
        VLOG_WARN("notification thread of NUMA node %d: cannot raise its "
                  "priority (%s): kicks may wait for a busy core's time "
                  "slice", t->numa, ovs_strerror(errno));
    }

    for (;;) {
        void *objs[32];
        unsigned int n = rte_ring_sc_dequeue_burst(t->ring, objs,
                                                   ARRAY_SIZE(objs), NULL);
        unsigned int retry = 0;

        for (unsigned int i = 0; i < n; i++) {
            struct netdev_vhost_notifyq *nq = objs[i];

            while (!notify_write(t, nq)) {
                /* Not accessible now: again after a nap.  The ring has
                 * room for it (one entry per requested queue) unless more
                 * than NETDEV_VHOST_NOTIFY_RING queues have kicks
                 * requested; then it is tried here again. */
                if (!rte_ring_mp_enqueue(t->ring, nq)) {
                    retry++;
                    break;
                }
                nanosleep(&nap, NULL);
            }
        }
        long long int now = time_usec();

        if (n > retry) {
            last_work = now;
            continue;
        }
        if (retry) {
            /* A write that did nothing is tried again after 1 ms: the
             * virtqueue may stay inaccessible for a while (a ring being
             * remapped), or the guest set no call fd. */
            const struct timespec ms = { 0, 1000 * 1000 };

            nanosleep(&ms, NULL);
            continue;
        }
        if (now - last_work < NETDEV_VHOST_NOTIFY_LINGER_US) {
            nanosleep(&nap, NULL);
            continue;
        }

        /* Long sleep.  Pairs with netdev_vhost_notify_handoff(): it
         * enqueues, then reads 'asleep'; we set 'asleep', then look at
         * the ring; with both fences one of us sees the other. */
        notify_update_cpu(t);
        atomic_store_explicit(&t->asleep, true, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (rte_ring_empty(t->ring)) {
            struct pollfd pfd = { .fd = t->wake_fd, .events = POLLIN };
            uint64_t value;

            while (poll(&pfd, 1, -1) < 0 && errno == EINTR) {
                continue;
            }
            if (read(t->wake_fd, &value, sizeof value) == sizeof value) {
                atomic_add_relaxed(&t->wakeups, 1, &(uint64_t) { 0 });
            }
            atomic_store_explicit(&t->wake_sent, false,
                                  memory_order_relaxed);
        }
        atomic_store_explicit(&t->asleep, false, memory_order_relaxed);
        last_work = time_usec();
    }
    return NULL;
}

/* Sets the CPU affinity of every running thread to the cores of its NUMA
 * node that are not PMD cores (other_config:pmd-cpu-mask 'mask', or
 * without one OVS's default, one core per node: dpif-netdev's
 * ovs_numa_dump_n_cores_per_numa(1)).  A node with only PMD cores leaves
 * its thread on every core of the node. */
static void
notify_set_affinity(const char *mask)
{
    struct ovs_numa_dump *pmds = (mask && mask[0]
                                  ? ovs_numa_dump_cores_with_cmask(mask)
                                  : ovs_numa_dump_n_cores_per_numa(1));

    for (int i = 0; i < NOTIFY_MAX_NUMA; i++) {
        bool running;

        atomic_read_explicit(&threads[i].running, &running,
                             memory_order_acquire);
        if (!running) {
            continue;
        }

        struct ovs_numa_dump *cores = ovs_numa_dump_cores_on_numa(i);
        const struct ovs_numa_info_core *core;
        cpu_set_t set, all;
        int n = 0;

        CPU_ZERO(&set);
        CPU_ZERO(&all);
        FOR_EACH_CORE_ON_DUMP (core, cores) {
            if (core->core_id < CPU_SETSIZE) {
                CPU_SET(core->core_id, &all);
                if (!ovs_numa_dump_contains_core(pmds, core->numa_id,
                                                 core->core_id)) {
                    CPU_SET(core->core_id, &set);
                    n++;
                }
            }
        }
        ovs_numa_dump_destroy(cores);
        int error = pthread_setaffinity_np(threads[i].thread, sizeof set,
                                           n ? &set : &all);
        if (error) {
            VLOG_WARN("notification thread of NUMA node %d: cannot set "
                      "its CPU affinity (%s)", i, ovs_strerror(error));
        } else {
            VLOG_INFO("notification thread of NUMA node %d runs on %d "
                      "non-PMD core(s)%s", i, n,
                      n ? "" : " (none: every core of the node)");
        }
    }
    ovs_numa_dump_destroy(pmds);
}

/* Starts the thread of every NUMA node with cores that has none yet.
 * Returns an error message (the caller frees it) if none could be
 * started. */
static char *
notify_start(int *n_new)
{
    int started = 0;
    char *error = NULL;

    for (int i = 0; i < NOTIFY_MAX_NUMA; i++) {
        struct notify_thread *t = &threads[i];
        bool running;

        atomic_read_explicit(&t->running, &running, memory_order_acquire);
        if (running) {
            started++;
            continue;
        }
        if (!ovs_numa_numa_id_is_valid(i)
            || !ovs_numa_get_n_cores_on_numa(i)) {
            continue;
        }

        char name[RTE_RING_NAMESIZE];

        snprintf(name, sizeof name, "vhost_notify%d", i);
        t->ring = rte_ring_lookup(name);
        if (!t->ring) {
            t->ring = rte_ring_create(name, NETDEV_VHOST_NOTIFY_RING, i,
                                      RING_F_SC_DEQ);
        }
        if (!t->ring) {
            free(error);
            error = xasprintf("cannot create the notification ring of "
                              "NUMA node %d (%s)", i,
                              rte_strerror(rte_errno));
            continue;
        }
        t->wake_fd = eventfd(0, EFD_CLOEXEC);
        if (t->wake_fd < 0) {
            free(error);
            error = xasprintf("cannot create the notification thread's "
                              "eventfd (%s)", ovs_strerror(errno));
            continue;
        }
        t->numa = i;
        atomic_init(&t->asleep, false);
        atomic_init(&t->wake_sent, false);
        atomic_init(&t->written, 0);
        atomic_init(&t->wakeups, 0);
        atomic_init(&t->cpu_us, 0);
        t->thread = ovs_thread_create("vhost_notify", notify_main, t);
        atomic_store_explicit(&t->running, true, memory_order_release);
        started++;
        ++*n_new;
    }
    if (started) {
        free(error);
        return NULL;
    }
    return error ? error : xstrdup("no NUMA node with cores");
}

bool
netdev_vhost_notify_configure(const struct smap *ovs_other_config)
{
    const char *value = smap_get(ovs_other_config, "vhost-kick-thread");
    bool on = false;
    char *error = NULL;
    int n_new = 0;

    if (!value || !strcmp(value, "false")) {
        on = false;
    } else if (!strcmp(value, "true")) {
        on = true;
        if (!NETDEV_VHOST_HAS_DEFERRED_KICKS) {
            error = xstrdup("vhost-kick-thread=true needs DPDK 23.11 or "
                            "later (rte_vhost_notify_guest()); this build "
                            "has DPDK 22.11, where the library writes "
                            "kicks inside the enqueue");
        } else {
            error = notify_start(&n_new);
        }
    } else {
        error = xasprintf("vhost-kick-thread \"%s\" is not true or false",
                          value);
    }

    bool was = netdev_vhost_notify_enabled();
    if (error) {
        if (!nullable_string_is_equal(error, config_error)) {
            VLOG_ERR("other_config:%s; keeping vhost-kick-thread=%s", error,
                     was ? "true" : "false");
            free(config_error);
            config_error = error;
            return true;        /* The status changed. */
        }
        free(error);
        return false;
    }

    bool changed = config_error != NULL || on != was;
    free(config_error);
    config_error = NULL;

    const char *mask = smap_get(ovs_other_config, "pmd-cpu-mask");
    if (on && (on != was || n_new
               || !nullable_string_is_equal(mask, pmd_mask))) {
        free(pmd_mask);
        pmd_mask = nullable_xstrdup(mask);
        notify_set_affinity(mask);
    }
    if (on != was) {
        atomic_store_relaxed(&enabled, on);
        VLOG_INFO("vhost kicks are written by %s",
                  on ? "the notification thread (vhost-kick-thread=true)"
                     : "the PMD threads (vhost-kick-thread=false)");
    }
    return changed;
}

bool
netdev_vhost_notify_handoff(struct netdev_vhost_notifyq *nq, int vid)
{
    struct notify_thread *t = pick_thread(nq->numa);
    uint32_t prev;

    if (OVS_UNLIKELY(!t)) {
        return false;
    }
    atomic_add_explicit(&nq->req, 1, &prev, memory_order_acq_rel);
    if (prev) {
        /* In the ring or being written: the thread's write loop covers
         * this request (notify_write()). */
        return true;
    }
    nq->vid = vid;
    if (OVS_UNLIKELY(rte_ring_mp_enqueue(t->ring, nq))) {
        atomic_store_explicit(&nq->req, 0, memory_order_release);
        COVERAGE_INC(netdev_vhost_notify_ring_full);
        return false;
    }
    atomic_thread_fence(memory_order_seq_cst);

    bool asleep;

    atomic_read_explicit(&t->asleep, &asleep, memory_order_relaxed);
    if (OVS_UNLIKELY(asleep)) {
        bool sent = atomic_exchange_explicit(&t->wake_sent, true,
                                             memory_order_relaxed);

        if (!sent) {
            uint64_t one = 1;
            /* A failed write (the eventfd counter full) leaves the thread
             * woken all the same. */
            ssize_t n;

            COVERAGE_INC(netdev_vhost_notify_wakeup);
            n = write(t->wake_fd, &one, sizeof one);
            (void) n;
        }
    }
    return true;
}

bool
netdev_vhost_notify_quiesce(struct netdev_vhost_notifyq *nq)
{
    long long int start = time_msec();
    bool warned = false;
    uint32_t req;

    atomic_store_explicit(&nq->closing, true, memory_order_seq_cst);
    for (;;) {
        atomic_read_explicit(&nq->req, &req, memory_order_acquire);
        if (!req) {
            break;
        }
        if (!warned && time_msec() - start > 1000) {
            warned = true;
            VLOG_WARN("queue %d: the notification thread has not let go of "
                      "a handed-off kick for 1 s; still waiting", nq->q);
        }
        sched_yield();
    }
    return atomic_exchange_explicit(&nq->gave_up, false,
                                    memory_order_acquire);
}

void
netdev_vhost_notify_connect(struct netdev_vhost_notifyq *nq)
{
    atomic_store_explicit(&nq->closing, false, memory_order_release);
}

void
netdev_vhost_notify_totals(int *n_threads, uint64_t *written,
                           uint64_t *wakeups, uint64_t *cpu_us)
{
    *n_threads = 0;
    *written = *wakeups = *cpu_us = 0;
    for (int i = 0; i < NOTIFY_MAX_NUMA; i++) {
        struct notify_thread *t = &threads[i];
        bool running;
        uint64_t v;

        atomic_read_explicit(&t->running, &running, memory_order_acquire);
        if (!running) {
            continue;
        }
        ++*n_threads;
        atomic_read_relaxed(&t->written, &v);
        *written += v;
        atomic_read_relaxed(&t->wakeups, &v);
        *wakeups += v;
        atomic_read_relaxed(&t->cpu_us, &v);
        *cpu_us += v;
    }
}
