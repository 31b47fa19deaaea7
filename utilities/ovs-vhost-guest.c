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

/* ovs-vhost-guest: a vhost-user guest without a virtual machine.
 *
 * The program attaches to a vhost-user socket (as the client of an OVS
 * "dpdkvhostuser" port, or as the server for a "dpdkvhostuserclient" port)
 * through DPDK's own virtio-user PMD, so the switch sees the same virtio
 * driver a DPDK application inside a VM would be.  It can generate UDP
 * traffic at a given rate, receive it, or echo it back, and it reports
 * counters, loss, reordering, duplicates, one-way or round-trip latency
 * and the number of interrupt wake-ups as one JSON object on stdout.
 *
 * The receive side either busy-polls, or sleeps on Rx interrupts the way an
 * interrupt-driven guest does (the pattern of DPDK's l3fwd-power example):
 * with Rx interrupts enabled the virtio driver clears
 * VRING_AVAIL_F_NO_INTERRUPT (split ring) or enables driver event
 * notifications (packed ring), so the switch has to kick the guest.  That
 * makes the tool both an operator's check of a vhost setup and the peer of
 * our tests and benchmarks of the switch's interrupt-aware tx policy.
 *
 * Exit status: 0 success, 1 runtime failure, 2 bad usage, 3 the vhost-user
 * connection or link never came up. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_epoll.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_interrupts.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_udp.h>

#define PROGRAM_NAME "ovs-vhost-guest"
#define VDEV_NAME "net_virtio_user0"

#define EXIT_USAGE 2
#define EXIT_NO_LINK 3

#define MAX_QUEUES 8
#define MAX_BURST 32
#define RING_SIZE 256
#define MBUF_CACHE 256

/* Payload carried in every generated UDP datagram, all fields in network
 * byte order.  Frames too short for the whole timestamp carry its
 * low-order bytes only (see payload_ts_bytes()). */
#define PAYLOAD_MAGIC 0x4f564847u      /* "OVHG" */
#define PAYLOAD_MAGIC_OFS 0
#define PAYLOAD_STREAM_OFS 4
#define PAYLOAD_SEQ_OFS 8
#define PAYLOAD_TS_OFS 16
#define PAYLOAD_FULL_LEN 24     /* Frames of 66 bytes and more. */
#define HDRS_LEN (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) \
                  + sizeof(struct rte_udp_hdr))

#define MIN_FRAME 60
#define MAX_FRAME 1514
#define DEFAULT_FRAME 64
/* --wakeup-cost-us default: about what a kernel guest pays per interrupt
 * (VM exit, injection, softirq entry) on current hardware. */
#define DEFAULT_WAKEUP_COST_US 5

/* Sequence tracking. */
#define MAX_STREAMS 64
#define SEQ_WINDOW_SHIFT 20
#define SEQ_WINDOW (UINT64_C(1) << SEQ_WINDOW_SHIFT)
#define SEQ_WINDOW_WORDS (SEQ_WINDOW / 64)

/* Latency histogram: 0.1 us buckets up to 100 ms; the last bucket also
 * takes everything above. */
#define LAT_BUCKET_NS 100
#define LAT_BUCKETS 1000000

/* Longest single sleep in interrupt mode by default (--max-sleep-ms), so
 * that stop conditions, signals and mode switches are noticed promptly. */
#define MAX_SLEEP_MS 100

/* How long after a sleep that ended without a kick, and found packets, the
 * guest waits for their kick before it counts them as late (--late-ms):
 * longer than any interval the switch holds a kick for in the tests (up
 * to 1 s), so that only a kick that never comes counts. */
#define LATE_MS 2000

/* How long a burst the PMD did not fully accept is retried before the
 * rest is dropped and counted. */
#define TX_RETRY_NS (10 * 1000 * 1000)

/* After a tx guest stops sending it keeps receiving (for echoed packets)
 * until nothing arrived for this long (or --idle-ms if set), and at most
 * DRAIN_MAX_NS in total. */
#define DRAIN_IDLE_NS (100 * 1000 * 1000)
#define DRAIN_MAX_NS (UINT64_C(2) * 1000 * 1000 * 1000)

/* How often the link status is read during the run (see check_link()). */
#define LINK_CHECK_MS 100

enum role { ROLE_RX, ROLE_TX, ROLE_ECHO };
enum mode { MODE_POLL, MODE_INTERRUPT, MODE_ALTERNATE };

static const char *const role_names[] = { "rx", "tx", "echo" };
static const char *const mode_names[] = { "poll", "interrupt", "alternate" };

struct options {
    const char *socket_path;
    bool server;
    enum mode mode;
    uint64_t alternate_ms;
    enum role role;
    uint64_t count;
    uint64_t expect;            /* rx/echo: sequence numbers expected. */
    uint64_t rate;
    unsigned int burst;
    unsigned int size;
    struct rte_ether_addr src_mac;
    struct rte_ether_addr dst_mac;
    uint32_t stream;
    unsigned int flows;
    unsigned int queues;
    bool packed;
    unsigned int lcore;
    char file_prefix[64];
    uint64_t mem_mb;
    uint64_t idle_ms;
    double duration_s;
    uint64_t stats_interval_ms;
    uint64_t wait_link_s;
    const char *start_file;
    uint64_t mem_churn_ms;
    uint64_t mem_churn_mb;
    bool flip_intr;
    bool stop_consuming;
    uint64_t stop_consuming_after;
    uint64_t queue_change_ms;
    uint64_t cycles;
    uint64_t wakeup_cost_us;
    uint64_t max_sleep_ms;
    uint64_t late_ms;
    uint64_t poll_nap_us;       /* Poll mode: nap after an empty poll. */
    bool verbose;
    int n_extra_eal;
    char **extra_eal;
};

struct stream_stats {
    uint32_t id;
    uint64_t highest;           /* Highest sequence number seen. */
    uint64_t unique;            /* Distinct sequence numbers seen. */
    uint64_t duplicates;
    uint64_t reordered;
    uint64_t base;              /* First seq covered by 'window'. */
    uint64_t *window;           /* SEQ_WINDOW bits, seq % SEQ_WINDOW. */
};

struct guest {
    struct options opt;
    uint16_t port;
    bool port_valid;
    bool port_started;
    struct rte_mempool *pool;
    uint64_t tsc_hz;

    /* Template of the generated frame's headers. */
    uint8_t hdr_template[HDRS_LEN];

    /* Counters. */
    uint64_t tx_packets;
    uint64_t tx_dropped;
    uint64_t next_seq;
    uint64_t rx_packets;
    uint64_t rx_foreign;        /* Received without our payload. */
    uint64_t echoed;
    uint64_t echo_dropped;
    uint64_t wakeups;
    uint64_t late;              /* Packets found after a sleep that ended
                                 * without a kick, whose kick then did not
                                 * come within --late-ms: a lost kick. */
    bool woke_by_timeout;       /* The last sleep ended without a kick. */
    uint64_t late_pending;      /* Packets found after such a sleep whose
                                 * kick has not come yet... */
    uint64_t late_deadline;     /* ...and when they count as late (TSC). */
    uint64_t untracked;         /* Our packets of streams beyond the table. */

    /* Link status as last read (check_link()). */
    bool lsc;                   /* DPDK's interrupt thread watches it. */
    bool link_up;
    uint64_t next_link_check;   /* TSC. */

    struct stream_stats streams[MAX_STREAMS];
    unsigned int n_streams;

    uint32_t *lat_hist;
    uint64_t lat_samples;
    uint64_t lat_max_ns;

    bool intr_registered;
    unsigned int tx_queue_rr;
    struct rte_eth_conf conf;   /* As configured by setup_port(). */
    int socket_id;

    /* Queue pairs in use: --queues, or 1 between --queue-change-ms
     * changes. */
    unsigned int active_queues;
    uint64_t queue_changes;
    uint64_t rx_flushed;        /* Received packets the driver dropped when
                                 * the port restarted (queue changes). */

    /* --mem-churn-ms. */
    void *churn_buf;
    uint64_t churn_allocs;
    uint64_t churn_frees;
    uint64_t churn_failures;
    uint64_t mem_events[2];     /* DPDK memory events: alloc, free. */

    /* --flip-intr. */
    bool flip_on;
    uint64_t intr_flips;

    /* --poll-nap-us: naps taken after an empty look at the rx queues. */
    uint64_t poll_naps;

    /* --stop-consuming-after: true once the guest stopped reading. */
    bool consuming_stopped;

    /* --cycles: connections completed (attached, run, detached). */
    uint64_t cycles_done;
};

static volatile sig_atomic_t stop_signals;

static void
signal_handler(int signo)
{
    (void) signo;
    stop_signals++;
}

static void
install_signal_handlers(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = signal_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* The switch may close the vhost-user socket at any time (port
     * deleted, switch stopped): virtio-user's next message to it must fail
     * with EPIPE, not kill the guest before it prints its report. */
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
}

static uint64_t
mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Command line. */

static void
usage(void)
{
    printf("%s: a vhost-user guest (DPDK virtio-user) for checking and\n"
           "benchmarking vhost-user ports without a virtual machine.\n"
           "usage: %s --socket=PATH [OPTIONS] [-- EAL_ARGS...]\n"
           "\n"
           "Connection:\n"
           "  --socket=PATH          vhost-user socket (required)\n"
           "  --server               listen on PATH (for dpdkvhostuserclient"
           " ports);\n"
           "                         default: connect to PATH\n"
           "  --queues=N             queue pairs, 1..8 (default 1)\n"
           "  --packed               packed ring (default split ring)\n"
           "  --wait-link=SECONDS    wait for socket and link, 0 = forever\n"
           "                         (default 10; exit 3 on timeout)\n"
           "  --start-file=PATH      with the link up, wait until PATH exists"
           "\n"
           "                         before starting the run\n"
           "Behaviour:\n"
           "  --role=rx|tx|echo      (default rx)\n"
           "  --mode=poll|interrupt|alternate  Rx mode (default poll)\n"
           "  --alternate-ms=MS      alternate period, 1..3600000 "
           "(default 100)\n"
           "  --count=N              tx: packets to send; rx/echo: stop "
           "after N\n"
           "                         received (default 0 = unlimited)\n"
           "  --expect=N             rx/echo: count loss against N sequence "
           "numbers\n"
           "                         without stopping (default 0)\n"
           "  --rate=PPS             tx rate, 0 = as fast as possible "
           "(default 0)\n"
           "  --burst=B              tx burst, 1..32 (default 1)\n"
           "  --duration=SECONDS     stop after this long (default: no "
           "limit)\n"
           "  --idle-ms=MS           rx/echo: stop when idle this long after"
           " the\n"
           "                         first packet (default 0 = never)\n"
           "Faults (for reliability tests of the switch):\n"
           "  --mem-churn-ms=MS      every MS allocate, then free, hugepage "
           "memory,\n"
           "                         so that virtio-user sends the switch a "
           "new\n"
           "                         memory table each time; a receiver "
           "begins at\n"
           "                         its first packet (default 0 = off)\n"
           "  --mem-churn-mb=MB      memory allocated by each churn step, "
           "2..1024\n"
           "                         (default 32)\n"
           "  --flip-intr            poll, but enable and disable Rx "
           "interrupts\n"
           "                         (the suppression flag) on every poll\n"
           "  --stop-consuming-after=N  rx/echo: stop reading the rx queues "
           "after\n"
           "                         N packets (rings stay full)\n"
           "  --queue-change-ms=MS   every MS switch between --queues and 1 "
           "queue\n"
           "                         pair (port restart, poll mode only)\n"
           "  --cycles=N             connect, run, disconnect N times "
           "(default 1);\n"
           "                         each run ends as the options say, e.g."
           "\n"
           "                         --duration\n"
           "  --max-sleep-ms=MS      interrupt mode: longest sleep between "
           "two looks at\n"
           "                         the rx queues without an interrupt, "
           "1..60000 (default\n"
           "                         100)\n"
           "  --poll-nap-us=US       poll mode: after a look at the rx "
           "queues that found\n"
           "                         nothing, sleep US microseconds instead "
           "of looking again\n"
           "                         at once, 1..1000000 (default: never "
           "sleep); interrupts\n"
           "                         stay off, so the guest wants no kick "
           "(--role=rx or\n"
           "                         echo, not with --flip-intr)\n"
           "  --late-ms=MS           interrupt mode: after a sleep that "
           "ended without an\n"
           "                         interrupt and found packets, how long "
           "to wait for\n"
           "                         their interrupt before they count as "
           "late, 1..60000\n"
           "                         (default 2000)\n"
           "  --wakeup-cost-us=US    interrupt mode: CPU time each wake-up "
           "costs\n"
           "                         before the guest polls, 0..1000000 "
           "(default %d)\n"
           "Packets:\n"
           "  --size=BYTES           frame size without CRC, 60..1514 "
           "(default 64)\n"
           "  --src-mac=MAC          (default 02:00:00:00:00:01)\n"
           "  --dst-mac=MAC          (default 02:00:00:00:00:02)\n"
           "  --stream=ID            stream id, 0..4294967295 (default 0)\n"
           "  --flows=N              tx: UDP source ports the stream "
           "cycles\n"
           "                         through, 1..64512 (default 1)\n"
           "Runtime:\n"
           "  --lcore=N              CPU to run on (default 0)\n"
           "  --file-prefix=NAME     EAL file prefix (default "
           "ovs-vhost-guest-PID)\n"
           "  --mem=MB               hugepage memory, 64..65536 "
           "(default 256)\n"
           "  --stats-interval=MS    JSON progress on stderr every MS "
           "(default 0 = off)\n"
           "  -v, --verbose          DPDK logs at info level\n"
           "  -h, --help             this help\n"
           "\n"
           "Prints one JSON object on stdout at exit.  Exit status: 0 ok,\n"
           "1 runtime error, 2 bad usage, 3 no vhost-user connection.\n",
           PROGRAM_NAME, PROGRAM_NAME, DEFAULT_WAKEUP_COST_US);
}

static void __attribute__((format(printf, 1, 2), noreturn))
usage_error(const char *format, ...)
{
    va_list args;

    fprintf(stderr, "%s: ", PROGRAM_NAME);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\n(use --help for usage)\n");
    exit(EXIT_USAGE);
}

static void __attribute__((format(printf, 2, 3), noreturn))
fatal(int status, const char *format, ...)
{
    va_list args;

    fprintf(stderr, "%s: ", PROGRAM_NAME);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    exit(status);
}

static uint64_t
parse_uint(const char *name, const char *arg, uint64_t min, uint64_t max)
{
    unsigned long long value;
    char *end;

    if (!arg || !isdigit((unsigned char) arg[0])) {
        usage_error("--%s=%s: expected a non-negative decimal integer",
                    name, arg ? arg : "");
    }
    errno = 0;
    value = strtoull(arg, &end, 10);
    if (errno || *end) {
        usage_error("--%s=%s: expected a non-negative decimal integer",
                    name, arg);
    }
    if (value < min || value > max) {
        usage_error("--%s=%s: out of range (%"PRIu64"..%"PRIu64")",
                    name, arg, min, max);
    }
    return value;
}

static double
parse_seconds(const char *name, const char *arg, double max)
{
    double value;
    char *end;

    if (!arg || !(isdigit((unsigned char) arg[0]) || arg[0] == '.')) {
        usage_error("--%s=%s: expected a positive number of seconds",
                    name, arg ? arg : "");
    }
    errno = 0;
    value = strtod(arg, &end);
    if (errno || *end || !isfinite(value) || value <= 0) {
        usage_error("--%s=%s: expected a positive number of seconds",
                    name, arg);
    }
    if (value > max) {
        usage_error("--%s=%s: out of range (at most %.0f)", name, arg, max);
    }
    return value;
}

/* Returns the index of 'arg' among the three 'names'. */
static int
parse_name(const char *name, const char *arg, const char *const names[3])
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(arg, names[i])) {
            return i;
        }
    }
    usage_error("--%s=%s: expected one of %s, %s, %s",
                name, arg, names[0], names[1], names[2]);
}

static void
parse_mac(const char *name, const char *arg, struct rte_ether_addr *mac)
{
    if (rte_ether_unformat_addr(arg, mac)) {
        usage_error("--%s=%s: expected a MAC address like "
                    "02:00:00:00:00:01", name, arg);
    }
}

enum {
    OPT_SOCKET = 256,
    OPT_SERVER,
    OPT_MODE,
    OPT_ALTERNATE_MS,
    OPT_ROLE,
    OPT_COUNT,
    OPT_EXPECT,
    OPT_RATE,
    OPT_BURST,
    OPT_SIZE,
    OPT_SRC_MAC,
    OPT_DST_MAC,
    OPT_STREAM,
    OPT_QUEUES,
    OPT_PACKED,
    OPT_LCORE,
    OPT_FILE_PREFIX,
    OPT_MEM,
    OPT_IDLE_MS,
    OPT_DURATION,
    OPT_STATS_INTERVAL,
    OPT_WAIT_LINK,
    OPT_START_FILE,
    OPT_FLOWS,
    OPT_MEM_CHURN_MS,
    OPT_MEM_CHURN_MB,
    OPT_FLIP_INTR,
    OPT_STOP_CONSUMING_AFTER,
    OPT_QUEUE_CHANGE_MS,
    OPT_CYCLES,
    OPT_WAKEUP_COST_US,
    OPT_MAX_SLEEP_MS,
    OPT_LATE_MS,
    OPT_POLL_NAP_US,
};

static void
parse_options(int argc, char *argv[], struct options *opt)
{
    static const struct option long_options[] = {
        {"socket", required_argument, NULL, OPT_SOCKET},
        {"server", no_argument, NULL, OPT_SERVER},
        {"mode", required_argument, NULL, OPT_MODE},
        {"alternate-ms", required_argument, NULL, OPT_ALTERNATE_MS},
        {"role", required_argument, NULL, OPT_ROLE},
        {"count", required_argument, NULL, OPT_COUNT},
        {"expect", required_argument, NULL, OPT_EXPECT},
        {"rate", required_argument, NULL, OPT_RATE},
        {"burst", required_argument, NULL, OPT_BURST},
        {"size", required_argument, NULL, OPT_SIZE},
        {"src-mac", required_argument, NULL, OPT_SRC_MAC},
        {"dst-mac", required_argument, NULL, OPT_DST_MAC},
        {"stream", required_argument, NULL, OPT_STREAM},
        {"queues", required_argument, NULL, OPT_QUEUES},
        {"packed", no_argument, NULL, OPT_PACKED},
        {"lcore", required_argument, NULL, OPT_LCORE},
        {"file-prefix", required_argument, NULL, OPT_FILE_PREFIX},
        {"mem", required_argument, NULL, OPT_MEM},
        {"idle-ms", required_argument, NULL, OPT_IDLE_MS},
        {"duration", required_argument, NULL, OPT_DURATION},
        {"stats-interval", required_argument, NULL, OPT_STATS_INTERVAL},
        {"wait-link", required_argument, NULL, OPT_WAIT_LINK},
        {"start-file", required_argument, NULL, OPT_START_FILE},
        {"flows", required_argument, NULL, OPT_FLOWS},
        {"mem-churn-ms", required_argument, NULL, OPT_MEM_CHURN_MS},
        {"mem-churn-mb", required_argument, NULL, OPT_MEM_CHURN_MB},
        {"flip-intr", no_argument, NULL, OPT_FLIP_INTR},
        {"stop-consuming-after", required_argument, NULL,
         OPT_STOP_CONSUMING_AFTER},
        {"queue-change-ms", required_argument, NULL, OPT_QUEUE_CHANGE_MS},
        {"cycles", required_argument, NULL, OPT_CYCLES},
        {"wakeup-cost-us", required_argument, NULL, OPT_WAKEUP_COST_US},
        {"max-sleep-ms", required_argument, NULL, OPT_MAX_SLEEP_MS},
        {"late-ms", required_argument, NULL, OPT_LATE_MS},
        {"poll-nap-us", required_argument, NULL, OPT_POLL_NAP_US},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool have_prefix = false;
    cpu_set_t cpus;

    memset(opt, 0, sizeof *opt);
    opt->mode = MODE_POLL;
    opt->alternate_ms = 100;
    opt->role = ROLE_RX;
    opt->burst = 1;
    opt->size = DEFAULT_FRAME;
    rte_ether_unformat_addr("02:00:00:00:00:01", &opt->src_mac);
    rte_ether_unformat_addr("02:00:00:00:00:02", &opt->dst_mac);
    opt->queues = 1;
    opt->flows = 1;
    opt->mem_mb = 256;
    opt->wait_link_s = 10;
    opt->mem_churn_mb = 32;
    opt->cycles = 1;
    opt->wakeup_cost_us = DEFAULT_WAKEUP_COST_US;
    opt->max_sleep_ms = MAX_SLEEP_MS;
    opt->late_ms = LATE_MS;

    opterr = 1;
    for (;;) {
        int c = getopt_long(argc, argv, "+hv", long_options, NULL);
        const char *name = NULL;

        if (c == -1) {
            break;
        }
        for (const struct option *o = long_options; o->name; o++) {
            if (o->val == c) {
                name = o->name;
                break;
            }
        }

        switch (c) {
        case OPT_SOCKET:
            opt->socket_path = optarg;
            break;
        case OPT_SERVER:
            opt->server = true;
            break;
        case OPT_MODE:
            opt->mode = parse_name(name, optarg, mode_names);
            break;
        case OPT_ALTERNATE_MS:
            opt->alternate_ms = parse_uint(name, optarg, 1, 3600000);
            break;
        case OPT_ROLE:
            opt->role = parse_name(name, optarg, role_names);
            break;
        case OPT_COUNT:
            opt->count = parse_uint(name, optarg, 0, INT64_MAX);
            break;
        case OPT_EXPECT:
            opt->expect = parse_uint(name, optarg, 0, INT64_MAX);
            break;
        case OPT_RATE:
            opt->rate = parse_uint(name, optarg, 0, 1000000000);
            break;
        case OPT_BURST:
            opt->burst = parse_uint(name, optarg, 1, MAX_BURST);
            break;
        case OPT_SIZE:
            opt->size = parse_uint(name, optarg, MIN_FRAME, MAX_FRAME);
            break;
        case OPT_SRC_MAC:
            parse_mac(name, optarg, &opt->src_mac);
            if (!rte_is_unicast_ether_addr(&opt->src_mac)) {
                usage_error("--%s=%s: source MAC must be unicast",
                            name, optarg);
            }
            break;
        case OPT_DST_MAC:
            parse_mac(name, optarg, &opt->dst_mac);
            break;
        case OPT_STREAM:
            opt->stream = parse_uint(name, optarg, 0, UINT32_MAX);
            break;
        case OPT_QUEUES:
            opt->queues = parse_uint(name, optarg, 1, MAX_QUEUES);
            break;
        case OPT_PACKED:
            opt->packed = true;
            break;
        case OPT_LCORE:
            opt->lcore = parse_uint(name, optarg, 0, RTE_MAX_LCORE - 1);
            break;
        case OPT_FILE_PREFIX:
            if (!optarg[0] || strlen(optarg) >= sizeof opt->file_prefix) {
                usage_error("--%s=%s: must be 1..%zu characters", name,
                            optarg, sizeof opt->file_prefix - 1);
            }
            for (const char *p = optarg; *p; p++) {
                if (!isalnum((unsigned char) *p) && !strchr("_.-", *p)) {
                    usage_error("--%s=%s: only letters, digits, '_', '.' "
                                "and '-' are allowed", name, optarg);
                }
            }
            snprintf(opt->file_prefix, sizeof opt->file_prefix, "%s",
                     optarg);
            have_prefix = true;
            break;
        case OPT_MEM:
            opt->mem_mb = parse_uint(name, optarg, 64, 65536);
            break;
        case OPT_IDLE_MS:
            opt->idle_ms = parse_uint(name, optarg, 0, 86400000);
            break;
        case OPT_DURATION:
            opt->duration_s = parse_seconds(name, optarg, 31536000);
            break;
        case OPT_STATS_INTERVAL:
            opt->stats_interval_ms = parse_uint(name, optarg, 0, 3600000);
            break;
        case OPT_WAIT_LINK:
            opt->wait_link_s = parse_uint(name, optarg, 0, 86400);
            break;
        case OPT_START_FILE:
            if (!optarg[0]) {
                usage_error("--%s: expected a file name", name);
            }
            opt->start_file = optarg;
            break;
        case OPT_FLOWS:
            opt->flows = parse_uint(name, optarg, 1, 64512);
            break;
        case OPT_MEM_CHURN_MS:
            opt->mem_churn_ms = parse_uint(name, optarg, 0, 3600000);
            break;
        case OPT_MEM_CHURN_MB:
            opt->mem_churn_mb = parse_uint(name, optarg, 2, 1024);
            break;
        case OPT_FLIP_INTR:
            opt->flip_intr = true;
            break;
        case OPT_STOP_CONSUMING_AFTER:
            opt->stop_consuming = true;
            opt->stop_consuming_after = parse_uint(name, optarg, 0,
                                                   INT64_MAX);
            break;
        case OPT_QUEUE_CHANGE_MS:
            opt->queue_change_ms = parse_uint(name, optarg, 0, 3600000);
            break;
        case OPT_CYCLES:
            opt->cycles = parse_uint(name, optarg, 1, 1000000);
            break;
        case OPT_WAKEUP_COST_US:
            opt->wakeup_cost_us = parse_uint(name, optarg, 0, 1000000);
            break;
        case OPT_MAX_SLEEP_MS:
            opt->max_sleep_ms = parse_uint(name, optarg, 1, 60000);
            break;
        case OPT_POLL_NAP_US:
            opt->poll_nap_us = parse_uint(name, optarg, 1, 1000000);
            break;
        case OPT_LATE_MS:
            opt->late_ms = parse_uint(name, optarg, 1, 60000);
            break;
        case 'v':
            opt->verbose = true;
            break;
        case 'h':
            usage();
            exit(EXIT_SUCCESS);
        default:
            /* getopt_long() already said what is wrong. */
            fprintf(stderr, "(use --help for usage)\n");
            exit(EXIT_USAGE);
        }
    }

    if (optind < argc) {
        if (strcmp(argv[optind - 1], "--")) {
            usage_error("unexpected argument \"%s\" (EAL arguments go after "
                        "\"--\")", argv[optind]);
        }
        opt->n_extra_eal = argc - optind;
        opt->extra_eal = &argv[optind];
    }

    if (!opt->socket_path || !opt->socket_path[0]) {
        usage_error("--socket=PATH is required");
    }
    if (strlen(opt->socket_path)
        >= sizeof ((struct sockaddr_un *) 0)->sun_path) {
        usage_error("--socket=%s: path too long for a unix socket",
                    opt->socket_path);
    }
    if (strpbrk(opt->socket_path, ",=")) {
        usage_error("--socket=%s: DPDK device arguments cannot carry ',' or "
                    "'=' in the path", opt->socket_path);
    }
    CPU_ZERO(&cpus);
    if (!sched_getaffinity(0, sizeof cpus, &cpus)
        && !CPU_ISSET(opt->lcore, &cpus)) {
        usage_error("--lcore=%u: CPU %u is not available to this process",
                    opt->lcore, opt->lcore);
    }

    if (opt->poll_nap_us && (opt->mode != MODE_POLL || opt->flip_intr
                             || opt->role == ROLE_TX)) {
        usage_error("--poll-nap-us needs --mode=poll without --flip-intr, "
                    "and --role=rx or echo (a sender would nap between "
                    "sends)");
    }
    if (opt->flip_intr && opt->mode != MODE_POLL) {
        usage_error("--flip-intr needs --mode=poll (it flips the Rx "
                    "interrupts itself)");
    }
    if (opt->stop_consuming && opt->role == ROLE_TX) {
        usage_error("--stop-consuming-after is for --role=rx or echo");
    }
    if (opt->queue_change_ms && (opt->queues < 2
                                 || opt->mode != MODE_POLL)) {
        usage_error("--queue-change-ms needs --queues=2 or more and "
                    "--mode=poll");
    }

    if (!have_prefix) {
        snprintf(opt->file_prefix, sizeof opt->file_prefix, "%s-%ld",
                 PROGRAM_NAME, (long) getpid());
    }
}

/* Packets. */

static void
put_be32(uint8_t *p, uint32_t value)
{
    rte_be32_t be = rte_cpu_to_be_32(value);

    memcpy(p, &be, sizeof be);
}

static void
put_be64(uint8_t *p, uint64_t value)
{
    rte_be64_t be = rte_cpu_to_be_64(value);

    memcpy(p, &be, sizeof be);
}

static uint32_t
get_be32(const uint8_t *p)
{
    rte_be32_t be;

    memcpy(&be, p, sizeof be);
    return rte_be_to_cpu_32(be);
}

static uint64_t
get_be64(const uint8_t *p)
{
    rte_be64_t be;

    memcpy(&be, p, sizeof be);
    return rte_be_to_cpu_64(be);
}

/* Number of timestamp bytes a payload of 'payload_len' bytes carries: the
 * low-order bytes of the 64-bit timestamp, in network byte order. */
static unsigned int
payload_ts_bytes(size_t payload_len)
{
    return (payload_len <= PAYLOAD_TS_OFS ? 0
            : RTE_MIN(payload_len - PAYLOAD_TS_OFS, (size_t) 8));
}

static void
build_template(struct guest *g)
{
    const struct options *opt = &g->opt;
    struct rte_ether_hdr *eth = (struct rte_ether_hdr *) g->hdr_template;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *) (eth + 1);
    struct rte_udp_hdr *udp = (struct rte_udp_hdr *) (ip + 1);

    memset(g->hdr_template, 0, sizeof g->hdr_template);
    rte_ether_addr_copy(&opt->dst_mac, &eth->dst_addr);
    rte_ether_addr_copy(&opt->src_mac, &eth->src_addr);
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(opt->size - RTE_ETHER_HDR_LEN);
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 1));
    ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(10, 0, 0, 2));
    ip->hdr_checksum = rte_ipv4_cksum(ip);

    /* A per-stream source port lets switches and RSS tell streams apart.
     * The UDP checksum is left 0 ("none"), which IPv4 allows. */
    udp->src_port = rte_cpu_to_be_16(1024 + opt->stream % 64512);
    udp->dst_port = rte_cpu_to_be_16(5001);
    udp->dgram_len = rte_cpu_to_be_16(opt->size - RTE_ETHER_HDR_LEN
                                      - sizeof *ip);
}

/* Fills 'm' with the next packet of our stream, stamped 'now_ns'. */
static bool
fill_packet(struct guest *g, struct rte_mbuf *m, uint64_t now_ns)
{
    size_t payload_len = g->opt.size - HDRS_LEN;
    unsigned int ts_bytes = payload_ts_bytes(payload_len);
    uint8_t *data, *payload;

    data = (uint8_t *) rte_pktmbuf_append(m, g->opt.size);
    if (!data) {
        return false;
    }
    memcpy(data, g->hdr_template, HDRS_LEN);
    payload = data + HDRS_LEN;
    memset(payload, 0, payload_len);
    put_be32(payload + PAYLOAD_MAGIC_OFS, PAYLOAD_MAGIC);
    put_be32(payload + PAYLOAD_STREAM_OFS, g->opt.stream);
    if (g->opt.flows > 1) {
        struct rte_udp_hdr *udp = (struct rte_udp_hdr *)
            (data + RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr));

        /* The UDP checksum is 0 ("none"): nothing to update. */
        udp->src_port = rte_cpu_to_be_16(
            1024 + (g->opt.stream + g->next_seq % g->opt.flows) % 64512);
    }
    put_be64(payload + PAYLOAD_SEQ_OFS, g->next_seq++);
    if (ts_bytes == 8) {
        put_be64(payload + PAYLOAD_TS_OFS, now_ns);
    } else {
        for (unsigned int i = 0; i < ts_bytes; i++) {
            payload[PAYLOAD_TS_OFS + i]
                = now_ns >> (8 * (ts_bytes - 1 - i));
        }
    }
    return true;
}

/* Sequence tracking. */

static struct stream_stats *
find_stream(struct guest *g, uint32_t id)
{
    static unsigned int last;
    struct stream_stats *s;

    if (last < g->n_streams && g->streams[last].id == id) {
        return &g->streams[last];
    }
    for (unsigned int i = 0; i < g->n_streams; i++) {
        if (g->streams[i].id == id) {
            last = i;
            return &g->streams[i];
        }
    }
    if (g->n_streams >= MAX_STREAMS) {
        return NULL;
    }

    s = &g->streams[g->n_streams];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->window = calloc(SEQ_WINDOW_WORDS, sizeof *s->window);
    if (!s->window) {
        return NULL;
    }
    last = g->n_streams++;
    return s;
}

/* Records sequence number 'seq' of stream 's'.  Duplicates are detected
 * within a sliding window of the SEQ_WINDOW sequence numbers below the
 * highest seen; anything older is taken as new (and reordered). */
static void
track_seq(struct stream_stats *s, uint64_t seq)
{
    uint64_t word, bit;

    if (!s->unique) {
        s->base = (seq > SEQ_WINDOW / 2
                   ? (seq - SEQ_WINDOW / 2) & ~UINT64_C(63) : 0);
        s->highest = seq;
    } else if (seq - s->base >= SEQ_WINDOW && seq > s->base) {
        uint64_t new_base = (seq - SEQ_WINDOW + 64) & ~UINT64_C(63);

        if (new_base - s->base >= SEQ_WINDOW) {
            memset(s->window, 0, SEQ_WINDOW_WORDS * sizeof *s->window);
        } else {
            for (uint64_t b = s->base; b < new_base; b += 64) {
                s->window[(b / 64) % SEQ_WINDOW_WORDS] = 0;
            }
        }
        s->base = new_base;
    }

    if (seq < s->base) {
        s->unique++;
        s->reordered++;
        return;
    }

    word = (seq / 64) % SEQ_WINDOW_WORDS;
    bit = UINT64_C(1) << (seq % 64);
    if (s->window[word] & bit) {
        s->duplicates++;
        return;
    }
    s->window[word] |= bit;
    if (s->unique && seq < s->highest) {
        s->reordered++;
    }
    s->unique++;
    if (seq > s->highest) {
        s->highest = seq;
    }
}

/* Latency. */

static void
record_latency(struct guest *g, uint64_t now_ns, uint64_t ts,
               unsigned int ts_bytes)
{
    uint64_t latency, bucket;

    if (ts_bytes == 8) {
        if (ts > now_ns) {
            return;
        }
        latency = now_ns - ts;
    } else if (ts_bytes >= 4) {
        uint64_t mask = (UINT64_C(1) << (8 * ts_bytes)) - 1;

        latency = (now_ns - ts) & mask;
        if (latency > mask / 2) {
            return;
        }
    } else {
        return;
    }

    bucket = RTE_MIN(latency / LAT_BUCKET_NS, (uint64_t) LAT_BUCKETS - 1);
    g->lat_hist[bucket]++;
    g->lat_samples++;
    if (latency > g->lat_max_ns) {
        g->lat_max_ns = latency;
    }
}

/* Returns the 'pct' percentile of the latency samples in microseconds
 * (the lower edge of its 0.1 us bucket). */
static double
latency_percentile(const struct guest *g, double pct)
{
    uint64_t rank = ceil(pct / 100.0 * g->lat_samples);
    uint64_t sum = 0;

    if (rank < 1) {
        rank = 1;
    }
    for (uint64_t b = 0; b < LAT_BUCKETS; b++) {
        sum += g->lat_hist[b];
        if (sum >= rank) {
            double us = b * (LAT_BUCKET_NS / 1000.0);

            return RTE_MIN(us, g->lat_max_ns / 1000.0);
        }
    }
    return g->lat_max_ns / 1000.0;
}

/* Receiving. */

static void
inspect_packet(struct guest *g, const struct rte_mbuf *m, uint64_t now_ns)
{
    const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
    const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *) data;
    const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *) (eth + 1);
    const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *) (ip + 1);
    const uint8_t *payload = data + HDRS_LEN;
    struct stream_stats *s;
    size_t payload_len;
    unsigned int ts_bytes;
    uint64_t ts;

    if (rte_pktmbuf_data_len(m) < HDRS_LEN + PAYLOAD_TS_OFS
        || eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)
        || ip->version_ihl != RTE_IPV4_VHL_DEF
        || ip->next_proto_id != IPPROTO_UDP
        || rte_be_to_cpu_16(udp->dgram_len) < sizeof *udp + PAYLOAD_TS_OFS
        || get_be32(payload + PAYLOAD_MAGIC_OFS) != PAYLOAD_MAGIC) {
        g->rx_foreign++;
        return;
    }
    payload_len = RTE_MIN((size_t) rte_be_to_cpu_16(udp->dgram_len)
                          - sizeof *udp,
                          (size_t) rte_pktmbuf_data_len(m) - HDRS_LEN);

    s = find_stream(g, get_be32(payload + PAYLOAD_STREAM_OFS));
    if (s) {
        track_seq(s, get_be64(payload + PAYLOAD_SEQ_OFS));
    } else {
        g->untracked++;
    }

    ts_bytes = payload_ts_bytes(payload_len);
    ts = 0;
    for (unsigned int i = 0; i < ts_bytes; i++) {
        ts = (ts << 8) | payload[PAYLOAD_TS_OFS + i];
    }
    record_latency(g, now_ns, ts, ts_bytes);
}

/* Transmits 'pkts' on queue 'q', retrying for up to TX_RETRY_NS while the
 * PMD does not take them all.  Frees what is left and returns the number
 * sent. */
static uint16_t
tx_with_retry(struct guest *g, uint16_t q, struct rte_mbuf **pkts,
              uint16_t n)
{
    uint16_t sent = rte_eth_tx_burst(g->port, q, pkts, n);

    if (sent < n) {
        uint64_t deadline = rte_rdtsc() + TX_RETRY_NS * g->tsc_hz
                                          / 1000000000;

        while (sent < n && stop_signals < 2 && rte_rdtsc() < deadline) {
            rte_pause();
            sent += rte_eth_tx_burst(g->port, q, pkts + sent, n - sent);
        }
        if (sent < n) {
            rte_pktmbuf_free_bulk(pkts + sent, n - sent);
        }
    }
    return sent;
}

static void
echo_burst(struct guest *g, uint16_t q, struct rte_mbuf **pkts, uint16_t n)
{
    uint16_t sent;

    for (uint16_t i = 0; i < n; i++) {
        struct rte_ether_hdr *eth;
        struct rte_ether_addr tmp;

        if (rte_pktmbuf_data_len(pkts[i]) < RTE_ETHER_HDR_LEN) {
            continue;
        }
        eth = rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
        rte_ether_addr_copy(&eth->src_addr, &tmp);
        rte_ether_addr_copy(&eth->dst_addr, &eth->src_addr);
        rte_ether_addr_copy(&tmp, &eth->dst_addr);
    }
    sent = tx_with_retry(g, q, pkts, n);
    g->echoed += sent;
    g->echo_dropped += n - sent;
}

static void
handle_rx_burst(struct guest *g, uint16_t q, struct rte_mbuf **pkts,
                uint16_t n)
{
    uint64_t now_ns = mono_ns();

    g->rx_packets += n;
    for (uint16_t i = 0; i < n; i++) {
        inspect_packet(g, pkts[i], now_ns);
    }
    if (g->opt.role == ROLE_ECHO) {
        echo_burst(g, q, pkts, n);
    } else {
        rte_pktmbuf_free_bulk(pkts, n);
    }
}

/* Returns how many packets the guest may read in its next burst:
 * MAX_BURST, or fewer (down to 0) as --stop-consuming-after nears. */
static uint16_t
rx_budget(const struct guest *g)
{
    uint64_t left;

    if (!g->opt.stop_consuming) {
        return MAX_BURST;
    }
    left = (g->opt.stop_consuming_after > g->rx_packets
            ? g->opt.stop_consuming_after - g->rx_packets : 0);
    return RTE_MIN(left, (uint64_t) MAX_BURST);
}

/* Polls every queue in use once.  Returns the number of packets
 * received. */
static unsigned int
poll_queues(struct guest *g)
{
    unsigned int total = 0;

    for (uint16_t q = 0; q < g->active_queues; q++) {
        struct rte_mbuf *pkts[MAX_BURST];
        uint16_t budget = rx_budget(g);
        uint16_t n = budget ? rte_eth_rx_burst(g->port, q, pkts, budget) : 0;

        if (n) {
            handle_rx_burst(g, q, pkts, n);
            total += n;
        }
    }
    return total;
}

/* Transmitting. */

/* Generates and sends 'n' packets on the next queue.  Returns false if no
 * mbufs were available (nothing was generated). */
static bool
send_burst(struct guest *g, unsigned int n)
{
    struct rte_mbuf *pkts[MAX_BURST];
    uint64_t now_ns;
    uint16_t q, sent;

    if (rte_pktmbuf_alloc_bulk(g->pool, pkts, n)) {
        return false;
    }
    now_ns = mono_ns();
    for (unsigned int i = 0; i < n; i++) {
        if (!fill_packet(g, pkts[i], now_ns)) {
            /* Cannot happen with our buffer size; keep the count honest. */
            rte_pktmbuf_free_bulk(pkts + i, n - i);
            g->next_seq += n - i;
            g->tx_dropped += n - i;
            n = i;
            break;
        }
    }
    q = g->tx_queue_rr++ % g->active_queues;
    sent = tx_with_retry(g, q, pkts, n);
    g->tx_packets += sent;
    g->tx_dropped += n - sent;
    return true;
}

/* Rx interrupts. */

static void
set_rx_intr(struct guest *g, bool enable)
{
    for (uint16_t q = 0; q < g->active_queues; q++) {
        if (enable) {
            rte_eth_dev_rx_intr_enable(g->port, q);
        } else {
            rte_eth_dev_rx_intr_disable(g->port, q);
        }
    }
}

/* Spends --wakeup-cost-us of CPU time, as a kernel guest does between its
 * interrupt and its first poll (VM exit, interrupt injection, softirq), so
 * that wake-ups cost the guest what they cost a VM and a guest woken too
 * often falls behind. */
static void
wakeup_cost(const struct guest *g)
{
    if (g->opt.wakeup_cost_us) {
        uint64_t end = rte_get_tsc_cycles()
                       + g->opt.wakeup_cost_us * rte_get_tsc_hz() / 1000000;

        while (rte_get_tsc_cycles() < end) {
            rte_pause();
        }
    }
}

/* Sleeps until a queue's interrupt fires or 'timeout_ms' passes.  Returns
 * the number of packets received on the way. */
static unsigned int
intr_sleep(struct guest *g, int timeout_ms)
{
    struct rte_epoll_event events[MAX_QUEUES];
    struct rte_mbuf *pkts[MAX_QUEUES][MAX_BURST];
    uint16_t n[MAX_QUEUES];
    unsigned int total = 0;
    int n_events;

    set_rx_intr(g, true);

    /* A packet that arrived after the last empty poll but before the
     * interrupt was enabled raises no interrupt: look once more. */
    for (uint16_t q = 0; q < g->active_queues; q++) {
        uint16_t budget = rx_budget(g);

        n[q] = budget ? rte_eth_rx_burst(g->port, q, pkts[q], budget) : 0;
        total += n[q];
    }
    if (total) {
        set_rx_intr(g, false);
        for (uint16_t q = 0; q < g->active_queues; q++) {
            if (n[q]) {
                handle_rx_burst(g, q, pkts[q], n[q]);
            }
        }
        return total;
    }

    n_events = rte_epoll_wait_interruptible(RTE_EPOLL_PER_THREAD, events,
                                            g->active_queues, timeout_ms);
    g->woke_by_timeout = n_events <= 0;
    if (n_events > 0) {
        g->late_pending = 0;    /* The kick they were owed came. */
        /* Woken: poll with interrupts off, as NAPI does.  After a timeout
         * they stay on, so that the guest's periodic chores (link, stop
         * conditions) never show the switch a polling guest. */
        g->wakeups++;
        wakeup_cost(g);
        set_rx_intr(g, false);
    }
    return 0;
}

/* Late packets.  The poll after a sleep that ended without a kick (the
 * guest's own timeout, after which interrupts stay on) found 'n_rx'
 * packets (0: just look).  Every one of them was placed while the guest
 * wanted interrupts, so the switch owes a kick for them, at once or, held,
 * at the end of its interval, and delivers it while interrupts stay on.
 * The guest goes on consuming meanwhile; the packets count as late if no
 * kick comes within --late-ms (a lost kick, or one held past any bound).
 * A kick that comes is consumed here as the wake-up it would have been.
 * 'wait' (at the end of the run): block, interrupts on, for the rest of
 * --late-ms. */
static void
late_track(struct guest *g, unsigned int n_rx, bool wait)
{
    struct rte_epoll_event events[MAX_QUEUES];
    uint64_t now = rte_rdtsc();

    if (n_rx && !g->late_pending) {
        g->late_deadline = now + g->opt.late_ms * g->tsc_hz / 1000;
    }
    g->late_pending += n_rx;
    if (!g->late_pending) {
        return;
    }

    int timeout_ms = (wait && now < g->late_deadline
                      ? (int) ((g->late_deadline - now) * 1000 / g->tsc_hz) + 1
                      : 0);
    if (timeout_ms) {
        /* The rest of --late-ms is a sleep, and a driver sleeps with
         * interrupts on.  A guest that kept polling since its timeout
         * turned them off: the switch then postponed the kick it held for
         * these packets (virtio 1.1, 2.6.7.2: the driver re-checks its
         * ring when it re-enables them), and sends it once they are on. */
        set_rx_intr(g, true);
    }
    if (rte_epoll_wait_interruptible(RTE_EPOLL_PER_THREAD, events,
                                     g->active_queues, timeout_ms) > 0) {
        g->late_pending = 0;
        set_rx_intr(g, false);
    } else if (wait || rte_rdtsc() >= g->late_deadline) {
        g->late += g->late_pending;
        g->late_pending = 0;
    }
}

static void
register_rx_intr(struct guest *g)
{
    for (uint16_t q = 0; q < g->opt.queues; q++) {
        int error = rte_eth_dev_rx_intr_ctl_q(g->port, q,
                                              RTE_EPOLL_PER_THREAD,
                                              RTE_INTR_EVENT_ADD, NULL);

        if (error && error != -EEXIST) {
            fatal(EXIT_FAILURE, "cannot set up Rx interrupts on queue %u: "
                  "%s", q, rte_strerror(-error));
        }
    }
    g->intr_registered = true;
}

/* Setup. */

static void
build_devargs(const struct options *opt, char *buf, size_t size)
{
    char mac[RTE_ETHER_ADDR_FMT_SIZE];
    const char *path = opt->socket_path;
    char cwd[PATH_MAX];
    size_t n;

    /* DPDK 23.11+ truncates the device arguments of a hot-plugged device
     * (rte_dev_probe(), used by --cycles) at 128 bytes (RTE_DEV_NAME_MAX_LEN),
     * so the virtio-user defaults (queue_size=256, packed_vq=0, server=0)
     * are left out, and a socket in the working directory is named
     * relative to it. */
    if (getcwd(cwd, sizeof cwd) && (n = strlen(cwd)) > 1
        && !strncmp(path, cwd, n) && path[n] == '/' && path[n + 1]) {
        path += n + 1;
    }
    /* The device's MAC is our source MAC (and virtio-user stays quiet
     * about making one up). */
    rte_ether_format_addr(mac, sizeof mac, &opt->src_mac);
    _Static_assert(RING_SIZE == 256, "virtio-user's default queue_size");
    snprintf(buf, size, "%s,path=%s,queues=%u%s%s,mac=%s", VDEV_NAME, path,
             opt->queues, opt->packed ? ",packed_vq=1" : "",
             opt->server ? ",server=1" : "", mac);
}

/* Builds the EAL argument vector in 'argv' (room for 'max' entries, with
 * the strings kept in 'strings'). */
static int
build_eal_args(const struct options *opt, const char *devargs,
               const char *argv0, char **argv, int max,
               char strings[][512])
{
    int argc = 0;
    int s = 0;

#define EAL_ARG(...)                                            \
    do {                                                        \
        snprintf(strings[s], sizeof strings[s], __VA_ARGS__);   \
        argv[argc++] = strings[s++];                            \
    } while (0)

    EAL_ARG("%s", argv0);
    EAL_ARG("-l");
    EAL_ARG("%u", opt->lcore);
    EAL_ARG("--no-pci");
    EAL_ARG("--in-memory");
    EAL_ARG("--single-file-segments");
    if (opt->mem_churn_ms) {
        /* Nothing preallocated: memory is mapped as needed and unmapped
         * when freed, so that --mem-churn-ms changes the memory layout. */
        EAL_ARG("--socket-limit=%"PRIu64, opt->mem_mb);
    } else {
        EAL_ARG("-m");
        EAL_ARG("%"PRIu64, opt->mem_mb);
    }
    EAL_ARG("--file-prefix=%s", opt->file_prefix);
    EAL_ARG("--no-telemetry");
    EAL_ARG("--log-level=%s", opt->verbose ? "info" : "error");
    EAL_ARG("--vdev=%s", devargs);
#undef EAL_ARG

    for (int i = 0; i < opt->n_extra_eal && argc < max - 1; i++) {
        argv[argc++] = opt->extra_eal[i];
    }
    argv[argc] = NULL;
    return argc;
}

/* Returns true if 'deadline_ns' (CLOCK_MONOTONIC) has passed.  A deadline
 * of 0 never passes. */
static bool
deadline_passed(uint64_t deadline_ns)
{
    return deadline_ns && mono_ns() >= deadline_ns;
}

/* In client mode, waits for the switch to create the socket, so that the
 * usual "switch not up yet" case does not fill stderr with DPDK's connect
 * errors. */
static void
wait_for_socket(const struct options *opt, uint64_t deadline_ns)
{
    struct stat st;

    if (opt->server) {
        if (!lstat(opt->socket_path, &st)) {
            fatal(EXIT_FAILURE, "%s already exists: in --server mode the "
                  "guest creates the socket; remove the stale file (or "
                  "stop the other guest) first", opt->socket_path);
        }
        return;
    }

    while (stat(opt->socket_path, &st)) {
        if (errno != ENOENT) {
            fatal(EXIT_NO_LINK, "%s: %s", opt->socket_path,
                  strerror(errno));
        }
        if (deadline_passed(deadline_ns) || stop_signals) {
            fatal(EXIT_NO_LINK, "vhost-user socket %s does not exist (is "
                  "the switch running and the dpdkvhostuser port added?)",
                  opt->socket_path);
        }
        usleep(50 * 1000);
    }
    if (!S_ISSOCK(st.st_mode)) {
        fatal(EXIT_NO_LINK, "%s is not a socket", opt->socket_path);
    }
}

/* Finds the virtio-user port.  If its probe failed during EAL init (the
 * socket refused the connection), probes again until 'deadline_ns'. */
static void
find_port(struct guest *g, const char *devargs, uint64_t deadline_ns)
{
    int saved_level = rte_log_get_global_level();
    bool retried = false;

    while (rte_eth_dev_get_port_by_name(VDEV_NAME, &g->port)) {
        if (deadline_passed(deadline_ns) || stop_signals) {
            rte_log_set_global_level(saved_level);
            fatal(EXIT_NO_LINK, "cannot attach to vhost-user socket %s "
                  "(%s)", g->opt.socket_path,
                  g->opt.server ? "cannot listen on it"
                  : "connection refused or failed");
        }
        if (!retried && !g->opt.verbose) {
            /* Repeated connect errors are expected while we wait. */
            rte_log_set_global_level(RTE_LOG_EMERG);
        }
        if (retried || !g->cycles_done) {
            usleep(100 * 1000);
        }
        retried = true;
        rte_dev_probe(devargs);
    }
    rte_log_set_global_level(saved_level);
    g->port_valid = true;
}

static void
setup_port(struct guest *g)
{
    const struct options *opt = &g->opt;
    struct rte_eth_conf conf;
    struct rte_eth_dev_info info;
    unsigned int n_mbufs;
    int socket_id;
    int error;

    socket_id = rte_eth_dev_socket_id(g->port);
    if (socket_id < 0) {
        socket_id = (int) rte_socket_id();
    }

    /* Rx rings, tx rings (freed lazily by the PMD), bursts in flight and
     * the per-lcore cache, rounded up to 2^n - 1. */
    n_mbufs = opt->queues * (2 * RING_SIZE + 2 * MAX_BURST)
              + 2 * MBUF_CACHE + 1024;
    n_mbufs = rte_align32pow2(n_mbufs) - 1;
    if (!g->pool) {
        /* Once: later --cycles reuse it. */
        g->pool = rte_pktmbuf_pool_create("ovhg_mbufs", n_mbufs, MBUF_CACHE,
                                          0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                          socket_id);
    }
    if (!g->pool) {
        fatal(EXIT_FAILURE, "cannot create mbuf pool of %u mbufs: %s "
              "(try a larger --mem)", n_mbufs, rte_strerror(rte_errno));
    }

    error = rte_eth_dev_info_get(g->port, &info);
    if (error) {
        fatal(EXIT_FAILURE, "cannot get device info: %s",
              rte_strerror(-error));
    }
    if (info.max_rx_queues < opt->queues || info.max_tx_queues < opt->queues)
    {
        fatal(EXIT_FAILURE, "device supports only %u queue pairs",
              RTE_MIN(info.max_rx_queues, info.max_tx_queues));
    }

    memset(&conf, 0, sizeof conf);
    conf.intr_conf.rxq = opt->mode != MODE_POLL || opt->flip_intr;
    /* Link status change interrupts where the device has them, as testpmd
     * enables them (virtio-user over vhost-user has them): DPDK's
     * interrupt thread then notices that the vhost-user connection closed
     * and, in --server mode, accepts the connection of a restarted switch.
     * (Polling the link status from this thread instead does the same,
     * but on DPDK 22.11 leaves a closed fd registered with the interrupt
     * thread after a reconnection, which panics when the port closes.) */
    if (info.dev_flags && (*info.dev_flags & RTE_ETH_DEV_INTR_LSC)) {
        conf.intr_conf.lsc = 1;
        g->lsc = true;
    }
    error = rte_eth_dev_configure(g->port, opt->queues, opt->queues, &conf);
    if (error) {
        fatal(EXIT_FAILURE, "cannot configure port: %s",
              rte_strerror(-error));
    }
    for (uint16_t q = 0; q < opt->queues; q++) {
        error = rte_eth_rx_queue_setup(g->port, q, RING_SIZE, socket_id,
                                       NULL, g->pool);
        if (error) {
            fatal(EXIT_FAILURE, "cannot set up rx queue %u: %s", q,
                  rte_strerror(-error));
        }
        error = rte_eth_tx_queue_setup(g->port, q, RING_SIZE, socket_id,
                                       NULL);
        if (error) {
            fatal(EXIT_FAILURE, "cannot set up tx queue %u: %s", q,
                  rte_strerror(-error));
        }
    }
    error = rte_eth_dev_start(g->port);
    if (error) {
        fatal(EXIT_FAILURE, "cannot start port: %s", rte_strerror(-error));
    }
    g->port_started = true;
    g->conf = conf;
    g->socket_id = socket_id;
    g->active_queues = opt->queues;
}

/* Restarts the port with 'n' queue pairs in use (--queue-change-ms).
 *
 * When the port starts, DPDK's virtio driver tells the device how many
 * pairs are in use (VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET on its control
 * queue), which virtio-user turns into VHOST_USER_SET_VRING_ENABLE
 * messages for the switch: pairs beyond 'n' disabled, the others enabled.
 * A Linux guest does the same for "ethtool -L eth0 combined N".
 *
 * The start also drops what the rx queues had received but the guest had
 * not read yet ("flush the old packets").  Every rx descriptor holds an
 * mbuf between bursts (the driver refills after each one) and the guest
 * holds none, so the mbufs the start returns to the pool are exactly
 * those packets: counted as rx_flushed, so that the guest's losses stay
 * exact. */
static void
change_queues(struct guest *g, unsigned int n)
{
    unsigned int old = g->active_queues;
    unsigned int before, after;
    int error;

    error = rte_eth_dev_stop(g->port);
    if (error) {
        fatal(EXIT_FAILURE, "cannot stop port: %s", rte_strerror(-error));
    }
    error = rte_eth_dev_configure(g->port, n, n, &g->conf);
    if (error) {
        fatal(EXIT_FAILURE, "cannot configure port with %u queues: %s", n,
              rte_strerror(-error));
    }
    for (uint16_t q = old; q < n; q++) {
        error = rte_eth_rx_queue_setup(g->port, q, RING_SIZE, g->socket_id,
                                       NULL, g->pool);
        if (!error) {
            error = rte_eth_tx_queue_setup(g->port, q, RING_SIZE,
                                           g->socket_id, NULL);
        }
        if (error) {
            fatal(EXIT_FAILURE, "cannot set up queue %u: %s", q,
                  rte_strerror(-error));
        }
    }
    before = rte_mempool_in_use_count(g->pool);
    error = rte_eth_dev_start(g->port);
    if (error) {
        fatal(EXIT_FAILURE, "cannot restart port with %u queues: %s", n,
              rte_strerror(-error));
    }
    after = rte_mempool_in_use_count(g->pool);
    if (before > after) {
        g->rx_flushed += before - after;
    }
    g->active_queues = n;
    g->queue_changes++;
}

/* DPDK memory event callback: counts the changes of the memory map that
 * virtio-user's own callback turns into VHOST_USER_SET_MEM_TABLE. */
static void
count_mem_event(enum rte_mem_event type, const void *addr, size_t len,
                void *arg)
{
    struct guest *g = arg;

    (void) addr;
    (void) len;
    g->mem_events[type == RTE_MEM_EVENT_ALLOC ? 0 : 1]++;
}

/* One step of --mem-churn-ms: allocates --mem-churn-mb of hugepage memory
 * if none is held, frees it otherwise.  The EAL runs with dynamic memory
 * and no preallocation (see build_eal_args()), so the heap has little
 * free space: the allocation maps new hugepages and the free unmaps them.
 * Each change calls DPDK's memory event callbacks, and virtio-user's
 * pauses its queues (VHOST_USER_SET_VRING_ENABLE 0), sends the switch
 * VHOST_USER_SET_MEM_TABLE with the memory it then finds mapped and
 * resumes the queues, in this thread.
 *
 * The callbacks of a free run before the pages are unmapped, so the table
 * sent then still has them.  After a free the step therefore maps and
 * unmaps one more hugepage ("probe"): its allocation sends the table
 * without the freed memory.  So every step changes the memory table the
 * switch has: the allocation grows the guest's region, the probe shrinks
 * it. */
static void
mem_churn_step(struct guest *g)
{
    size_t len = (size_t) g->opt.mem_churn_mb << 20;

    if (g->churn_buf) {
        void *probe;

        rte_free(g->churn_buf);
        g->churn_buf = NULL;
        g->churn_frees++;

        /* 2 MB does not fit in what is left of the mapped pages. */
        probe = rte_malloc_socket("ovhg_churn_probe", 2 << 20, 0,
                                  g->socket_id);
        if (probe) {
            rte_free(probe);
        } else {
            g->churn_failures++;
        }
        return;
    }
    g->churn_buf = rte_malloc_socket("ovhg_churn", len, 0, g->socket_id);
    if (!g->churn_buf) {
        g->churn_failures++;
        return;
    }
    /* Write every page: the memory is really there. */
    for (size_t ofs = 0; ofs < len; ofs += 4096) {
        ((volatile char *) g->churn_buf)[ofs] = 1;
    }
    g->churn_allocs++;
}

static void
wait_link(struct guest *g, uint64_t deadline_ns)
{
    for (;;) {
        struct rte_eth_link link;

        memset(&link, 0, sizeof link);
        if (!rte_eth_link_get_nowait(g->port, &link)
            && link.link_status == RTE_ETH_LINK_UP) {
            g->link_up = true;
            return;
        }
        if (deadline_passed(deadline_ns) || stop_signals) {
            fatal(EXIT_NO_LINK, "link of vhost-user port %s did not come up "
                  "(%s)", g->opt.socket_path,
                  stop_signals ? "interrupted"
                  : g->opt.server ? "no vhost-user client connected"
                  : "the switch did not complete the vhost-user setup");
        }
        usleep(10 * 1000);
    }
}

/* Main loop. */

static uint64_t
ms_to_tsc(const struct guest *g, uint64_t ms)
{
    return ms * g->tsc_hz / 1000;
}

/* Lowers '*timeout_ms' to the time from 'now' to 'deadline' (TSC). */
static void
limit_timeout(const struct guest *g, uint64_t now, uint64_t deadline,
              int *timeout_ms)
{
    uint64_t ms;

    if (deadline == UINT64_MAX) {
        return;
    }
    ms = deadline > now ? (deadline - now) * 1000 / g->tsc_hz : 0;
    if (ms < (uint64_t) *timeout_ms) {
        *timeout_ms = ms;
    }
}

/* Reads the link status every LINK_CHECK_MS, unless DPDK's link status
 * change interrupts do it (see setup_port()).  Reading it is what lets
 * DPDK's virtio-user notice that the vhost-user connection closed and, in
 * --server mode, accept the connection of a restarted switch and set the
 * device up again.  Says so on stderr when the link changes. */
static void
check_link(struct guest *g, uint64_t now)
{
    struct rte_eth_link link;
    bool up;

    if (g->lsc || now < g->next_link_check) {
        return;
    }
    g->next_link_check = now + ms_to_tsc(g, LINK_CHECK_MS);
    memset(&link, 0, sizeof link);
    if (rte_eth_link_get_nowait(g->port, &link)) {
        return;
    }
    up = link.link_status == RTE_ETH_LINK_UP;
    if (up != g->link_up) {
        g->link_up = up;
        fprintf(stderr, "%s: link %s\n", PROGRAM_NAME, up ? "up" : "down");
    }
}

/* Waits, with the link up, until --start-file exists (a test takes its
 * readings of the idle connection meanwhile), or until a signal. */
static void
wait_start_file(struct guest *g)
{
    struct stat st;

    while (g->opt.start_file && stat(g->opt.start_file, &st)
           && !stop_signals) {
        check_link(g, rte_rdtsc());
        usleep(1000);
    }
}

static void
print_progress(const struct guest *g, double elapsed, bool intr)
{
    fprintf(stderr, "{\"elapsed_s\":%.3f,\"rx_mode\":\"%s\","
            "\"tx_packets\":%"PRIu64",\"tx_dropped\":%"PRIu64","
            "\"rx_packets\":%"PRIu64",\"echoed\":%"PRIu64","
            "\"wakeups\":%"PRIu64",\"late\":%"PRIu64","
            "\"mem_churn_steps\":%"PRIu64","
            "\"queue_changes\":%"PRIu64",\"intr_flips\":%"PRIu64","
            "\"cycles\":%"PRIu64"}\n",
            elapsed, intr ? "interrupt" : "poll", g->tx_packets,
            g->tx_dropped, g->rx_packets, g->echoed, g->wakeups, g->late,
            g->churn_allocs + g->churn_frees, g->queue_changes,
            g->intr_flips, g->cycles_done);
}

/* Runs the traffic until a stop condition.  Returns the run time in
 * seconds. */
static double
run(struct guest *g)
{
    const struct options *opt = &g->opt;
    const uint64_t hz = g->tsc_hz;
    const uint64_t start = rte_rdtsc();
    const uint64_t end = (opt->duration_s
                          ? start + (uint64_t) (opt->duration_s * hz)
                          : UINT64_MAX);
    const uint64_t idle = ms_to_tsc(g, opt->idle_ms);
    const uint64_t drain_idle = (opt->idle_ms ? idle
                                 : DRAIN_IDLE_NS * hz / 1000000000);
    const uint64_t drain_max = DRAIN_MAX_NS * hz / 1000000000 + drain_idle;
    uint64_t next_switch = UINT64_MAX;
    uint64_t next_stats = UINT64_MAX;
    uint64_t next_churn = UINT64_MAX;
    uint64_t next_qchange = UINT64_MAX;
    uint64_t next_send = start;
    uint64_t last_rx = 0;
    uint64_t drain_start = 0;
    bool sending = opt->role == ROLE_TX;
    bool intr = opt->mode == MODE_INTERRUPT;

    if (opt->mode == MODE_ALTERNATE) {
        next_switch = start + ms_to_tsc(g, opt->alternate_ms);
    }
    if (opt->stats_interval_ms) {
        next_stats = start + ms_to_tsc(g, opt->stats_interval_ms);
    }
    if (opt->mem_churn_ms) {
        /* A sender churns from here (it runs once the start file is
         * there), a receiver or echo guest from its first packet (below):
         * before the traffic every step pauses the queues for a moment,
         * and the switch would show the port flickering between ready
         * and not to whoever waits for it (7 of 20 looks beside two busy
         * processes). */
        if (opt->role == ROLE_TX) {
            next_churn = start + ms_to_tsc(g, opt->mem_churn_ms);
        }
        /* Count the memory events of the run only, not of the setup. */
        g->mem_events[0] = g->mem_events[1] = 0;
    }
    if (opt->queue_change_ms) {
        next_qchange = start + ms_to_tsc(g, opt->queue_change_ms);
    }

    for (;;) {
        uint64_t now = rte_rdtsc();
        int timeout_ms;

        check_link(g, now);

        /* Stop conditions.  A second signal stops at once. */
        if (stop_signals > 1) {
            break;
        }
        if (sending) {
            if (stop_signals || now >= end
                || (opt->count && g->next_seq >= opt->count)) {
                sending = false;
                drain_start = now;
            }
        } else if (opt->role == ROLE_TX) {
            /* Collect what is still on its way back, then stop. */
            uint64_t quiet_since = RTE_MAX(drain_start, last_rx);

            if (now - quiet_since >= drain_idle
                || now - drain_start >= drain_max) {
                break;
            }
        } else {
            if (stop_signals || now >= end
                || (opt->count && g->rx_packets >= opt->count)
                || (idle && last_rx && now - last_rx >= idle)) {
                break;
            }
        }

        if (now >= next_switch) {
            intr = !intr;
            if (!intr) {
                set_rx_intr(g, false);
            }
            next_switch += ms_to_tsc(g, opt->alternate_ms);
            if (next_switch <= now) {
                next_switch = now + ms_to_tsc(g, opt->alternate_ms);
            }
        }
        if (now >= next_stats) {
            print_progress(g, (double) (now - start) / hz, intr);
            next_stats += ms_to_tsc(g, opt->stats_interval_ms);
            if (next_stats <= now) {
                next_stats = now + ms_to_tsc(g, opt->stats_interval_ms);
            }
        }

        if (opt->mem_churn_ms && next_churn == UINT64_MAX
            && g->rx_packets) {
            next_churn = now + ms_to_tsc(g, opt->mem_churn_ms);
        }
        if (now >= next_churn) {
            mem_churn_step(g);
            next_churn = rte_rdtsc() + ms_to_tsc(g, opt->mem_churn_ms);
        }
        if (now >= next_qchange) {
            change_queues(g, g->active_queues == opt->queues
                             ? 1 : opt->queues);
            next_qchange = rte_rdtsc() + ms_to_tsc(g, opt->queue_change_ms);
        }

        if (sending && now >= next_send) {
            unsigned int n = opt->burst;

            if (opt->count) {
                n = RTE_MIN((uint64_t) n, opt->count - g->next_seq);
            }
            if (send_burst(g, n) && opt->rate) {
                /* Schedule from the start, so that the average rate is
                 * exact whatever the TSC rounding. */
                next_send = start + (uint64_t) ((unsigned __int128) g->next_seq
                                                * hz / opt->rate);
            }
        }

        if (opt->stop_consuming && !rx_budget(g)) {
            /* The guest hangs: its rx rings stay full.  It still stops
             * when told to; meanwhile it leaves the CPU to others. */
            struct timespec ts = { 0, 1000000 };

            if (!g->consuming_stopped) {
                g->consuming_stopped = true;
                if (intr) {
                    /* As a hung kernel guest: asleep, interrupts on. */
                    set_rx_intr(g, true);
                }
                fprintf(stderr, "%s: stopped consuming after %"PRIu64
                        " packets\n", PROGRAM_NAME, g->rx_packets);
            }
            nanosleep(&ts, NULL);
            continue;
        }

        unsigned int n_rx = poll_queues(g);
        if (g->woke_by_timeout || g->late_pending) {
            late_track(g, g->woke_by_timeout ? n_rx : 0, false);
            g->woke_by_timeout = false;
        }
        if (opt->flip_intr) {
            /* Ask for interrupts on every other poll, whatever came. */
            g->flip_on = !g->flip_on;
            set_rx_intr(g, g->flip_on);
            g->intr_flips++;
        }
        if (n_rx) {
            last_rx = rte_rdtsc();
            continue;
        }
        if (!intr) {
            if (opt->poll_nap_us) {
                /* A polling guest that leaves its core between looks (a
                 * vCPU that halts): it still wants no kick. */
                struct timespec ts = {
                    (time_t) (opt->poll_nap_us / 1000000),
                    (long) (opt->poll_nap_us % 1000000) * 1000,
                };

                nanosleep(&ts, NULL);
                g->poll_naps++;
            }
            continue;
        }

        /* All queues are empty: sleep on the Rx interrupts, but not past
         * the next thing we have to do. */
        timeout_ms = opt->max_sleep_ms;
        limit_timeout(g, now, end, &timeout_ms);
        limit_timeout(g, now, next_switch, &timeout_ms);
        limit_timeout(g, now, next_stats, &timeout_ms);
        limit_timeout(g, now, next_churn, &timeout_ms);
        if (sending) {
            limit_timeout(g, now, opt->rate ? next_send : now, &timeout_ms);
        } else if (opt->role == ROLE_TX) {
            limit_timeout(g, now, RTE_MAX(drain_start, last_rx) + drain_idle,
                          &timeout_ms);
        } else if (idle && last_rx) {
            limit_timeout(g, now, last_rx + idle, &timeout_ms);
        }
        if (timeout_ms > 0 && intr_sleep(g, timeout_ms)) {
            last_rx = rte_rdtsc();
        } else if (timeout_ms == 0 && sending && opt->rate
                   && next_send > now + 20 * hz / 1000000) {
            /* Less than a millisecond to the next send: epoll cannot
             * sleep that briefly, so yield the CPU with nanosleep rather
             * than spin (an interrupt-mode guest shares its core). */
            uint64_t ns = (next_send - now) * 1000000000 / hz - 10000;
            struct timespec ts = { 0, (long) RTE_MIN(ns, 999999999ULL) };

            nanosleep(&ts, NULL);
        }
    }

    /* Packets still waiting for the kick they are owed: wait for it. */
    late_track(g, 0, true);

    /* End as configured: all queues in use (what a restart flushes from
     * the rx queues is counted), no churn memory held. */
    if (g->active_queues != opt->queues) {
        change_queues(g, opt->queues);
    }
    if (g->churn_buf) {
        mem_churn_step(g);
    }
    return (double) (rte_rdtsc() - start) / hz;
}

/* Report. */

static uint64_t
total_lost(const struct guest *g)
{
    const struct options *opt = &g->opt;
    uint64_t lost = 0;

    if (!g->n_streams) {
        return opt->role == ROLE_TX ? 0 : RTE_MAX(opt->count, opt->expect);
    }
    for (unsigned int i = 0; i < g->n_streams; i++) {
        const struct stream_stats *s = &g->streams[i];
        uint64_t expected = s->highest + 1;

        if (opt->role != ROLE_TX) {
            expected = RTE_MAX(expected, RTE_MAX(opt->count, opt->expect));
        } else if (s->id == opt->stream) {
            expected = RTE_MAX(expected, g->next_seq);
        }
        if (expected > s->unique) {
            lost += expected - s->unique;
        }
    }
    return lost;
}

static void
print_report(const struct guest *g, double duration)
{
    const struct options *opt = &g->opt;
    uint64_t duplicates = 0;
    uint64_t reordered = 0;

    for (unsigned int i = 0; i < g->n_streams; i++) {
        duplicates += g->streams[i].duplicates;
        reordered += g->streams[i].reordered;
    }

    printf("{\"role\":\"%s\",\"mode\":\"%s\",\"ring\":\"%s\",\"queues\":%u,"
           "\"tx_packets\":%"PRIu64",\"tx_dropped\":%"PRIu64","
           "\"rx_packets\":%"PRIu64",\"lost\":%"PRIu64","
           "\"duplicates\":%"PRIu64",\"reordered\":%"PRIu64","
           "\"wakeups\":%"PRIu64",\"late\":%"PRIu64","
           "\"rx_flushed\":%"PRIu64","
           "\"queue_changes\":%"PRIu64",\"mem_churn\":{\"allocs\":%"PRIu64
           ",\"frees\":%"PRIu64",\"failures\":%"PRIu64",\"alloc_events\":%"
           PRIu64",\"free_events\":%"PRIu64"},"
           "\"intr_flips\":%"PRIu64",\"poll_naps\":%"PRIu64","
           "\"stopped_consuming\":%s,\"cycles\":%"PRIu64",",
           role_names[opt->role], mode_names[opt->mode],
           opt->packed ? "packed" : "split", opt->queues,
           g->tx_packets, g->tx_dropped, g->rx_packets, total_lost(g),
           duplicates, reordered, g->wakeups, g->late, g->rx_flushed,
           g->queue_changes, g->churn_allocs, g->churn_frees,
           g->churn_failures, g->mem_events[0], g->mem_events[1],
           g->intr_flips, g->poll_naps,
           g->consuming_stopped ? "true" : "false", g->cycles_done);
    if (g->lat_samples) {
        printf("\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f},",
               latency_percentile(g, 50), latency_percentile(g, 99),
               g->lat_max_ns / 1000.0);
    } else {
        printf("\"latency_us\":null,");
    }
    if (opt->role == ROLE_ECHO) {
        printf("\"echoed\":%"PRIu64",\"echo_dropped\":%"PRIu64",",
               g->echoed, g->echo_dropped);
    }
    printf("\"rx_other\":%"PRIu64",\"duration_s\":%.3f}\n",
           g->rx_foreign + g->untracked, duration);
    fflush(stdout);
}

/* Stops and closes the port.  Closing a virtio-user port also closes the
 * vhost-user connection, so the switch sees the guest go away.  With
 * 'remove' the device is also removed, so that find_port() can probe it
 * again: a new connection (--cycles). */
static void
close_port(struct guest *g, bool remove)
{
    if (g->intr_registered) {
        for (uint16_t q = 0; q < g->active_queues; q++) {
            rte_eth_dev_rx_intr_ctl_q(g->port, q, RTE_EPOLL_PER_THREAD,
                                      RTE_INTR_EVENT_DEL, NULL);
        }
        g->intr_registered = false;
    }
    if (g->port_started) {
        rte_eth_dev_stop(g->port);
        g->port_started = false;
    }
    if (g->port_valid) {
        rte_eth_dev_close(g->port);
        if (remove) {
            rte_eal_hotplug_remove("vdev", VDEV_NAME);
        }
        g->port_valid = false;
    }
    g->link_up = false;
}

/* Leaves the program after its report: stops and closes the device (the
 * switch sees the guest go as a VM's shutdown shows it: the rings stopped,
 * then the connection closed), unless --mem-churn-ms ran, and exits with
 * EXIT_SUCCESS without DPDK's teardown (rte_eal_cleanup(), destructors):
 * the process's exit frees what the EAL holds.  The teardown crashed
 * guests at times after their report (exit 139, DPDK 22.11 and 24.11,
 * beside busy processes): virtio-user leaves alarms and interrupt
 * callbacks that name the device (its delayed disconnect handler) and
 * can run while the EAL frees the memory under them; with
 * --mem-churn-ms, memory event callbacks too, which is why that guest
 * does not even close its device. */
static void __attribute__((noreturn))
leave(struct guest *g)
{
    if (!g->opt.mem_churn_ms) {
        close_port(g, false);
    }
    fflush(NULL);
    _exit(EXIT_SUCCESS);
}

int
main(int argc, char *argv[])
{
    static struct guest guest;
    struct guest *g = &guest;
    char devargs[256];
    char eal_strings[16][512];
    char *eal_argv[16 + 256];
    uint64_t deadline_ns;
    double duration;
    int eal_argc;

    parse_options(argc, argv, &g->opt);
    if (g->opt.n_extra_eal > 256) {
        usage_error("too many EAL arguments");
    }

    g->lat_hist = calloc(LAT_BUCKETS, sizeof *g->lat_hist);
    if (!g->lat_hist) {
        fatal(EXIT_FAILURE, "out of memory");
    }

    deadline_ns = (g->opt.wait_link_s
                   ? mono_ns() + g->opt.wait_link_s * 1000000000 : 0);
    wait_for_socket(&g->opt, deadline_ns);

    build_devargs(&g->opt, devargs, sizeof devargs);
    eal_argc = build_eal_args(&g->opt, devargs, argv[0], eal_argv,
                              RTE_DIM(eal_argv), eal_strings);
    if (g->opt.verbose) {
        fprintf(stderr, "%s: EAL arguments:", PROGRAM_NAME);
        for (int i = 1; i < eal_argc; i++) {
            fprintf(stderr, " %s", eal_argv[i]);
        }
        fputc('\n', stderr);
    }
    if (rte_eal_init(eal_argc, eal_argv) < 0) {
        fatal(EXIT_FAILURE, "cannot initialise DPDK EAL: %s",
              rte_strerror(rte_errno));
    }
    install_signal_handlers();
    g->tsc_hz = rte_get_tsc_hz();

    if (g->opt.mem_churn_ms
        && rte_mem_event_callback_register("ovhg_mem_events",
                                           count_mem_event, g)) {
        fatal(EXIT_FAILURE, "cannot count memory events: %s",
              rte_strerror(rte_errno));
    }
    build_template(g);
    duration = 0;
    for (;;) {
        find_port(g, devargs, deadline_ns);
        setup_port(g);
        wait_link(g, deadline_ns);
        if (g->opt.mode != MODE_POLL) {
            register_rx_intr(g);
        }
        if (!g->cycles_done) {
            wait_start_file(g);
        }

        duration += run(g);
        g->cycles_done++;
        if (g->cycles_done >= g->opt.cycles || stop_signals) {
            break;
        }
        close_port(g, true);
        deadline_ns = (g->opt.wait_link_s
                       ? mono_ns() + g->opt.wait_link_s * 1000000000 : 0);
    }
    print_report(g, duration);
    leave(g);
}
