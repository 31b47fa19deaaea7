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

/* Policers of netdev-vhost ports on rte_meter; see netdev-vhost-qos.h. */

#include <config.h>

#include "netdev-vhost-qos.h"

#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_meter.h>
#include <rte_spinlock.h>

#include "dp-packet.h"
#include "openvswitch/vlog.h"
#include "smap.h"
#include "sset.h"
#include "util.h"

VLOG_DEFINE_THIS_MODULE(netdev_vhost_qos);

struct vhost_meter *
vhost_meter_create_srtcm(uint64_t cir, uint64_t cbs, const char *what)
{
    struct vhost_meter *m = xzalloc(sizeof *m);
    struct rte_meter_srtcm_params params = { .cir = cir, .cbs = cbs };
    int err;

    m->kind = VHOST_METER_SRTCM;
    m->cir = cir;
    m->cbs = cbs;
    rte_spinlock_init(&m->lock);
    err = rte_meter_srtcm_profile_config(&m->srtcm_prof, &params);
    if (!err) {
        err = rte_meter_srtcm_config(&m->srtcm, &m->srtcm_prof);
    }
    if (err) {
        VLOG_ERR("Could not create rte meter for %s", what);
        free(m);
        return NULL;
    }
    return m;
}

static struct vhost_meter *
create_trtcm(uint64_t cir, uint64_t cbs, uint64_t eir, uint64_t ebs)
{
    struct vhost_meter *m = xzalloc(sizeof *m);
    struct rte_meter_trtcm_rfc4115_params params = {
        .cir = cir, .cbs = cbs, .eir = eir, .ebs = ebs,
    };
    int err;

    m->kind = VHOST_METER_TRTCM;
    m->cir = cir;
    m->cbs = cbs;
    m->eir = eir;
    m->ebs = ebs;
    rte_spinlock_init(&m->lock);
    err = rte_meter_trtcm_rfc4115_profile_config(&m->trtcm_prof, &params);
    if (!err) {
        err = rte_meter_trtcm_rfc4115_config(&m->trtcm, &m->trtcm_prof);
    }
    if (err) {
        VLOG_ERR("Could not create rte meter for trtcm policer");
        free(m);
        return NULL;
    }
    return m;
}

int
vhost_meter_create_qos(const char *type, const struct smap *details,
                       struct vhost_meter **meterp)
{
    uint64_t cir = smap_get_ullong(details, "cir", 0);
    uint64_t cbs = smap_get_ullong(details, "cbs", 0);

    *meterp = NULL;
    if (!strcmp(type, "egress-policer")) {
        *meterp = vhost_meter_create_srtcm(cir, cbs, "egress policer");
    } else if (!strcmp(type, "trtcm-policer")) {
        *meterp = create_trtcm(cir, cbs, smap_get_ullong(details, "eir", 0),
                               smap_get_ullong(details, "ebs", 0));
    } else {
        return EOPNOTSUPP;
    }
    return *meterp ? 0 : EINVAL;
}

const char *
vhost_meter_get_qos(const struct vhost_meter *m, struct smap *details)
{
    smap_add_format(details, "cir", "%"PRIu64, m->cir);
    smap_add_format(details, "cbs", "%"PRIu64, m->cbs);
    if (m->kind == VHOST_METER_TRTCM) {
        smap_add_format(details, "eir", "%"PRIu64, m->eir);
        smap_add_format(details, "ebs", "%"PRIu64, m->ebs);
        return "trtcm-policer";
    }
    return "egress-policer";
}

void
vhost_meter_qos_types(struct sset *types)
{
    sset_add(types, "egress-policer");
    sset_add(types, "trtcm-policer");
}

int
vhost_meter_run(struct vhost_meter *m, struct dp_packet_batch *batch)
{
    struct rte_mbuf **pkts = (struct rte_mbuf **) batch->packets;
    int n = dp_packet_batch_size(batch);
    uint64_t now = rte_rdtsc();
    int kept = 0;

    rte_spinlock_lock(&m->lock);
    for (int i = 0; i < n; i++) {
        uint32_t len = rte_pktmbuf_pkt_len(pkts[i]) - RTE_ETHER_HDR_LEN;
        enum rte_color color;

        if (m->kind == VHOST_METER_SRTCM) {
            color = rte_meter_srtcm_color_blind_check(&m->srtcm,
                                                      &m->srtcm_prof,
                                                      now, len);
        } else {
            color = rte_meter_trtcm_rfc4115_color_blind_check(
                &m->trtcm, &m->trtcm_prof, now, len);
        }
        if (color == RTE_COLOR_RED
            || (m->kind == VHOST_METER_SRTCM && color != RTE_COLOR_GREEN)) {
            rte_pktmbuf_free(pkts[i]);
        } else {
            pkts[kept++] = pkts[i];
        }
    }
    rte_spinlock_unlock(&m->lock);
    batch->count = kept;
    return n - kept;
}

void
vhost_meter_destroy(struct vhost_meter *m)
{
    free(m);
}
