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

/* The options of netdev-vhost ports and the Open_vSwitch table's
 * other_config settings of the class (see lib/netdev-vhost-options.h).
 * Main thread only. */

#include <config.h>

#include "netdev-vhost-options.h"
#include "netdev-vhost.h"
#include "netdev-vhost-notify.h"
#include "netdev-vhost-private.h"
#include "netdev-vhost-registry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_version.h>

#include "dirs.h"
#include "netdev-provider.h"
#include "netdev.h"
#include "openvswitch/dynamic-string.h"
#include "openvswitch/vlog.h"
#include "smap.h"
#include "util.h"
#include "vhost-kick.h"
#include "vhost-moderation.h"
#include "vhost-tx-policy.h"

#define this_module (*VLM_netdev_vhost)

/* Global configuration from the Open_vSwitch table. */
static char *vhost_sock_dir;
static bool vhost_iommu_enabled;
static bool vhost_postcopy_enabled;

/* The tx flush mode of ports that set none and of an other_config without
 * vhost-tx-flush-mode: adaptive in both builds.  With DPDK 22.11 auto's
 * staging lost packets at the sender's maximum and added about half an
 * interval of latency at low rates that adaptive's floor does not; with
 * DPDK 23.11+ adaptive's 90 us ceiling (NETDEV_VHOST_DEFAULT_CEILING_US)
 * folds the wake-ups of a Linux guest at 100 kpps that auto's fixed 50 us
 * cannot, and its floor keeps stock's latency at low rates
 * (DESIGN-NOTES.md, "The default mode, chosen from the latency
 * frontier"). */
#define NETDEV_VHOST_DEFAULT_TXP_MODE VHOST_TXP_ADAPTIVE

/* The tx policy defaults (netdev_vhost_txp_defaults()):
 * other_config:vhost-tx-flush-mode, vhost-tx-flush-interval,
 * vhost-tx-coalesce (what auto mode coalesces by default, kicks in DPDK
 * 23.11+ builds, lib/netdev-vhost-kick.h, or packets), and
 * vhost-tx-flush-interval-min, -max (the bounds of adaptive mode,
 * lib/vhost-moderation.h); 'error' the last rejected other_config. */
static struct netdev_vhost_txp_cfg default_txp = {
    .mode = NETDEV_VHOST_DEFAULT_TXP_MODE,
    .interval_us = VHOST_TXP_INTERVAL_DEFAULT,
    .coalesce_kicks = NETDEV_VHOST_HAS_DEFERRED_KICKS,
    .min_us = VHOST_MOD_FLOOR_DEFAULT,
    .max_us = NETDEV_VHOST_DEFAULT_CEILING_US,
};

const struct netdev_vhost_txp_cfg *
netdev_vhost_txp_defaults(void)
{
    return &default_txp;
}

const char *
netdev_vhost_sock_dir(void)
{
    return vhost_sock_dir;
}

bool
netdev_vhost_iommu_enabled(void)
{
    return vhost_iommu_enabled;
}

bool
netdev_vhost_postcopy_enabled(void)
{
    return vhost_postcopy_enabled;
}

void
netdev_vhost_txp_cfg_apply(struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    struct netdev_vhost_txp_cfg *cfg = &dev->txp_cfg;
    enum vhost_txp_mode mode = cfg->mode_set ? cfg->mode : default_txp.mode;
    uint32_t interval = cfg->interval_set ? cfg->interval_us
                                          : default_txp.interval_us;

    bool kicks = cfg->coalesce_set ? cfg->coalesce_kicks
                                   : default_txp.coalesce_kicks;
    uint32_t min = cfg->min_set ? cfg->min_us : default_txp.min_us;
    uint32_t max = cfg->max_set ? cfg->max_us : default_txp.max_us;
    uint32_t watermark = (cfg->watermark_set ? cfg->watermark
                          : default_txp.watermark);

    cfg->mode = mode;
    cfg->watermark = watermark;
    cfg->interval_us = interval;
    cfg->coalesce_kicks = kicks;
    /* An Interface's floor above a later other_config ceiling: the
     * ceiling is raised to the floor (the parser rejects it only within
     * one record). */
    cfg->min_us = min;
    cfg->max_us = MAX(min, max);
    netdev_vhost_txq_set_policy(dev, mode, interval, kicks, cfg->min_us,
                                cfg->max_us, watermark);
}

/* Appends 'msg' (malloc'd or NULL, taken) to '*error' (malloc'd or NULL),
 * separated by "; ". */
static void
error_append(char **error, char *msg)
{
    if (!msg) {
        return;
    }
    if (!*error) {
        *error = msg;
    } else {
        char *both = xasprintf("%s; %s", *error, msg);

        free(*error);
        free(msg);
        *error = both;
    }
}

/* Parses option "<key_prefix><name>" of 'args' (tx-flush-interval-min or
 * -max, 'min_us' the least value) into '*set' and '*us' (absent: '*set'
 * false; invalid: both unchanged).  Returns NULL or a malloc'd message
 * starting with 'msg_prefix'. */
static char *
parse_bound_option(const struct smap *args, const char *key_prefix,
                   const char *msg_prefix, const char *name,
                   uint32_t min_us, bool *set, uint32_t *us)
{
    char *key = xasprintf("%s%s", key_prefix, name);
    const char *value = smap_get(args, key);
    char *error = NULL;

    free(key);
    if (!value) {
        *set = false;
    } else {
        uint32_t v;
        char *e = vhost_mod_parse_bound(name, value, min_us, &v);

        if (!e) {
            *set = true;
            *us = v;
        } else {
            error = xasprintf("%s%s", msg_prefix, e);
            free(e);
        }
    }
    return error;
}

/* Parses 's', a value of option tx-kick-watermark: "auto" (0: a quarter
 * of the ring the guest set up) or a whole number of packets from 1 to
 * VHOST_KICK_WATERMARK_MAX (lib/vhost-kick.h), with nothing else.
 * Returns NULL and the value in '*watermark', or a malloc'd error message
 * with '*watermark' unchanged.  Any thread. */
static char *
parse_watermark(const char *s, uint32_t *watermark)
{
    unsigned int v;

    if (!strcmp(s, "auto")) {
        *watermark = 0;
        return NULL;
    }
    if (s[0] < '0' || s[0] > '9' || !str_to_uint(s, 10, &v)
        || v < 1 || v > VHOST_KICK_WATERMARK_MAX) {
        return xasprintf("tx-kick-watermark \"%s\" is not auto or a "
                         "number of packets from 1 to %d", s,
                         VHOST_KICK_WATERMARK_MAX);
    }
    *watermark = v;
    return NULL;
}

/* The one parser of the tx policy options: reads the options
 * "<key_prefix>tx-flush-mode" (auto, immediate, timed, adaptive),
 * "<key_prefix>tx-flush-interval" (see vhost_txp_parse_interval()),
 * "<key_prefix>tx-coalesce", "<key_prefix>tx-kick-watermark" (see
 * parse_watermark()) and "<key_prefix>tx-flush-interval-min" /
 * "-max" (adaptive bounds, vhost_mod_parse_bound(); the two together,
 * with 'def_min' / 'def_max' for one that is absent, must have min <= max,
 * else both are kept as they were) of 'args' into 'cfg', leaving what is
 * invalid as it was; an option that is absent clears its '*_set'.  Error
 * messages start with 'msg_prefix'.  With 'first_only', stops at the first
 * bad option; otherwise reports all, separated by "; ".  Returns NULL or a
 * malloc'd error message.  Main thread. */
static char *
parse_txp_options(const struct smap *args, const char *key_prefix,
                  const char *msg_prefix, bool first_only,
                  uint32_t def_min, uint32_t def_max,
                  struct netdev_vhost_txp_cfg *cfg)
{
    char *mode_key = xasprintf("%stx-flush-mode", key_prefix);
    char *interval_key = xasprintf("%stx-flush-interval", key_prefix);
    const char *mode_s = smap_get(args, mode_key);
    const char *interval_s = smap_get(args, interval_key);
    char *error = NULL;

    free(mode_key);
    free(interval_key);
    if (!mode_s) {
        cfg->mode_set = false;
    } else {
        enum vhost_txp_mode mode;

        if (vhost_txp_mode_from_string(mode_s, &mode)) {
            cfg->mode_set = true;
            cfg->mode = mode;
        } else {
            error = xasprintf("%stx-flush-mode \"%s\" is not one of auto, "
                              "immediate, timed, adaptive", msg_prefix,
                              mode_s);
        }
    }
    if (error && first_only) {
        return error;
    }
    if (!interval_s) {
        cfg->interval_set = false;
    } else {
        uint32_t us;
        char *e = vhost_txp_parse_interval(interval_s, &us);

        if (!e) {
            cfg->interval_set = true;
            cfg->interval_us = us;
        } else {
            error_append(&error, xasprintf("%s%s", msg_prefix, e));
            free(e);
        }
    }
    if (error && first_only) {
        return error;
    }

    char *coalesce_key = xasprintf("%stx-coalesce", key_prefix);
    const char *coalesce_s = smap_get(args, coalesce_key);
    char *msg = NULL;

    free(coalesce_key);
    if (!coalesce_s) {
        cfg->coalesce_set = false;
    } else if (!strcmp(coalesce_s, "packets")) {
        cfg->coalesce_set = true;
        cfg->coalesce_kicks = false;
    } else if (!strcmp(coalesce_s, "kicks")
               && NETDEV_VHOST_HAS_DEFERRED_KICKS) {
        cfg->coalesce_set = true;
        cfg->coalesce_kicks = true;
    } else if (!strcmp(coalesce_s, "kicks")) {
        msg = xasprintf("%stx-coalesce \"kicks\" needs DPDK 23.11 or later "
                        "(this build: %s)", msg_prefix, rte_version());
    } else {
        msg = xasprintf("%stx-coalesce \"%s\" is not one of kicks, "
                        "packets", msg_prefix, coalesce_s);
    }
    error_append(&error, msg);
    if (error && first_only) {
        return error;
    }

    char *wm_key = xasprintf("%stx-kick-watermark", key_prefix);
    const char *wm_s = smap_get(args, wm_key);

    free(wm_key);
    if (!wm_s) {
        cfg->watermark_set = false;
    } else {
        char *e = parse_watermark(wm_s, &cfg->watermark);

        if (!e) {
            cfg->watermark_set = true;
        } else {
            error_append(&error, xasprintf("%s%s", msg_prefix, e));
            free(e);
        }
    }
    if (error && first_only) {
        return error;
    }

    bool min_set = cfg->min_set, max_set = cfg->max_set;
    uint32_t min_us = cfg->min_us, max_us = cfg->max_us;
    char *min_e = parse_bound_option(args, key_prefix, msg_prefix,
                                     "tx-flush-interval-min",
                                     VHOST_MOD_FLOOR_MIN, &min_set, &min_us);
    char *max_e = parse_bound_option(args, key_prefix, msg_prefix,
                                     "tx-flush-interval-max",
                                     VHOST_MOD_CEILING_MIN, &max_set,
                                     &max_us);

    /* Either half invalid, or min above max: the pair stays as it was. */
    if (!min_e && !max_e) {
        uint32_t eff_min = min_set ? min_us : def_min;
        uint32_t eff_max = max_set ? max_us : def_max;

        if (eff_min > eff_max) {
            min_e = xasprintf("%stx-flush-interval-min %"PRIu32" is above "
                              "%stx-flush-interval-max %"PRIu32, msg_prefix,
                              eff_min, msg_prefix, eff_max);
        } else {
            cfg->min_set = min_set;
            cfg->max_set = max_set;
            cfg->min_us = eff_min;
            cfg->max_us = eff_max;
        }
    }
    error_append(&error, min_e);
    error_append(&error, max_e);
    return error;
}

char *
netdev_vhost_socket_path_problem(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    struct stat st;
    char *problem = NULL;

    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        problem = xasprintf("directory \"%s\" of vhost-server-path does "
                            "not exist", dir);
    } else if (!stat(path, &st) && !S_ISSOCK(st.st_mode)) {
        problem = xasprintf("vhost-server-path \"%s\" is not a socket",
                            path);
    }
    free(dir);
    return problem;
}

/* Logs what netdev_vhost_socket_path_problem() finds for the new
 * vhost-server-path of client port 'dev': OVS keeps trying to connect, but
 * the operator should know.  Main thread, dev->mutex held. */
static void
socket_path_check(const struct netdev_vhost *dev) OVS_REQUIRES(dev->mutex)
{
    char *problem = netdev_vhost_socket_path_problem(dev->vhost_id);

    if (problem) {
        VLOG_WARN("%s: %s; connecting when a guest listens there",
                  netdev_get_name(&dev->up), problem);
        free(problem);
    }
}

/* Replaces '*cur' (a malloc'd string or NULL) by a copy of 'new' and
 * returns true if they differ: for logging a rejected setting once. */
static bool
note_change(char **cur, const char *new)
{
    if (nullable_string_is_equal(*cur, new)) {
        return false;
    }
    free(*cur);
    *cur = nullable_xstrdup(new);
    return true;
}

/* Returns the tx policy settings that 'cfg' keeps, as the words of a
 * rejection message: "PREFIXtx-flush-mode=M PREFIXtx-flush-interval=N
 * PREFIXtx-coalesce=C", and the adaptive bounds in adaptive mode.  PREFIX
 * is "" for Interface options and "vhost-" for other_config defaults.  The
 * caller frees the string.  Any thread. */
static char *
txp_kept_string(const char *prefix, const struct netdev_vhost_txp_cfg *cfg)
{
    struct ds s = DS_EMPTY_INITIALIZER;

    ds_put_format(&s, "%stx-flush-mode=%s %stx-flush-interval=%"PRIu32
                  " %stx-coalesce=%s", prefix,
                  vhost_txp_mode_to_string(cfg->mode), prefix,
                  cfg->interval_us, prefix,
                  cfg->coalesce_kicks ? "kicks" : "packets");
    if (cfg->mode == VHOST_TXP_ADAPTIVE) {
        ds_put_format(&s, " %stx-flush-interval-min=%"PRIu32
                      " %stx-flush-interval-max=%"PRIu32, prefix,
                      cfg->min_us, prefix, cfg->max_us);
    }
    if (cfg->watermark) {
        ds_put_format(&s, " %stx-kick-watermark=%"PRIu32, prefix,
                      cfg->watermark);
    }
    return ds_steal_cstr(&s);
}

/* netdev_vhost_for_each_locked() callback: OVS reads the status of 'dev'
 * again. */
static void
status_changed(struct netdev_vhost *dev, void *aux OVS_UNUSED)
{
    netdev_change_seq_changed(&dev->up);
}

/* The other_config tx policy defaults were rejected or accepted again:
 * every port's status (key "tx_flush_default_error") changes, so tell OVS
 * to read it again.  Main thread. */
static void
default_txp_error_changed(void)
{
    netdev_vhost_for_each_locked(status_changed, NULL);
}

int
netdev_vhost_options_set(struct netdev_vhost *dev, const struct smap *args,
                         char **errp) OVS_REQUIRES(dev->mutex)
{
    struct netdev *netdev = &dev->up;
    const char *name = netdev_get_name(netdev);

    if (dev->client) {
        const char *path = smap_get(args, "vhost-server-path");
        char *msg = NULL;

        if (!path || !path[0]) {
            msg = xasprintf("%s: dpdkvhostuserclient port requires "
                            "options:vhost-server-path", name);
        } else if (path[0] != '/'
                   || strlen(path) >= NETDEV_VHOST_SOCK_PATH_MAX) {
            msg = xasprintf("%s: vhost-server-path \"%s\" must be an "
                            "absolute path shorter than %"PRIuSIZE" bytes",
                            name, path, NETDEV_VHOST_SOCK_PATH_MAX);
        }
        if (msg && !dev->vhost_id) {
            /* A new port: not created, its Interface error says why. */
            VLOG_WARN_BUF(errp, "%s", msg);
            free(msg);
            return EINVAL;
        } else if (msg) {
            if (note_change(&dev->path_error, msg)) {
                VLOG_ERR("%s; keeping vhost-server-path \"%s\"", msg,
                         dev->vhost_id);
            }
            free(msg);
        } else {
            note_change(&dev->path_error, NULL);
            if (!nullable_string_is_equal(path, dev->vhost_id)) {
                free(dev->vhost_id);
                dev->vhost_id = xstrdup(path);
                netdev_request_reconfigure(netdev);
                socket_path_check(dev);
            }
        }
    }

    /* options:vhost-max-queue-pairs, client ports, as stock OVS 3.5
     * (netdev_dpdk_vhost_client_set_config()): the number of queue pairs a
     * VDUSE device offers, 1 to 128.  DPDK applies it only to VDUSE
     * devices (paths under /dev/vduse/), which this class does not drive:
     * accepted and validated, without effect on vhost-user sockets.  Stock
     * silently takes the default for a bad value; we keep the previous one
     * and say why.  OVS 3.1 builds ignore it, as stock 3.1. */
    const char *max_qp_s = (NETDEV_VHOST_HAS_VIRTIO_RECOVERY
                            ? smap_get(args, "vhost-max-queue-pairs")
                            : NULL);
    int max_qp = NETDEV_VHOST_MAX_QUEUE_PAIRS_DEF;

    if (dev->client && max_qp_s
        && (!str_to_int(max_qp_s, 10, &max_qp)
            || max_qp < NETDEV_VHOST_MAX_QUEUE_PAIRS_MIN
            || max_qp > NETDEV_VHOST_MAX_QUEUE_PAIRS_MAX)) {
        char *msg = xasprintf("vhost-max-queue-pairs \"%s\" is not a number "
                              "from %d to %d", max_qp_s,
                              NETDEV_VHOST_MAX_QUEUE_PAIRS_MIN,
                              NETDEV_VHOST_MAX_QUEUE_PAIRS_MAX);
        if (note_change(&dev->max_qp_error, msg)) {
            VLOG_ERR("%s: %s; keeping vhost-max-queue-pairs=%d", name, msg,
                     dev->max_queue_pairs);
        }
        free(msg);
    } else if (NETDEV_VHOST_HAS_VIRTIO_RECOVERY && dev->client) {
        note_change(&dev->max_qp_error, NULL);
        if (max_qp != dev->max_queue_pairs) {
            dev->max_queue_pairs = max_qp;
            VLOG_INFO("%s: vhost-max-queue-pairs set to %d (effective only "
                      "for VDUSE devices, not for vhost-user sockets)", name,
                      max_qp);
        }
    }

    /* The guest's driver decides how many queues a vhost port has. */
    const char *n_rxq_s = smap_get(args, "n_rxq");
    if (note_change(&dev->n_rxq_ignored, n_rxq_s) && n_rxq_s) {
        VLOG_WARN("%s: options:n_rxq \"%s\" ignored: the guest's driver "
                  "chooses how many queues a vhost-user port has", name,
                  n_rxq_s);
    }

    const char *retries_s = smap_get(args, "tx-retries-max");
    int retries = NETDEV_VHOST_RETRY_DEF;
    int cur;
    atomic_read_relaxed(&dev->tx_retries_max, &cur);
    if (retries_s && (!str_to_int(retries_s, 10, &retries)
                      || retries < NETDEV_VHOST_RETRY_MIN
                      || retries > NETDEV_VHOST_RETRY_MAX)) {
        char *msg = xasprintf("tx-retries-max \"%s\" is not a number from "
                              "%d to %d", retries_s, NETDEV_VHOST_RETRY_MIN,
                              NETDEV_VHOST_RETRY_MAX);
        if (note_change(&dev->retries_error, msg)) {
            VLOG_ERR("%s: %s; keeping tx-retries-max=%d", name, msg, cur);
        }
        free(msg);
        retries = cur;
    } else {
        note_change(&dev->retries_error, NULL);
    }
    if (cur != retries) {
        atomic_store_relaxed(&dev->tx_retries_max, retries);
        VLOG_INFO("Max Tx retries for vhost device '%s' set to %d",
                  name, retries);
    }

    char *error = parse_txp_options(args, "", "", false, default_txp.min_us,
                                    default_txp.max_us, &dev->txp_cfg);
    if (error && !nullable_string_is_equal(error, dev->txp_cfg.error)) {
        char *kept = txp_kept_string("", &dev->txp_cfg);
        VLOG_ERR("%s: %s; keeping %s", name, error, kept);
        free(kept);
    }
    free(dev->txp_cfg.error);
    dev->txp_cfg.error = error;
    netdev_vhost_txp_cfg_apply(dev);
    return 0;
}

/* netdev_vhost_for_each_locked() callback: applies the new tx policy
 * defaults to 'dev'. */
static void
apply_defaults(struct netdev_vhost *dev, void *aux OVS_UNUSED)
    OVS_EXCLUDED(dev->mutex)
{
    ovs_mutex_lock(&dev->mutex);
    netdev_vhost_txp_cfg_apply(dev);
    ovs_mutex_unlock(&dev->mutex);
}

void
netdev_vhost_set_other_config(const struct smap *ovs_other_config)
{
    if (netdev_vhost_notify_configure(ovs_other_config)) {
        /* Every queue's hand-off flag (kickq_configure()) and every
         * port's status ("kick_thread", "vhost_kick_thread_error"). */
        netdev_vhost_for_each_locked(apply_defaults, NULL);
        default_txp_error_changed();
    }

    struct netdev_vhost_txp_cfg cfg = { .mode_set = false };
    char *error = parse_txp_options(ovs_other_config, "vhost-",
                                    "other_config:vhost-", true,
                                    VHOST_MOD_FLOOR_DEFAULT,
                                    NETDEV_VHOST_DEFAULT_CEILING_US, &cfg);
    enum vhost_txp_mode mode = (cfg.mode_set ? cfg.mode
                                : NETDEV_VHOST_DEFAULT_TXP_MODE);
    uint32_t interval = cfg.interval_set ? cfg.interval_us
                                         : VHOST_TXP_INTERVAL_DEFAULT;
    bool kicks = cfg.coalesce_set ? cfg.coalesce_kicks
                                  : NETDEV_VHOST_HAS_DEFERRED_KICKS;
    uint32_t min = cfg.min_set ? cfg.min_us : VHOST_MOD_FLOOR_DEFAULT;
    uint32_t max = cfg.max_set ? cfg.max_us : NETDEV_VHOST_DEFAULT_CEILING_US;
    uint32_t watermark = cfg.watermark_set ? cfg.watermark : 0;

    if (error) {
        if (!nullable_string_is_equal(error, default_txp.error)) {
            char *kept = txp_kept_string("vhost-", &default_txp);
            VLOG_ERR("%s; keeping %s", error, kept);
            free(kept);
            free(default_txp.error);
            default_txp.error = error;
            default_txp_error_changed();
        } else {
            free(error);
        }
        return;
    }
    if (default_txp.error) {
        free(default_txp.error);
        default_txp.error = NULL;
        default_txp_error_changed();
    }
    if (mode == default_txp.mode && interval == default_txp.interval_us
        && kicks == default_txp.coalesce_kicks && min == default_txp.min_us
        && max == default_txp.max_us && watermark == default_txp.watermark) {
        return;
    }
    default_txp.watermark = watermark;
    default_txp.mode = mode;
    default_txp.interval_us = interval;
    default_txp.coalesce_kicks = kicks;
    default_txp.min_us = min;
    default_txp.max_us = max;
    char bounds[64] = "";
    if (mode == VHOST_TXP_ADAPTIVE || min != VHOST_MOD_FLOOR_DEFAULT
        || max != NETDEV_VHOST_DEFAULT_CEILING_US) {
        snprintf(bounds, sizeof bounds, ", adaptive %"PRIu32" to %"PRIu32
                 " us", min, max);
    }
    char wm[48] = "";
    if (watermark) {
        snprintf(wm, sizeof wm, ", kick watermark %"PRIu32" packets",
                 watermark);
    }
    VLOG_INFO("vhost tx flush default: mode %s, interval %"PRIu32" us%s%s%s",
              vhost_txp_mode_to_string(mode), interval,
              kicks == NETDEV_VHOST_HAS_DEFERRED_KICKS ? ""
              : kicks ? ", coalescing kicks" : ", coalescing packets",
              bounds, wm);

    netdev_vhost_for_each_locked(apply_defaults, NULL);
}

void
netdev_vhost_options_read_global(const struct smap *ovs_other_config)
{
    const char *dir = smap_get(ovs_other_config, "vhost-sock-dir");

    free(vhost_sock_dir);
    if (dir && strlen(dir) <= NAME_MAX) {
        if (strstr(dir, "..")) {
            VLOG_ERR("vhost-user sock directory request '%s/%s' has invalid "
                     "characters '..' - using %s instead.",
                     ovs_rundir(), dir, ovs_rundir());
            vhost_sock_dir = xstrdup(ovs_rundir());
        } else {
            struct stat s;

            vhost_sock_dir = xasprintf("%s/%s", ovs_rundir(), dir);
            VLOG_INFO("User-provided vhost-sock-dir in use: %s", dir);
            if (stat(vhost_sock_dir, &s)) {
                VLOG_ERR("vhost-user sock directory '%s' does not exist.",
                         vhost_sock_dir);
            }
        }
    } else {
        vhost_sock_dir = xstrdup(ovs_rundir());
    }
    vhost_iommu_enabled = smap_get_bool(ovs_other_config,
                                        "vhost-iommu-support", false);
    vhost_postcopy_enabled = smap_get_bool(ovs_other_config,
                                           "vhost-postcopy-support", false);
}
