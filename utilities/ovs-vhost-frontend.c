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

/* ovs-vhost-frontend: a vhost-user front-end (the driver side, the part
 * QEMU and the guest's virtio-net driver play) in plain C, without DPDK,
 * QEMU or a virtual machine.
 *
 * It speaks the vhost-user protocol (QEMU's docs/interop/vhost-user.rst)
 * itself over an ovs-vswitchd vhost-user socket, shares memfd memory with
 * the switch (VHOST_USER_SET_MEM_TABLE), lays out split or packed rings
 * in it (virtio 1.1 sections 2.6 and 2.7) and drives them as a guest
 * driver does.  Two ways to use it:
 *
 *   - command mode (--control=FIFO): reads one command a line from FIFO
 *     and appends "done CMD RESULT" to stdout; the tests' scripted front-
 *     end, with exact control over every message and ring index;
 *
 *   - traffic mode (--role=tx|rx|both): sends and/or receives timestamped
 *     frames, the receive side modelled on Linux 6.1's virtio-net NAPI
 *     receive path, and writes counters and latencies as JSON.
 *
 * Exit status: 0 success, 1 protocol error, timeout or runtime failure,
 * 2 bad usage. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PROGRAM_NAME "ovs-vhost-frontend"

#define EXIT_FAIL 1
#define EXIT_USAGE 2

/* vhost-user front-end requests (vhost-user.rst, "Front-end message
 * types"). */
enum {
    VU_GET_FEATURES = 1,
    VU_SET_FEATURES = 2,
    VU_SET_OWNER = 3,
    VU_SET_MEM_TABLE = 5,
    VU_SET_VRING_NUM = 8,
    VU_SET_VRING_ADDR = 9,
    VU_SET_VRING_BASE = 10,
    VU_GET_VRING_BASE = 11,
    VU_SET_VRING_KICK = 12,
    VU_SET_VRING_CALL = 13,
    VU_GET_PROTOCOL_FEATURES = 15,
    VU_SET_PROTOCOL_FEATURES = 16,
    VU_GET_QUEUE_NUM = 17,
    VU_SET_VRING_ENABLE = 18,
    VU_SET_BACKEND_REQ_FD = 21,
    VU_IOTLB_MSG = 22,
    /* No such request: "bad" sends it. */
    VU_UNKNOWN = 999,
};

/* Back-end requests on the back-end request channel ("Back-end message
 * types"). */
#define VU_BACKEND_IOTLB_MSG 1

/* Header flags ("Header"). */
#define VU_VERSION 0x1
#define VU_REPLY 0x4
#define VU_NEED_REPLY 0x8

/* SET_VRING_KICK/CALL payload: vring index in bits 0-7, bit 8 "no fd". */
#define VU_VRING_NOFD (1u << 8)

/* Feature bits (virtio 1.1 sections 5.1.3 and 6; vhost-user.rst). */
#define F_EVENT_IDX 29              /* VIRTIO_RING_F_EVENT_IDX */
#define F_PROTOCOL_FEATURES 30      /* VHOST_USER_F_PROTOCOL_FEATURES */
#define F_VERSION_1 32              /* VIRTIO_F_VERSION_1 */
#define F_IOMMU_PLATFORM 33         /* VIRTIO_F_IOMMU_PLATFORM */
#define F_RING_PACKED 34            /* VIRTIO_F_RING_PACKED */

/* Protocol feature bits (vhost-user.rst, "Protocol features"). */
#define PF_MQ 0
#define PF_REPLY_ACK 3
#define PF_BACKEND_REQ 5
#define PF_IOTLB 7

/* IOTLB message (vhost-user.rst, "An IOTLB message"). */
#define IOTLB_MISS 1
#define IOTLB_UPDATE 2
#define IOTLB_INVALIDATE 3
#define IOTLB_RW 3

/* Split ring flags (virtio 1.1 section 2.6). */
#define DESC_F_NEXT 1
#define DESC_F_WRITE 2
#define AVAIL_F_NO_INTERRUPT 1
#define USED_F_NO_NOTIFY 1

/* Packed ring flags and event suppression (virtio 1.1 section 2.7). */
#define PDESC_F_AVAIL (1u << 7)
#define PDESC_F_USED (1u << 15)
#define EVENT_F_ENABLE 0
#define EVENT_F_DISABLE 1
#define EVENT_F_DESC 2

/* Limits and layout.  Guest physical address = offset in the memfd;
 * vring V's area is at V * RING_STRIDE: descriptors at its start, the
 * split ring's available ring (packed: driver event suppression) at
 * AVAIL_OFS, the used ring (packed: device event suppression) at
 * USED_OFS.  The buffers follow all vring areas, BUF_SIZE bytes each,
 * ring-size buffers per vring. */
#define MAX_QP 8
#define MAX_VRINGS (2 * MAX_QP)
#define MAX_RING 1024
#define RING_STRIDE 0x8000
#define AVAIL_OFS 0x4000
#define USED_OFS 0x5000
#define BUF_BASE (MAX_VRINGS * RING_STRIDE)
#define BUF_SIZE 2048
#define HUGE_2M (2u << 20)
#define UADDR_BASE UINT64_C(0x7f0000000000)
#define EXTRA_SIZE HUGE_2M
#define MAX_FDS 8
#define MAX_PAYLOAD 4096

/* virtio_net_hdr_mrg_rxbuf: 12 bytes with VIRTIO_F_VERSION_1 (virtio 1.1
 * section 5.1.6). */
#define NET_HDR_LEN 12

/* Frames: Ethernet 02:00:00:00:00:01 -> 02:00:00:00:00:02, ethertype
 * 0x88b5 (local experimental), then the payload: magic, sequence number,
 * CLOCK_MONOTONIC nanoseconds when the sender put the frame in its ring. */
#define ETH_HLEN 14
#define ETHERTYPE 0x88b5
#define PAYLOAD_MAGIC 0x4f564645u      /* "OVFE" */
#define PL_MAGIC_OFS ETH_HLEN
#define PL_SEQ_OFS (ETH_HLEN + 4)
#define PL_TS_OFS (ETH_HLEN + 8)
#define PL_END (ETH_HLEN + 16)
#define MIN_FRAME 60
#define MAX_FRAME 1514
#define DEFAULT_FRAME 64

/* Linux 6.1 defaults.  NAPI_POLL_WEIGHT (include/linux/netdevice.h) is
 * virtio-net's napi_weight (drivers/net/virtio_net.c). */
#define NAPI_BUDGET 64
/* Wake-up cost of an idle vCPU: HLT exit, interrupt injection, entry into
 * vring_interrupt(); a few tens of microseconds on current hosts. */
#define DEFAULT_WAKEUP_US 20
/* Per-packet cost of receive_buf() and the stack above it. */
#define DEFAULT_PER_PACKET_NS 200

/* Latency histogram: 100 ns buckets up to 100 ms, the last one taking
 * everything above. */
#define LAT_BUCKET_NS 100
#define LAT_BUCKETS 1000000

#define MAX_BURST 64

/* ---------------------------------------------------------------------- */
/* Options. */

enum role { ROLE_NONE, ROLE_TX, ROLE_RX, ROLE_BOTH };
enum arrivals { ARR_REGULAR, ARR_POISSON, ARR_BURSTS };

struct options {
    const char *socket_path;
    bool server;
    bool reconnect;
    const char *control;
    const char *port;
    int queues;
    int ring_size;
    bool packed;
    bool event_idx;
    bool iommu;
    bool no_proto;
    bool no_enable;
    bool idle_rings;
    int64_t proto_override;         /* -1: computed. */
    double timeout;                 /* Seconds. */
    enum role role;
    uint64_t count;
    double rate;                    /* Packets per second, 0: unlimited. */
    int burst;
    enum arrivals arrivals;
    uint64_t seed;
    double pause_prob;
    unsigned int pause_us;
    int size;
    const char *json;
    unsigned int wakeup_us;
    unsigned int per_packet_ns;
    int budget;
    int rx_lcore;
    int tx_lcore;
    unsigned int drain_ms;
    bool rx_intr_off;
    double duration;
    const char *start_file;
};

static struct options opt = {
    .queues = 1,
    .ring_size = 256,
    .proto_override = -1,
    .timeout = 30,
    .count = 1000,
    .rate = 10000,
    .burst = 1,
    .arrivals = ARR_REGULAR,
    .seed = 1,
    .pause_us = 1000,
    .size = DEFAULT_FRAME,
    .wakeup_us = DEFAULT_WAKEUP_US,
    .per_packet_ns = DEFAULT_PER_PACKET_NS,
    .budget = NAPI_BUDGET,
    .rx_lcore = -1,
    .tx_lcore = -1,
    .drain_ms = 2000,
};

/* ---------------------------------------------------------------------- */
/* State. */

/* One vring as its driver sees it.  The rx thread owns the even vrings
 * (guest rx) in traffic mode, the tx thread the odd ones; in command mode
 * the main thread owns all. */
struct vring {
    int index;
    uint16_t num;
    uint8_t *desc;                  /* Descriptor table. */
    uint8_t *avail;                 /* Split avail ring / packed driver
                                     * event suppression. */
    uint8_t *used;                  /* Split used ring / packed device
                                     * event suppression. */
    uint64_t gpa;                   /* Guest physical address of desc. */
    int callfd;                     /* Written by OVS: our interrupts. */
    int kickfd;                     /* Written by us: OVS's notifications. */

    /* Driver state (Linux's struct vring_virtqueue). */
    uint16_t avail_idx;             /* Split: free-running avail index;
                                     * packed: next_avail_idx slot. */
    bool avail_wrap;                /* Packed avail wrap counter. */
    uint16_t last_used;             /* Split: free-running; packed: slot. */
    bool used_wrap;                 /* Packed used wrap counter. */
    uint16_t num_added;             /* Added since the last kick_prepare. */
    bool cb_disabled;               /* Shadow: notifications off. */
    bool event_triggered;           /* EVENT_IDX: an interrupt came since
                                     * the last enable_cb_prepare. */
    uint16_t free_ids[MAX_RING];    /* Free buffer ids, a stack. */
    uint16_t n_free;

    /* Counters. */
    uint64_t calls;                 /* Interrupts read from callfd. */
    uint64_t notifies;              /* Kicks we wrote to kickfd. */
    uint64_t reaped;                /* Used buffers taken. */
};

struct region {
    uint64_t gpa, size, uaddr;
    int fd;
};

struct frontend {
    int sock;                       /* -1 when disconnected. */
    int listen_fd;                  /* --server. */
    int backend_fd;                 /* Our end of the back-end channel. */
    bool eof;
    uint8_t *mem;
    struct region regions[2];
    int n_regions;
    uint64_t mem_size;
    uint64_t features;
    uint64_t protocol_features;
    int n_vrings;
    struct vring vrings[MAX_VRINGS];
    bool iotlb_auto;
    uint64_t iotlb_misses;
    uint64_t n_sent;                /* Command mode: packets sent. */
    int connections;
};

static struct frontend fe = {
    .sock = -1, .listen_fd = -1, .backend_fd = -1, .iotlb_auto = true,
};

/* Traffic counters, shared between threads: written by one, read by the
 * main thread with relaxed atomic loads. */
struct traffic {
    uint64_t tx_packets;
    uint64_t tx_drops;
    uint64_t rx_packets;
    uint64_t rx_other;
    uint64_t late;
    uint64_t wakeups;
    uint64_t spurious;
    uint64_t polls;
    uint64_t rearm_hits;            /* Re-checks that found packets. */
    uint64_t tx_done;               /* 1 once the sender finished. */
    uint64_t lat_max_ns;
    uint64_t lat_n;
    uint32_t *lat_hist;
};

static struct traffic tr;
static int stop_fd = -1;            /* eventfd: the run is over. */
static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t got_sigterm;   /* SIGTERM: end the program. */
static uint64_t t_start_ns;

#define LOAD(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#define ADD(p, v) __atomic_add_fetch(&(p), (v), __ATOMIC_RELAXED)

/* ---------------------------------------------------------------------- */
/* Utilities. */

/* Prints "ovs-vhost-frontend: MESSAGE" on stderr and exits with status 1.
 * Any thread. */
static void __attribute__((format(printf, 1, 2), noreturn))
fatal(const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    fprintf(stderr, "%s: ", PROGRAM_NAME);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    exit(EXIT_FAIL);
}

/* Prints "ovs-vhost-frontend: MESSAGE" on stderr.  Any thread. */
static void __attribute__((format(printf, 1, 2)))
warn(const char *fmt, ...)
{
    va_list args;

    va_start(args, fmt);
    fprintf(stderr, "%s: ", PROGRAM_NAME);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
}

/* CLOCK_MONOTONIC in nanoseconds.  Any thread. */
static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

/* Busy-waits 'ns' nanoseconds (a CPU cost, not a sleep).  Any thread. */
static void
spin_ns(uint64_t ns)
{
    uint64_t end;

    if (!ns) {
        return;
    }
    end = now_ns() + ns;
    while (now_ns() < end) {
        continue;
    }
}

/* Sleeps until CLOCK_MONOTONIC 'deadline' (ns): clock_nanosleep() up to
 * 50 us before it, then spins.  Any thread. */
static void
sleep_until(uint64_t deadline)
{
    uint64_t now = now_ns();

    if (deadline > now + 100000) {
        struct timespec ts;
        uint64_t t = deadline - 50000;

        ts.tv_sec = t / 1000000000u;
        ts.tv_nsec = t % 1000000000u;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    while (now_ns() < deadline) {
        continue;
    }
}

/* Sleeps 'us' microseconds.  Any thread. */
static void
sleep_us(unsigned int us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

    nanosleep(&ts, NULL);
}

/* Deadline 'seconds' from now, in CLOCK_MONOTONIC ns. */
static uint64_t
deadline_after(double seconds)
{
    return now_ns() + (uint64_t) (seconds * 1e9);
}

/* Pins the calling thread to CPU 'cpu' (-1: leaves it alone).  Failure is
 * fatal: a benchmark on the wrong core measures the wrong thing. */
static void
pin_thread(int cpu, const char *what)
{
    cpu_set_t set;

    if (cpu < 0) {
        return;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) {
        fatal("%s: cannot pin to CPU %d (%s)", what, cpu, strerror(errno));
    }
}

/* splitmix64: the next number of the generator whose state is '*s'.
 * Deterministic for a --seed.  Not thread-safe on one state. */
static uint64_t
rand_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A uniform double in (0, 1]. */
static double
rand_unit(uint64_t *s)
{
    return ((rand_next(s) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* An exponentially distributed value of mean 'mean'. */
static double
rand_exp(uint64_t *s, double mean)
{
    return -log(rand_unit(s)) * mean;
}

/* Reads and returns the counter of eventfd 'fd' (non-blocking), 0 when it
 * was 0.  Any thread, for fds it owns. */
static uint64_t
eventfd_take(int fd)
{
    uint64_t v;

    if (fd < 0 || read(fd, &v, sizeof v) != sizeof v) {
        return 0;
    }
    return v;
}

/* ---------------------------------------------------------------------- */
/* Ring memory access.  Little-endian host assumed (virtio 1.x rings are
 * little-endian; x86-64 and arm64 are). */

static inline uint16_t
ld16(const void *p)
{
    return __atomic_load_n((const uint16_t *) p, __ATOMIC_ACQUIRE);
}

static inline void
st16(void *p, uint16_t v)
{
    __atomic_store_n((uint16_t *) p, v, __ATOMIC_RELEASE);
}

static inline uint32_t
ld32(const void *p)
{
    return __atomic_load_n((const uint32_t *) p, __ATOMIC_ACQUIRE);
}

static inline void
st32(void *p, uint32_t v)
{
    __atomic_store_n((uint32_t *) p, v, __ATOMIC_RELAXED);
}

static inline void
st64(void *p, uint64_t v)
{
    __atomic_store_n((uint64_t *) p, v, __ATOMIC_RELAXED);
}

/* virtio_mb(): a full barrier between a store and a later load. */
static inline void
full_barrier(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Split ring fields (virtio 1.1 section 2.6): used_event is avail->ring[num]
 * and avail_event is used->ring[num]. */
#define SPLIT_AVAIL_FLAGS(vr) ((vr)->avail)
#define SPLIT_AVAIL_IDX(vr) ((vr)->avail + 2)
#define SPLIT_AVAIL_RING(vr, i) ((vr)->avail + 4 + 2 * (i))
#define SPLIT_USED_EVENT(vr) SPLIT_AVAIL_RING(vr, (vr)->num)
#define SPLIT_USED_FLAGS(vr) ((vr)->used)
#define SPLIT_USED_IDX(vr) ((vr)->used + 2)
#define SPLIT_USED_ELEM(vr, i) ((vr)->used + 4 + 8 * (i))
#define SPLIT_AVAIL_EVENT(vr) SPLIT_USED_ELEM(vr, (vr)->num)

/* Packed descriptor (virtio 1.1 section 2.7.13): addr, len, id, flags;
 * event suppression structure (2.7.14): off_wrap, flags. */
#define PDESC(vr, i) ((vr)->desc + 16 * (i))
#define PDESC_LEN(d) ((d) + 8)
#define PDESC_ID(d) ((d) + 12)
#define PDESC_FLAGS(d) ((d) + 14)
#define EVT_OFF_WRAP(p) (p)
#define EVT_FLAGS(p) ((p) + 2)

/* vring_need_event() of virtio 1.1 section 2.6.7.2 (Linux's
 * include/uapi/linux/virtio_ring.h): true if the index moving from 'old'
 * to 'new' passed 'event'. */
static inline bool
need_event(uint16_t event, uint16_t new, uint16_t old)
{
    return (uint16_t) (new - event - 1) < (uint16_t) (new - old);
}

/* Guest physical address of buffer 'id' of vring 'vr'. */
static uint64_t
buf_gpa(const struct vring *vr, uint16_t id)
{
    return BUF_BASE + ((uint64_t) vr->index * opt.ring_size + id) * BUF_SIZE;
}

/* Our address of buffer 'id' of vring 'vr'. */
static uint8_t *
buf_ptr(const struct vring *vr, uint16_t id)
{
    return fe.mem + buf_gpa(vr, id);
}

/* Resets vring 'vr' to its initial state: zeroed ring memory, indices 0,
 * wrap counters 1, all buffer ids free.  Not while OVS uses it. */
static void
vring_reset(struct vring *vr)
{
    memset(vr->desc, 0, RING_STRIDE);
    vr->avail_idx = 0;
    vr->last_used = 0;
    vr->avail_wrap = true;
    vr->used_wrap = true;
    vr->num_added = 0;
    vr->cb_disabled = false;
    vr->event_triggered = false;
    vr->n_free = vr->num;
    for (int i = 0; i < vr->num; i++) {
        vr->free_ids[i] = vr->num - 1 - i;
    }
}

/* Makes buffer 'id' (already filled, 'len' bytes) available to the device,
 * device-writable if 'write' (virtio 1.1 sections 2.6.13 and 2.7.21).  The
 * caller made sure the ring has room (an id was free).  Owner thread. */
static void
vring_add(struct vring *vr, uint16_t id, uint32_t len, bool write)
{
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        uint8_t *d = vr->desc + 16 * id;

        st64(d, buf_gpa(vr, id));
        st32(d + 8, len);
        st16(d + 12, write ? DESC_F_WRITE : 0);
        st16(d + 14, 0);
        st16(SPLIT_AVAIL_RING(vr, vr->avail_idx % vr->num), id);
        vr->avail_idx++;
        /* Release store: the entry before the index. */
        st16(SPLIT_AVAIL_IDX(vr), vr->avail_idx);
    } else {
        uint8_t *d = PDESC(vr, vr->avail_idx);
        uint16_t flags = write ? DESC_F_WRITE : 0;

        st64(d, buf_gpa(vr, id));
        st32(PDESC_LEN(d), len);
        st16(PDESC_ID(d), id);
        flags |= vr->avail_wrap ? PDESC_F_AVAIL : PDESC_F_USED;
        /* Release store: the descriptor before its flags. */
        st16(PDESC_FLAGS(d), flags);
        if (++vr->avail_idx >= vr->num) {
            vr->avail_idx = 0;
            vr->avail_wrap = !vr->avail_wrap;
        }
    }
    vr->num_added++;
}

/* True if packed descriptor 'slot' is used in wrap 'wrap' (Linux 6.1
 * drivers/virtio/virtio_ring.c is_used_desc_packed()). */
static bool
packed_is_used(const struct vring *vr, uint16_t slot, bool wrap)
{
    uint16_t flags = ld16(PDESC_FLAGS(PDESC(vr, slot)));
    bool avail = flags & PDESC_F_AVAIL;
    bool used = flags & PDESC_F_USED;

    return avail == used && used == wrap;
}

/* True if the device has used a buffer we have not taken yet (Linux's
 * more_used()).  Owner thread. */
static bool
vring_more_used(const struct vring *vr)
{
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        return ld16(SPLIT_USED_IDX(vr)) != vr->last_used;
    }
    return packed_is_used(vr, vr->last_used, vr->used_wrap);
}

/* Takes the next used buffer (Linux's virtqueue_get_buf_ctx()): its id in
 * '*id' and the bytes the device wrote in '*len'.  False if there is none.
 * The id is not freed: the caller re-adds or frees it.  Owner thread. */
static bool
vring_get_used(struct vring *vr, uint16_t *id, uint32_t *len)
{
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        uint8_t *e;

        if (ld16(SPLIT_USED_IDX(vr)) == vr->last_used) {
            return false;
        }
        e = SPLIT_USED_ELEM(vr, vr->last_used % vr->num);
        *id = ld32(e);
        *len = ld32(e + 4);
        vr->last_used++;
    } else {
        uint8_t *d = PDESC(vr, vr->last_used);

        if (!packed_is_used(vr, vr->last_used, vr->used_wrap)) {
            return false;
        }
        *id = ld16(PDESC_ID(d));
        *len = ld32(PDESC_LEN(d));
        if (++vr->last_used >= vr->num) {
            vr->last_used = 0;
            vr->used_wrap = !vr->used_wrap;
        }
    }
    if (*id >= vr->num) {
        fatal("vring %d: the device used buffer id %u of a ring of %u",
              vr->index, *id, vr->num);
    }
    vr->reaped++;
    return true;
}

/* Linux 6.1 virtqueue_kick_prepare_split()/_packed(): true if the device
 * wants a notification for the buffers added since the last call
 * (VRING_USED_F_NO_NOTIFY, avail_event with EVENT_IDX; packed: the device
 * event suppression structure).  Owner thread. */
static bool
vring_kick_prepare(struct vring *vr)
{
    uint16_t new = vr->avail_idx, old = vr->avail_idx - vr->num_added;

    vr->num_added = 0;
    full_barrier();
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        if (fe.features & (1ULL << F_EVENT_IDX)) {
            return need_event(ld16(SPLIT_AVAIL_EVENT(vr)), new, old);
        }
        return !(ld16(SPLIT_USED_FLAGS(vr)) & USED_F_NO_NOTIFY);
    } else {
        uint8_t *ev = vr->used;
        uint16_t flags = ld16(EVT_FLAGS(ev));
        uint16_t off_wrap, event;

        if (flags != EVENT_F_DESC) {
            return flags != EVENT_F_DISABLE;
        }
        off_wrap = ld16(EVT_OFF_WRAP(ev));
        event = off_wrap & 0x7fff;
        if ((off_wrap >> 15) != vr->avail_wrap) {
            event -= vr->num;
        }
        return need_event(event, new, old);
    }
}

/* Kicks the device if it wants it (virtqueue_kick()).  Owner thread. */
static void
vring_kick(struct vring *vr)
{
    if (vring_kick_prepare(vr)) {
        uint64_t one = 1;

        if (write(vr->kickfd, &one, sizeof one) == sizeof one) {
            vr->notifies++;
        }
    }
}

/* Linux 6.1 virtqueue_disable_cb(): nothing if an interrupt came with
 * EVENT_IDX since the last enable (vq->event_triggered: the device will
 * not interrupt again before used_event moves); else
 * virtqueue_disable_cb_split(): with EVENT_IDX writes used_event = 0 ("a
 * hack", its comment says: the device only interrupts again when the used
 * index crosses 0), without it sets VRING_AVAIL_F_NO_INTERRUPT;
 * virtqueue_disable_cb_packed(): the driver event suppression flags
 * become RING_EVENT_FLAGS_DISABLE.  Owner thread. */
static void
vring_disable_cb(struct vring *vr)
{
    if (vr->event_triggered || vr->cb_disabled) {
        return;
    }
    vr->cb_disabled = true;
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        if (fe.features & (1ULL << F_EVENT_IDX)) {
            st16(SPLIT_USED_EVENT(vr), 0);
        } else {
            st16(SPLIT_AVAIL_FLAGS(vr), AVAIL_F_NO_INTERRUPT);
        }
    } else {
        st16(EVT_FLAGS(vr->avail), EVENT_F_DISABLE);
    }
}

/* Linux 6.1 virtqueue_enable_cb_prepare(): forgets event_triggered, then
 * virtqueue_enable_cb_prepare_split(): clears
 * VRING_AVAIL_F_NO_INTERRUPT (without EVENT_IDX) and writes used_event =
 * last_used_idx; virtqueue_enable_cb_prepare_packed(): with EVENT_IDX the
 * driver event off_wrap = last used slot | used wrap counter << 15, and
 * if they were disabled the flags become RING_EVENT_FLAGS_DESC (with
 * EVENT_IDX) or RING_EVENT_FLAGS_ENABLE.  (So a packed ring whose
 * notifications were never disabled stays at ENABLE, EVENT_IDX or not, as
 * in Linux, where the ring starts so.)  Returns the opaque value for
 * vring_poll().  Owner thread. */
static uint32_t
vring_enable_cb_prepare(struct vring *vr)
{
    bool event = fe.features & (1ULL << F_EVENT_IDX);

    vr->event_triggered = false;
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        if (vr->cb_disabled) {
            vr->cb_disabled = false;
            if (!event) {
                st16(SPLIT_AVAIL_FLAGS(vr), 0);
            }
        }
        st16(SPLIT_USED_EVENT(vr), vr->last_used);
        return vr->last_used;
    } else {
        uint16_t off_wrap = vr->last_used | (uint16_t) vr->used_wrap << 15;

        if (event) {
            st16(EVT_OFF_WRAP(vr->avail), off_wrap);
        }
        if (vr->cb_disabled) {
            vr->cb_disabled = false;
            st16(EVT_FLAGS(vr->avail), event ? EVENT_F_DESC : EVENT_F_ENABLE);
        }
        return off_wrap;
    }
}

/* Linux 6.1 virtqueue_poll_split()/_packed(): after a full barrier, true if
 * buffers were used since vring_enable_cb_prepare() returned 'opaque'.
 * Owner thread. */
static bool
vring_poll(const struct vring *vr, uint32_t opaque)
{
    full_barrier();
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        return (uint16_t) opaque != ld16(SPLIT_USED_IDX(vr));
    }
    return packed_is_used(vr, opaque & 0x7fff, opaque >> 15);
}

/* Suppresses interrupts of vring 'vr' for good, whatever the ring format:
 * the flags, or with EVENT_IDX a used_event half a ring-index space away
 * from the used index (the device only interrupts when it passes it, in
 * 32768 buffers).  The "intr off" command.  Owner thread. */
static void
vring_intr_off(struct vring *vr)
{
    vring_disable_cb(vr);
    if (!(fe.features & (1ULL << F_RING_PACKED))
        && fe.features & (1ULL << F_EVENT_IDX)) {
        st16(SPLIT_USED_EVENT(vr), vr->last_used + 0x8000);
    }
}

/* Offers every free buffer of rx vring 'vr' to the device (Linux's
 * try_fill_recv()) and, if 'kick', kicks it if it wants (command mode does
 * not, as the Python front-ends did not).  Owner thread. */
static void
vring_refill(struct vring *vr, bool kick)
{
    bool added = false;

    while (vr->n_free) {
        uint16_t id = vr->free_ids[--vr->n_free];

        vring_add(vr, id, BUF_SIZE, true);
        added = true;
    }
    if (added && kick) {
        vring_kick(vr);
    }
}

/* ---------------------------------------------------------------------- */
/* vhost-user messages. */

struct vu_msg {
    uint32_t request;
    uint32_t flags;
    uint32_t size;
    uint8_t payload[MAX_PAYLOAD];
};
#define VU_HDR_SIZE 12

struct vu_iotlb {
    uint64_t iova, size, uaddr;
    uint8_t perm, type;
};

/* Sends request 'req' with 'flags' (VU_VERSION added), 'size' bytes of
 * 'payload' and 'n_fds' file descriptors 'fds' on 'sock' (vhost-user.rst,
 * "Message Specification"; fds in SCM_RIGHTS).  'size_field', if not
 * UINT32_MAX, goes in the header instead of 'size' (malformed messages).
 * Returns 0, or -1 if the peer is gone (fe.eof set).  Main thread. */
static int
vu_send_raw(int sock, uint32_t req, uint32_t flags, const void *payload,
            uint32_t size, const int *fds, int n_fds, uint32_t size_field)
{
    struct vu_msg msg;
    struct iovec iov;
    struct msghdr mh;
    char control[CMSG_SPACE(MAX_FDS * sizeof(int))];
    ssize_t n;

    if (sock < 0) {
        return -1;
    }
    msg.request = req;
    msg.flags = flags | VU_VERSION;
    msg.size = size_field != UINT32_MAX ? size_field : size;
    if (size) {
        memcpy(msg.payload, payload, size);
    }
    iov.iov_base = &msg;
    iov.iov_len = VU_HDR_SIZE + size;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (n_fds) {
        struct cmsghdr *cm;

        memset(control, 0, sizeof control);
        mh.msg_control = control;
        mh.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
        memcpy(CMSG_DATA(cm), fds, n_fds * sizeof(int));
    }
    do {
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t) iov.iov_len) {
        if (sock == fe.sock) {
            fe.eof = true;
        }
        return -1;
    }
    return 0;
}

/* vu_send_raw() on the main socket with a correct size. */
static int
vu_send(uint32_t req, uint32_t flags, const void *payload, uint32_t size,
        const int *fds, int n_fds)
{
    return vu_send_raw(fe.sock, req, flags, payload, size, fds, n_fds,
                       UINT32_MAX);
}

/* Reads exactly 'n' bytes from 'fd' into 'buf' by deadline 'deadline' (ns).
 * Returns 0, -1 on timeout, -2 on end of file or error.  Main thread. */
static int
read_exact(int fd, void *buf, size_t n, uint64_t deadline)
{
    uint8_t *p = buf;

    while (n) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        uint64_t now = now_ns();
        ssize_t r;

        if (now >= deadline) {
            return -1;
        }
        if (poll(&pfd, 1, (deadline - now) / 1000000 + 1) <= 0) {
            continue;
        }
        r = recv(fd, p, n, MSG_DONTWAIT);
        if (r == 0) {
            return -2;
        } else if (r < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                continue;
            }
            return -2;
        }
        p += r;
        n -= r;
    }
    return 0;
}

/* Reads one message from 'fd' into '*msg' by 'deadline'.  Returns 0, -1 on
 * timeout, -2 on end of file or error; a payload larger than MAX_PAYLOAD
 * is a protocol error (fatal).  Main thread. */
static int
vu_read_msg(int fd, struct vu_msg *msg, uint64_t deadline)
{
    int err = read_exact(fd, msg, VU_HDR_SIZE, deadline);

    if (err) {
        return err;
    }
    if (msg->size > MAX_PAYLOAD) {
        fatal("message %u of %u bytes from the back-end", msg->request,
              msg->size);
    }
    return msg->size ? read_exact(fd, msg->payload, msg->size, deadline) : 0;
}

static int service_backend(void);

/* Waits for the reply to request 'req' on the main socket, for at most
 * --timeout seconds, serving back-end requests (IOTLB misses) meanwhile,
 * and returns its u64 in '*value'.  Returns 0, -1 on timeout, -2 when OVS
 * closed the connection.  A reply to another request is a protocol error
 * (fatal).  Main thread. */
static int
vu_reply(uint32_t req, uint64_t *value)
{
    uint64_t deadline = deadline_after(opt.timeout);
    struct vu_msg msg;

    if (fe.sock < 0 || fe.eof) {
        return -2;
    }
    for (;;) {
        struct pollfd pfds[2] = {
            { .fd = fe.sock, .events = POLLIN },
            { .fd = fe.backend_fd, .events = POLLIN },
        };
        uint64_t now = now_ns();
        int err;

        if (now >= deadline) {
            return -1;
        }
        if (poll(pfds, 2, (deadline - now) / 1000000 + 1) <= 0) {
            continue;
        }
        if (pfds[1].revents) {
            service_backend();
        }
        if (!pfds[0].revents) {
            continue;
        }
        err = vu_read_msg(fe.sock, &msg, deadline);
        if (err) {
            if (err == -2) {
                fe.eof = true;
            }
            return err;
        }
        if (msg.request != req || !(msg.flags & VU_REPLY)) {
            fatal("expected the reply to request %u, got request %u "
                  "(flags %#x)", req, msg.request, msg.flags);
        }
        *value = 0;
        memcpy(value, msg.payload, msg.size < 8 ? msg.size : 8);
        return 0;
    }
}

/* Sends request 'req' without payload and returns the u64 of its reply in
 * '*value' (GET_FEATURES and the like).  Returns as vu_reply(). */
static int
vu_get_u64(uint32_t req, uint64_t *value)
{
    if (vu_send(req, 0, NULL, 0, NULL, 0)) {
        return -2;
    }
    return vu_reply(req, value);
}

/* Sends request 'req' with a u64 payload. */
static int
vu_set_u64(uint32_t req, uint64_t value)
{
    return vu_send(req, 0, &value, sizeof value, NULL, 0);
}

/* Sends a vring state (index, num) message. */
static int
vu_set_state(uint32_t req, uint32_t index, uint32_t num)
{
    uint32_t p[2] = { index, num };

    return vu_send(req, 0, p, sizeof p, NULL, 0);
}

/* The wait-free synchronisation: VHOST_USER_SET_OWNER with NEED_REPLY
 * (vhost-user.rst, REPLY_ACK).  The back-end handles messages one after
 * the other and acknowledges this one after its handlers and hooks, so
 * when the reply comes everything sent before is done.  Returns the
 * acknowledgement (0 success), -1 on timeout, -2 when OVS closed the
 * connection.  Main thread. */
static int64_t
vu_sync(void)
{
    uint64_t ack;
    int err;

    if (vu_send(VU_SET_OWNER, VU_NEED_REPLY, NULL, 0, NULL, 0)) {
        return -2;
    }
    err = vu_reply(VU_SET_OWNER, &ack);
    return err ? err : (int64_t) ack;
}

/* Sends one IOTLB message of 'type' for [iova, iova + size) (vhost-user.rst
 * VHOST_USER_IOTLB_MSG); UPDATE maps it onto our user addresses, IOVA =
 * guest physical address.  Main thread. */
static int
vu_iotlb(uint8_t type, uint64_t iova, uint64_t size)
{
    struct vu_iotlb m = {
        .iova = iova, .size = size, .perm = IOTLB_RW, .type = type,
    };

    if (type == IOTLB_UPDATE) {
        for (int i = 0; i < fe.n_regions; i++) {
            const struct region *r = &fe.regions[i];

            if (iova >= r->gpa && iova < r->gpa + r->size) {
                m.uaddr = r->uaddr + (iova - r->gpa);
            }
        }
    }
    return vu_send(VU_IOTLB_MSG, 0, &m, sizeof m, NULL, 0);
}

/* IOTLB UPDATE of every memory region: the identity map of all of the
 * guest's memory.  Main thread. */
static int
vu_iotlb_map_all(void)
{
    for (int i = 0; i < fe.n_regions; i++) {
        if (vu_iotlb(IOTLB_UPDATE, fe.regions[i].gpa, fe.regions[i].size)) {
            return -1;
        }
    }
    return 0;
}

/* Serves one request of the back-end request channel, if one is waiting:
 * an IOTLB miss is answered with an UPDATE of the whole region holding the
 * address on the main socket (unless "iotlb-auto off"), and every request
 * with NEED_REPLY gets its acknowledgement (0 for a miss, 1 for requests
 * we do not know) (vhost-user.rst, "Back-end message types").  Returns 1
 * if it served one, 0 if none was waiting, -1 if the channel closed.
 * Main thread. */
static int
service_backend(void)
{
    struct pollfd pfd = { .fd = fe.backend_fd, .events = POLLIN };
    struct vu_msg msg;
    uint64_t ack = 1;

    if (fe.backend_fd < 0 || poll(&pfd, 1, 0) <= 0) {
        return 0;
    }
    if (vu_read_msg(fe.backend_fd, &msg, deadline_after(opt.timeout))) {
        close(fe.backend_fd);
        fe.backend_fd = -1;
        return -1;
    }
    if (msg.request == VU_BACKEND_IOTLB_MSG
        && msg.size >= sizeof(struct vu_iotlb)) {
        struct vu_iotlb m;

        memcpy(&m, msg.payload, sizeof m);
        if (m.type == IOTLB_MISS) {
            fe.iotlb_misses++;
            ack = 0;
            if (fe.iotlb_auto) {
                for (int i = 0; i < fe.n_regions; i++) {
                    const struct region *r = &fe.regions[i];

                    if (m.iova >= r->gpa && m.iova < r->gpa + r->size) {
                        vu_iotlb(IOTLB_UPDATE, r->gpa, r->size);
                    }
                }
            }
        }
    } else {
        warn("back-end request %u ignored", msg.request);
    }
    if (msg.flags & VU_NEED_REPLY) {
        vu_send_raw(fe.backend_fd, msg.request, VU_REPLY, &ack, sizeof ack,
                    NULL, 0, UINT32_MAX);
    }
    return 1;
}

/* Sends VHOST_USER_SET_MEM_TABLE with our regions (vhost-user.rst, "Memory
 * regions description"), one fd per region.  Main thread. */
static int
vu_set_mem_table(void)
{
    uint8_t p[8 + 2 * 32];
    int fds[2];
    uint32_t n = fe.n_regions;

    memset(p, 0, sizeof p);
    memcpy(p, &n, 4);
    for (int i = 0; i < fe.n_regions; i++) {
        uint64_t r[4] = { fe.regions[i].gpa, fe.regions[i].size,
                          fe.regions[i].uaddr, 0 };

        memcpy(p + 8 + 32 * i, r, sizeof r);
        fds[i] = fe.regions[i].fd;
    }
    return vu_send(VU_SET_MEM_TABLE, 0, p, 8 + 32 * n, fds, n);
}

/* Sends VHOST_USER_SET_VRING_ENABLE of vring 'v'. */
static int
vu_enable(int v, bool on)
{
    return vu_set_state(VU_SET_VRING_ENABLE, v, on);
}

/* Sends VHOST_USER_SET_VRING_CALL of vring 'v' with eventfd 'fd'. */
static int
vu_set_call(int v, int fd)
{
    uint64_t idx = v;

    return vu_send(VU_SET_VRING_CALL, 0, &idx, sizeof idx, &fd, 1);
}

/* ---------------------------------------------------------------------- */
/* Memory and device setup. */

/* Creates a memfd of 'size' bytes named 'name'.  Fatal on failure. */
static int
memfd_new(const char *name, uint64_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC);

    if (fd < 0 || ftruncate(fd, size)) {
        fatal("memfd of %"PRIu64" bytes: %s", size, strerror(errno));
    }
    return fd;
}

/* Creates the guest's memory (one memfd region holding every vring and its
 * buffers, guest physical address 0) and the call and kick eventfds of
 * every vring.  Once, at start.  Main thread. */
static void
memory_init(void)
{
    uint64_t need = BUF_BASE
                    + (uint64_t) fe.n_vrings * opt.ring_size * BUF_SIZE;

    fe.mem_size = (need + HUGE_2M - 1) / HUGE_2M * HUGE_2M;
    fe.regions[0].fd = memfd_new(PROGRAM_NAME, fe.mem_size);
    fe.regions[0].gpa = 0;
    fe.regions[0].size = fe.mem_size;
    fe.regions[0].uaddr = UADDR_BASE;
    fe.n_regions = 1;
    fe.mem = mmap(NULL, fe.mem_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                  fe.regions[0].fd, 0);
    if (fe.mem == MAP_FAILED) {
        fatal("mmap: %s", strerror(errno));
    }
    for (int v = 0; v < fe.n_vrings; v++) {
        struct vring *vr = &fe.vrings[v];

        vr->index = v;
        vr->num = opt.ring_size;
        vr->gpa = (uint64_t) v * RING_STRIDE;
        vr->desc = fe.mem + vr->gpa;
        vr->avail = vr->desc + AVAIL_OFS;
        vr->used = vr->desc + USED_OFS;
        vr->callfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        vr->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (vr->callfd < 0 || vr->kickfd < 0) {
            fatal("eventfd: %s", strerror(errno));
        }
    }
}

/* The "memtable" command's change: adds a second region of 2 MB (its own
 * memfd, right after the first in guest physical and user addresses) or,
 * when there is one, removes it.  Main thread. */
static void
memory_churn(void)
{
    if (fe.n_regions == 1) {
        fe.regions[1].fd = memfd_new(PROGRAM_NAME "-extra", EXTRA_SIZE);
        fe.regions[1].gpa = fe.mem_size;
        fe.regions[1].size = EXTRA_SIZE;
        fe.regions[1].uaddr = UADDR_BASE + fe.mem_size;
        fe.n_regions = 2;
    } else {
        close(fe.regions[1].fd);
        fe.n_regions = 1;
    }
}

/* Lays out the rings as a freshly loaded driver does: every rx vring full
 * of device-writable buffers with notifications enabled (unless
 * --idle-rings), every tx vring empty with interrupts suppressed (Linux's
 * virtnet transmit path only asks for them when it stops a queue).  Not
 * while OVS uses the rings.  Main thread. */
static void
rings_init(void)
{
    for (int v = 0; v < fe.n_vrings; v++) {
        struct vring *vr = &fe.vrings[v];

        vring_reset(vr);
        if (opt.idle_rings) {
            continue;
        }
        if (v % 2 == 0) {
            while (vr->n_free) {
                vring_add(vr, vr->free_ids[--vr->n_free], BUF_SIZE, true);
            }
            vr->num_added = 0;
        } else {
            vring_disable_cb(vr);
        }
    }
}

/* Name of feature bit 'bit' for messages. */
static const char *
feature_name(int bit)
{
    switch (bit) {
    case F_EVENT_IDX: return "VIRTIO_RING_F_EVENT_IDX";
    case F_PROTOCOL_FEATURES: return "VHOST_USER_F_PROTOCOL_FEATURES";
    case F_VERSION_1: return "VIRTIO_F_VERSION_1";
    case F_IOMMU_PLATFORM: return "VIRTIO_F_IOMMU_PLATFORM";
    case F_RING_PACKED: return "VIRTIO_F_RING_PACKED";
    default: return "?";
    }
}

/* A message of device_setup() about a missing answer: none when OVS
 * closed the connection, which vu_start() retries. */
static void
setup_warn(const char *msg)
{
    if (!fe.eof) {
        warn("%s", msg);
    }
}

/* Sets the device up on the connected socket, in QEMU's order
 * (vhost-user.rst, "Communication"; virtio 1.1 section 3.1): SET_OWNER,
 * feature and protocol feature negotiation, the memory table, the back-end
 * request channel (--iommu), every vring (NUM, ADDR, BASE, CALL, KICK),
 * the IOTLB identity map (--iommu), SET_VRING_ENABLE of every vring (with
 * protocol features, unless --no-enable), then the acknowledged SET_OWNER
 * that proves OVS took all of it.  Rings are reset first.  Returns 0, or
 * -1 with a message on stderr.  Main thread. */
static int
device_setup(void)
{
    static const int want_bits[] = {
        F_VERSION_1, F_PROTOCOL_FEATURES, F_EVENT_IDX, F_RING_PACKED,
        F_IOMMU_PLATFORM,
    };
    uint64_t offered, want, pf_offered = 0, value;
    int64_t ack;

    fe.eof = false;
    want = 1ULL << F_VERSION_1;
    if (!opt.no_proto) {
        want |= 1ULL << F_PROTOCOL_FEATURES;
    }
    if (opt.event_idx) {
        want |= 1ULL << F_EVENT_IDX;
    }
    if (opt.packed) {
        want |= 1ULL << F_RING_PACKED;
    }
    if (opt.iommu) {
        want |= 1ULL << F_IOMMU_PLATFORM;
    }
    /* The ring layout depends on the features: settle them first. */
    fe.features = want;
    rings_init();

    if (vu_send(VU_SET_OWNER, 0, NULL, 0, NULL, 0)
        || vu_get_u64(VU_GET_FEATURES, &offered)) {
        setup_warn("GET_FEATURES: no answer");
        return -1;
    }
    for (size_t i = 0; i < sizeof want_bits / sizeof *want_bits; i++) {
        if (want & ~offered & (1ULL << want_bits[i])) {
            warn("the back-end does not offer %s (features %#"PRIx64")",
                 feature_name(want_bits[i]), offered);
            return -1;
        }
    }
    if (want & (1ULL << F_PROTOCOL_FEATURES)) {
        uint64_t pf;

        if (vu_get_u64(VU_GET_PROTOCOL_FEATURES, &pf_offered)) {
            setup_warn("GET_PROTOCOL_FEATURES: no answer");
            return -1;
        }
        if (opt.proto_override >= 0) {
            pf = opt.proto_override;
        } else {
            pf = pf_offered & (1ULL << PF_REPLY_ACK);
            if (opt.queues > 1) {
                pf |= pf_offered & (1ULL << PF_MQ);
            }
            if (opt.iommu) {
                pf |= 1ULL << PF_BACKEND_REQ | 1ULL << PF_IOTLB;
            }
        }
        if (pf & ~pf_offered) {
            warn("the back-end does not offer protocol features %#"PRIx64
                 " (offered %#"PRIx64")", pf & ~pf_offered, pf_offered);
            return -1;
        }
        fe.protocol_features = pf;
        if (vu_set_u64(VU_SET_PROTOCOL_FEATURES, pf)) {
            return -1;
        }
        if (pf & (1ULL << PF_MQ)) {
            if (vu_get_u64(VU_GET_QUEUE_NUM, &value)) {
                setup_warn("GET_QUEUE_NUM: no answer");
                return -1;
            }
            if (value < (uint64_t) opt.queues) {
                warn("the back-end has %"PRIu64" queue pairs, not %d",
                     value, opt.queues);
                return -1;
            }
        }
    }
    if (vu_set_u64(VU_SET_FEATURES, want) || vu_set_mem_table()) {
        return -1;
    }
    if (opt.iommu) {
        int sv[2];

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
            fatal("socketpair: %s", strerror(errno));
        }
        if (fe.backend_fd >= 0) {
            close(fe.backend_fd);
        }
        fe.backend_fd = sv[0];
        if (vu_send(VU_SET_BACKEND_REQ_FD, 0, NULL, 0, &sv[1], 1)) {
            close(sv[1]);
            return -1;
        }
        close(sv[1]);
    }
    for (int v = 0; v < fe.n_vrings; v++) {
        struct vring *vr = &fe.vrings[v];
        /* Ring addresses are IOVAs (= guest physical addresses here) with
         * VIRTIO_F_IOMMU_PLATFORM, else user addresses. */
        uint64_t base = opt.iommu ? vr->gpa : UADDR_BASE + vr->gpa;
        struct {
            uint32_t index, flags;
            uint64_t desc, used, avail, log;
        } addr = { v, 0, base, base + USED_OFS, base + AVAIL_OFS, 0 };
        uint64_t idx = v;

        if (vu_set_state(VU_SET_VRING_NUM, v, vr->num)
            || vu_send(VU_SET_VRING_ADDR, 0, &addr, sizeof addr, NULL, 0)
            /* Packed: bit 15 is the avail wrap counter, 1 at start. */
            || vu_set_state(VU_SET_VRING_BASE, v, opt.packed ? 1u << 15 : 0)
            || vu_set_call(v, vr->callfd)
            || vu_send(VU_SET_VRING_KICK, 0, &idx, sizeof idx,
                       &vr->kickfd, 1)) {
            return -1;
        }
    }
    if (opt.iommu && vu_iotlb_map_all()) {
        return -1;
    }
    if (!opt.no_proto && !opt.no_enable) {
        for (int v = 0; v < fe.n_vrings; v++) {
            if (vu_enable(v, true)) {
                return -1;
            }
        }
    }
    ack = vu_sync();
    if (ack) {
        if (ack != -2) {
            warn("device setup: %s", ack == -1 ? "no acknowledgement in time"
                 : "OVS refused it");
        }
        return -1;
    }
    fe.connections++;
    return 0;
}

/* atexit() handler of --server: removes the socket we listened on. */
static void
unlink_socket(void)
{
    unlink(opt.socket_path);
}

/* Connects to (or, with --server, accepts from) OVS on --socket, retrying
 * until CLOCK_MONOTONIC 'deadline' (ns).  Returns 0, -1 on timeout.  Main
 * thread. */
static int
vu_connect(uint64_t deadline)
{
    struct sockaddr_un sun;

    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if (strlen(opt.socket_path) >= sizeof sun.sun_path) {
        fatal("%s: socket path too long", opt.socket_path);
    }
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", opt.socket_path);

    if (opt.server && fe.listen_fd < 0) {
        fe.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unlink(opt.socket_path);
        if (fe.listen_fd < 0
            || bind(fe.listen_fd, (struct sockaddr *) &sun, sizeof sun)
            || listen(fe.listen_fd, 1)) {
            fatal("%s: cannot listen (%s)", opt.socket_path,
                  strerror(errno));
        }
        atexit(unlink_socket);
    }
    for (;;) {
        if (opt.server) {
            struct pollfd pfd = { .fd = fe.listen_fd, .events = POLLIN };
            uint64_t now = now_ns();

            if (now >= deadline) {
                return -1;
            }
            if (poll(&pfd, 1, (deadline - now) / 1000000 + 1) > 0) {
                fe.sock = accept4(fe.listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fe.sock >= 0) {
                    return 0;
                }
            }
        } else {
            fe.sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fe.sock < 0) {
                fatal("socket: %s", strerror(errno));
            }
            if (!connect(fe.sock, (struct sockaddr *) &sun, sizeof sun)) {
                return 0;
            }
            close(fe.sock);
            fe.sock = -1;
            if (now_ns() >= deadline) {
                return -1;
            }
            sleep_us(50000);
        }
    }
}

/* Closes the connection to OVS and the back-end request channel. */
static void
vu_disconnect(void)
{
    if (fe.sock >= 0) {
        close(fe.sock);
        fe.sock = -1;
    }
    if (fe.backend_fd >= 0) {
        close(fe.backend_fd);
        fe.backend_fd = -1;
    }
    fe.eof = true;
}

/* True if OVS closed the main socket (end of file pending), without
 * consuming anything else.  A message we did not ask for is a protocol
 * error (fatal).  Main thread. */
static bool
vu_check_eof(void)
{
    struct pollfd pfd = { .fd = fe.sock, .events = POLLIN };
    char c;

    if (fe.sock < 0 || fe.eof) {
        return true;
    }
    if (poll(&pfd, 1, 0) > 0) {
        ssize_t n = recv(fe.sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);

        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            fe.eof = true;
            return true;
        }
        if (n > 0) {
            fatal("unexpected message from the back-end");
        }
    }
    return false;
}

/* Connects and sets the device up, within --timeout seconds; prints
 * "ready" on stdout once OVS acknowledged the whole setup.  A connection
 * that OVS closes during the setup (e.g. one still queued on the socket
 * of an ovs-vswitchd that is exiting) is retried until the deadline.
 * Fatal on failure.  Main thread. */
static void
vu_start(void)
{
    uint64_t deadline = deadline_after(opt.timeout);

    for (;;) {
        if (vu_connect(deadline)) {
            fatal("%s: no connection within %g s", opt.socket_path,
                  opt.timeout);
        }
        if (!device_setup()) {
            break;
        }
        if (!fe.eof || now_ns() >= deadline) {
            fatal("%s: device setup failed", opt.socket_path);
        }
        warn("%s: OVS closed the connection during the setup, again",
             opt.socket_path);
        vu_disconnect();
        sleep_us(100000);
    }
    printf("ready\n");
    fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* Frames. */

/* Writes into buffer 'id' of tx vring 'vr' the virtio-net header (all
 * zero: no offloads) and a frame of --size bytes with sequence number
 * 'seq' and, as the last thing before the caller hands it to the ring, the
 * CLOCK_MONOTONIC timestamp.  Returns the buffer's length.  Owner thread. */
static uint32_t
frame_fill(struct vring *vr, uint16_t id, uint32_t seq)
{
    static const uint8_t eth[ETH_HLEN] = {
        0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01,
        ETHERTYPE >> 8, ETHERTYPE & 0xff,
    };
    uint8_t *p = buf_ptr(vr, id);
    uint8_t *f = p + NET_HDR_LEN;
    uint32_t magic = PAYLOAD_MAGIC;
    uint64_t ts;

    memset(p, 0, NET_HDR_LEN + opt.size);
    memcpy(f, eth, ETH_HLEN);
    memcpy(f + PL_MAGIC_OFS, &magic, 4);
    memcpy(f + PL_SEQ_OFS, &seq, 4);
    ts = now_ns();
    memcpy(f + PL_TS_OFS, &ts, 8);
    return NET_HDR_LEN + opt.size;
}

/* Reads the timestamp of a received buffer of 'len' bytes at 'p' (virtio-
 * net header included) into '*ts'.  False if it is not one of our
 * frames. */
static bool
frame_parse(const uint8_t *p, uint32_t len, uint64_t *ts)
{
    const uint8_t *f = p + NET_HDR_LEN;
    uint32_t magic;

    if (len < NET_HDR_LEN + PL_END
        || f[12] != (ETHERTYPE >> 8) || f[13] != (ETHERTYPE & 0xff)) {
        return false;
    }
    memcpy(&magic, f + PL_MAGIC_OFS, 4);
    memcpy(ts, f + PL_TS_OFS, 8);
    return magic == PAYLOAD_MAGIC;
}

/* Takes every used buffer of tx vring 'vr' back into its free list.
 * Owner thread. */
static void
tx_reclaim(struct vring *vr)
{
    uint16_t id;
    uint32_t len;

    while (vring_get_used(vr, &id, &len)) {
        vr->free_ids[vr->n_free++] = id;
    }
}

/* ---------------------------------------------------------------------- */
/* Command mode. */

#define RESULT_EOF INT64_MIN

/* Bounded wait of command mode: true once 'cond(aux)' holds; false after
 * --timeout seconds of wall-clock time, or at once when OVS closed the
 * connection (fe.eof).  Serves the back-end channel meanwhile and looks
 * again every 'poll_us' microseconds.  Main thread. */
static bool
wait_until(bool (*cond)(void *), void *aux, unsigned int poll_us)
{
    uint64_t deadline = deadline_after(opt.timeout);

    for (;;) {
        if (cond(aux)) {
            return true;
        }
        service_backend();
        if (vu_check_eof() || now_ns() >= deadline) {
            return false;
        }
        sleep_us(poll_us);
    }
}

/* Takes what OVS placed in rx vring 'q' (command mode, no kicks: OVS polls
 * its rings) and offers the buffers again; returns the packets received on
 * it so far.  Main thread. */
static uint64_t
cmd_rx_count(int q)
{
    struct vring *vr = &fe.vrings[2 * q];
    uint16_t id;
    uint32_t len;

    if (opt.idle_rings) {
        return 0;
    }
    while (vring_get_used(vr, &id, &len)) {
        vr->free_ids[vr->n_free++] = id;
    }
    vring_refill(vr, false);
    return vr->reaped;
}

/* Packets received on all rx vrings so far (cmd_rx_count() of each). */
static uint64_t
cmd_rx_total(void)
{
    uint64_t n = 0;

    for (int q = 0; q < opt.queues; q++) {
        n += cmd_rx_count(q);
    }
    return n;
}

/* Interrupts written to the callfd of rx vring 'q' so far. */
static uint64_t
cmd_kicks(int q)
{
    struct vring *vr = &fe.vrings[2 * q];

    vr->calls += eventfd_take(vr->callfd);
    return vr->calls;
}

struct wait_aux {
    int q;
    uint64_t n;
    const char *port;
};

/* wait_until() conditions of command mode, on 'aux_' (struct wait_aux),
 * main thread: tx vring 2Q+1 has every buffer back (OVS took all we
 * sent). */
static bool
cond_tx_done(void *aux_)
{
    struct wait_aux *aux = aux_;
    struct vring *vr = &fe.vrings[2 * aux->q + 1];

    tx_reclaim(vr);
    return vr->n_free == vr->num;
}

/* The rx vrings received more than N packets in all. */
static bool
cond_rx_beyond(void *aux_)
{
    struct wait_aux *aux = aux_;

    return cmd_rx_total() > aux->n;
}

/* Rx vring 2Q got at least N kicks. */
static bool
cond_kicks(void *aux_)
{
    struct wait_aux *aux = aux_;

    return cmd_kicks(aux->q) >= aux->n;
}

/* "burst Q N": N packets (1..32) on tx vring 2Q+1 made available at once
 * (split ring: one store of the avail index after all N entries; packed
 * ring: the first descriptor's flags stored last, after the others', so
 * that the device sees none or all of them, as the virtio 1.1 spec's
 * 2.8.21.3 "Implementation Example" makes a batch visible), then one kick;
 * waits until OVS took all of them.  A switch polling the vring then
 * receives the N in one burst (OVS takes up to 32 per poll).  Returns the
 * packets sent so far, -1 on timeout or when the vring has fewer than N
 * free entries. */
static int64_t
cmd_burst(int q, int n)
{
    struct vring *vr = &fe.vrings[2 * q + 1];
    struct wait_aux aux = { .q = q };
    uint64_t one = 1;

    tx_reclaim(vr);
    if (n < 1 || n > 32 || vr->n_free < n) {
        return -1;
    }
    if (!(fe.features & (1ULL << F_RING_PACKED))) {
        for (int i = 0; i < n; i++) {
            uint16_t id = vr->free_ids[--vr->n_free];
            uint8_t *d = vr->desc + 16 * id;

            st64(d, buf_gpa(vr, id));
            st32(d + 8, frame_fill(vr, id, fe.n_sent++));
            st16(d + 12, 0);
            st16(d + 14, 0);
            st16(SPLIT_AVAIL_RING(vr, (uint16_t) (vr->avail_idx + i)
                                      % vr->num), id);
        }
        vr->avail_idx += n;
        /* Release store: every entry before the index. */
        st16(SPLIT_AVAIL_IDX(vr), vr->avail_idx);
    } else {
        uint8_t *head = NULL;
        uint16_t head_flags = 0;

        for (int i = 0; i < n; i++) {
            uint16_t id = vr->free_ids[--vr->n_free];
            uint8_t *d = PDESC(vr, vr->avail_idx);
            uint16_t flags = (vr->avail_wrap ? PDESC_F_AVAIL
                                             : PDESC_F_USED);

            st64(d, buf_gpa(vr, id));
            st32(PDESC_LEN(d), frame_fill(vr, id, fe.n_sent++));
            st16(PDESC_ID(d), id);
            if (i) {
                st16(PDESC_FLAGS(d), flags);
            } else {
                head = d;
                head_flags = flags;
            }
            if (++vr->avail_idx >= vr->num) {
                vr->avail_idx = 0;
                vr->avail_wrap = !vr->avail_wrap;
            }
        }
        /* Release store: the others before the first one's flags. */
        st16(PDESC_FLAGS(head), head_flags);
    }
    vr->num_added = 0;
    if (write(vr->kickfd, &one, sizeof one) == sizeof one) {
        vr->notifies++;
    }
    if (!wait_until(cond_tx_done, &aux, 1000)) {
        return fe.eof ? RESULT_EOF : -1;
    }
    return (int64_t) fe.n_sent;
}

/* "send [Q]": one packet on tx vring 2Q+1 and a kick (always, as the
 * Python front-ends did); waits until OVS took it and, if 'back', until a
 * packet came into an rx vring (OVS picks the queue it sends on: its
 * thread's).  Returns the packets received on all rx vrings (with one
 * queue pair vring 0's used index, as the Python front-end did), or, for
 * "post [Q]" ('back' false), the packets sent so far once OVS took this
 * one; -1 on timeout. */
static int64_t
cmd_send(int q, bool back)
{
    struct vring *vr = &fe.vrings[2 * q + 1];
    struct wait_aux aux = { .q = q };
    uint64_t one = 1;
    uint16_t id;

    tx_reclaim(vr);
    if (!vr->n_free) {
        return -1;
    }
    /* "send" takes what came back so far, to wait for one more; "post"
     * takes nothing, so that frames stay in the rx vring until "rx" (a
     * test can fill it). */
    if (back) {
        aux.n = cmd_rx_total();
    }
    id = vr->free_ids[--vr->n_free];
    vring_add(vr, id, frame_fill(vr, id, fe.n_sent++), false);
    vr->num_added = 0;
    if (write(vr->kickfd, &one, sizeof one) == sizeof one) {
        vr->notifies++;
    }
    if (!wait_until(cond_tx_done, &aux, 1000)
        || (back && !wait_until(cond_rx_beyond, &aux, 100))) {
        return fe.eof ? RESULT_EOF : -1;
    }
    return back ? cmd_rx_total() : (int64_t) fe.n_sent;
}

/* tx_qQ_kicks_taken_over of OVS port 'port' (ovs-appctl
 * netdev-vhost/stats), 0 if absent. */
static uint64_t
taken_over(const char *port, int q)
{
    char cmd[256], key[64], line[512];
    uint64_t v = 0;
    FILE *f;

    snprintf(cmd, sizeof cmd, "ovs-appctl netdev-vhost/stats '%s' 2>&1",
             port);
    snprintf(key, sizeof key, "tx_q%d_kicks_taken_over:", q);
    f = popen(cmd, "r");
    if (!f) {
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        char *p = line + strspn(line, " \t");

        if (!strncmp(p, key, strlen(key))) {
            v = strtoull(p + strlen(key), NULL, 10);
        }
    }
    pclose(f);
    return v;
}

/* OVS port PORT counts more than N kicks of queue Q taken over (runs
 * ovs-appctl: poll it every 10 ms, not faster). */
static bool
cond_taken_over(void *aux_)
{
    struct wait_aux *aux = aux_;

    return taken_over(aux->port, aux->q) > aux->n;
}

/* "hold [PORT] [Q]": as send, waits for that packet's kick, sends another
 * packet at once and, once that packet's kick was taken over by OVS,
 * suppresses interrupts on rx vring 2Q (vring_intr_off()).  DPDK's
 * enqueue publishes the used entry before it asks whether the guest wants
 * a kick: the flag goes up only once the kick was handed to
 * guest_notify().
 *
 * With PORT (or --port) "taken over" is what the port's
 * tx_qQ_kicks_taken_over of "ovs-appctl netdev-vhost/stats" says, as the
 * Python front-end did.  Without, it is the kick count: an acknowledged
 * SET_OWNER takes every virtqueue's lock in DPDK (lock_all_qps), under
 * which the enqueue and its kick decision run, so after its reply the
 * second packet's kick was either written (the kick count grew: nothing
 * to hold, the flag stays down) or handed over.
 *
 * Returns the kicks seen, -1 on timeout, RESULT_EOF. */
static int64_t
cmd_hold(const char *port, int q)
{
    struct wait_aux kick = { .q = q }, take = { .q = q, .port = port };

    kick.n = cmd_kicks(q) + 1;
    if (port) {
        take.n = taken_over(port, q);
    }
    if (cmd_send(q, true) < 0 || !wait_until(cond_kicks, &kick, 1000)
        || cmd_send(q, true) < 0) {
        return fe.eof ? RESULT_EOF : -1;
    }
    if (port) {
        if (!wait_until(cond_taken_over, &take, 10000)) {
            return fe.eof ? RESULT_EOF : -1;
        }
    } else {
        int64_t ack = vu_sync();

        if (ack) {
            return ack == -2 ? RESULT_EOF : -1;
        }
        if (cmd_kicks(q) > kick.n) {
            return cmd_kicks(q);
        }
    }
    vring_intr_off(&fe.vrings[2 * q]);
    return cmd_kicks(q);
}

/* Converts a sync() result into a command result. */
static int64_t
sync_result(void)
{
    int64_t r = vu_sync();

    return r == -2 ? RESULT_EOF : r;
}

/* "bad [KIND...]": malformed messages, each of KIND (default "unknown
 * fds"): "unknown", a request number no back-end knows; "fds", SET_OWNER
 * with two file descriptors it does not take; "size", a header announcing
 * a payload larger than any request's (DPDK then closes the connection).
 * The first two ask for a reply, which keeps the connection; "size" is
 * followed by the acknowledged SET_OWNER, which finds the connection
 * closed.  Returns how many the back-end refused (its acknowledgements),
 * RESULT_EOF when it closed the connection, -1 if it did not after
 * "size". */
static int64_t
cmd_bad(char **kinds, int n_kinds)
{
    static char *def[] = { "unknown", "fds" };
    int64_t refused = 0;

    if (!n_kinds) {
        kinds = def;
        n_kinds = 2;
    }
    for (int i = 0; i < n_kinds; i++) {
        uint64_t ack;
        int err;

        if (!strcmp(kinds[i], "unknown")) {
            uint64_t zero = 0;

            if (vu_send(VU_UNKNOWN, VU_NEED_REPLY, &zero, sizeof zero,
                        NULL, 0)) {
                return RESULT_EOF;
            }
            err = vu_reply(VU_UNKNOWN, &ack);
        } else if (!strcmp(kinds[i], "fds")) {
            int fds[2] = { eventfd(0, 0), eventfd(0, 0) };

            err = vu_send(VU_SET_OWNER, VU_NEED_REPLY, NULL, 0, fds, 2);
            close(fds[0]);
            close(fds[1]);
            if (err) {
                return RESULT_EOF;
            }
            err = vu_reply(VU_SET_OWNER, &ack);
        } else if (!strcmp(kinds[i], "size")) {
            if (vu_send_raw(fe.sock, VU_SET_VRING_NUM, 0, NULL, 0, NULL, 0,
                            0x1000000)) {
                return RESULT_EOF;
            }
            /* Nothing more can be sent on this connection. */
            return sync_result() == RESULT_EOF ? RESULT_EOF : -1;
        } else {
            warn("bad: unknown kind \"%s\"", kinds[i]);
            return -1;
        }
        if (err) {
            return err == -2 ? RESULT_EOF : -1;
        }
        refused += ack != 0;
    }
    return refused;
}

/* Parses the optional queue number argument 'arg' (NULL: 0).  -1 if it is
 * not a queue pair of ours. */
static int
parse_queue(const char *arg)
{
    char *end;
    long q;

    if (!arg) {
        return 0;
    }
    q = strtol(arg, &end, 10);
    return *end || q < 0 || q >= opt.queues ? -1 : q;
}

/* Parses vring number 'arg'; -1 if it is not one of ours. */
static int
parse_vring(const char *arg)
{
    char *end;
    long v;

    if (!arg) {
        return -1;
    }
    v = strtol(arg, &end, 10);
    return *end || v < 0 || v >= fe.n_vrings ? -1 : v;
}

static void write_json(const char *file, bool timed_out);

/* True if command 'cmd' sends messages: without a connection its result
 * is "eof".  The others only look at the rings and eventfds, which stay
 * (as the Python front-ends' did). */
static bool
needs_connection(const char *cmd)
{
    static const char *const local[] = {
        "send", "post", "burst", "intr", "kicks", "rx", "wait_kicks", "misses",
        "features",
        "iotlb-auto",
    };

    for (size_t i = 0; i < sizeof local / sizeof *local; i++) {
        if (!strcmp(cmd, local[i])) {
            return false;
        }
    }
    return true;
}

/* Runs command line 'line' (see the man page, COMMANDS) and prints "done
 * CMD RESULT".  Returns false for "quit".  Main thread. */
static bool
run_command(char *line)
{
    char *argv[16];
    int argc = 0;
    int64_t result = 0;
    char *save = NULL;
    int q, v;

    for (char *t = strtok_r(line, " \t\r\n", &save); t && argc < 16;
         t = strtok_r(NULL, " \t\r\n", &save)) {
        argv[argc++] = t;
    }
    if (!argc) {
        return true;
    }
#define ARG(i) ((i) < argc ? argv[i] : NULL)
    if (!strcmp(argv[0], "quit")) {
        vu_disconnect();
        if (opt.json) {
            write_json(opt.json, false);
        }
        printf("done quit 0\n");
        fflush(stdout);
        return false;
    }
    if ((fe.sock < 0 || fe.eof) && needs_connection(argv[0])) {
        result = RESULT_EOF;
    } else if (!strcmp(argv[0], "send") || !strcmp(argv[0], "post")) {
        /* "post [Q [N]]": N packets (1..1000), one after the other, each
         * once OVS took the one before (no shell round trip between). */
        long n = 1;

        q = parse_queue(ARG(1));
        if (argv[0][0] == 'p' && ARG(2)) {
            char *end;

            n = strtol(argv[2], &end, 10);
            if (*end || n < 1 || n > 1000) {
                q = -1;
            }
        }
        result = -1;
        for (long i = 0; q >= 0 && i < n; i++) {
            result = cmd_send(q, argv[0][0] == 's');
            if (result < 0) {
                break;
            }
        }
    } else if (!strcmp(argv[0], "burst")) {
        /* "burst Q N": N packets (1..32) made available at once. */
        char *end = NULL;
        long n = ARG(2) ? strtol(argv[2], &end, 10) : 0;

        q = parse_queue(ARG(1));
        result = (q < 0 || !end || *end || n < 1 || n > 32
                  ? -1 : cmd_burst(q, n));
    } else if (!strcmp(argv[0], "hold")) {
        /* "hold [PORT] [Q]": a number is the queue. */
        bool numeric = ARG(1)
                       && strspn(argv[1], "0123456789") == strlen(argv[1]);
        const char *port = ARG(1) && !numeric ? ARG(1) : opt.port;

        q = parse_queue(numeric ? ARG(1) : ARG(2));
        result = q < 0 ? -1 : cmd_hold(port, q);
    } else if (!strcmp(argv[0], "intr")) {
        q = parse_queue(ARG(2));
        if (q < 0 || !ARG(1)) {
            result = -1;
        } else if (!strcmp(argv[1], "on")) {
            vring_enable_cb_prepare(&fe.vrings[2 * q]);
        } else {
            vring_intr_off(&fe.vrings[2 * q]);
        }
    } else if (!strcmp(argv[0], "kicks")) {
        q = parse_queue(ARG(1));
        result = q < 0 ? -1 : (int64_t) cmd_kicks(q);
    } else if (!strcmp(argv[0], "rx")) {
        if (ARG(1) && !strcmp(argv[1], "all")) {
            result = cmd_rx_total();
        } else {
            q = parse_queue(ARG(1));
            result = q < 0 ? -1 : (int64_t) cmd_rx_count(q);
        }
    } else if (!strcmp(argv[0], "wait_kicks")) {
        struct wait_aux aux = { .q = parse_queue(ARG(2)) };

        if (aux.q < 0 || !ARG(1)) {
            result = -1;
        } else {
            aux.n = strtoull(argv[1], NULL, 10);
            result = wait_until(cond_kicks, &aux, 1000)
                     ? (int64_t) cmd_kicks(aux.q)
                     : fe.eof ? RESULT_EOF : -1;
        }
    } else if (!strcmp(argv[0], "enable") || !strcmp(argv[0], "disable")) {
        v = parse_vring(ARG(1));
        if (v < 0) {
            result = -1;
        } else {
            vu_enable(v, argv[0][0] == 'e');
            result = sync_result();
        }
    } else if (!strcmp(argv[0], "flood")) {
        v = parse_vring(ARG(1));
        if (v < 0 || !ARG(2)) {
            result = -1;
        } else {
            long n = strtol(argv[2], NULL, 10);

            for (long i = 0; i < n; i++) {
                vu_enable(v, i % 2);
            }
            result = sync_result();
        }
    } else if (!strcmp(argv[0], "memtable")) {
        memory_churn();
        vu_set_mem_table();
        /* DPDK flushes its IOTLB on a new memory table. */
        if (opt.iommu) {
            vu_iotlb_map_all();
        }
        result = sync_result();
    } else if (!strcmp(argv[0], "fail")) {
        int stray = eventfd(0, 0);
        uint64_t ack;
        int err;

        err = vu_send(VU_GET_FEATURES, VU_NEED_REPLY, NULL, 0, &stray, 1);
        close(stray);
        err = err ? -2 : vu_reply(VU_GET_FEATURES, &ack);
        result = err == -2 ? RESULT_EOF : err ? -1 : (int64_t) ack;
    } else if (!strcmp(argv[0], "ok")) {
        result = sync_result();
    } else if (!strcmp(argv[0], "callswap")) {
        v = parse_vring(ARG(1));
        if (v < 0) {
            result = -1;
        } else {
            struct vring *vr = &fe.vrings[v];
            int old = vr->callfd;
            int new = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

            vu_set_call(v, new);
            result = sync_result();
            if (result == 0) {
                /* OVS handled the message: it writes to 'new' only. */
                vr->calls += eventfd_take(old);
                close(old);
                vr->callfd = new;
                vr->calls += eventfd_take(new);
                result = vr->calls;
            } else {
                close(new);
            }
        }
    } else if (!strcmp(argv[0], "iotlb-invalidate")) {
        v = ARG(1) ? parse_vring(ARG(1)) : 0;
        if (v < 0) {
            result = -1;
        } else {
            vu_iotlb(IOTLB_INVALIDATE, fe.vrings[v].gpa, RING_STRIDE);
            result = sync_result();
        }
    } else if (!strcmp(argv[0], "iotlb-update")) {
        vu_iotlb_map_all();
        result = sync_result();
    } else if (!strcmp(argv[0], "iotlb-auto")) {
        fe.iotlb_auto = ARG(1) && !strcmp(argv[1], "on");
    } else if (!strcmp(argv[0], "misses")) {
        service_backend();
        result = fe.iotlb_misses;
    } else if (!strcmp(argv[0], "bad")) {
        result = cmd_bad(argv + 1, argc - 1);
    } else if (!strcmp(argv[0], "features")) {
        printf("done features %#"PRIx64"\n", fe.features);
        fflush(stdout);
        return true;
    } else {
        warn("unknown command \"%s\"", argv[0]);
        result = -1;
    }
#undef ARG
    if (result == RESULT_EOF) {
        printf("done %s eof\n", argv[0]);
    } else {
        printf("done %s %"PRId64"\n", argv[0], result);
    }
    fflush(stdout);
    return true;
}

/* Opens the --control fifo, read-write so that it never reports end of
 * file between writers.  Fatal on failure. */
static int
control_open(void)
{
    int fd = open(opt.control, O_RDWR | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0) {
        fatal("%s: %s", opt.control, strerror(errno));
    }
    return fd;
}

/* Command mode on the connected device: runs the commands of control fifo
 * 'fd' one at a time and, between them, serves the back-end channel and
 * notices OVS closing the connection: then, with --reconnect or --server,
 * connects or accepts again within --timeout seconds and sets the device
 * up anew (rings reset, counters kept), printing "ready" again.  Returns
 * the exit status at "quit".  Main thread. */
static int
command_loop(int fd)
{
    char buf[4096];
    size_t len = 0;

    for (;;) {
        struct pollfd pfds[3] = {
            { .fd = fd, .events = POLLIN },
            { .fd = fe.sock, .events = POLLIN },
            { .fd = fe.backend_fd, .events = POLLIN },
        };
        char *nl;

        while ((nl = memchr(buf, '\n', len))) {
            size_t n = nl - buf + 1;

            *nl = '\0';
            if (!run_command(buf)) {
                return 0;
            }
            memmove(buf, buf + n, len - n);
            len -= n;
        }
        if (fe.eof && (opt.reconnect || opt.server)) {
            vu_disconnect();
            printf("disconnected\n");
            fflush(stdout);
            vu_start();
            continue;
        }
        if (fe.eof) {
            pfds[1].fd = -1;
        }
        if (poll(pfds, 3, 1000) <= 0) {
            continue;
        }
        if (pfds[0].revents & POLLIN) {
            ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);

            if (n > 0) {
                len += n;
            }
            if (len == sizeof buf - 1 && !memchr(buf, '\n', len)) {
                fatal("%s: command line too long", opt.control);
            }
        }
        if (pfds[2].revents) {
            service_backend();
        }
        if (pfds[1].revents) {
            vu_check_eof();
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Traffic mode. */

static int run_stop;                /* Set (atomically) when the run ends. */
static int control_fd = -1;         /* --control with --role. */

/* Records the latency 'ns' of one received packet.  Rx thread. */
static void
latency_add(uint64_t ns)
{
    uint64_t b = ns / LAT_BUCKET_NS;

    tr.lat_hist[b < LAT_BUCKETS ? b : LAT_BUCKETS - 1]++;
    if (ns > tr.lat_max_ns) {
        tr.lat_max_ns = ns;
    }
    tr.lat_n++;
}

/* Latency quantile 'p' (0..1) in microseconds, the upper bound of its
 * histogram bucket.  After the rx thread ended. */
static double
latency_quantile(double p)
{
    double rank = ceil(p * tr.lat_n);
    uint64_t want = rank, sum = 0;

    if (!tr.lat_n) {
        return 0;
    }
    if (!want) {
        want = 1;
    }
    for (uint64_t b = 0; b < LAT_BUCKETS; b++) {
        sum += tr.lat_hist[b];
        if (sum >= want) {
            return (b + 1) * LAT_BUCKET_NS / 1000.0;
        }
    }
    return tr.lat_max_ns / 1000.0;
}

/* Takes one received buffer 'id' of 'len' bytes from rx vring 'vr'
 * (Linux's receive_buf()): its latency, then --per-packet-ns of CPU time;
 * the buffer goes back to the free list.  'late' counts it as found
 * without a kick.  Rx thread. */
static void
rx_take(struct vring *vr, uint16_t id, uint32_t len, bool late)
{
    uint64_t ts;

    if (frame_parse(buf_ptr(vr, id), len, &ts)) {
        uint64_t now = now_ns();

        latency_add(now > ts ? now - ts : 0);
        ADD(tr.rx_packets, 1);
        if (late) {
            ADD(tr.late, 1);
        }
    } else {
        ADD(tr.rx_other, 1);
    }
    spin_ns(opt.per_packet_ns);
    vr->free_ids[vr->n_free++] = id;
}

/* One NAPI poll of rx vring 'vr' with 'budget' (Linux 6.1
 * drivers/net/virtio_net.c virtnet_receive()): takes up to 'budget' used
 * buffers, then refills the ring if more than min(budget, ring size) / 2
 * descriptors are free (try_fill_recv(), which kicks the device if it
 * wants).  Returns the packets taken.  Rx thread. */
static int
napi_receive(struct vring *vr, int budget)
{
    int received = 0;
    int threshold = (budget < vr->num ? budget : vr->num) / 2;
    uint16_t id;
    uint32_t len;

    while (received < budget && vring_get_used(vr, &id, &len)) {
        rx_take(vr, id, len, false);
        received++;
    }
    if (vr->n_free > threshold) {
        vring_refill(vr, true);
    }
    return received;
}

/* The receiver, modelled on Linux 6.1's virtio-net NAPI receive path, one
 * NAPI context per rx vring, all on this thread (one vCPU):
 *
 *   - It sleeps in ppoll() on the call eventfds and the end-of-run eventfd,
 *     without a timeout: only a kick or the end of the run wakes it.
 *   - A kick: the vCPU pays --wakeup-us (halt exit, interrupt injection)
 *     with notifications still enabled, so kicks meanwhile coalesce into
 *     this interrupt; then vring_interrupt() (drivers/virtio/virtio_ring.c)
 *     finds no used buffer (a spurious interrupt, IRQ_NONE) or, with
 *     EVENT_IDX noting event_triggered, calls skb_recv_done() ->
 *     virtqueue_napi_schedule(): virtqueue_disable_cb() (a no-op after an
 *     EVENT_IDX interrupt) and napi_schedule().
 *   - net_rx_action() polls every scheduled context in turn with budget
 *     --budget (napi_weight 64): virtnet_poll() -> virtnet_receive(); a
 *     poll that took fewer than its budget completes,
 *     virtqueue_napi_complete(): virtqueue_enable_cb_prepare() (used_event
 *     = last used with EVENT_IDX, else the flag cleared; packed: the driver
 *     event suppression area), then virtqueue_poll(): if packets came in
 *     between, virtqueue_napi_schedule() again (disable, keep polling),
 *     else the context sleeps.
 *   - At the end of the run, a final drain of every vring: what it finds
 *     came without a kick ("late"; the sleep ended without one).
 *
 * Counts in 'tr'.  Owns the rx vrings. */
static void *
rx_thread(void *arg)
{
    struct pollfd pfds[MAX_QP + 1];
    bool scheduled[MAX_QP] = { false };
    int nq = opt.queues;

    (void) arg;
    pin_thread(opt.rx_lcore, "rx thread");
    for (int q = 0; q < nq; q++) {
        pfds[q].fd = fe.vrings[2 * q].callfd;
        pfds[q].events = POLLIN;
    }
    pfds[nq].fd = stop_fd;
    pfds[nq].events = POLLIN;

    for (;;) {
        bool any = false;

        if (ppoll(pfds, nq + 1, NULL, NULL) < 0) {
            if (errno == EINTR) {
                continue;
            }
            fatal("ppoll: %s", strerror(errno));
        }
        if (pfds[nq].revents) {
            break;
        }
        for (int q = 0; q < nq; q++) {
            struct vring *vr = &fe.vrings[2 * q];

            if (!pfds[q].revents) {
                continue;
            }
            spin_ns(opt.wakeup_us * 1000ull);
            vr->calls += eventfd_take(vr->callfd);
            ADD(tr.wakeups, 1);
            if (!vring_more_used(vr)) {
                ADD(tr.spurious, 1);
                continue;
            }
            if (fe.features & (1ULL << F_EVENT_IDX)) {
                vr->event_triggered = true;
            }
            vring_disable_cb(vr);
            scheduled[q] = any = true;
        }
        while (any) {
            any = false;
            for (int q = 0; q < nq; q++) {
                struct vring *vr = &fe.vrings[2 * q];
                uint32_t opaque;

                if (!scheduled[q]) {
                    continue;
                }
                ADD(tr.polls, 1);
                if (napi_receive(vr, opt.budget) >= opt.budget) {
                    any = true;         /* Budget used up: poll again. */
                    continue;
                }
                opaque = vring_enable_cb_prepare(vr);
                if (vring_poll(vr, opaque)) {
                    ADD(tr.rearm_hits, 1);
                    vring_disable_cb(vr);
                    any = true;
                } else {
                    scheduled[q] = false;
                }
            }
        }
    }

    /* The end of the run woke us, not a kick. */
    for (int q = 0; q < nq; q++) {
        struct vring *vr = &fe.vrings[2 * q];
        uint16_t id;
        uint32_t len;

        while (vring_get_used(vr, &id, &len)) {
            rx_take(vr, id, len, true);
        }
        vring_refill(vr, false);
    }
    return NULL;
}

/* The sender: --count frames paced at --rate (0: as fast as it can) by
 * --arrivals: "regular", a burst of --burst frames every burst / rate
 * seconds; "poisson", single frames with exponential gaps of mean 1 / rate
 * and, after each with probability --pause-prob, an idle pause of
 * --pause-us; "bursts", bursts of --burst with exponential gaps of mean
 * burst / rate.  Bursts go to the tx vrings in turn.  A frame that finds
 * its ring full for 10 ms is dropped (counted).  The timestamp is taken
 * when the frame goes into the ring; after each burst the device gets a
 * kick if it wants one (virtqueue_kick_prepare()).  Owns the tx vrings. */
static void *
tx_thread(void *arg)
{
    uint64_t rng = opt.seed, next = now_ns(), burst_no = 0, give_up;
    int burst = opt.arrivals == ARR_POISSON ? 1 : opt.burst;
    uint32_t seq = 0;

    (void) arg;
    pin_thread(opt.tx_lcore, "tx thread");
    while (seq < opt.count && !LOAD(run_stop)) {
        struct vring *vr = &fe.vrings[2 * (burst_no % opt.queues) + 1];
        int n = 0;

        if (opt.rate > 0) {
            sleep_until(next);
        }
        for (int i = 0; i < burst && seq < opt.count; i++) {
            uint16_t id;

            tx_reclaim(vr);
            if (!vr->n_free) {
                give_up = now_ns() + 10000000;
                while (!vr->n_free && now_ns() < give_up) {
                    tx_reclaim(vr);
                }
                if (!vr->n_free) {
                    ADD(tr.tx_drops, 1);
                    seq++;
                    continue;
                }
            }
            id = vr->free_ids[--vr->n_free];
            vring_add(vr, id, frame_fill(vr, id, seq++), false);
            n++;
        }
        if (n) {
            ADD(tr.tx_packets, n);
            vring_kick(vr);
        }
        burst_no++;
        if (opt.rate > 0) {
            double gap;

            switch (opt.arrivals) {
            case ARR_REGULAR:
                gap = burst / opt.rate;
                break;
            case ARR_POISSON:
                gap = rand_exp(&rng, 1 / opt.rate);
                if (opt.pause_prob > 0 && rand_unit(&rng) <= opt.pause_prob) {
                    gap += opt.pause_us / 1e6;
                }
                break;
            case ARR_BURSTS:
            default:
                gap = rand_exp(&rng, burst / opt.rate);
                break;
            }
            next += (uint64_t) (gap * 1e9);
        }
    }
    /* Wait (bounded by --drain-ms) until OVS took every frame. */
    give_up = now_ns() + opt.drain_ms * 1000000ull;
    for (int q = 0; q < opt.queues; q++) {
        struct vring *vr = &fe.vrings[2 * q + 1];

        do {
            tx_reclaim(vr);
        } while (vr->n_free < vr->num && now_ns() < give_up
                 && !LOAD(run_stop));
    }
    STORE(tr.tx_done, 1);
    return NULL;
}

/* Writes the JSON report to 'file' ("-": stdout): counters of 'tr' and of
 * the vrings.  After the threads ended.  Main thread. */
static void
write_json(const char *file, bool timed_out)
{
    FILE *f = strcmp(file, "-") ? fopen(file, "w") : stdout;
    uint64_t kicks = 0, notifies = 0;
    static const char *roles[] = { "none", "tx", "rx", "both" };

    if (!f) {
        fatal("%s: %s", file, strerror(errno));
    }
    for (int v = 0; v < fe.n_vrings; v++) {
        if (v % 2 == 0) {
            kicks += fe.vrings[v].calls;
        }
        notifies += fe.vrings[v].notifies;
    }
    fprintf(f, "{\"role\": \"%s\", \"ring\": \"%s\", \"event_idx\": %s, "
            "\"queues\": %d, \"ring_size\": %d, \"size\": %d, "
            "\"features\": \"%#"PRIx64"\", ",
            roles[opt.role], opt.packed ? "packed" : "split",
            opt.event_idx ? "true" : "false", opt.queues, opt.ring_size,
            opt.size, fe.features);
    fprintf(f, "\"tx_packets\": %"PRIu64", \"drops\": %"PRIu64", "
            "\"rx_packets\": %"PRIu64", \"rx_other\": %"PRIu64", "
            "\"late\": %"PRIu64", \"wakeups\": %"PRIu64", "
            "\"spurious_wakeups\": %"PRIu64", \"polls\": %"PRIu64", "
            "\"rearm_hits\": %"PRIu64", \"kicks\": %"PRIu64", ",
            tr.tx_packets, tr.tx_drops, tr.rx_packets, tr.rx_other,
            tr.late, tr.wakeups, tr.spurious, tr.polls, tr.rearm_hits,
            kicks);
    for (int q = 0; q < opt.queues; q++) {
        fprintf(f, "\"kicks_q%d\": %"PRIu64", ", q, fe.vrings[2 * q].calls);
    }
    fprintf(f, "\"tx_notifications\": %"PRIu64", "
            "\"iotlb_misses\": %"PRIu64", "
            "\"latency_p50_us\": %.1f, \"latency_p99_us\": %.1f, "
            "\"latency_max_us\": %.3f, \"elapsed_s\": %.3f, "
            "\"timed_out\": %s}\n",
            notifies, fe.iotlb_misses,
            latency_quantile(0.5), latency_quantile(0.99),
            tr.lat_max_ns / 1000.0, (now_ns() - t_start_ns) / 1e9,
            timed_out ? "true" : "false");
    if (f != stdout) {
        fclose(f);
    }
}

/* SIGINT and SIGTERM in traffic mode: the run ends (the main thread looks
 * at 'got_signal' every 10 ms); after SIGTERM the program ends after its
 * report, also with --control (SIGINT goes on to the command loop).
 * Async-signal-safe. */
static void
on_signal(int sig)
{
    got_signal = 1;
    if (sig == SIGTERM) {
        got_sigterm = 1;
    }
}

/* Traffic mode: sets the device up, waits for --start-file, runs the
 * threads of --role, decides when the run is over (see the man page,
 * TRAFFIC MODE), wakes the receiver for its final drain, stops every vring
 * with VHOST_USER_GET_VRING_BASE (as QEMU does when the guest stops; DPDK
 * destroys the device before it replies, so no kick can come after) and
 * writes the report.  Returns the exit status.  Main thread. */
static int
traffic_mode(void)
{
    pthread_t rx, tx;
    bool has_rx = opt.role != ROLE_TX, has_tx = opt.role != ROLE_RX;
    bool timed_out = false;
    uint64_t tx_done_at = 0, last_rx = 0, last_progress;
    uint64_t one = 1;
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (opt.control) {
        control_fd = control_open();
    }
    vu_start();
    if (opt.start_file) {
        uint64_t deadline = deadline_after(opt.timeout);
        struct stat st;

        while (stat(opt.start_file, &st)) {
            if (got_signal) {
                exit(EXIT_FAIL);
            }
            service_backend();
            if (vu_check_eof()) {
                fatal("OVS closed the connection");
            }
            if (now_ns() >= deadline) {
                fatal("%s: not there after %g s", opt.start_file,
                      opt.timeout);
            }
            sleep_us(10000);
        }
    }
    tr.lat_hist = calloc(LAT_BUCKETS, sizeof *tr.lat_hist);
    stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!tr.lat_hist || stop_fd < 0) {
        fatal("out of memory");
    }
    if (opt.rx_intr_off) {
        /* --rx-intr=off: a broken guest that never asks for interrupts;
         * everything it gets is found by the final drain.  Before the
         * threads start: the rings are still ours. */
        for (int q = 0; q < opt.queues; q++) {
            vring_intr_off(&fe.vrings[2 * q]);
        }
    }
    t_start_ns = last_progress = now_ns();
    if (has_rx && pthread_create(&rx, NULL, rx_thread, NULL)) {
        fatal("pthread_create failed");
    }
    if (has_tx && pthread_create(&tx, NULL, tx_thread, NULL)) {
        fatal("pthread_create failed");
    }

    for (;;) {
        struct pollfd pfds[2] = {
            { .fd = fe.sock, .events = POLLIN },
            { .fd = fe.backend_fd, .events = POLLIN },
        };
        uint64_t now = now_ns(), rxp = LOAD(tr.rx_packets);

        if (got_signal) {
            break;
        }
        if (rxp != last_rx) {
            last_rx = rxp;
            last_progress = now;
        }
        if (has_tx && LOAD(tr.tx_done)) {
            if (!tx_done_at) {
                tx_done_at = now;
            }
            if (!has_rx) {
                break;
            }
            if (rxp >= LOAD(tr.tx_packets)
                || now >= tx_done_at + opt.drain_ms * 1000000ull) {
                break;
            }
        }
        if (!has_tx) {
            if (opt.count && rxp >= opt.count) {
                break;
            }
            if (opt.duration > 0) {
                if (now >= t_start_ns + (uint64_t) (opt.duration * 1e9)) {
                    break;
                }
            } else if (now >= last_progress
                              + (uint64_t) (opt.timeout * 1e9)) {
                /* --count=0: idle for --timeout is the normal end. */
                if (opt.count) {
                    warn("no packet for %g s: %"PRIu64" of %"PRIu64
                         " received", opt.timeout, rxp, opt.count);
                    timed_out = true;
                }
                break;
            }
        }
        poll(pfds, 2, 10);
        if (pfds[1].revents) {
            service_backend();
        }
        if (pfds[0].revents && vu_check_eof()) {
            fatal("OVS closed the connection during the run");
        }
    }

    STORE(run_stop, 1);
    if (write(stop_fd, &one, sizeof one) != sizeof one) {
        fatal("eventfd write: %s", strerror(errno));
    }
    if (has_tx) {
        pthread_join(tx, NULL);
    }
    if (has_rx) {
        pthread_join(rx, NULL);
    }

    if (opt.control) {
        /* The acknowledged SET_OWNER takes every virtqueue's lock in DPDK,
         * so an enqueue and its kick still under way are finished: read
         * the call eventfds after it. */
        if (vu_sync()) {
            fatal("no acknowledgement after the run");
        }
        for (int v = 0; v < fe.n_vrings; v += 2) {
            fe.vrings[v].calls += eventfd_take(fe.vrings[v].callfd);
        }
        if (opt.json) {
            write_json(opt.json, timed_out);
        }
        printf("finished\n");
        fflush(stdout);
        /* Command mode after the run, unless SIGTERM ended it: SIGINT and
         * SIGTERM end the program again (the command loop does not look
         * at 'got_signal').  A run ended by SIGINT (the bench's way to
         * stop a receiver) goes on to the commands: the switch's counters
         * are read while the receiver is still connected, then "quit". */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (got_sigterm) {
            return timed_out ? EXIT_FAIL : 0;
        }
        command_loop(control_fd);
        return timed_out ? EXIT_FAIL : 0;
    }
    for (int v = 0; v < fe.n_vrings; v++) {
        uint64_t base;

        if (vu_set_state(VU_GET_VRING_BASE, v, 0)
            || vu_reply(VU_GET_VRING_BASE, &base)) {
            fatal("GET_VRING_BASE of vring %d: no answer", v);
        }
    }
    for (int v = 0; v < fe.n_vrings; v += 2) {
        fe.vrings[v].calls += eventfd_take(fe.vrings[v].callfd);
    }
    if (opt.json) {
        write_json(opt.json, timed_out);
    }
    vu_disconnect();
    return timed_out ? EXIT_FAIL : 0;
}

/* ---------------------------------------------------------------------- */
/* Command line. */

/* Prints --help on stdout. */
static void
usage(void)
{
    printf("%s: a vhost-user front-end (the guest's side) in plain C.\n"
           "usage: %s --socket=PATH [OPTIONS]\n"
           "\n"
           "Connection and device:\n"
           "  --socket=PATH        vhost-user socket of OVS (required)\n"
           "  --server             listen on PATH (dpdkvhostuserclient "
           "ports), accept\n"
           "                       again when OVS reconnects\n"
           "  --reconnect          connect again when OVS closes the "
           "connection\n"
           "  --queues=N           queue pairs, 1..%d (default 1)\n"
           "  --ring-size=N        descriptors per vring, a power of 2, "
           "64..%d (256)\n"
           "  --packed             packed rings (default split)\n"
           "  --event-idx          negotiate VIRTIO_RING_F_EVENT_IDX "
           "(default off)\n"
           "  --iommu              VIRTIO_F_IOMMU_PLATFORM with IOTLB "
           "messages\n"
           "  --no-protocol-features  legacy: rings enabled by their "
           "kicks\n"
           "  --protocol-features=MASK  exactly these protocol features\n"
           "  --no-enable          leave every vring disabled\n"
           "  --idle-rings         offer no buffers, want every interrupt\n"
           "  --timeout=SECONDS    bound of every wait (default 30)\n"
           "Command mode:\n"
           "  --control=FIFO       read commands from FIFO, \"done CMD "
           "RESULT\" on stdout\n"
           "  --port=NAME          OVS port for \"hold\" without a name\n"
           "Traffic mode:\n"
           "  --role=tx|rx|both    send, receive or both\n"
           "  --count=N            frames to send / expect (default 1000)\n"
           "  --rate=PPS           send rate, 0 = unlimited (default "
           "10000)\n"
           "  --burst=N            frames per burst, 1..%d (default 1)\n"
           "  --arrivals=regular|poisson|bursts  (default regular)\n"
           "  --seed=N             random seed (default 1)\n"
           "  --pause-prob=P       poisson: idle pause after a frame with "
           "probability P\n"
           "  --pause-us=US        length of the pause (default 1000)\n"
           "  --size=BYTES         frame size, %d..%d (default %d)\n"
           "  --json=FILE          write the report to FILE (\"-\": "
           "stdout)\n"
           "  --start-file=PATH    start the run once PATH exists\n"
           "  --duration=SECONDS   rx: end the run after this long\n"
           "  --drain-ms=MS        wait for returning frames (default "
           "2000)\n"
           "  --wakeup-us=US       rx wake-up cost (default %d)\n"
           "  --per-packet-ns=NS   rx cost per packet (default %d)\n"
           "  --budget=N           NAPI budget, 1..%d (default %d)\n"
           "  --rx-intr=off        rx never asks for interrupts (a broken "
           "guest)\n"
           "  --rx-lcore=CPU, --tx-lcore=CPU  pin the threads\n"
           "See ovs-vhost-frontend(8) for the commands and the report.\n",
           PROGRAM_NAME, PROGRAM_NAME, MAX_QP, MAX_RING, MAX_BURST,
           MIN_FRAME, MAX_FRAME, DEFAULT_FRAME, DEFAULT_WAKEUP_US,
           DEFAULT_PER_PACKET_NS, MAX_RING, NAPI_BUDGET);
}

/* Parses 'arg' of option 'name' as a number in [min, max]; exits with a
 * usage error otherwise. */
static double
parse_num(const char *name, const char *arg, double min, double max)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(arg, &end);
    if (errno || end == arg || *end || v < min || v > max) {
        fprintf(stderr, "%s: --%s=%s: not a number in %g..%g\n",
                PROGRAM_NAME, name, arg, min, max);
        exit(EXIT_USAGE);
    }
    return v;
}

enum {
    OPT_SOCKET = 256, OPT_SERVER, OPT_RECONNECT, OPT_CONTROL, OPT_PORT,
    OPT_QUEUES, OPT_RING_SIZE, OPT_PACKED, OPT_EVENT_IDX, OPT_NO_EVENT_IDX,
    OPT_IOMMU, OPT_NO_PROTO, OPT_PROTO, OPT_NO_ENABLE, OPT_IDLE_RINGS,
    OPT_TIMEOUT, OPT_ROLE, OPT_COUNT, OPT_RATE, OPT_BURST, OPT_ARRIVALS,
    OPT_SEED, OPT_PAUSE_PROB, OPT_PAUSE_US, OPT_SIZE, OPT_JSON,
    OPT_WAKEUP_US, OPT_PER_PACKET_NS, OPT_BUDGET, OPT_RX_LCORE,
    OPT_TX_LCORE, OPT_DRAIN_MS, OPT_RX_INTR, OPT_DURATION, OPT_START_FILE,
    OPT_HELP,
};

/* Parses the command line into 'opt'; exits with status 2 on bad usage
 * (messages on stderr), 0 after --help. */
static void
parse_options(int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "socket", required_argument, NULL, OPT_SOCKET },
        { "server", no_argument, NULL, OPT_SERVER },
        { "reconnect", no_argument, NULL, OPT_RECONNECT },
        { "control", required_argument, NULL, OPT_CONTROL },
        { "port", required_argument, NULL, OPT_PORT },
        { "queues", required_argument, NULL, OPT_QUEUES },
        { "ring-size", required_argument, NULL, OPT_RING_SIZE },
        { "packed", no_argument, NULL, OPT_PACKED },
        { "event-idx", no_argument, NULL, OPT_EVENT_IDX },
        { "no-event-idx", no_argument, NULL, OPT_NO_EVENT_IDX },
        { "iommu", no_argument, NULL, OPT_IOMMU },
        { "no-protocol-features", no_argument, NULL, OPT_NO_PROTO },
        { "protocol-features", required_argument, NULL, OPT_PROTO },
        { "no-enable", no_argument, NULL, OPT_NO_ENABLE },
        { "idle-rings", no_argument, NULL, OPT_IDLE_RINGS },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "role", required_argument, NULL, OPT_ROLE },
        { "count", required_argument, NULL, OPT_COUNT },
        { "rate", required_argument, NULL, OPT_RATE },
        { "burst", required_argument, NULL, OPT_BURST },
        { "arrivals", required_argument, NULL, OPT_ARRIVALS },
        { "seed", required_argument, NULL, OPT_SEED },
        { "pause-prob", required_argument, NULL, OPT_PAUSE_PROB },
        { "pause-us", required_argument, NULL, OPT_PAUSE_US },
        { "size", required_argument, NULL, OPT_SIZE },
        { "json", required_argument, NULL, OPT_JSON },
        { "wakeup-us", required_argument, NULL, OPT_WAKEUP_US },
        { "per-packet-ns", required_argument, NULL, OPT_PER_PACKET_NS },
        { "budget", required_argument, NULL, OPT_BUDGET },
        { "rx-lcore", required_argument, NULL, OPT_RX_LCORE },
        { "tx-lcore", required_argument, NULL, OPT_TX_LCORE },
        { "drain-ms", required_argument, NULL, OPT_DRAIN_MS },
        { "rx-intr", required_argument, NULL, OPT_RX_INTR },
        { "duration", required_argument, NULL, OPT_DURATION },
        { "start-file", required_argument, NULL, OPT_START_FILE },
        { "help", no_argument, NULL, OPT_HELP },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_SOCKET: opt.socket_path = optarg; break;
        case OPT_SERVER: opt.server = true; break;
        case OPT_RECONNECT: opt.reconnect = true; break;
        case OPT_CONTROL: opt.control = optarg; break;
        case OPT_PORT: opt.port = optarg; break;
        case OPT_QUEUES:
            opt.queues = parse_num("queues", optarg, 1, MAX_QP);
            break;
        case OPT_RING_SIZE:
            opt.ring_size = parse_num("ring-size", optarg, 64, MAX_RING);
            if (opt.ring_size & (opt.ring_size - 1)) {
                fprintf(stderr, "%s: --ring-size must be a power of 2\n",
                        PROGRAM_NAME);
                exit(EXIT_USAGE);
            }
            break;
        case OPT_PACKED: opt.packed = true; break;
        case OPT_EVENT_IDX: opt.event_idx = true; break;
        case OPT_NO_EVENT_IDX: opt.event_idx = false; break;
        case OPT_IOMMU: opt.iommu = true; break;
        case OPT_NO_PROTO: opt.no_proto = true; break;
        case OPT_PROTO:
            opt.proto_override = strtoll(optarg, NULL, 0);
            break;
        case OPT_NO_ENABLE: opt.no_enable = true; break;
        case OPT_IDLE_RINGS: opt.idle_rings = true; break;
        case OPT_TIMEOUT:
            opt.timeout = parse_num("timeout", optarg, 0.001, 86400);
            break;
        case OPT_ROLE:
            opt.role = !strcmp(optarg, "tx") ? ROLE_TX
                       : !strcmp(optarg, "rx") ? ROLE_RX
                       : !strcmp(optarg, "both") ? ROLE_BOTH : ROLE_NONE;
            if (opt.role == ROLE_NONE) {
                fprintf(stderr, "%s: --role=tx|rx|both\n", PROGRAM_NAME);
                exit(EXIT_USAGE);
            }
            break;
        case OPT_COUNT:
            opt.count = parse_num("count", optarg, 0, UINT32_MAX);
            break;
        case OPT_RATE:
            opt.rate = parse_num("rate", optarg, 0, 1e9);
            break;
        case OPT_BURST:
            opt.burst = parse_num("burst", optarg, 1, MAX_BURST);
            break;
        case OPT_ARRIVALS:
            opt.arrivals = !strcmp(optarg, "regular") ? ARR_REGULAR
                           : !strcmp(optarg, "poisson") ? ARR_POISSON
                           : !strcmp(optarg, "bursts") ? ARR_BURSTS : -1;
            if ((int) opt.arrivals < 0) {
                fprintf(stderr, "%s: --arrivals=regular|poisson|bursts\n",
                        PROGRAM_NAME);
                exit(EXIT_USAGE);
            }
            break;
        case OPT_SEED:
            opt.seed = strtoull(optarg, NULL, 0);
            break;
        case OPT_PAUSE_PROB:
            opt.pause_prob = parse_num("pause-prob", optarg, 0, 1);
            break;
        case OPT_PAUSE_US:
            opt.pause_us = parse_num("pause-us", optarg, 0, 60e6);
            break;
        case OPT_SIZE:
            opt.size = parse_num("size", optarg, MIN_FRAME, MAX_FRAME);
            break;
        case OPT_JSON: opt.json = optarg; break;
        case OPT_WAKEUP_US:
            opt.wakeup_us = parse_num("wakeup-us", optarg, 0, 1e6);
            break;
        case OPT_PER_PACKET_NS:
            opt.per_packet_ns = parse_num("per-packet-ns", optarg, 0, 1e9);
            break;
        case OPT_BUDGET:
            opt.budget = parse_num("budget", optarg, 1, MAX_RING);
            break;
        case OPT_RX_LCORE:
            opt.rx_lcore = parse_num("rx-lcore", optarg, 0, CPU_SETSIZE - 1);
            break;
        case OPT_TX_LCORE:
            opt.tx_lcore = parse_num("tx-lcore", optarg, 0, CPU_SETSIZE - 1);
            break;
        case OPT_DRAIN_MS:
            opt.drain_ms = parse_num("drain-ms", optarg, 0, 3600000);
            break;
        case OPT_RX_INTR:
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "%s: --rx-intr=on|off\n", PROGRAM_NAME);
                exit(EXIT_USAGE);
            }
            opt.rx_intr_off = !strcmp(optarg, "off");
            break;
        case OPT_DURATION:
            opt.duration = parse_num("duration", optarg, 0, 86400);
            break;
        case OPT_START_FILE: opt.start_file = optarg; break;
        case OPT_HELP:
            usage();
            exit(0);
        default:
            fprintf(stderr, "Try '%s --help'.\n", PROGRAM_NAME);
            exit(EXIT_USAGE);
        }
    }
    if (optind < argc || !opt.socket_path
        || (!opt.control && opt.role == ROLE_NONE)) {
        fprintf(stderr, "%s: need --socket and --control or --role"
                "\nTry '%s --help'.\n", PROGRAM_NAME, PROGRAM_NAME);
        exit(EXIT_USAGE);
    }
    if (opt.iommu && opt.no_proto) {
        fprintf(stderr, "%s: --iommu needs protocol features\n",
                PROGRAM_NAME);
        exit(EXIT_USAGE);
    }
}

/* Command mode (--control alone), traffic mode (--role), or traffic then
 * commands (both). */
int
main(int argc, char *argv[])
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_options(argc, argv);
    fe.n_vrings = 2 * opt.queues;
    memory_init();
    if (opt.role == ROLE_NONE) {
        int fd = control_open();

        vu_start();
        return command_loop(fd);
    }
    return traffic_mode();
}
