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

/* The datapath of the netdev-vhost class: netdev_vhost_send() and
 * netdev_vhost_rxq_recv(), run by PMD threads, with the batch preparation
 * (offload fields, copies into mbufs) and the port's checks.  A prepared
 * burst goes to the transmit queue unit (lib/netdev-vhost-txq.h), which
 * asks the ring, stages, sends and kicks. */

#include <config.h>

#include "netdev-vhost-private.h"
#include "netdev-vhost-guard.h"
#include "netdev-vhost-mempool.h"
#include "netdev-vhost-qos.h"

#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include "dp-packet.h"
#include "netdev-provider.h"
#include "openvswitch/vlog.h"
#include "ovs-thread.h"
#include "packets.h"
#include "userspace-tso.h"
#include "util.h"

#define this_module (*VLM_netdev_vhost)

/* Tx batches. */

/* Puts 'packet' back into 'batch' at the refill position 'idx' of
 * DP_PACKET_BATCH_REFILL_FOR_EACH: OVS 4.0's batches grow
 * (dp_packet_batch_add()); earlier ones have dp_packet_batch_refill(). */
#if NETDEV_VHOST_DYNAMIC_BATCHES
#define BATCH_REFILL(BATCH, PACKET, IDX) dp_packet_batch_add(BATCH, PACKET)
#else
#define BATCH_REFILL(BATCH, PACKET, IDX) \
    dp_packet_batch_refill(BATCH, PACKET, IDX)
#endif

#if NETDEV_VHOST_PACKET_OFFLOADS
/* Fills in the mbuf fields that rte_vhost needs to pass checksum and
 * segmentation requests to the guest in the virtio-net header (virtio 1.1
 * section 5.1.6.2), in the offload model of OVS 4.0, where a packet's
 * requests are its own state, not mbuf flags: a partial IP or L4 checksum
 * (dp_packet_ip_checksum_partial() and the others, outer and inner) and a
 * TSO segment size (dp_packet_get_tso_segsz(), 0 for none).  The rules
 * are those of stock OVS 4.0's netdev_dpdk_prep_hwol_packet() in
 * lib/netdev-dpdk.c:
 *
 *   - A packet that already carries tx offload flags in its mbuf is
 *     dropped (OVS 4.0 never sets them before this point).
 *   - No request: nothing to do.
 *   - A tunnelled packet (GENEVE, VXLAN, GRE) with inner requests: the
 *     lengths and flags describe the inner headers.  Without outer
 *     requests l2_len spans the outer headers and the tunnel up to the
 *     inner L3 header and no outer field is set: the vhost library puts
 *     l2_len + l3_len into the virtio-net header's csum_start (DPDK 25.11
 *     virtio_enqueue_offload()), so the guest checksums the inner L4
 *     header there (stock 4.0 sets the outer lengths here too, which
 *     moves csum_start off the inner header for a vhost port; this is the
 *     rule of our OVS 3.5 model).  With outer requests, outer_l2_len and
 *     outer_l3_len describe the outer headers and l2_len starts at the
 *     outer L4 header, as stock.  Without inner requests the outer
 *     requests are the packet's own, as for a plain packet.
 *   - TSO: l4_len from the TCP header; a packet whose headers and segment
 *     exceed the port's largest frame is dropped; on IPv4 the IP checksum
 *     is requested too (DPDK's rule for TSO).
 *
 * PMD threads.  Returns false for a packet to drop (counted as
 * tx_invalid_hwol_drops by the caller). */
static bool
prepare_offload(const struct netdev_vhost *dev, struct rte_mbuf *m)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);
    struct dp_packet *pkt = CONTAINER_OF(m, struct dp_packet, mbuf);
    uint64_t unexpected = m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK;
    bool l3_csum, l4_csum, tcp, udp, sctp;
    const struct ip_header *ip;
    char *l2, *l3, *l4;

    if (OVS_UNLIKELY(unexpected)) {
        VLOG_WARN_RL(&rl, "%s: unexpected tx offload flags %#"PRIx64,
                     netdev_get_name(&dev->up), unexpected);
        return false;
    }
    if (!dp_packet_ip_checksum_partial(pkt)
        && !dp_packet_inner_ip_checksum_partial(pkt)
        && !dp_packet_l4_checksum_partial(pkt)
        && !dp_packet_inner_l4_checksum_partial(pkt)
        && !m->tso_segsz) {
        return true;
    }

    m->outer_l2_len = 0;
    m->outer_l3_len = 0;
    if (dp_packet_tunnel(pkt)
        && (dp_packet_inner_ip_checksum_partial(pkt)
            || dp_packet_inner_l4_checksum_partial(pkt) || m->tso_segsz)) {
        char *outer_l2 = dp_packet_eth(pkt), *outer_l3 = dp_packet_l3(pkt);
        char *outer_l4 = dp_packet_l4(pkt);

        if (OVS_UNLIKELY(!outer_l2 || !outer_l3 || !outer_l4)) {
            goto no_headers;
        }
        l2 = outer_l2;
        if (dp_packet_ip_checksum_partial(pkt)
            || dp_packet_l4_checksum_partial(pkt)) {
            m->outer_l2_len = outer_l3 - outer_l2;
            m->outer_l3_len = outer_l4 - outer_l3;
            m->ol_flags |= (dp_packet_tunnel_geneve(pkt)
                            ? RTE_MBUF_F_TX_TUNNEL_GENEVE
                            : dp_packet_tunnel_vxlan(pkt)
                            ? RTE_MBUF_F_TX_TUNNEL_VXLAN
                            : RTE_MBUF_F_TX_TUNNEL_GRE);
            if (dp_packet_ip_checksum_partial(pkt)) {
                m->ol_flags |= RTE_MBUF_F_TX_OUTER_IP_CKSUM;
            }
            if (dp_packet_l4_checksum_partial(pkt)) {
                m->ol_flags |= RTE_MBUF_F_TX_OUTER_UDP_CKSUM;
            }
            ip = ALIGNED_CAST(const struct ip_header *, outer_l3);
            m->ol_flags |= (IP_VER(ip->ip_ihl_ver) == 4
                            ? RTE_MBUF_F_TX_OUTER_IPV4
                            : RTE_MBUF_F_TX_OUTER_IPV6);
            l2 = outer_l4;
        }
        l3 = dp_packet_inner_l3(pkt);
        l4 = dp_packet_inner_l4(pkt);
        l3_csum = dp_packet_inner_ip_checksum_partial(pkt);
        l4_csum = dp_packet_inner_l4_checksum_partial(pkt);
        tcp = dp_packet_inner_l4_proto_tcp(pkt);
        udp = dp_packet_inner_l4_proto_udp(pkt);
        sctp = dp_packet_inner_l4_proto_sctp(pkt);
    } else {
        l2 = dp_packet_eth(pkt);
        l3 = dp_packet_l3(pkt);
        l4 = dp_packet_l4(pkt);
        l3_csum = dp_packet_ip_checksum_partial(pkt);
        l4_csum = dp_packet_l4_checksum_partial(pkt);
        tcp = dp_packet_l4_proto_tcp(pkt);
        udp = dp_packet_l4_proto_udp(pkt);
        sctp = dp_packet_l4_proto_sctp(pkt);
    }
    if (OVS_UNLIKELY(!l2 || !l3 || !l4)) {
        goto no_headers;
    }

    ip = ALIGNED_CAST(const struct ip_header *, l3);
    m->ol_flags |= (IP_VER(ip->ip_ihl_ver) == 4
                    ? RTE_MBUF_F_TX_IPV4 : RTE_MBUF_F_TX_IPV6);
    if (l3_csum) {
        m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
    }
    if (l4_csum) {
        if (tcp) {
            m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
        } else if (udp) {
            m->ol_flags |= RTE_MBUF_F_TX_UDP_CKSUM;
        } else if (sctp) {
            m->ol_flags |= RTE_MBUF_F_TX_SCTP_CKSUM;
        } else {
            VLOG_WARN_RL(&rl, "%s: L4 checksum requested for a packet that "
                         "is neither TCP, UDP nor SCTP",
                         netdev_get_name(&dev->up));
            return false;
        }
    }
    m->l2_len = l3 - l2;
    m->l3_len = l4 - l3;

    if (m->tso_segsz) {
        const struct tcp_header *th = ALIGNED_CAST(const struct tcp_header *,
                                                    l4);
        uint32_t max_len = MTU_TO_FRAME_LEN(dev->mtu);
        uint32_t hdr_len;

        m->l4_len = TCP_OFFSET(th->tcp_ctl) * 4;
        hdr_len = m->l2_len + m->l3_len + m->l4_len + m->outer_l2_len
                  + m->outer_l3_len;
        if (OVS_UNLIKELY(hdr_len + m->tso_segsz > max_len)) {
            VLOG_WARN_RL(&rl, "%s: oversized TSO packet: headers %"PRIu32", "
                         "segment %"PRIu16", largest frame %"PRIu32,
                         netdev_get_name(&dev->up), hdr_len, m->tso_segsz,
                         max_len);
            return false;
        }
        m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
        if (IP_VER(ip->ip_ihl_ver) == 4) {
            m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
        }
    }
    return true;

no_headers:
    VLOG_WARN_RL(&rl, "%s: offload requested for a packet without L2, L3 "
                 "or L4 header", netdev_get_name(&dev->up));
    return false;
}
#elif NETDEV_VHOST_GUEST_OFFLOADS
/* The TSO segment size of 'm', a TCP packet whose headers before the TCP
 * payload are 'l3_len' + 'l4_len' bytes (and 'tunnel_len' more of the
 * outer headers and the tunnel for a tunnelled packet): the smaller of the
 * packet's own segment size ('m->tso_segsz', the guest's or the tap's
 * gso_size from the receive side) and what the port's MTU allows, as stock
 * OVS 3.4+ (netdev_dpdk_prep_hwol_packet()).  A packet without a segment
 * size of its own (0) gets the MTU's: stock would pass 0 on, which the
 * guest cannot segment by. */
static uint16_t
tso_segsz(const struct netdev_vhost *dev, const struct rte_mbuf *m,
          int tunnel_len)
{
    int link = dev->mtu - m->l3_len - m->l4_len - tunnel_len;

#if NETDEV_VHOST_TSO_SEGSZ_HINT
    if (m->tso_segsz && m->tso_segsz < link) {
        return m->tso_segsz;
    }
#endif
    return link > 0 ? link : 0;
}

/* Fills in the header lengths and flags that rte_vhost needs to pass
 * checksum and segmentation requests to the guest in the virtio-net header
 * (virtio 1.1 section 5.1.6.2: csum_start = l2_len + l3_len, gso_size =
 * tso_segsz), in the offload model of stock OVS 3.5
 * (netdev_dpdk_prep_hwol_packet() in lib/netdev-dpdk.c), which runs for
 * every packet, not only with userspace TSO: OVS 3.2+ offloads checksums
 * by default.
 *
 *   - No request: the IPv4/IPv6 and tunnel marks are cleared; a packet
 *     with other offload flags is dropped.
 *   - A tunnelled packet (VXLAN, GENEVE, GRE; other tunnel types are
 *     dropped) with inner requests: the lengths describe the inner
 *     headers (l2_len spans the outer headers and the tunnel up to the
 *     inner L3 header, or, with outer requests, from the outer L4 header,
 *     outer_l2_len and outer_l3_len describing the outer ones).  Without
 *     inner requests the outer requests become plain ones.
 *   - TSO: l4_len from the TCP header, tso_segsz from tso_segsz(); a
 *     packet whose headers and segment exceed the largest frame is
 *     dropped.
 *   - An L4 checksum request on IPv4 also asks for the IPv4 checksum.
 *
 * csum_start and csum_offset of the dp_packet (OVS 3.5's partial checksum
 * from a tap's virtio-net header) travel with the packet's fields in
 * copy_to_mbuf(); the vhost library derives the guest's csum_start from
 * the lengths set here.  PMD threads.  Returns false for a packet to drop
 * (counted as tx_invalid_hwol_drops by the caller). */
static bool
prepare_offload(const struct netdev_vhost *dev, struct rte_mbuf *m)
{
    static struct vlog_rate_limit rl = VLOG_RATE_LIMIT_INIT(5, 5);
    struct dp_packet *pkt = CONTAINER_OF(m, struct dp_packet, mbuf);
    const uint64_t inner_req = RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK
                               | RTE_MBUF_F_TX_TCP_SEG;
    const uint64_t outer_req = RTE_MBUF_F_TX_OUTER_IP_CKSUM
                               | RTE_MBUF_F_TX_OUTER_UDP_CKSUM;
    const uint64_t inner_marks = RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6;
    const uint64_t outer_marks = RTE_MBUF_F_TX_OUTER_IPV4
                                 | RTE_MBUF_F_TX_OUTER_IPV6
                                 | RTE_MBUF_F_TX_TUNNEL_MASK;
    uint64_t tunnel = m->ol_flags & RTE_MBUF_F_TX_TUNNEL_MASK;
    char *l2, *l3, *l4;

    if (!(m->ol_flags & (inner_req | outer_req))) {
        m->ol_flags &= ~(inner_marks | outer_marks);
        if (OVS_UNLIKELY(m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK)) {
            VLOG_WARN_RL(&rl, "%s: unexpected tx offload flags %#"PRIx64,
                         netdev_get_name(&dev->up),
                         (uint64_t) (m->ol_flags
                                     & RTE_MBUF_F_TX_OFFLOAD_MASK));
            return false;
        }
        return true;
    }
    if (OVS_UNLIKELY(tunnel && tunnel != RTE_MBUF_F_TX_TUNNEL_VXLAN
                     && tunnel != RTE_MBUF_F_TX_TUNNEL_GENEVE
                     && tunnel != RTE_MBUF_F_TX_TUNNEL_GRE)) {
        VLOG_WARN_RL(&rl, "%s: unexpected tunnel type %#"PRIx64,
                     netdev_get_name(&dev->up), tunnel);
        return false;
    }

    m->outer_l2_len = 0;
    m->outer_l3_len = 0;
    if (tunnel && m->ol_flags & inner_req) {
        l2 = dp_packet_eth(pkt);
        if (m->ol_flags & outer_req) {
            char *outer_l3 = dp_packet_l3(pkt), *outer_l4 = dp_packet_l4(pkt);

            if (!l2 || !outer_l3 || !outer_l4) {
                goto no_headers;
            }
            m->outer_l2_len = outer_l3 - l2;
            m->outer_l3_len = outer_l4 - outer_l3;
            l2 = outer_l4;
        } else {
            m->ol_flags &= ~outer_marks;
        }
        l3 = dp_packet_inner_l3(pkt);
        l4 = dp_packet_inner_l4(pkt);
    } else {
        if (tunnel) {
            /* Only outer requests: they are the packet's own. */
            uint64_t fl = m->ol_flags & ~inner_marks;

            if (fl & RTE_MBUF_F_TX_OUTER_IP_CKSUM) {
                fl |= RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_IPV4;
            }
            if (fl & RTE_MBUF_F_TX_OUTER_UDP_CKSUM) {
                fl |= RTE_MBUF_F_TX_UDP_CKSUM
                      | (fl & RTE_MBUF_F_TX_OUTER_IPV4 ? RTE_MBUF_F_TX_IPV4
                                                       : RTE_MBUF_F_TX_IPV6);
            }
            m->ol_flags = fl & ~(outer_req | outer_marks);
        }
        l2 = dp_packet_eth(pkt);
        l3 = dp_packet_l3(pkt);
        l4 = dp_packet_l4(pkt);
    }
    if (OVS_UNLIKELY(!l2 || !l3 || !l4)) {
        goto no_headers;
    }
    m->l2_len = l3 - l2;
    m->l3_len = l4 - l3;

    if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
        const struct tcp_header *th = ALIGNED_CAST(const struct tcp_header *,
                                                    l4);
        uint32_t max_len = MTU_TO_FRAME_LEN(dev->mtu);

        m->l4_len = TCP_OFFSET(th->tcp_ctl) * 4;
        m->tso_segsz = tso_segsz(dev, m,
                                 tunnel ? m->l2_len + m->outer_l3_len : 0);
        if (OVS_UNLIKELY(m->l2_len + m->l3_len + m->l4_len + m->tso_segsz
                         > max_len || !m->tso_segsz)) {
            VLOG_WARN_RL(&rl, "%s: oversized TSO packet: headers %d, "
                         "segment %"PRIu16", largest frame %"PRIu32,
                         netdev_get_name(&dev->up),
                         m->l2_len + m->l3_len + m->l4_len, m->tso_segsz,
                         max_len);
            return false;
        }
    }
    if (m->ol_flags & RTE_MBUF_F_TX_L4_MASK
        && m->ol_flags & RTE_MBUF_F_TX_IPV4) {
        m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
    }
    return true;

no_headers:
    VLOG_WARN_RL(&rl, "%s: offload requested for a packet without L2, L3 "
                 "or L4 header (flags %#"PRIx64")", netdev_get_name(&dev->up),
                 m->ol_flags);
    return false;
}
#else
/* With userspace TSO (other_config:userspace-tso-enable), fills in the
 * header lengths that rte_vhost needs to pass checksum and segmentation
 * requests to the guest (virtio-net header), as stock OVS 3.1 does
 * (netdev_dpdk_prep_hwol_packet()): no tunnel offsets, tso_segsz from the
 * MTU.  Returns false for a TSO packet without an L4 header (dropped). */
static bool
prepare_offload(const struct netdev_vhost *dev, struct rte_mbuf *m)
{
    struct dp_packet *pkt = CONTAINER_OF(m, struct dp_packet, mbuf);

    if (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) {
        m->l2_len = (char *) dp_packet_l3(pkt) - (char *) dp_packet_eth(pkt);
        m->l3_len = (char *) dp_packet_l4(pkt) - (char *) dp_packet_l3(pkt);
        m->outer_l2_len = 0;
        m->outer_l3_len = 0;
    }
    if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
        struct tcp_header *th = dp_packet_l4(pkt);

        if (!th) {
            return false;
        }
        m->l4_len = TCP_OFFSET(th->tcp_ctl) * 4;
        m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
        m->tso_segsz = dev->mtu - m->l3_len - m->l4_len;
        if (m->ol_flags & RTE_MBUF_F_TX_IPV4) {
            m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
        }
    }
    return true;
}
#endif

/* rte_mbuf_extbuf_free_callback_t of copy_extbuf_attach(). */
static void
copy_extbuf_free(void *addr OVS_UNUSED, void *opaque)
{
    rte_free(opaque);
}

/* Attaches to 'm' an external buffer (rte_malloc()) large enough for
 * 'data_len' bytes after the headroom, as stock OVS 3.1 does
 * (dpdk_pktmbuf_attach_extbuf() in lib/netdev-dpdk.c): a TSO packet from a
 * tap, internal or system port is longer than the mempool's buffers.  The
 * buffer is freed with the mbuf.  Returns false if the packet is too
 * large for an mbuf (64 kB) or there is no memory. */
static bool
copy_extbuf_attach(struct rte_mbuf *m, uint32_t data_len)
{
    uint32_t total_len = RTE_PKTMBUF_HEADROOM + data_len
                         + sizeof(struct rte_mbuf_ext_shared_info)
                         + sizeof(uintptr_t);
    struct rte_mbuf_ext_shared_info *shinfo;
    uint16_t buf_len;
    void *buf;

    total_len = RTE_ALIGN_CEIL(total_len, sizeof(uintptr_t));
    if (total_len > UINT16_MAX) {
        return false;
    }
    buf_len = total_len;
    buf = rte_malloc(NULL, buf_len, RTE_CACHE_LINE_SIZE);
    if (!buf) {
        return false;
    }
    shinfo = rte_pktmbuf_ext_shinfo_init_helper(buf, &buf_len,
                                                copy_extbuf_free, buf);
    if (!shinfo) {
        rte_free(buf);
        return false;
    }
    rte_pktmbuf_attach_extbuf(m, buf, rte_malloc_virt2iova(buf), buf_len,
                              shinfo);
    rte_pktmbuf_reset_headroom(m);
    return true;
}

/* Returns a copy of 'packet' (not a DPDK mbuf) in an mbuf of 'mp', with an
 * external buffer if it does not fit in the pool's buffers (TSO packets,
 * only with userspace TSO), keeping its offload requests, its TSO segment
 * size (part of the mbuf's tx_offload) and its header offsets (also the
 * inner ones of OVS 3.3+), as stock OVS 3.1's and 3.5's
 * dpdk_copy_dp_packet_to_mbuf().  Returns NULL
 * if no mbuf or memory could be had.  The caller still owns 'packet'. */
static struct dp_packet *
copy_to_mbuf(struct rte_mempool *mp, const struct dp_packet *packet)
{
    uint32_t len = dp_packet_size(packet);
    struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

    if (!m) {
        return NULL;
    }
    if (rte_pktmbuf_tailroom(m) < len && !copy_extbuf_attach(m, len)) {
        rte_pktmbuf_free(m);
        return NULL;
    }

    struct dp_packet *copy = CONTAINER_OF(m, struct dp_packet, mbuf);
    memcpy(rte_pktmbuf_mtod(m, void *), dp_packet_data(packet), len);
    dp_packet_set_size(copy, len);
    m->tx_offload = packet->mbuf.tx_offload;
    m->packet_type = packet->mbuf.packet_type;
    m->ol_flags |= packet->mbuf.ol_flags
                   & ~(RTE_MBUF_F_EXTERNAL | RTE_MBUF_F_INDIRECT);
    memcpy(&copy->l2_pad_size, &packet->l2_pad_size,
           sizeof(struct dp_packet) - offsetof(struct dp_packet, l2_pad_size));
#if NETDEV_VHOST_PACKET_OFFLOADS
    /* OVS 4.0 keeps the hash and mark validity outside the copied fields:
     * a pool's mbuf still has its last user's. */
    copy->has_hash = false;
    copy->has_mark = false;
#endif
    if (NETDEV_VHOST_HAS_GUEST_OFFLOADS && dp_packet_l3(copy)) {
        /* As stock 3.5: the outer lengths from the copied offsets (which
         * include the inner ones, csum_start and csum_offset);
         * prepare_offload() sets them for the request. */
        char *l2 = dp_packet_eth(copy), *l3 = dp_packet_l3(copy);
        char *l4 = dp_packet_l4(copy);

        m->l2_len = l2 ? l3 - l2 : 0;
        m->l3_len = l4 ? l4 - l3 : 0;
    }
    return copy;
}

/* Copies packets that are not DPDK mbufs into mbufs of 'dev''s mempool,
 * drops packets longer than the MTU allows, except TSO packets (the guest
 * gets them whole, as from stock OVS 3.1 and 3.5), and prepares their
 * offload requests (prepare_offload(): every packet in the OVS 3.5 model,
 * only with userspace TSO in OVS 3.1's).
 * Returns the number of packets left in 'batch'; drops are counted. */
static int
prepare_batch(struct netdev_vhost *dev, struct dp_packet_batch *batch)
{
    uint32_t max_len = MTU_TO_FRAME_LEN(dev->mtu);
    int mtu_drops = 0, copy_drops = 0;
    struct dp_packet *packet;
    size_t i, size = dp_packet_batch_size(batch);

    int hwol_drops = 0;
#if NETDEV_VHOST_PACKET_OFFLOADS
    /* OVS 4.0 model: prepared when the port offers any tx offload (stock
     * 4.0's netdev_dpdk_common_send()); a TSO packet is one with a segment
     * size. */
    bool prepare = dev->up.ol_flags != 0;
#define PACKET_IS_TSO(P) (dp_packet_get_tso_segsz(P) != 0)
#else
    /* OVS 3.5 model: every packet is prepared (checksum offload without
     * userspace TSO); OVS 3.1: only with userspace TSO. */
    bool prepare = NETDEV_VHOST_HAS_GUEST_OFFLOADS || userspace_tso_enabled();
#define PACKET_IS_TSO(P) ((P)->mbuf.ol_flags & RTE_MBUF_F_TX_TCP_SEG)
#endif

    DP_PACKET_BATCH_REFILL_FOR_EACH (i, size, packet, batch) {
        bool seg = prepare && PACKET_IS_TSO(packet);

        /* Stock checks the length after the copy: a TSO packet of any
         * length is copied (netdev_dpdk_filter_packet_len()). */
        if (OVS_UNLIKELY(dp_packet_size(packet) > max_len) && !seg) {
            mtu_drops++;
            dp_packet_delete(packet);
            continue;
        }
        if (OVS_UNLIKELY(packet->source != DPBUF_DPDK)) {
            struct dp_packet *copy = dev->mp
                                     ? copy_to_mbuf(dev->mp->mp, packet)
                                     : NULL;

            dp_packet_delete(packet);
            if (!copy) {
                copy_drops++;
                continue;
            }
            packet = copy;
        }
        if (prepare && OVS_UNLIKELY(!prepare_offload(dev, &packet->mbuf))) {
            hwol_drops++;
            dp_packet_delete(packet);
            continue;
        }
        BATCH_REFILL(batch, packet, i);
    }
#undef PACKET_IS_TSO
    if (OVS_UNLIKELY(mtu_drops || copy_drops || hwol_drops)) {
        rte_spinlock_lock(&dev->stats_lock);
        dev->tx_mtu_exceeded_drops += mtu_drops;
        dev->tx_failure_drops += copy_drops;
        dev->tx_invalid_hwol_drops += hwol_drops;
        rte_spinlock_unlock(&dev->stats_lock);
    }
    return dp_packet_batch_size(batch);
}

/* netdev_class 'send': PMD threads (any number, 'qid' may be shared: the
 * queue's tx_lock serializes, lib/netdev-vhost-txq.c).  Takes ownership of
 * every packet in 'batch': each is placed in the guest's rx vring now, staged
 * by the tx policy to be placed later, or dropped and counted.  Always returns
 * 0, as stock vhost ports do.  (utilities/ovs-vhost-bench measures this
 * function by its name.) */
int
netdev_vhost_send(struct netdev *netdev, int qid,
                  struct dp_packet_batch *batch,
                  bool concurrent_txq OVS_UNUSED)
{
    struct netdev_vhost *dev = netdev_vhost_cast(netdev);
    int vid = netdev_vhost_get_vid(dev);
    int n_txq = netdev->n_txq;
    bool ready;
    int q = -1;

    atomic_read_relaxed(&dev->ready, &ready);
    if (OVS_LIKELY(n_txq > 0)) {
        atomic_read_relaxed(&dev->tx_map[qid % n_txq], &q);
    }
    if (OVS_UNLIKELY(vid < 0 || !ready || q < 0
                     || !(dev->flags & NETDEV_UP))) {
        int cnt = dp_packet_batch_size(batch);

        rte_spinlock_lock(&dev->stats_lock);
        dev->tx_down_drops += cnt;
        rte_spinlock_unlock(&dev->stats_lock);
        dp_packet_delete_batch(batch, true);
        return 0;
    }

    int cnt = prepare_batch(dev, batch);
    struct vhost_meter *qos = ovsrcu_get(struct vhost_meter *,
                                         &dev->egress_qos);
    if (OVS_UNLIKELY(qos && cnt)) {
        /* The meter frees what it drops and shrinks the batch to what it
         * kept: every later use of 'batch' (the drop below included) sees
         * only packets this function still owns. */
        int drops = vhost_meter_run(qos, batch);

        if (drops) {
            rte_spinlock_lock(&dev->stats_lock);
            dev->tx_qos_drops += drops;
            rte_spinlock_unlock(&dev->stats_lock);
            cnt = dp_packet_batch_size(batch);
        }
    }
    if (OVS_UNLIKELY(!cnt)) {
        return 0;
    }

    netdev_vhost_txq_send(dev, q, batch, cnt);
    return 0;
}

/* Rx. */

/* The per-packet fields of a received batch, as stock vhost ports set them:
 * OVS 4.0 (netdev_dpdk_batch_init_packet_fields() in lib/netdev-dpdk.c)
 * also takes the hash and mark validity and the receive checksum status
 * from the mbuf's flags into the packet (the vhost library reports a
 * partial checksum from the guest as both "good" and "bad", which OVS 4.0
 * reads as partial); earlier versions only reset the cut length and set
 * the packet type (dp_packet_batch_init_packet_fields()).  PMD threads. */
static void
init_rx_fields(struct dp_packet_batch *batch)
{
#if NETDEV_VHOST_PACKET_OFFLOADS
    struct dp_packet *packet;

    DP_PACKET_BATCH_FOR_EACH (i, packet, batch) {
        uint64_t fl = packet->mbuf.ol_flags;

        dp_packet_reset_cutlen(packet);
        packet->packet_type = htonl(PT_ETH);
        packet->has_hash = !!(fl & RTE_MBUF_F_RX_RSS_HASH);
        packet->has_mark = !!(fl & RTE_MBUF_F_RX_FDIR_ID);
        packet->offloads = fl & (RTE_MBUF_F_RX_IP_CKSUM_BAD
                                 | RTE_MBUF_F_RX_IP_CKSUM_GOOD
                                 | RTE_MBUF_F_RX_L4_CKSUM_BAD
                                 | RTE_MBUF_F_RX_L4_CKSUM_GOOD);
    }
#else
    dp_packet_batch_init_packet_fields(batch);
#endif
}

struct netdev_rxq_vhost {
    struct netdev_rxq up;
};

/* netdev_class 'rxq_alloc', 'rxq_construct', 'rxq_destruct' and
 * 'rxq_dealloc': main thread.  An rxq needs no state of its own: queue
 * pair 'rxq->queue_id' of the port holds it. */
struct netdev_rxq *
netdev_vhost_rxq_alloc(void)
{
    struct netdev_rxq_vhost *rx = xzalloc(sizeof *rx);
    return &rx->up;
}

int
netdev_vhost_rxq_construct(struct netdev_rxq *rxq OVS_UNUSED)
{
    return 0;
}

void
netdev_vhost_rxq_destruct(struct netdev_rxq *rxq OVS_UNUSED)
{
}

void
netdev_vhost_rxq_dealloc(struct netdev_rxq *rxq)
{
    free(CONTAINER_OF(rxq, struct netdev_rxq_vhost, up));
}

/* The PMD thread's iterations as its polls of our rxqs see them
 * (lib/vhost-pmd-iter.h): so that the port's deferred_work_cycles counts
 * only work done in iterations dpif-netdev counted idle. */
DEFINE_STATIC_PER_THREAD_DATA(struct vhost_pmd_iter, pmd_iter, { 0, 0 });

/* netdev_class 'rxq_recv': the one PMD thread that polls 'rxq'.  Dequeues
 * up to NETDEV_MAX_BURST packets from the guest's tx vring; the caller owns
 * them.  Also flushes staged tx packets whose deadline passed and
 * delivers held kicks that are due (of every queue of the port); the TSC
 * cycles of that work, once its PMD iteration has ended with no packets
 * received by any of the thread's netdev-vhost rxqs, go to the rxq's
 * 'rx_wait.due_cycles'.  Returns 0, or EAGAIN when there is nothing to
 * receive. */
int
netdev_vhost_rxq_recv(struct netdev_rxq *rxq, struct dp_packet_batch *batch,
                      int *qfill)
{
    struct netdev_vhost *dev = netdev_vhost_cast(rxq->netdev);
    int q = rxq->queue_id;
    struct netdev_vhost_qp *qp = &dev->qps[q];
    uint16_t nb_rx = 0;
    bool ready;

    struct vhost_pmd_iter *it = pmd_iter_get();
    uint64_t idle_work = vhost_pmd_iter_poll(it, &qp->rx_wait.iter);

    if (OVS_UNLIKELY(idle_work)) {
        netdev_vhost_counter_add(&qp->rx_wait.due_cycles, idle_work);
    }
    if (OVS_UNLIKELY(netdev_vhost_txq_any_pending(dev))) {
        uint64_t work = netdev_vhost_txq_run_due(dev, &qp->rx_wait);

        if (work) {
            vhost_pmd_iter_work(it, &qp->rx_wait.iter, work);
        }
    }

    /* Announce the use of the device id before reading it: destroy_device()
     * withdraws the id, runs the heavy fence, then waits for 'rx_busy' to
     * be false (netdev_vhost_light_fence()). */
    atomic_store_explicit(&qp->rx_busy, true, memory_order_relaxed);
    netdev_vhost_light_fence();
    int vid = netdev_vhost_get_vid(dev);
    atomic_read_relaxed(&dev->ready, &ready);
    if (OVS_LIKELY(vid >= 0 && ready && dev->flags & NETDEV_UP && dev->mp)) {
        nb_rx = rte_vhost_dequeue_burst(vid, netdev_vhost_rx_vring(q),
                                        dev->mp->mp,
                                        (struct rte_mbuf **) batch->packets,
                                        NETDEV_MAX_BURST);
        if (qfill) {
            *qfill = nb_rx == NETDEV_MAX_BURST
                     ? rte_vhost_rx_queue_count(vid,
                                                netdev_vhost_rx_vring(q))
                       & UINT16_MAX
                     : 0;
        }
    }
    atomic_store_explicit(&qp->rx_busy, false, memory_order_release);
    if (!nb_rx) {
        return EAGAIN;
    }

    uint64_t bytes = 0;
    for (int i = 0; i < nb_rx; i++) {
        bytes += rte_pktmbuf_pkt_len((struct rte_mbuf *) batch->packets[i]);
    }
    netdev_vhost_counter_add(&qp->rx_packets, nb_rx);
    netdev_vhost_counter_add(&qp->rx_bytes, bytes);

    struct vhost_meter *policer = ovsrcu_get(struct vhost_meter *,
                                             &dev->ingress_policer);
    batch->count = nb_rx;
    if (OVS_UNLIKELY(policer)) {
        int drops = vhost_meter_run(policer, batch);

        if (drops) {
            rte_spinlock_lock(&dev->stats_lock);
            dev->rx_qos_drops += drops;
            dev->rx_dropped += drops;
            rte_spinlock_unlock(&dev->stats_lock);
            if (dp_packet_batch_is_empty(batch)) {
                return EAGAIN;
            }
        }
    }
    init_rx_fields(batch);
    vhost_pmd_iter_rx(it);
    return 0;
}

/* netdev_class 'rxq_enabled': the PMD thread that polls 'rxq', when it
 * loads its poll list and when the port's change_seq moved (between two
 * of its iterations), and the main thread (dpif-netdev/pmd-rxq-show).
 * True if the guest enabled its tx vring of the queue pair, and always
 * for rxq 0.  On a PMD thread it also tells the iteration bookkeeping
 * that 'rxq' is in the thread's poll list (vhost_pmd_iter_listed()). */
bool
netdev_vhost_rxq_enabled(struct netdev_rxq *rxq)
{
    struct netdev_vhost *dev = netdev_vhost_cast(rxq->netdev);

    if (thread_is_pmd()) {
        vhost_pmd_iter_listed(pmd_iter_get(),
                              &dev->qps[rxq->queue_id].rx_wait.iter);
    }

    /* Rx queue 0 is always polled, as stock keeps it enabled: its poll
     * also flushes staged tx packets whose deadline passed, which must
     * happen even if the guest never enables its tx vring. */
    return !rxq->queue_id || dev->qps[rxq->queue_id].rx_enabled;
}
