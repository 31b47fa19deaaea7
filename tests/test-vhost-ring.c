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

/* Unit test of the ring question (lib/vhost-ring.c).  Builds split and
 * packed rings in plain memory and prints one line per case, for exact
 * comparison by tests/unit.at.  Usage: test-vhost-ring SCENARIO. */

#include "vhost-ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A split ring's driver and device areas: avail with 'size' + 1 entries
 * (the last is used_event) plus one guard entry, so that a read past
 * used_event shows up as a wrong answer. */
struct split_ring {
    uint16_t size;
    struct vring_avail *avail;
    struct vring_used *used;
};

#define GUARD 0xdead

static void
split_init(struct split_ring *r, uint16_t size)
{
    size_t avail_size = sizeof *r->avail + (size + 2) * sizeof(uint16_t);
    size_t used_size = sizeof *r->used + size * sizeof(r->used->ring[0]);

    r->size = size;
    r->avail = calloc(1, avail_size);
    r->used = calloc(1, used_size);
    if (!r->avail || !r->used) {
        abort();
    }
    for (int i = 0; i < size; i++) {
        r->avail->ring[i] = GUARD;
    }
    r->avail->ring[size + 1] = GUARD;
}

static void
split_destroy(struct split_ring *r)
{
    free(r->avail);
    free(r->used);
}

static void
split_check_no_event_idx(struct split_ring *r, uint16_t flags)
{
    r->avail->flags = flags;
    printf("split no-event-idx flags=%u: wants=%d\n", flags,
           vhost_split_wants_interrupt(r->avail, r->used, r->size, false));
}

static void
split_check_event_idx(struct split_ring *r, uint16_t flags,
                      uint16_t used_idx, uint16_t used_event)
{
    r->avail->flags = flags;
    r->used->idx = used_idx;
    r->avail->ring[r->size] = used_event;
    printf("split event-idx size=%u flags=%u used_idx=%u used_event=%u: "
           "wants=%d\n", r->size, flags, used_idx, used_event,
           vhost_split_wants_interrupt(r->avail, r->used, r->size, true));
}

/* Without EVENT_IDX only VRING_AVAIL_F_NO_INTERRUPT counts; used_event and
 * the used index are ignored. */
static void
test_split_no_event_idx(void)
{
    struct split_ring r;

    split_init(&r, 256);
    r.used->idx = 100;
    r.avail->ring[r.size] = 99;   /* "Behind": must not matter. */
    split_check_no_event_idx(&r, 0);
    split_check_no_event_idx(&r, VRING_AVAIL_F_NO_INTERRUPT);
    split_check_no_event_idx(&r, 2);
    split_check_no_event_idx(&r, 0xfffe);
    split_check_no_event_idx(&r, 0xffff);
    r.avail->ring[r.size] = 100;  /* "At": must not matter either. */
    split_check_no_event_idx(&r, VRING_AVAIL_F_NO_INTERRUPT);
    split_check_no_event_idx(&r, 0);
    split_destroy(&r);
}

/* With EVENT_IDX: wants iff used_event is in [used_idx, used_idx + size). */
static void
test_split_event_idx(void)
{
    struct split_ring r;

    split_init(&r, 256);
    split_check_event_idx(&r, 0, 100, 100);
    split_check_event_idx(&r, 0, 100, 101);
    split_check_event_idx(&r, 0, 100, 355);
    split_check_event_idx(&r, 0, 100, 356);
    split_check_event_idx(&r, 0, 100, 99);
    split_check_event_idx(&r, 0, 100, 0);
    split_check_event_idx(&r, 0, 100, 32868);
    split_destroy(&r);
}

/* The same window across the 16-bit wrap of the indexes, both ways. */
static void
test_split_event_idx_wrap(void)
{
    struct split_ring r;

    split_init(&r, 256);
    /* Used index just before the wrap, used_event ahead across it. */
    split_check_event_idx(&r, 0, 65535, 65535);
    split_check_event_idx(&r, 0, 65535, 0);
    split_check_event_idx(&r, 0, 65535, 254);
    split_check_event_idx(&r, 0, 65535, 255);
    split_check_event_idx(&r, 0, 65535, 65534);
    split_check_event_idx(&r, 0, 65500, 100);
    split_check_event_idx(&r, 0, 65500, 200);
    /* Used index just after the wrap, used_event behind across it. */
    split_check_event_idx(&r, 0, 0, 65535);
    split_check_event_idx(&r, 0, 0, 0);
    split_check_event_idx(&r, 0, 10, 65530);
    split_check_event_idx(&r, 0, 10, 9);
    split_check_event_idx(&r, 0, 10, 265);
    split_check_event_idx(&r, 0, 10, 266);
    split_destroy(&r);
}

/* With EVENT_IDX, VRING_AVAIL_F_NO_INTERRUPT is ignored in both
 * directions. */
static void
test_split_event_idx_flag_ignored(void)
{
    struct split_ring r;

    split_init(&r, 256);
    split_check_event_idx(&r, VRING_AVAIL_F_NO_INTERRUPT, 100, 100);
    split_check_event_idx(&r, VRING_AVAIL_F_NO_INTERRUPT, 100, 99);
    split_check_event_idx(&r, 0, 100, 99);
    split_check_event_idx(&r, 0, 100, 100);
    split_destroy(&r);
}

/* The smallest and the largest split ring. */
static void
test_split_sizes(void)
{
    struct split_ring r;

    split_init(&r, 1);
    split_check_event_idx(&r, 0, 7, 7);
    split_check_event_idx(&r, 0, 7, 8);
    split_check_event_idx(&r, 0, 7, 6);
    split_check_event_idx(&r, 0, 65535, 65535);
    split_check_event_idx(&r, 0, 65535, 0);
    split_destroy(&r);

    split_init(&r, 32768);
    split_check_event_idx(&r, 0, 0, 32767);
    split_check_event_idx(&r, 0, 0, 32768);
    split_check_event_idx(&r, 0, 0, 65535);
    split_check_event_idx(&r, 0, 40000, 7231);
    split_check_event_idx(&r, 0, 40000, 7232);
    split_check_event_idx(&r, 0, 40000, 39999);
    split_destroy(&r);
}

static const char *
packed_flags_name(uint16_t flags)
{
    switch (flags & 0x3) {
    case VRING_PACKED_EVENT_FLAG_ENABLE:
        return "enable";
    case VRING_PACKED_EVENT_FLAG_DISABLE:
        return "disable";
    case VRING_PACKED_EVENT_FLAG_DESC:
        return "desc";
    default:
        return "reserved";
    }
}

static void
packed_check(uint16_t flags, uint16_t off, int wrap,
             uint16_t size, uint16_t used_idx, int used_wrap)
{
    struct vring_packed_desc_event *event = calloc(1, sizeof *event);

    if (!event) {
        abort();
    }
    event->flags = flags;
    event->off_wrap = off | (wrap << VRING_PACKED_EVENT_F_WRAP_CTR);
    printf("packed flags=%s(%u) off=%u wrap=%d size=%u used_idx=%u "
           "used_wrap=%d: wants=%d\n", packed_flags_name(flags), flags,
           off, wrap, size, used_idx, used_wrap,
           vhost_packed_wants_interrupt(event, size, used_idx, used_wrap));
    free(event);
}

/* ENABLE and DISABLE do not look at off_wrap; reserved 3 is ENABLE; the
 * reserved bits 2..15 are ignored. */
static void
test_packed_flags(void)
{
    packed_check(VRING_PACKED_EVENT_FLAG_ENABLE, 0, 0, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_ENABLE, 9, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DISABLE, 10, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DISABLE, 0, 0, 256, 10, 1);
    packed_check(3, 9, 1, 256, 10, 1);
    packed_check(3, 10, 1, 256, 10, 1);
    packed_check(0x8001, 10, 1, 256, 10, 1);
    packed_check(0xfffc, 9, 1, 256, 10, 1);
    packed_check(0x0006, 9, 1, 256, 10, 1);
    packed_check(0x0006, 10, 1, 256, 10, 1);
}

/* DESC: wants iff off_wrap names one of the next 'size' positions the
 * device writes, counting the wrap counter. */
static void
test_packed_desc(void)
{
    /* Same wrap counter. */
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 10, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 11, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 255, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 9, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0, 1, 256, 10, 1);
    /* Wrap counter mismatch: ahead past the end of the ring, or behind. */
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0, 0, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 9, 0, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 10, 0, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 20, 0, 256, 10, 1);
    /* The same with the device's wrap counter clear. */
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 250, 0, 256, 250, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 251, 0, 256, 250, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 249, 0, 256, 250, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 3, 1, 256, 250, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 249, 1, 256, 250, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 250, 1, 256, 250, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 3, 0, 256, 250, 0);
}

/* Sizes that are not a power of 2, the extremes, and an offset outside the
 * ring (a driver bug: wants, to be safe). */
static void
test_packed_sizes(void)
{
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0, 0, 100, 99, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 99, 0, 100, 99, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 98, 1, 100, 99, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0, 0, 1, 0, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0, 1, 1, 0, 0);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 32767, 0, 32768, 0, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 32767, 1, 32768, 0, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0, 0, 32768, 0, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 256, 1, 256, 10, 1);
    packed_check(VRING_PACKED_EVENT_FLAG_DESC, 0x7fff, 0, 256, 10, 1);
}

/* vhost_ring_need_event(event_idx, new_idx, old_idx). */
static void
test_need_event(void)
{
    static const uint16_t cases[][3] = {
        /* event, new, old */
        { 0, 1, 0 },
        { 0, 0, 0 },
        { 1, 1, 0 },
        { 1, 2, 0 },
        { 5, 5, 0 },
        { 5, 6, 0 },
        { 6, 6, 0 },
        { 0, 6, 1 },
        { 65535, 0, 65535 },
        { 65535, 1, 65534 },
        { 0, 1, 65535 },
        { 1, 1, 65535 },
        { 2, 1, 65535 },
        { 65534, 1, 65535 },
        { 32767, 32768, 0 },
        { 32768, 32768, 0 },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("need_event event=%u new=%u old=%u: %d\n",
               cases[i][0], cases[i][1], cases[i][2],
               vhost_ring_need_event(cases[i][0], cases[i][1], cases[i][2]));
    }
}

static void
kick_check(struct split_ring *r, bool event_idx, uint16_t flags,
           uint16_t used_at_kick, uint16_t used_idx, uint16_t used_event)
{
    r->avail->flags = flags;
    r->used->idx = used_idx;
    r->avail->ring[r->size] = used_event;
    printf("split kick event-idx=%d flags=%u used_at_kick=%u used_idx=%u "
           "used_event=%u: wanted=%d\n", event_idx, flags, used_at_kick,
           used_idx, used_event,
           vhost_split_kick_wanted(r->avail, r->used, r->size, event_idx,
                                   used_at_kick));
}

/* A held kick, split ring: without EVENT_IDX only the flag counts; with
 * it, used_event must lie in the entries placed since the last kick
 * (used_at_kick, used_idx], also across the 16-bit wrap. */
static void
test_split_kick_wanted(void)
{
    struct split_ring r;

    split_init(&r, 256);
    kick_check(&r, false, 0, 100, 110, 0);
    kick_check(&r, false, VRING_AVAIL_F_NO_INTERRUPT, 100, 110, 105);
    /* EVENT_IDX: the driver moved used_event into the new entries. */
    kick_check(&r, true, 0, 100, 110, 100);
    kick_check(&r, true, 0, 100, 110, 105);
    kick_check(&r, true, 0, 100, 110, 109);
    /* ...to the last kick's point or before: it saw them then. */
    kick_check(&r, true, 0, 100, 110, 99);
    /* ...past the new entries: polling, it finds them itself. */
    kick_check(&r, true, 0, 100, 110, 110);
    kick_check(&r, true, 0, 100, 110, 100 + 256);
    /* The flag is ignored with EVENT_IDX. */
    kick_check(&r, true, VRING_AVAIL_F_NO_INTERRUPT, 100, 110, 104);
    /* Across the wrap of the 16-bit indexes. */
    kick_check(&r, true, 0, 65530, 4, 65535);
    kick_check(&r, true, 0, 65530, 4, 3);
    kick_check(&r, true, 0, 65530, 4, 4);
    kick_check(&r, true, 0, 65530, 4, 65529);
    /* Nothing placed since the last kick: nothing to tell. */
    kick_check(&r, true, 0, 100, 100, 100);
    split_destroy(&r);
}

/* A held kick, packed ring: wanted unless DISABLE; DESC and reserved 3 are
 * answered "wanted". */
static void
test_packed_kick_wanted(void)
{
    static const uint16_t flags[] = {
        VRING_PACKED_EVENT_FLAG_ENABLE, VRING_PACKED_EVENT_FLAG_DISABLE,
        VRING_PACKED_EVENT_FLAG_DESC, 3, 0xfffd,
    };

    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        struct vring_packed_desc_event ev = { .off_wrap = 0,
                                              .flags = flags[i] };

        printf("packed kick flags=%u: wanted=%d\n", flags[i],
               vhost_packed_kick_wanted(&ev));
    }
}

/* Moderation's share of a drop: after a held kick or a staged flush went
 * out, drops count as moderation's until the guest's avail->idx moves
 * (across the 16-bit wrap too); an unreadable index counts them without
 * ending the wait; a wait begun without an index takes the first one read
 * at a drop; a packed ring (no index) tracks nothing; forget ends a
 * wait. */
static void
answer_check(struct vhost_ring_answer *a, bool known, uint16_t idx)
{
    bool out = vhost_ring_answer_outstanding(a, known, idx);

    printf("drop known=%d avail=%u: moderation's=%d waiting=%d\n",
           known, idx, out, a->waiting);
}

static void
test_answer(void)
{
    struct vhost_ring_answer a = { .waiting = false };

    answer_check(&a, true, 7);          /* Nothing went out yet. */
    vhost_ring_answer_wait(&a, true, true, 100);
    printf("wait avail=100\n");
    answer_check(&a, true, 100);
    answer_check(&a, false, 0);
    answer_check(&a, true, 100);
    answer_check(&a, true, 101);        /* Answered: the wait ends. */
    answer_check(&a, true, 100);
    vhost_ring_answer_wait(&a, true, true, 65535);
    printf("wait avail=65535\n");
    answer_check(&a, true, 65535);
    answer_check(&a, true, 0);          /* Moved across the wrap. */
    vhost_ring_answer_wait(&a, true, false, 0);
    printf("wait, index unreadable\n");
    answer_check(&a, false, 0);
    answer_check(&a, true, 40);         /* 40 stands for the wait's. */
    answer_check(&a, true, 40);
    answer_check(&a, true, 41);
    vhost_ring_answer_wait(&a, true, true, 5);
    printf("wait avail=5\n");
    vhost_ring_answer_wait(&a, false, false, 0);
    printf("wait untracked (packed)\n");
    answer_check(&a, true, 5);
    answer_check(&a, false, 0);
    vhost_ring_answer_wait(&a, true, true, 9);
    printf("wait avail=9, then forget\n");
    vhost_ring_answer_forget(&a);
    answer_check(&a, true, 9);
}

static const struct {
    const char *name;
    void (*run)(void);
} scenarios[] = {
    { "split-no-event-idx", test_split_no_event_idx },
    { "split-event-idx", test_split_event_idx },
    { "split-event-idx-wrap", test_split_event_idx_wrap },
    { "split-event-idx-flag-ignored", test_split_event_idx_flag_ignored },
    { "split-sizes", test_split_sizes },
    { "packed-flags", test_packed_flags },
    { "packed-desc", test_packed_desc },
    { "packed-sizes", test_packed_sizes },
    { "need-event", test_need_event },
    { "split-kick-wanted", test_split_kick_wanted },
    { "packed-kick-wanted", test_packed_kick_wanted },
    { "answer", test_answer },
};

int
main(int argc, char *argv[])
{
    size_t n = sizeof scenarios / sizeof scenarios[0];

    if (argc == 2) {
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(argv[1], scenarios[i].name)) {
                scenarios[i].run();
                return 0;
            }
        }
    }

    fprintf(stderr, "usage: %s SCENARIO\nscenarios:", argv[0]);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, " %s", scenarios[i].name);
    }
    fprintf(stderr, "\n");
    return 2;
}
