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
