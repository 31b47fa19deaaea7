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

/* The ring question (see vhost-ring.h): reads the driver's notification
 * suppression fields of one virtqueue and says whether the guest wants a
 * used buffer notification.  Pure: no DPDK, no OVS, no state. */

#include "vhost-ring.h"

/* The guest writes these fields concurrently.  Each one is read exactly
 * once, with a single relaxed atomic 16-bit load, so that the compiler can
 * neither tear nor repeat the read.  No barrier here: as a staging hint
 * taken before an enqueue the answer is stale as soon as it is read either
 * way.  A caller that uses it to skip a kick after publishing used entries
 * must first issue a full fence (store-load), as the library does before
 * its own notification check, or a wake-up can be lost.
 *
 * Virtio 1.x rings are little-endian, and so is every host this builds for
 * (x86-64, aarch64 LE), so the u16 is used as read.  A big-endian host would
 * need le16toh() here. */
static inline uint16_t
vring_read_u16(const uint16_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Virtio 1.1, 2.6.7: without VIRTIO_RING_F_EVENT_IDX the driver wants a
 * notification unless avail->flags has VRING_AVAIL_F_NO_INTERRUPT. */
static inline bool
split_flag_wants(const struct vring_avail *avail)
{
    return !(vring_read_u16(&avail->flags) & VRING_AVAIL_F_NO_INTERRUPT);
}

/* Virtio 1.1, 2.6.7: without VIRTIO_RING_F_EVENT_IDX the driver
 * suppresses notifications with VRING_AVAIL_F_NO_INTERRUPT in avail->flags.
 * With it, the flag is ignored and the device notifies when the used index
 * passes used_event, the le16 right after avail->ring[size]. */
bool
vhost_split_wants_interrupt(const struct vring_avail *avail,
                            const struct vring_used *used,
                            uint16_t size, bool event_idx)
{
    if (!event_idx) {
        return split_flag_wants(avail);
    } else {
        uint16_t used_event = vring_read_u16(&avail->ring[size]);
        uint16_t used_idx = vring_read_u16(&used->idx);

        /* Would placing the next 'size' used entries pass used_event? */
        return vhost_ring_need_event(used_event, (uint16_t) (used_idx + size),
                                     used_idx);
    }
}

/* Virtio 1.1, 2.7.10 and 2.7.14: the driver event suppression structure
 * holds flags (bits 0..1: ENABLE, DISABLE, DESC; bits 2..15 reserved) and,
 * for DESC, off_wrap: the descriptor ring offset (bits 0..14) and wrap
 * counter (bit 15) of the descriptor whose use the driver wants to be
 * notified of. */
bool
vhost_packed_wants_interrupt(
    const struct vring_packed_desc_event *driver_event,
    uint16_t size, uint16_t used_idx, bool used_wrap)
{
    uint16_t flags = vring_read_u16(&driver_event->flags) & 0x3;
    uint16_t off_wrap, event_off;
    bool event_wrap;
    uint32_t event_pos, used_pos, distance;

    if (flags == VRING_PACKED_EVENT_FLAG_DISABLE) {
        return false;
    } else if (flags != VRING_PACKED_EVENT_FLAG_DESC) {
        /* ENABLE, or reserved value 3: never lose a wake-up. */
        return true;
    }

    off_wrap = vring_read_u16(&driver_event->off_wrap);
    event_off = off_wrap & ~(1u << VRING_PACKED_EVENT_F_WRAP_CTR);
    event_wrap = off_wrap >> VRING_PACKED_EVENT_F_WRAP_CTR;
    if (event_off >= size || used_idx >= size) {
        /* Outside the ring: a driver or caller bug; err on the safe side. */
        return true;
    }

    /* A position and its wrap counter name a point on a cycle of 2 * size
     * steps.  The driver wants a notification if its event point is one of
     * the next 'size' positions the device will write. */
    event_pos = event_off + (event_wrap ? size : 0);
    used_pos = used_idx + (used_wrap ? size : 0);
    distance = (event_pos + 2u * size - used_pos) % (2u * size);
    return distance < size;
}

bool
vhost_split_kick_wanted(const struct vring_avail *avail,
                        const struct vring_used *used,
                        uint16_t size, bool event_idx, uint16_t used_at_kick)
{
    if (!event_idx) {
        return split_flag_wants(avail);
    } else {
        uint16_t used_event = vring_read_u16(&avail->ring[size]);
        uint16_t used_idx = vring_read_u16(&used->idx);

        return vhost_ring_need_event(used_event, used_idx, used_at_kick);
    }
}

bool
vhost_packed_kick_wanted(const struct vring_packed_desc_event *driver_event)
{
    uint16_t flags = vring_read_u16(&driver_event->flags) & 0x3;

    return flags != VRING_PACKED_EVENT_FLAG_DISABLE;
}
