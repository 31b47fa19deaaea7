# -*- autoconf -*-
# Copyright (c) 2026 The ovs-netdev-vhost authors.
# Licensed under the Apache License, Version 2.0.

dnl NETDEV_VHOST_CHECK_OVS
dnl
dnl Finds the OVS source and build trees (--with-ovs-source=DIR,
dnl --with-ovs-build=DIR; the build tree defaults to the source tree) and
dnl reads from the build tree's Makefile the flags OVS itself was built with,
dnl so that our objects see the same config.h, DPDK flags and libraries.
AC_DEFUN([NETDEV_VHOST_CHECK_OVS], [
  AC_ARG_WITH([ovs-source],
    [AS_HELP_STRING([--with-ovs-source=DIR],
                    [configured OVS 3.1 source tree (required)])],
    [OVS_SRCDIR=$withval], [OVS_SRCDIR=])
  AC_ARG_WITH([ovs-build],
    [AS_HELP_STRING([--with-ovs-build=DIR],
                    [OVS build tree (default: the source tree)])],
    [OVS_BUILDDIR=$withval], [OVS_BUILDDIR=$OVS_SRCDIR])
  AC_MSG_CHECKING([for OVS source tree])
  AS_IF([test -z "$OVS_SRCDIR"],
        [AC_MSG_ERROR([--with-ovs-source=DIR is required (see utilities/ovs-vhost-prepare-ovs)])])
  OVS_SRCDIR=`cd "$OVS_SRCDIR" && pwd`
  AS_IF([test ! -f "$OVS_SRCDIR/lib/netdev-provider.h"],
        [AC_MSG_ERROR([$OVS_SRCDIR is not an OVS source tree])])
  AC_MSG_RESULT([$OVS_SRCDIR])
  AC_MSG_CHECKING([for OVS build tree])
  OVS_BUILDDIR=`cd "$OVS_BUILDDIR" && pwd`
  for f in config.h Makefile lib/.libs/libopenvswitch.a lib/.libs/libsflow.a \
           ofproto/.libs/libofproto.a vswitchd/bridge.o \
           vswitchd/ovs-vswitchd.o vswitchd/system-stats.o; do
    AS_IF([test ! -f "$OVS_BUILDDIR/$f"],
          [AC_MSG_ERROR([$OVS_BUILDDIR/$f is missing: build OVS first])])
  done
  AC_MSG_RESULT([$OVS_BUILDDIR])
  AS_IF([! grep -q '^#define DPDK_NETDEV 1' "$OVS_BUILDDIR/config.h"],
        [AC_MSG_ERROR([OVS in $OVS_BUILDDIR was not configured --with-dpdk])])

  ovs_make_var() {
    sed -n "s/^$[]1 = //p" "$OVS_BUILDDIR/Makefile" | head -n 1
  }
  OVS_LIBS="`ovs_make_var LIBS` `ovs_make_var SSL_LIBS` `ovs_make_var CAPNG_LDADD`"
  OVS_CFLAGS="`ovs_make_var OVS_CFLAGS`"
  OVS_WARNING_FLAGS="`ovs_make_var WARNING_FLAGS`"
  OVS_VSWITCHD_LDFLAGS="`ovs_make_var DPDK_vswitchd_LDFLAGS`"
  OVS_PKGDATADIR="`ovs_make_var pkgdatadir`"
  OVS_VERSION="`sed -n 's/^#define VERSION "\(.*\)"/\1/p' $OVS_BUILDDIR/config.h`"
  AS_IF([test -f "$OVS_BUILDDIR/lib/.libs/libopenvswitchavx512.a"],
        [OVS_AVX512_LIB="$OVS_BUILDDIR/lib/.libs/libopenvswitchavx512.a"],
        [OVS_AVX512_LIB=""])
  dnl The OVS archives depend on each other: link them as one group.
  OVS_ARCHIVES="-Wl,--start-group $OVS_BUILDDIR/ofproto/.libs/libofproto.a \
$OVS_BUILDDIR/lib/.libs/libsflow.a $OVS_BUILDDIR/lib/.libs/libopenvswitch.a \
$OVS_AVX512_LIB -Wl,--end-group"
  AC_SUBST([OVS_ARCHIVES])
  AC_MSG_NOTICE([OVS version $OVS_VERSION])
  AC_SUBST([OVS_SRCDIR])
  AC_SUBST([OVS_BUILDDIR])
  AC_SUBST([OVS_LIBS])
  AC_SUBST([OVS_CFLAGS])
  AC_SUBST([OVS_WARNING_FLAGS])
  AC_SUBST([OVS_VSWITCHD_LDFLAGS])
  AC_SUBST([OVS_AVX512_LIB])
  AC_SUBST([OVS_VERSION])
])

dnl NETDEV_VHOST_CHECK_VERSIONS
dnl
dnl After NETDEV_VHOST_CHECK_OVS and PKG_CHECK_MODULES([DPDK]): the OVS and
dnl DPDK versions we build against (the supported platforms: OVS 3.1 with
dnl DPDK 22.11 on Debian 12, OVS 3.5 with DPDK 24.11 on Debian 13, OVS 4.0
dnl with DPDK 25.11 on Debian 14), as
dnl substitutions and as the compatibility macros the C code tests.  Our Makefile empties DEFS
dnl (OVS's config.h defines PACKAGE_*), so the macros travel in
dnl NETDEV_VHOST_COMPAT_CPPFLAGS, which is appended to CPPFLAGS:
dnl   NETDEV_VHOST_OVS_VERSION_NUM   OVS version as MAJOR*10000+MINOR*100+PATCH
dnl                                  (30100 for 3.1.0, 30500 for 3.5.0)
dnl   NETDEV_VHOST_DPDK_HAS_NOTIFY_GUEST
dnl                                  defined when DPDK's rte_vhost has the
dnl                                  deferred kick: the guest_notify device
dnl                                  op and rte_vhost_notify_guest() (DPDK
dnl                                  23.07+, checked by compiling against it)
dnl   NETDEV_VHOST_DEFERRED_KICKS    defined when, in addition, DPDK is 23.11
dnl                                  or later (its irq_pending latch): auto
dnl                                  mode coalesces kicks, not packets
dnl   NETDEV_VHOST_GUEST_OFFLOADS    defined when OVS's dp_packet carries
dnl                                  inner (tunnel) header offsets
dnl                                  (inner_l4_ofs, OVS 3.3+; probed in
dnl                                  lib/dp-packet.h): the offload model of
dnl                                  stock OVS 3.5's netdev-dpdk.c, where a
dnl                                  vhost port's tx offloads follow the
dnl                                  features the guest negotiated
dnl                                  (new_device) and checksum offload needs
dnl                                  no userspace TSO; without it, the
dnl                                  model of OVS 3.1 (offloads only with
dnl                                  userspace-tso-enable, fixed at socket
dnl                                  registration)
dnl   NETDEV_VHOST_PACKET_OFFLOADS   defined when a packet's checksum and
dnl                                  offload state is its own field
dnl                                  (dp_packet 'offloads' read by
dnl                                  dp_packet_l4_checksum_partial() and
dnl                                  the like, OVS 4.0; probed in
dnl                                  lib/dp-packet.h): the
dnl                                  offload model of stock OVS 4.0's
dnl                                  netdev-dpdk.c, requests read from the
dnl                                  packet and set as mbuf flags only at
dnl                                  transmit
dnl   NETDEV_VHOST_DYNAMIC_BATCHES   defined when packet batches grow past
dnl                                  NETDEV_MAX_BURST (dp_packet_batch_grow(),
dnl                                  OVS 4.0; probed in lib/dp-packet.h)
dnl   NETDEV_VHOST_TSO_SEGSZ_HINT    defined when the packet carries the
dnl                                  segment size of its receive side
dnl                                  (dp_packet_get_tso_segsz(), probed in
dnl                                  lib/dp-packet.h): tso_segsz is the
dnl                                  smaller of that and what the MTU
dnl                                  allows, as stock 3.5's
dnl                                  netdev_dpdk_prep_hwol_packet()
dnl   NETDEV_VHOST_VIRTIO_RECOVERY   defined for OVS 3.5+: stock's virtio
dnl                                  features recovery for guests that
dnl                                  reject TSO (status key userspace-tso)
dnl                                  and options:vhost-max-queue-pairs,
dnl                                  both absent from OVS 3.1's
dnl                                  netdev-dpdk.c
dnl   NETDEV_VHOST_UNIXCTL_JSON      defined when OVS's lib/unixctl.h has
dnl                                  unixctl_command_reply_json() (3.3+):
dnl                                  netdev-vhost/show and /stats answer
dnl                                  "ovs-appctl --format json"
dnl Substitutions: OVS_VERSION (e.g. 3.5.0), OVS_VERSION_NUM, DPDK_VERSION
dnl (libdpdk's pkg-config version, e.g. 24.11.8), NETDEV_VHOST_COMPAT_CPPFLAGS,
dnl NETDEV_VHOST_OFFLOADS ("packet" with NETDEV_VHOST_PACKET_OFFLOADS, else
dnl "guest" with NETDEV_VHOST_GUEST_OFFLOADS, else "tso-only"; for the test
dnl suite), NETDEV_VHOST_BATCHES ("dynamic" or "fixed"; for the test suite).
AC_DEFUN([NETDEV_VHOST_CHECK_VERSIONS], [
  AC_MSG_CHECKING([for the OVS version number])
  OVS_VERSION_NUM=`echo "$OVS_VERSION" | \
    awk -F. '{ printf "%d\n", $[]1 * 10000 + $[]2 * 100 + $[]3 }'`
  AS_IF([test -z "$OVS_VERSION_NUM" || test "$OVS_VERSION_NUM" = 0],
        [AC_MSG_ERROR([cannot tell the OVS version from $OVS_BUILDDIR/config.h])])
  AC_MSG_RESULT([$OVS_VERSION_NUM])
  AC_MSG_CHECKING([for the DPDK version])
  DPDK_VERSION=`$PKG_CONFIG --modversion libdpdk`
  AC_MSG_RESULT([$DPDK_VERSION])
  NETDEV_VHOST_COMPAT_CPPFLAGS="-DNETDEV_VHOST_OVS_VERSION_NUM=$OVS_VERSION_NUM"

  AC_MSG_CHECKING([whether OVS packets carry inner header offsets])
  AS_IF([grep -q 'inner_l4_ofs' "$OVS_SRCDIR/lib/dp-packet.h"],
        [netdev_vhost_guest_ol=yes
         NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_GUEST_OFFLOADS=1"],
        [netdev_vhost_guest_ol=no])
  AC_MSG_RESULT([$netdev_vhost_guest_ol])
  AC_MSG_CHECKING([whether OVS packets carry their TSO segment size])
  AS_IF([grep -q 'dp_packet_get_tso_segsz' "$OVS_SRCDIR/lib/dp-packet.h"],
        [netdev_vhost_segsz=yes
         NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_TSO_SEGSZ_HINT=1"],
        [netdev_vhost_segsz=no])
  AC_MSG_RESULT([$netdev_vhost_segsz])
  AC_MSG_CHECKING([whether OVS packets carry their offload state])
  AS_IF([grep -q 'dp_packet_l4_checksum_partial' "$OVS_SRCDIR/lib/dp-packet.h"],
        [netdev_vhost_packet_ol=yes
         NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_PACKET_OFFLOADS=1"],
        [netdev_vhost_packet_ol=no])
  AC_MSG_RESULT([$netdev_vhost_packet_ol])
  AC_MSG_CHECKING([whether OVS packet batches grow])
  AS_IF([grep -q 'dp_packet_batch_grow' "$OVS_SRCDIR/lib/dp-packet.h"],
        [NETDEV_VHOST_BATCHES=dynamic
         NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_DYNAMIC_BATCHES=1"],
        [NETDEV_VHOST_BATCHES=fixed])
  AC_MSG_RESULT([$NETDEV_VHOST_BATCHES])
  AC_SUBST([NETDEV_VHOST_BATCHES])
  AS_IF([test $netdev_vhost_packet_ol = yes],
        [NETDEV_VHOST_OFFLOADS=packet],
        [test $netdev_vhost_guest_ol = yes],
        [NETDEV_VHOST_OFFLOADS=guest], [NETDEV_VHOST_OFFLOADS=tso-only])
  AC_SUBST([NETDEV_VHOST_OFFLOADS])
  AS_IF([test "$OVS_VERSION_NUM" -ge 30500],
        [NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_VIRTIO_RECOVERY=1"])

  dnl "ovs-appctl --format json" (OVS 3.3+): a command answers in JSON
  dnl when its connection asks for it.
  AC_MSG_CHECKING([whether OVS commands can answer in JSON])
  AS_IF([grep -q 'unixctl_command_reply_json' "$OVS_SRCDIR/lib/unixctl.h"],
        [netdev_vhost_unixctl_json=yes
         NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_UNIXCTL_JSON=1"],
        [netdev_vhost_unixctl_json=no])
  AC_MSG_RESULT([$netdev_vhost_unixctl_json])

  AC_MSG_CHECKING([whether rte_vhost can defer the guest notification])
  save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS $DPDK_CFLAGS -DALLOW_EXPERIMENTAL_API"
  AC_COMPILE_IFELSE(
    [AC_LANG_PROGRAM([[#include <stdbool.h>
#include <rte_vhost.h>
static bool notify(int vid, uint16_t qid) { (void) vid; (void) qid; return true; }
]], [[struct rte_vhost_device_ops ops = { .guest_notify = notify };
      (void) ops;
      rte_vhost_notify_guest(0, 0);]])],
    [netdev_vhost_notify_guest=yes], [netdev_vhost_notify_guest=no])
  CFLAGS=$save_CFLAGS
  AC_MSG_RESULT([$netdev_vhost_notify_guest])
  AS_IF([test $netdev_vhost_notify_guest = yes],
        [NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_DPDK_HAS_NOTIFY_GUEST=1"])

  dnl Deferred kicks need the irq_pending latch of DPDK 23.11 (with 23.07's
  dnl guest_notify alone a taken-over kick could be re-requested while it is
  dnl pending).  No header tells the latch apart, so the version does.
  AC_MSG_CHECKING([whether to coalesce kicks (deferred kicks, DPDK 23.11+)])
  netdev_vhost_dpdk_2311=`echo "$DPDK_VERSION" | \
    awk -F. '{ print ($[]1 * 100 + $[]2 >= 2311) ? "yes" : "no" }'`
  AS_IF([test $netdev_vhost_notify_guest = yes && test "$netdev_vhost_dpdk_2311" = yes],
        [NETDEV_VHOST_KICKS=deferred
         NETDEV_VHOST_COMPAT_CPPFLAGS="$NETDEV_VHOST_COMPAT_CPPFLAGS -DNETDEV_VHOST_DEFERRED_KICKS=1"],
        [NETDEV_VHOST_KICKS=staged])
  AC_MSG_RESULT([$NETDEV_VHOST_KICKS])
  AC_SUBST([NETDEV_VHOST_KICKS])
  CPPFLAGS="$CPPFLAGS $NETDEV_VHOST_COMPAT_CPPFLAGS"
  AC_SUBST([OVS_VERSION_NUM])
  AC_SUBST([DPDK_VERSION])
  AC_SUBST([NETDEV_VHOST_COMPAT_CPPFLAGS])
])
