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

/* nvudp: the UDP sender and receiver of the Linux test guest
 * (tests/linux-guest-image.sh links it statically into the initramfs,
 * tests/linux-guest-init runs it).  Its datagrams carry ovs-vhost-guest's
 * payload (magic "OVHG", stream id, sequence number, low bytes of a
 * timestamp, all big-endian), so the host-side ovs-vhost-guest counts loss,
 * duplicates and reordering of what the guest sends, and this receiver
 * counts those of what ovs-vhost-guest sends.  The test suite also runs it
 * on the host (DIR/nvudp) as the receiver of what the guest sends.
 *
 *   nvudp rx PORT COUNT FIRST_MS IDLE_MS ID [BASE]
 *       Receives on UDP PORT until COUNT distinct sequence numbers of
 *       stream 0 came, or nothing came for FIRST_MS before the first
 *       datagram / IDLE_MS after one.  Sequence numbers count from BASE
 *       (default 0: the sender's first datagram), or from the first one
 *       received with BASE "first" (joining a running stream); earlier
 *       ones count as reordered and out of window.  Prints
 *       "NVREADY id=ID" once bound, then one line of key=value results
 *       (max_gap_ms: the longest time between two datagrams of the
 *       stream, max_gap_seq: the sequence number that ended it).
 *   nvudp tx DST PORT RATE COUNT SIZE
 *       Sends COUNT datagrams to DST:PORT at RATE per second (0: as fast
 *       as possible), each SIZE bytes on the wire without CRC (60..1514),
 *       and prints one line of key=value results.  COUNT 0: until SIGTERM
 *       or SIGINT (either also ends a finite stream early, with the
 *       results).
 *
 * No dependencies beyond libc: it is linked with -static. */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x4f564847u       /* "OVHG", as ovs-vhost-guest. */
#define HDRS 42                 /* Ethernet + IPv4 + UDP headers. */
#define MIN_PAYLOAD 16          /* Magic, stream, sequence number. */

/* Set by SIGTERM or SIGINT: nvudp tx stops sending and reports. */
static volatile sig_atomic_t stop;

static void
stop_handler(int sig)
{
    (void) sig;
    stop = 1;
}

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t
get_be(const unsigned char *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

static void
put_be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = v & 0xff;
        v >>= 8;
    }
}

static unsigned long long
number(const char *s, const char *what)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || !*s || *end) {
        fprintf(stderr, "nvudp: bad %s \"%s\"\n", what, s);
        exit(2);
    }
    return v;
}

static int
do_rx(int argc, char *argv[])
{
    if (argc != 7 && argc != 8) {
        fprintf(stderr,
                "usage: nvudp rx PORT COUNT FIRST_MS IDLE_MS ID [BASE]\n");
        return 2;
    }
    int port = number(argv[2], "port");
    uint64_t count = number(argv[3], "count");
    int first_ms = number(argv[4], "first_ms");
    int idle_ms = number(argv[5], "idle_ms");
    const char *id = argv[6];
    int base_first = argc == 8 && !strcmp(argv[7], "first");
    uint64_t base = argc == 8 && !base_first ? number(argv[7], "base") : 0;

    /* One bit per expected sequence number, with room for strays. */
    uint64_t n_bits = count * 2 + 1024;
    unsigned char *seen = calloc(n_bits / 8 + 1, 1);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    int rcvbuf = 4 << 20;
    struct sockaddr_in sin = { .sin_family = AF_INET,
                               .sin_port = htons(port) };

    if (!seen || fd < 0) {
        perror("nvudp");
        return 1;
    }
    /* As root past net.core.rmem_max (the host's, which a test must not
     * change); else as much of it as allowed. */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf)) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    if (bind(fd, (struct sockaddr *) &sin, sizeof sin)) {
        perror("nvudp: bind");
        return 1;
    }
    printf("NVREADY id=%s\n", id);
    fflush(stdout);

    uint64_t received = 0, unique = 0, dups = 0, reordered = 0, other = 0;
    uint64_t highest = 0, out_of_window = 0;
    uint64_t t_first = 0, t_last = 0, t_ours = 0, max_gap = 0, gap_seq = 0;
    int have_seq = 0;
    unsigned char buf[2048];

    while (unique < count) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int n = poll(&pfd, 1, received || other ? idle_ms : first_ms);

        if (n < 0 && errno == EINTR) {
            continue;
        } else if (n <= 0) {
            break;
        }
        ssize_t len = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (len < 0) {
            continue;
        }
        t_last = now_ns();
        if (len < MIN_PAYLOAD || get_be(buf, 4) != MAGIC
            || get_be(buf + 4, 4) != 0) {
            other++;
            continue;
        }
        if (!received) {
            t_first = t_last;
        }
        uint64_t seq = get_be(buf + 8, 8);
        if (received && t_last - t_ours > max_gap) {
            max_gap = t_last - t_ours;
            gap_seq = seq;
        }
        t_ours = t_last;
        received++;

        if (base_first && !have_seq) {
            base = seq;
        }
        if (seq < base) {
            reordered++;
            out_of_window++;
            continue;
        }
        seq -= base;
        if (have_seq && seq < highest) {
            reordered++;
        }
        if (!have_seq || seq > highest) {
            highest = seq;
            have_seq = 1;
        }
        if (seq >= n_bits) {
            out_of_window++;
        } else if (seen[seq / 8] & (1 << (seq % 8))) {
            dups++;
        } else {
            seen[seq / 8] |= 1 << (seq % 8);
            unique++;
        }
    }

    uint64_t expected = have_seq && highest + 1 > count ? highest + 1 : count;
    printf("received=%llu unique=%llu lost=%llu duplicates=%llu "
           "reordered=%llu other=%llu out_of_window=%llu base=%llu "
           "highest=%lld duration_ms=%llu max_gap_ms=%llu "
           "max_gap_seq=%llu\n",
           (unsigned long long) received, (unsigned long long) unique,
           (unsigned long long) (expected - unique),
           (unsigned long long) dups, (unsigned long long) reordered,
           (unsigned long long) other, (unsigned long long) out_of_window,
           (unsigned long long) base,
           have_seq ? (long long) (highest + base) : -1LL,
           (unsigned long long) ((t_last - t_first) / 1000000),
           (unsigned long long) (max_gap / 1000000),
           (unsigned long long) gap_seq);
    close(fd);
    free(seen);
    return 0;
}

static int
do_tx(int argc, char *argv[])
{
    if (argc != 7) {
        fprintf(stderr, "usage: nvudp tx DST PORT RATE COUNT SIZE\n");
        return 2;
    }
    struct sockaddr_in sin = { .sin_family = AF_INET };
    if (inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1) {
        fprintf(stderr, "nvudp: bad address \"%s\"\n", argv[2]);
        return 2;
    }
    sin.sin_port = htons(number(argv[3], "port"));
    uint64_t rate = number(argv[4], "rate");
    uint64_t count = number(argv[5], "count");
    uint64_t size = number(argv[6], "size");
    if (size < 60 || size > 1514) {
        fprintf(stderr, "nvudp: size must be 60..1514\n");
        return 2;
    }

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *) &sin, sizeof sin)) {
        perror("nvudp");
        return 1;
    }

    /* No SA_RESTART: the signal also cuts the pacing nap short. */
    struct sigaction sa = { .sa_handler = stop_handler };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    size_t payload = size - HDRS;
    int ts_bytes = payload - MIN_PAYLOAD > 8 ? 8 : payload - MIN_PAYLOAD;
    unsigned char buf[1514] = { 0 };
    uint64_t sent = 0, errors = 0;
    uint64_t start = now_ns();

    put_be(buf, MAGIC, 4);
    put_be(buf + 4, 0, 4);
    for (uint64_t seq = 0; (!count || seq < count) && !stop; seq++) {
        if (rate) {
            uint64_t due = start + seq * 1000000000ull / rate;
            uint64_t t = now_ns();
            if (due > t) {
                struct timespec ts = { (due - t) / 1000000000u,
                                       (due - t) % 1000000000u };
                nanosleep(&ts, NULL);
            }
            if (stop) {
                break;
            }
        }
        put_be(buf + 8, seq, 8);
        put_be(buf + 16, now_ns(), ts_bytes);
        ssize_t n;
        do {
            n = send(fd, buf, payload, 0);
        } while (n < 0 && errno == EINTR && !stop);
        if (n == (ssize_t) payload) {
            sent++;
        } else if (n < 0 && errno == EINTR) {
            break;              /* Stopped while the socket was full. */
        } else {
            errors++;
        }
    }
    printf("sent=%llu errors=%llu duration_ms=%llu\n",
           (unsigned long long) sent, (unsigned long long) errors,
           (unsigned long long) ((now_ns() - start) / 1000000));
    close(fd);
    return 0;
}

int
main(int argc, char *argv[])
{
    if (argc > 1 && !strcmp(argv[1], "rx")) {
        return do_rx(argc, argv);
    } else if (argc > 1 && !strcmp(argv[1], "tx")) {
        return do_tx(argc, argv);
    }
    fprintf(stderr, "usage: nvudp rx|tx ...\n");
    return 2;
}
