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

#ifndef NETDEV_VHOST_UNIXCTL_H
#define NETDEV_VHOST_UNIXCTL_H 1

/* The operator commands of netdev-vhost (lib/netdev-vhost-unixctl.c). */

/* Registers "netdev-vhost/show [PORT]", "netdev-vhost/stats PORT" (both
 * answer "ovs-appctl --format json" with a JSON object where the OVS build
 * has JSON output, 3.3+; text otherwise) and "netdev-vhost/clear-stats
 * [PORT]" (resets what the first two show, never the statistics).  Main
 * thread, once: called by netdev_vhost_register(). */
void netdev_vhost_unixctl_register(void);

#endif /* netdev-vhost-unixctl.h */
