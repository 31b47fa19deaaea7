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

#ifndef NETDEV_VHOST_NOTIFY_H
#define NETDEV_VHOST_NOTIFY_H 1

/* The notification thread (other_config:vhost-kick-thread=true, DPDK
 * 23.11+): PMD threads hand a due kick to it instead of writing the call
 * eventfd themselves, and it writes the kick with rte_vhost_notify_guest(),
 * the call DPDK added (23.07) so that "eventfd_write() ... could
 * potentially block the PMD thread" no longer does (DPDK 24.11
 * lib/vhost/rte_vhost.h, guest_notify; lib/vhost/vhost.c
 * rte_vhost_notify_guest()).
 *
 * One thread per NUMA node that has a core, created by the main thread
 * the first time the option is on, kept until ovs-vswitchd exits.  It runs
 * on the cores that are not in other_config:pmd-cpu-mask (as OVS's other
 * threads), never on a PMD core.  Hand-off: a bounded lock-free DPDK ring
 * (rte_ring, multi-producer, single consumer) of queues with a kick
 * requested.  A queue is in the ring at most once: 'req' counts the
 * requests since the thread's last write, and only the request that finds
 * it 0 enqueues the queue; the thread writes, then clears 'req' only if no
 * request came during the write (else it writes again).  A kick handed off
 * is therefore never dropped: it is covered by an eventfd write that began
 * after it was requested.
 *
 * Sleeping and waking: the thread runs at nice -20; after work it polls
 * its ring in short sleeps (NETDEV_VHOST_NOTIFY_NAP_US, timer slack 1 us) for
 * NETDEV_VHOST_NOTIFY_LINGER_US, then sleeps on an eventfd until a PMD
 * thread that hands a kick off finds it asleep and writes that eventfd:
 * one write per idle-to-busy transition, the only syscall the option
 * leaves on a PMD thread (coverage counter netdev_vhost_notify_wakeup).
 * A full ring (NETDEV_VHOST_NOTIFY_RING entries) makes the PMD thread
 * write the kick itself (coverage netdev_vhost_notify_ring_full): a kick is
 * never lost for want of room.
 *
 * Without deferred kicks (DPDK 22.11: no guest_notify, the library writes
 * its kicks inside the enqueue) the option is rejected. */

#include <stdbool.h>
#include <stdint.h>

#include "ovs-atomic.h"

struct smap;

/* Sleep between two polls of an idle thread's ring, microseconds. */
#define NETDEV_VHOST_NOTIFY_NAP_US 50
/* How long an idle thread polls before it sleeps until woken, us. */
#define NETDEV_VHOST_NOTIFY_LINGER_US 2000
/* Entries of each thread's hand-off ring (a power of two; one per queue
 * with a kick requested). */
#define NETDEV_VHOST_NOTIFY_RING 4096

/* Per tx queue hand-off state, inside the queue's struct
 * netdev_vhost_kickq.  'vid', 'q' and 'closing' are written by the holder
 * of the queue's tx_lock; 'req' by that holder (increment) and by the
 * notification thread (reset); 'written' and 'failed' only by the
 * thread, read by any thread (statistics). */
struct netdev_vhost_notifyq {
    atomic_uint32_t req;        /* Kicks requested since the thread last
                                 * wrote the queue's eventfd; the queue is
                                 * in a ring (or being written) iff > 0. */
    atomic_bool closing;        /* The device is going away: the thread
                                 * writes nothing more for the queue. */
    atomic_bool gave_up;        /* It let go of a request unwritten
                                 * because of 'closing' (taken by
                                 * netdev_vhost_notify_quiesce()). */
    int vid;                    /* Device id of the requests. */
    int q;                      /* Queue pair (the guest's rx vring 2q). */
    int numa;                   /* Thread that serves the queue. */
    atomic_uint64_t written;    /* Kicks the thread wrote (DPDK called
                                 * guest_notified() on it). */
    atomic_uint64_t failed;     /* rte_vhost_notify_guest() calls that
                                 * wrote nothing (virtqueue not
                                 * accessible); retried. */
};

/* Reads other_config:vhost-kick-thread ("true" or "false", default false)
 * from 'ovs_other_config', starts the threads the first time it is true,
 * and returns true if the setting changed.  A bad value, or "true" in a
 * build without deferred kicks, is rejected: logged once (ERR), kept as
 * netdev_vhost_notify_error() for every port's status
 * ("vhost_kick_thread_error"), and the setting in force is kept.  Main
 * thread, after EAL initialisation. */
bool netdev_vhost_notify_configure(const struct smap *ovs_other_config);

/* Whether PMD threads hand kicks to the notification thread.  Any
 * thread. */
bool netdev_vhost_notify_enabled(void);

/* The rejected setting's message, or NULL.  Main thread. */
const char *netdev_vhost_notify_error(void);

/* Initialises 'nq' for queue pair 'q', thread of NUMA node 'numa' (the
 * port's; out of range: node 0).  Main thread, before the queue is
 * used. */
void netdev_vhost_notifyq_init(struct netdev_vhost_notifyq *nq, int q,
                               int numa);

/* Hands a kick of the queue of 'nq', device 'vid', to the notification
 * thread.  Returns false if it could not (the thread's ring is full, or no
 * thread runs): the caller then writes the kick itself, at once.  True
 * means the kick is covered by a write that begins after this call.  PMD
 * thread (or any), with the queue's tx_lock held. */
bool netdev_vhost_notify_handoff(struct netdev_vhost_notifyq *nq, int vid);

/* Called when the device of the queue of 'nq' is going away, while its
 * id is still valid and no new hand-off can come (destroy_device(): the
 * queue's tx_lock held; netdev_vhost_destruct(): before the socket is
 * unregistered, no PMD thread using the port): marks the queue closing,
 * so that the thread writes nothing more for it, and waits until the
 * thread has let go of it.  Returns true if a handed-off kick was left
 * unwritten: the caller writes it itself if the guest should get it.
 * Never waits for a lock: the thread takes none of ours, and its
 * rte_vhost_notify_guest() only the virtqueue's read lock, which DPDK does
 * not hold while it calls destroy_device().  vhost-events or main
 * thread. */
bool netdev_vhost_notify_quiesce(struct netdev_vhost_notifyq *nq);

/* A new connection of the queue of 'nq': clears 'closing'.  With the
 * queue's tx_lock held. */
void netdev_vhost_notify_connect(struct netdev_vhost_notifyq *nq);

/* Process-wide figures of the threads, for netdev-vhost/show: 'threads'
 * running, the kicks they wrote, their wake-ups by a PMD thread's eventfd
 * write, and their CPU time, microseconds (getrusage(RUSAGE_THREAD) of
 * each, as of its last return from sleep).  Any thread. */
void netdev_vhost_notify_totals(int *threads, uint64_t *written,
                                uint64_t *wakeups, uint64_t *cpu_us);

#endif /* netdev-vhost-notify.h */
