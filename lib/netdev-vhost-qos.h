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

#ifndef NETDEV_VHOST_QOS_H
#define NETDEV_VHOST_QOS_H 1

/* Policers of netdev-vhost ports on DPDK's rte_meter, with stock OVS 3.1's
 * semantics: the ingress policer (Interface ingress_policing_rate/burst,
 * an srTCM in color-blind mode) and the egress QoS types "egress-policer"
 * (srTCM: cir, cbs) and "trtcm-policer" (RFC 4115 trTCM: cir, cbs, eir,
 * ebs; port level only).  Red packets are dropped.
 *
 * A meter is created and destroyed by the main thread and run by PMD
 * threads under its own spinlock (several PMDs may send to one port). */

#include <stdbool.h>
#include <stdint.h>

#include <rte_meter.h>
#include <rte_spinlock.h>

struct dp_packet_batch;
struct smap;
struct sset;

enum vhost_meter_kind {
    VHOST_METER_SRTCM,          /* Ingress policer, egress-policer. */
    VHOST_METER_TRTCM,          /* trtcm-policer (RFC 4115). */
};

struct vhost_meter {
    enum vhost_meter_kind kind;
    rte_spinlock_t lock;            /* Taken by the PMD that runs it. */
    uint64_t cir, cbs, eir, ebs;    /* Bytes per second, bytes. */
    struct rte_meter_srtcm_profile srtcm_prof;
    struct rte_meter_srtcm srtcm;
    struct rte_meter_trtcm_rfc4115_profile trtcm_prof;
    struct rte_meter_trtcm_rfc4115 trtcm;
};

/* Creates an srTCM of 'cir' bytes per second and 'cbs' bytes.  'what'
 * names it in the log ("ingress policer", "egress policer").  Returns NULL
 * and logs "Could not create rte meter for <what>" if rte_meter rejects
 * the parameters (e.g. 0). */
struct vhost_meter *vhost_meter_create_srtcm(uint64_t cir, uint64_t cbs,
                                             const char *what);

/* Creates the meter of QoS 'type' ("egress-policer" or "trtcm-policer")
 * from the QoS other_config 'details' (rates in bytes per second, bursts
 * in bytes).  Returns 0 and the meter in '*meterp', EOPNOTSUPP for another
 * non-empty type, or EINVAL (logged) for bad parameters. */
int vhost_meter_create_qos(const char *type, const struct smap *details,
                           struct vhost_meter **meterp);

/* Adds the QoS type name and parameters of 'meter' to 'details'. */
const char *vhost_meter_get_qos(const struct vhost_meter *,
                                struct smap *details);

/* Adds the supported QoS types to 'types'. */
void vhost_meter_qos_types(struct sset *types);

/* Meters the packets of 'batch' (DPDK mbufs, owned by the caller) in
 * order: keeps green (and, for trtcm-policer, yellow) packets, compacted at
 * the front of 'batch', and frees the others.  'batch->count' becomes the
 * number kept, so that whatever the caller does with the batch afterwards
 * (send it, or free it whole with dp_packet_delete_batch()) touches only
 * packets it still owns: a freed packet left in the count would be freed
 * twice and corrupt the mempool.  Returns the number of packets dropped
 * (0 to the batch's size).  Any thread; the meter's own lock serializes
 * the PMD threads that share it. */
int vhost_meter_run(struct vhost_meter *, struct dp_packet_batch *batch);

void vhost_meter_destroy(struct vhost_meter *);

#endif /* netdev-vhost-qos.h */
