#!/bin/bash
# Checks the Debian package openvswitch-switch-vhost on this machine, as an
# operator would use it.  Not part of "make check": run it by hand,
# as root, on Debian 12, 13 or 14 with openvswitch-switch installed:
#
#   tests/package-deb.sh [--platform=debian12|debian13|debian14] [--nocheck]
#       [PACKAGE.deb]
#
# --platform defaults to the host's own; --platform=debian13 (debian14) on
# a Debian 12 host runs the whole test inside the Debian 13 (14) root of
# utilities/ovs-vhost-prepare-debian13 (-debian14; --exec; the source tree
# is at the same path there), so the package builds against that release's
# OVS and DPDK (3.5 and 24.11; 4.0 and 25.11) and installs there as an
# alternative to its ovs-vswitchd.
#
# Without an argument it builds the package first with
# utilities/ovs-vhost-rebuild-deb (a copy of this work tree under
# $PKGTEST_DIR, default a new /tmp/ovs-vhost-pkgtest.XXXXXX; missing
# Build-Depends installed with apt; --nocheck: without the unit tests of
# the build).  Then it:
#   0. checks the version scheme: the .deb's Version, Depends and
#      Built-Using name the installed OVS build exactly (dpkg-deb -f);
#      debian/rules ovs-build-info gives the exact, higher versions for a
#      security upload and a binNMU of openvswitch; debian/rules refuses a
#      changelog that names no or another OVS build;
#   1. selects openvswitch-switch-dpdk's ovs-vswitchd-dpdk, as on a host
#      that runs OVS-DPDK, installs the .deb (apt-get install ./PACKAGE.deb),
#      checks that the alternative is registered below the stock ones, that
#      the DPDK choice is kept and recorded; apt refuses the same package
#      rebuilt for the next OVS security upload (its control fields, repacked
#      with dpkg-deb) and upgrades to it rebuilt for the same OVS (+b1);
#   2. selects ours with update-alternatives --set and checks --display;
#   3. starts OVS with Debian's own /usr/share/openvswitch/scripts/ovs-ctl
#      (ovsdb-server, then ovs-vswitchd with dpdk-init=true) in a network
#      namespace of its own, so that its netdev datapath does not meet other
#      OVS instances on the machine, and checks that the ovs-vswitchd running
#      is ours and that netdev-vhost took over the vhost-user port types;
#   4. adds two dpdkvhostuser ports to a netdev bridge with a flow from one
#      to the other, sends 1000 packets from an ovs-vhost-guest tx guest into
#      vhu0 and receives them with an rx guest on vhu1, and checks the guests'
#      counters, OVS's port and flow counters and ovs-appctl netdev-vhost/show;
#   5. stops OVS with ovs-ctl stop, removes (purges) the package and checks
#      that the alternative is back on ovs-vswitchd-dpdk (manual mode), with
#      nothing restored by hand;
#   6. starts OVS again with ovs-ctl and checks that the ovs-vswitchd running
#      is stock's ovs-vswitchd-dpdk and that the same traffic passes (the
#      guest binary copied before the removal; stock's vhost port counters
#      are not readable once the guests are gone, so the flow's and the
#      guests' counters are compared).
# It prints "package-deb: N passed, N failed" last and exits non-zero on any
# failure.  Whatever happens, it stops only the processes it started (by the
# PIDs in their pidfiles), removes the package and its network namespace, and
# restores the alternatives, the hugepage count and the hugetlbfs mount.
#
# Uses /var/run/openvswitch (Debian's run directory: ovs-ctl, ovs-vsctl and
# the vhost-user sockets live there) and refuses to start if an OVS already
# runs there; the database and the logs are kept in the test directory.
set -u
set -o pipefail

PKG=openvswitch-switch-vhost
OURS=/usr/lib/$PKG/ovs-vswitchd
STOCK_DPDK=/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
OVS_CTL=/usr/share/openvswitch/scripts/ovs-ctl
RUNDIR=/var/run/openvswitch
HUGEDIR=/dev/hugepages
OVS_MEM_MB=512
GUEST_MEM_MB=128
COUNT=1000

top=$(cd "$(dirname "$0")/.." && pwd)

platform=
nocheck=
args=()
for arg in "$@"; do
    case $arg in
        --platform=*) platform=${arg#--platform=} ;;
        --workdir=*) PKGTEST_DIR=${arg#--workdir=} ;;
        --nocheck) nocheck=--nocheck ;;
        -*) echo "package-deb: unknown option $arg" >&2; exit 2 ;;
        *) args+=("$(readlink -f "$arg")") ;;
    esac
done
set -- "${args[@]}"
case $(. /etc/os-release && echo "${VERSION_CODENAME:-}") in
    bookworm) native=debian12 ;;
    trixie) native=debian13 ;;
    forky) native=debian14 ;;
    *) native=unknown ;;
esac
platform=${platform:-$native}
if [ "$platform" != "$native" ]; then
    if [ "$native" = debian12 ] && { [ "$platform" = debian13 ] \
            || [ "$platform" = debian14 ]; }; then
        # A .deb given as an argument must be inside the source tree (or
        # another path the root shares).  Without one, the work tree is
        # copied here (git runs on the host: the root has no git, and a
        # worktree's .git points outside the tree) into a work directory
        # inside the root, which the run there reuses.
        prepare=$top/utilities/ovs-vhost-prepare-$platform
        root=$("$prepare" | tail -n 1)
        inner=$(mktemp -d "$root/tmp/ovs-vhost-pkgtest.XXXXXX")
        if [ $# -eq 0 ]; then
            mkdir -p "$inner/src"
            (cd "$top" && git ls-files -co --exclude-standard -z \
                | grep -zEv '^_build[^/]*/' | tar --null -cf - -T -) \
                | tar -xf - -C "$inner/src" \
                || { echo "package-deb: copying the work tree" >&2; exit 1; }
        fi
        exec "$prepare" --exec \
            "$top/tests/package-deb.sh" --platform="$platform" $nocheck \
            --workdir="${inner#$root}" "$@"
    fi
    echo "package-deb: cannot test $platform on $native" >&2
    exit 2
fi
n_pass=0
n_fail=0
cleanup_done=false

log() { echo "package-deb: $*"; }
pass() { n_pass=$((n_pass + 1)); echo "PASS: $*"; }
fail() { n_fail=$((n_fail + 1)); echo "FAIL: $*"; }
# check DESCRIPTION COMMAND...: runs COMMAND, counts a pass or a failure.
check() {
    local what=$1; shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
die() {
    fail "$*"
    exit 1
}
# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s.
wait_until() {
    local i n=$(( $1 * 10 )); shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
summary() {
    echo "package-deb: $n_pass passed, $n_fail failed"
}

[ "$(id -u)" = 0 ] || { echo "package-deb: must run as root" >&2; exit 2; }
for t in "$OVS_CTL" /usr/lib/openvswitch-switch/ovs-vswitchd "$STOCK_DPDK"; do
    [ -e "$t" ] || { echo "package-deb: $t missing (apt-get install openvswitch-switch-dpdk)" >&2; exit 2; }
done
if dpkg-query -W -f='${Status}\n' "$PKG" 2>/dev/null | grep -q 'installed$'; then
    echo "package-deb: $PKG is already installed; remove it first (this test installs and removes it)" >&2
    exit 2
fi
for d in ovs-vswitchd ovsdb-server; do
    if [ -f "$RUNDIR/$d.pid" ] && kill -0 "$(cat "$RUNDIR/$d.pid")" 2>/dev/null; then
        echo "package-deb: $d already runs from $RUNDIR (pid $(cat "$RUNDIR/$d.pid")); not touching it" >&2
        exit 2
    fi
done

WORK=${PKGTEST_DIR:-$(mktemp -d /tmp/ovs-vhost-pkgtest.XXXXXX)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
case $WORK/ in
    "$top"/*) echo "package-deb: PKGTEST_DIR must be outside the repository" >&2; exit 2 ;;
esac
log "work directory $WORK"

# --- State to restore. -----------------------------------------------------
alt_query() { update-alternatives --query ovs-vswitchd 2>/dev/null | sed -n "s/^$1: //p"; }
ALT_STATUS_BEFORE=$(alt_query Status)
ALT_VALUE_BEFORE=$(alt_query Value)
HUGE_BEFORE=$(cat /proc/sys/vm/nr_hugepages)
NS=pkgtest$$
ns_created=false
rundir_created=false
hugedir_mounted=false
pkg_installed=false
GUEST_PIDS=
OVS_PIDS=

stop_ovs() {
    # ovs-ctl stop: ovs-appctl exit to the daemons named by the pidfiles in
    # $RUNDIR, which are ours (checked above that none ran before).
    local d p
    for d in ovs-vswitchd ovsdb-server; do
        [ -f "$RUNDIR/$d.pid" ] && OVS_PIDS="$OVS_PIDS $(cat "$RUNDIR/$d.pid")"
    done
    [ -n "${OVS_PIDS// /}" ] || return 0
    OVS_LOGDIR=${OVS_LOGDIR:-$WORK} "$OVS_CTL" stop > "$WORK/ovs-ctl-stop.out" 2>&1
    for p in $OVS_PIDS; do
        if ! wait_until 10 eval "! kill -0 $p 2>/dev/null"; then
            log "pid $p did not exit: killing it"
            kill -9 "$p" 2>/dev/null
        fi
    done
    OVS_PIDS=
}

cleanup() {
    $cleanup_done && return
    cleanup_done=true
    local p
    for p in $GUEST_PIDS; do
        kill "$p" 2>/dev/null
    done
    stop_ovs
    rm -f "$RUNDIR/vhu0" "$RUNDIR/vhu1"
    rm -rf "$WORK"/*.repack.deb "$WORK/fake-repo"
    # DPDK runtime directories of our EAL file prefixes.
    rm -rf "/var/run/dpdk/pkgtest$$" "/var/run/dpdk/pkgrx$$" "/var/run/dpdk/pkgtx$$"
    if $rundir_created; then
        rm -rf "$RUNDIR"
    fi
    if $ns_created; then
        ip netns del "$NS" 2>/dev/null
    fi
    if $pkg_installed; then
        log "removing $PKG"
        DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$PKG" \
            > "$WORK/remove.out" 2>&1 || dpkg --purge "$PKG" >> "$WORK/remove.out" 2>&1
        pkg_installed=false
    fi
    # Back to the alternatives state found at the start.
    if [ "$ALT_STATUS_BEFORE" = manual ] && [ "$(alt_query Value)" != "$ALT_VALUE_BEFORE" ]; then
        update-alternatives --set ovs-vswitchd "$ALT_VALUE_BEFORE" > /dev/null
    elif [ "$ALT_STATUS_BEFORE" = auto ] && [ "$(alt_query Status)" != auto ]; then
        update-alternatives --auto ovs-vswitchd > /dev/null
    fi
    if $hugedir_mounted; then
        umount "$HUGEDIR" 2>/dev/null
    fi
    if [ "$(cat /proc/sys/vm/nr_hugepages)" != "$HUGE_BEFORE" ]; then
        echo "$HUGE_BEFORE" > /proc/sys/vm/nr_hugepages 2>/dev/null
    fi
}
trap 'cleanup; summary' EXIT
trap 'exit 130' INT TERM

# --- 0. The package and its version. ---------------------------------------
if [ $# -ge 1 ]; then
    DEB=$(readlink -f "$1")
    [ -f "$DEB" ] || die "no such package file: $1"
else
    # In the Debian 13 or 14 root (no git there), the copy made before entering.
    src=$top
    if [ -f "$WORK/src/debian/rules" ] && ! command -v git > /dev/null; then
        log "using the copy of the work tree made before entering the root"
        src=$WORK/src
    fi
    log "building the package with ovs-vhost-rebuild-deb (log: $WORK/rebuild/build.log)"
    t0=$(date +%s)
    if "$top/utilities/ovs-vhost-rebuild-deb" --source="$src" $nocheck \
            --workdir="$WORK/rebuild" --output="$WORK" > "$WORK/rebuild.out" 2>&1; then
        pass "ovs-vhost-rebuild-deb ($(( $(date +%s) - t0 )) s)"
        DEB=$(tail -n 1 "$WORK/rebuild.out")
    else
        tail -30 "$WORK/rebuild.out"
        die "ovs-vhost-rebuild-deb failed (see $WORK/rebuild.out)"
    fi
    grep -v "^$WORK/" "$WORK/rebuild.out" | sed 's/^/    /'
    rm -rf "$WORK/rebuild" "$WORK/src"
fi
log "package $DEB"
dpkg-deb -I "$DEB" control | sed 's/^/    /'

# What the version and the dependencies must be, from what is installed
# here: the configure.ac version, the openvswitch-common built from
# openvswitch-source (same source version), the platform.
AC_VERSION=$(sed -n 's/^AC_INIT(\[*ovs-netdev-vhost\]*, *\[*\([^],]*\)\]*,.*/\1/p' "$top/configure.ac")
OVS_SOURCE=$(dpkg-query -W -f='${Version}' openvswitch-source)
OVS_BUILD=$(dpkg-query -W -f='${Version}' openvswitch-common)
check "openvswitch-common $OVS_BUILD is built from openvswitch-source $OVS_SOURCE" \
    test "$(dpkg-query -W -f='${source:Version}' openvswitch-common)" = "$OVS_SOURCE"
# The platform tag, as debian/rules makes it: deb + VERSION_ID; a release
# in testing has none, its codename names it.
TAG=$(. /etc/os-release && if [ -n "${VERSION_ID:-}" ]; then
          echo "deb$VERSION_ID"
      else
          case "${VERSION_CODENAME:-}" in
              bookworm) echo deb12 ;; trixie) echo deb13 ;; forky) echo deb14 ;;
          esac
      fi)
[ -n "$TAG" ] || die "neither VERSION_ID nor a known VERSION_CODENAME in /etc/os-release: cannot name the platform"
EXP_VERSION=$AC_VERSION+ovs$OVS_BUILD~$TAG
EXP_DEPENDS="openvswitch-common (= $OVS_BUILD), openvswitch-switch (= $OVS_BUILD)"
deb_version=$(dpkg-deb -f "$DEB" Version)
deb_depends=$(dpkg-deb -f "$DEB" Depends)
check "dpkg-deb -f Version: $deb_version = $EXP_VERSION" \
    test "$deb_version" = "$EXP_VERSION"
check "dpkg-deb -f Depends starts with: $EXP_DEPENDS, " \
    eval 'case "$deb_depends" in "$EXP_DEPENDS, "*) true;; *) false;; esac'
check "dpkg-deb -f Built-Using: openvswitch (= $OVS_SOURCE)" \
    test "$(dpkg-deb -f "$DEB" Built-Using)" = "openvswitch (= $OVS_SOURCE)"

# The versions of a rebuild after a security upload of openvswitch (source
# and binary version X+debNuM, the binNMU suffix gone) and after a binNMU
# of openvswitch (X+b1, same source), from debian/rules ovs-build-info with
# its inputs given: exact, and higher than this package's.
ovs_base=${OVS_BUILD%+b[0-9]*}
if [[ $ovs_base =~ ^(.*\+deb[0-9]+u)([0-9]+)$ ]]; then
    OVS_NEXT=${BASH_REMATCH[1]}$(( BASH_REMATCH[2] + 1 ))
else
    OVS_NEXT=$ovs_base+${TAG}u1
fi
OVS_BINNMU=$OVS_SOURCE+b$(( $(echo "$OVS_BUILD" | sed -n 's/.*+b\([0-9]*\)$/\1/p') + 1 ))
rules_info() { # OVS_BUILD OVS_SOURCE_VERSION FIELD
    (cd "$top" && make -s -f debian/rules ovs-build-info \
        OVS_BUILD="$1" OVS_SOURCE_VERSION="$2") | sed -n "s/^$3: //p"
}
for v in "$OVS_NEXT $OVS_NEXT" "$OVS_BINNMU $OVS_SOURCE"; do
    set -- $v
    got=$(rules_info "$1" "$2" Version)
    check "rebuild for openvswitch-common $1: Version $got = $AC_VERSION+ovs$1~$TAG" \
        test "$got" = "$AC_VERSION+ovs$1~$TAG"
    check "dpkg --compare-versions $got gt $deb_version" \
        dpkg --compare-versions "$got" gt "$deb_version"
    got=$(rules_info "$1" "$2" Depends)
    check "rebuild for openvswitch-common $1: Depends: $got" \
        test "$got" = "openvswitch-common (= $1), openvswitch-switch (= $1)"
done
check "Debian 12's 0.2.0+ovs3.1.0-2+deb12u1~deb12 sorts below Debian 13's 0.2.0+ovs3.5.0-1+b1~deb13" \
    dpkg --compare-versions 0.2.0+ovs3.1.0-2+deb12u1~deb12 lt 0.2.0+ovs3.5.0-1+b1~deb13
check "Debian 13's 0.2.0+ovs3.5.0-1+b1~deb13 sorts below Debian 14's 0.2.0+ovs4.0.0-2+b1~deb14" \
    dpkg --compare-versions 0.2.0+ovs3.5.0-1+b1~deb13 lt 0.2.0+ovs4.0.0-2+b1~deb14
(cd "$top" && make -s -f debian/rules ovs-build-check) > "$WORK/build-check.out" 2>&1
check "debian/rules refuses the changelog version $(cd "$top" && dpkg-parsechangelog -S Version) (names no OVS build)" \
    grep -qF "must be $EXP_VERSION: run utilities/ovs-vhost-rebuild-deb" "$WORK/build-check.out"
sed 's/^/    /' "$WORK/build-check.out"

# repack DEB VERSION OVS_BUILD OUT: the .deb with the control fields of a
# rebuild (Version; Depends on OVS_BUILD), to see what apt does with it.
repack() {
    local d=$WORK/repack
    rm -rf "$d"
    dpkg-deb -R "$1" "$d" || return 1
    sed -i -e "s/^Version: .*/Version: $2/" \
        -e "/^Depends: /s/(= $(printf '%s' "$OVS_BUILD" | sed 's/[.]/\\./g'))/(= $3)/g" \
        "$d/DEBIAN/control"
    dpkg-deb -b "$d" "$4" > /dev/null || return 1
    rm -rf "$d"
}

# --- 1. A DPDK host: stock's DPDK binary selected.  Install. ---------------
update-alternatives --set ovs-vswitchd "$STOCK_DPDK" > /dev/null \
    || die "update-alternatives --set ovs-vswitchd $STOCK_DPDK"
check "before install: /usr/sbin/ovs-vswitchd is $STOCK_DPDK" \
    test "$(readlink -f /usr/sbin/ovs-vswitchd)" = "$STOCK_DPDK"
pkg_installed=true
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "$DEB" > "$WORK/install.out" 2>&1; then
    pass "apt-get install $(basename "$DEB")"
else
    cat "$WORK/install.out"
    die "apt-get install $DEB"
fi
check "$OURS is installed and executable" test -x "$OURS"
check "ovs-vhost-guest is in /usr/bin" test -x /usr/bin/ovs-vhost-guest
check "ovs-vhost-guest(8) is installed" test -f /usr/share/man/man8/ovs-vhost-guest.8.gz
check "README.Debian is installed" \
    eval "test -f /usr/share/doc/$PKG/README.Debian -o -f /usr/share/doc/$PKG/README.Debian.gz"
update-alternatives --display ovs-vswitchd > "$WORK/alt-installed.txt"
prio_ours=$(sed -n "s|^$OURS - priority ||p" "$WORK/alt-installed.txt")
prio_stock=$(sed -n "s|^/usr/lib/openvswitch-switch/ovs-vswitchd - priority ||p" "$WORK/alt-installed.txt")
prio_dpdk=$(sed -n "s|^$STOCK_DPDK - priority ||p" "$WORK/alt-installed.txt")
log "alternatives after install:"; sed 's/^/    /' "$WORK/alt-installed.txt"
check "alternative registered (priority $prio_ours)" test -n "$prio_ours"
check "priority $prio_ours is below stock's ($prio_stock) and stock DPDK's ($prio_dpdk)" \
    test "${prio_ours:-999}" -lt "${prio_dpdk:-0}" -a "${prio_dpdk:-0}" -lt "${prio_stock:-0}"
check "installing kept the choice (link is $(alt_query Value))" \
    test "$(alt_query Value)" = "$STOCK_DPDK"
check "postinst recorded the choice: $(cat /var/lib/$PKG/previous-alternative 2>&1)" \
    test "$(cat /var/lib/$PKG/previous-alternative 2>/dev/null)" = "manual $STOCK_DPDK"

# The same package rebuilt for the next security upload of openvswitch,
# before that upload is installed: apt must refuse it (and keep ours).
next_deb=$WORK/${PKG}_next.repack.deb
repack "$DEB" "$AC_VERSION+ovs$OVS_NEXT~$TAG" "$OVS_NEXT" "$next_deb" \
    || die "repacking $DEB"
check "repacked for $OVS_NEXT: Depends starts with openvswitch-common (= $OVS_NEXT), openvswitch-switch (= $OVS_NEXT)" \
    eval 'case "$(dpkg-deb -f "$next_deb" Depends)" in "openvswitch-common (= $OVS_NEXT), openvswitch-switch (= $OVS_NEXT), "*) true;; *) false;; esac'
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "$next_deb" > "$WORK/install-next.out" 2>&1; then
    fail "apt-get install of the package for openvswitch $OVS_NEXT succeeded"
else
    pass "apt-get install of the package for openvswitch $OVS_NEXT refused"
fi
grep -E 'Depends:|unmet|held' "$WORK/install-next.out" | sed 's/^/    /'
check "apt names the missing openvswitch-common (= $OVS_NEXT)" \
    grep -qF "Depends: openvswitch-common (= $OVS_NEXT)" "$WORK/install-next.out"
check "installed version still $EXP_VERSION" \
    test "$(dpkg-query -W -f='${Version}' $PKG)" = "$EXP_VERSION"

# What apt does when that upload arrives, simulated (apt-get -s: nothing
# changes) with a local repository of empty stand-ins for the openvswitch
# packages at $OVS_NEXT and the lists of that repository only: "upgrade"
# upgrades openvswitch-source and keeps the rest back; installing the
# rebuilt package with them upgrades them all.
fake=$WORK/fake-repo
mkdir -p "$fake/lists/partial"
arch=$(dpkg --print-architecture)
fake_pkg() { # NAME ARCH DEPENDS
    local d=$fake/build/$1
    mkdir -p "$d/DEBIAN"
    {
        echo "Package: $1"; echo "Version: $OVS_NEXT"; echo "Architecture: $2"
        echo "Source: openvswitch"; echo "Maintainer: package-deb <root@localhost>"
        [ -z "$3" ] || echo "Depends: $3"
        echo "Description: stand-in for $1 $OVS_NEXT (tests/package-deb.sh)"
    } > "$d/DEBIAN/control"
    dpkg-deb -b "$d" "$fake/$1_$OVS_NEXT.deb" > /dev/null
}
fake_pkgs="openvswitch-common openvswitch-switch"
fake_pkg openvswitch-source all ""
fake_pkg openvswitch-common "$arch" ""
fake_pkg openvswitch-switch "$arch" "openvswitch-common (= $OVS_NEXT)"
if dpkg-query -W -f='${Status}' openvswitch-switch-dpdk 2>/dev/null | grep -q ' installed$'; then
    fake_pkg openvswitch-switch-dpdk "$arch" "openvswitch-switch (= $OVS_NEXT)"
    fake_pkgs="$fake_pkgs openvswitch-switch-dpdk"
fi
(cd "$fake" && dpkg-scanpackages . > Packages 2> /dev/null)
echo "deb [trusted=yes] file:$fake ./" > "$fake/sources.list"
APT_FAKE=(-o Dir::Etc::SourceList="$fake/sources.list" -o Dir::Etc::SourceParts=/nonexistent
          -o Dir::State::Lists="$fake/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
          -o APT::Get::List-Cleanup=0 -o Acquire::Languages=none)
apt-get "${APT_FAKE[@]}" update > "$WORK/fake-update.out" 2>&1 \
    || { cat "$WORK/fake-update.out"; fail "apt-get update (local repository)"; }
apt-get "${APT_FAKE[@]}" -s upgrade > "$WORK/fake-upgrade.out" 2>&1
sed -n '/kept back/,/^[^ ]/p; /^Inst /p' "$WORK/fake-upgrade.out" | sed 's/^/    /'
check "apt-get -s upgrade: kept back: $fake_pkgs" \
    test "$(sed -n '/kept back:/{n;p}' "$WORK/fake-upgrade.out" | xargs -n1 | sort | xargs)" \
         = "$(echo $fake_pkgs | xargs -n1 | sort | xargs)"
check "apt-get -s upgrade: Inst openvswitch-source [$OVS_SOURCE] ($OVS_NEXT ...)" \
    grep -qF "Inst openvswitch-source [$OVS_SOURCE] ($OVS_NEXT " "$WORK/fake-upgrade.out"
apt-get "${APT_FAKE[@]}" -s install "$next_deb" $fake_pkgs > "$WORK/fake-install.out" 2>&1
grep '^Inst ' "$WORK/fake-install.out" | sed 's/^/    /'
# (openvswitch-source comes along too; "upgrade" has done that already.)
check "apt-get -s install of the rebuilt package with $fake_pkgs: all at $OVS_NEXT" \
    test "$(grep '^Inst ' "$WORK/fake-install.out" | grep -v '^Inst openvswitch-source ' \
            | sed -n 's/^Inst \([^ ]*\) \[[^]]*\] (\([^ ]*\) .*/\1 \2/p' | sort | xargs)" \
         = "$({ for p in $fake_pkgs; do echo "$p $OVS_NEXT"; done
                echo "$PKG $AC_VERSION+ovs$OVS_NEXT~$TAG"; } | sort | xargs)"

# --- 2. Select. ------------------------------------------------------------
update-alternatives --set ovs-vswitchd "$OURS" > "$WORK/alt-set.out" 2>&1
update-alternatives --display ovs-vswitchd > "$WORK/alt-selected.txt"
log "alternatives after --set:"; sed 's/^/    /' "$WORK/alt-selected.txt"
check "update-alternatives --display: manual mode" \
    grep -q '^ovs-vswitchd - manual mode' "$WORK/alt-selected.txt"
check "update-alternatives --display: link currently points to ours" \
    grep -q "link currently points to $OURS\$" "$WORK/alt-selected.txt"
check "/usr/sbin/ovs-vswitchd resolves to ours" \
    test "$(readlink -f /usr/sbin/ovs-vswitchd)" = "$OURS"

# A binNMU of ours (same OVS build): an upgrade, which keeps the selection.
binnmu_deb=$WORK/${PKG}_binnmu.repack.deb
repack "$DEB" "$EXP_VERSION+b1" "$OVS_BUILD" "$binnmu_deb" || die "repacking $DEB"
if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "$binnmu_deb" > "$WORK/install-binnmu.out" 2>&1; then
    pass "apt-get install of $EXP_VERSION+b1 (upgrade)"
else
    cat "$WORK/install-binnmu.out"
    fail "apt-get install of $EXP_VERSION+b1 (upgrade)"
fi
check "installed version now $EXP_VERSION+b1" \
    test "$(dpkg-query -W -f='${Version}' $PKG)" = "$EXP_VERSION+b1"
check "after the upgrade: manual mode, link still ours" \
    test "$(alt_query Status) $(alt_query Value)" = "manual $OURS"
check "after the upgrade: recorded choice still manual $STOCK_DPDK" \
    test "$(cat /var/lib/$PKG/previous-alternative 2>/dev/null)" = "manual $STOCK_DPDK"

# --- 3. Start OVS with Debian's ovs-ctl. -----------------------------------
# Hugepages: OVS (dpdk-socket-mem) and two guests.
need=$(( (OVS_MEM_MB + 2 * GUEST_MEM_MB) / 2 + 64 ))
free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
if [ "$free" -lt "$need" ]; then
    echo $(( HUGE_BEFORE + need - free )) > /proc/sys/vm/nr_hugepages
    free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
fi
check "$need free 2 MB hugepages ($free free)" test "$free" -ge "$need"
if ! grep -q " $HUGEDIR hugetlbfs " /proc/mounts; then
    mkdir -p "$HUGEDIR"
    mount -t hugetlbfs nodev "$HUGEDIR" && hugedir_mounted=true
fi
check "hugetlbfs mounted on $HUGEDIR" grep -q " $HUGEDIR hugetlbfs " /proc/mounts

[ -d "$RUNDIR" ] || rundir_created=true
ip netns add "$NS" || die "ip netns add $NS"
ns_created=true
# The database stays in $WORK (both runs use it); --system-id given so that
# ovs-ctl writes no /etc/openvswitch/system-id.conf.
CTL_OPTS="--db-file=$WORK/conf.db --system-id=ovs-vhost-pkgtest-$$ \
--no-record-hostname --no-monitor"

# start_ovs LOGDIR BINARY: ovsdb-server, then ovs-vswitchd through
# /usr/sbin/ovs-vswitchd, which must be BINARY.
start_ovs() {
    mkdir -p "$1"
    export OVS_LOGDIR=$1
    if ip netns exec "$NS" "$OVS_CTL" $CTL_OPTS --no-ovs-vswitchd start \
            > "$1/ovs-ctl-start-db.out" 2>&1; then
        pass "ovs-ctl --no-ovs-vswitchd start (ovsdb-server)"
    else
        cat "$1/ovs-ctl-start-db.out"
        die "ovs-ctl start ovsdb-server"
    fi
    ovs-vsctl --no-wait set Open_vSwitch . \
        other_config:dpdk-init=true \
        other_config:dpdk-socket-mem=$OVS_MEM_MB \
        other_config:dpdk-extra="--no-pci --file-prefix=pkgtest$$" \
        other_config:pmd-cpu-mask=0x2 \
        || die "ovs-vsctl set dpdk config"
    rm -f "$RUNDIR/vhu0" "$RUNDIR/vhu1"
    if ip netns exec "$NS" "$OVS_CTL" $CTL_OPTS --no-ovsdb-server start \
            > "$1/ovs-ctl-start-vswitchd.out" 2>&1; then
        pass "ovs-ctl --no-ovsdb-server start (ovs-vswitchd, dpdk-init=true)"
    else
        cat "$1/ovs-ctl-start-vswitchd.out"
        tail -20 "$1/ovs-vswitchd.log"
        die "ovs-ctl start ovs-vswitchd"
    fi
    VSWITCHD_PID=$(cat "$RUNDIR/ovs-vswitchd.pid" 2>/dev/null)
    # By inode, not by the link's text: in a chroot (the Debian 13 or 14 root)
    # with ip netns exec's mount namespace, /proc/PID/exe may read as
    # another path.
    check "running ovs-vswitchd (pid $VSWITCHD_PID) is $2 ($(readlink "/proc/$VSWITCHD_PID/exe"))" \
        test "/proc/$VSWITCHD_PID/exe" -ef "$2"
    check "ovs-vswitchd runs in network namespace $NS" \
        test "$(ip netns identify "$VSWITCHD_PID")" = "$NS"
}
dpdk_up() {
    test "$(ovs-vsctl get Open_vSwitch . dpdk_initialized 2>/dev/null)" = true
}

# traffic LOGDIR GUEST [stock]: ports, a flow, COUNT packets from a tx guest on vhu0
# to an rx guest on vhu1; the guests' and OVS's counters must balance.
traffic() {
    local w=$1 guest=$2
    ovs-vsctl --may-exist add-br br0 -- set bridge br0 datapath_type=netdev \
        -- --may-exist add-port br0 vhu0 -- set Interface vhu0 type=dpdkvhostuser ofport_request=1 \
        -- --may-exist add-port br0 vhu1 -- set Interface vhu1 type=dpdkvhostuser ofport_request=2 \
        || die "ovs-vsctl add-br br0, add-port vhu0 vhu1"
    check "vhost-user sockets $RUNDIR/vhu0 and vhu1 created" \
        wait_until 20 eval "test -S $RUNDIR/vhu0 && test -S $RUNDIR/vhu1"
    ovs-ofctl del-flows br0 && ovs-ofctl add-flow br0 in_port=1,actions=output:2 \
        || die "ovs-ofctl add-flow"

    # The rx guest sleeps on Rx interrupts (it shares CPU 0 with the tx
    # guest; OVS's PMD thread has CPU 1).
    "$guest" --socket="$RUNDIR/vhu1" --role=rx --mode=interrupt --count=$COUNT --idle-ms=2000 \
        --duration=60 --mem=$GUEST_MEM_MB --lcore=0 --file-prefix=pkgrx$$ \
        > "$w/rx.json" 2> "$w/rx.err" &
    RX_PID=$!
    GUEST_PIDS="$GUEST_PIDS $RX_PID"
    link_up() { test "$(ovs-vsctl get Interface vhu1 link_state)" = up; }
    check "rx guest connected to vhu1 (link_state up)" wait_until 30 link_up
    "$guest" --socket="$RUNDIR/vhu0" --role=tx --count=$COUNT --rate=10000 \
        --mem=$GUEST_MEM_MB --lcore=0 --file-prefix=pkgtx$$ \
        > "$w/tx.json" 2> "$w/tx.err" &
    TX_PID=$!
    GUEST_PIDS="$GUEST_PIDS $TX_PID"
    wait $TX_PID; tx_status=$?
    wait $RX_PID; rx_status=$?
    GUEST_PIDS=
    log "tx guest: $(cat "$w/tx.json")"
    log "rx guest: $(cat "$w/rx.json")"
    check "tx guest exited 0" test "$tx_status" = 0
    check "rx guest exited 0" test "$rx_status" = 0
    tx_sent=$(json "$w/tx.json" tx_packets)
    tx_dropped=$(json "$w/tx.json" tx_dropped)
    rx_got=$(json "$w/rx.json" rx_packets)
    check "tx guest sent $tx_sent packets (+ $tx_dropped it could not enqueue) = $COUNT" \
        test "$(( ${tx_sent:-0} + ${tx_dropped:-0} ))" = $COUNT
    check "tx guest sent at least 99% of $COUNT" test "${tx_sent:-0}" -ge $(( COUNT * 99 / 100 ))
    if [ "$3" = stock ]; then
        # Stock's vhost ports have statistics only while their guest is
        # connected (OVS 3.1: EPROTO after; dump-ports shows "?"), and it
        # drops what the sleeping guest's ring cannot take: the flow counts
        # what OVS received on vhu0, the rx guest what it received and,
        # from the sequence numbers, what it missed.
        ovs-ofctl --no-names dump-flows br0 > "$w/dump-flows.txt"
        sed 's/^/    /' "$w/dump-flows.txt"
        rx_lost=$(json "$w/rx.json" lost)
        check "flow in_port=1 n_packets = $tx_sent" \
            grep -q "n_packets=$tx_sent,.*in_port=1 actions=output:2" "$w/dump-flows.txt"
        check "rx guest received $rx_got + missed $rx_lost = $tx_sent sent" \
            test "$(( ${rx_got:-0} + ${rx_lost:-0} ))" = "${tx_sent:-x}"
        check "rx guest received packets through stock ($rx_got)" test "${rx_got:-0}" -gt 0
        return
    fi
    check "rx guest received all $tx_sent packets sent ($rx_got)" test "${rx_got:-x}" = "${tx_sent:-y}"
    ovs-ofctl --no-names dump-ports br0 1 > "$w/dump-ports-1.txt"
    ovs-ofctl --no-names dump-ports br0 2 > "$w/dump-ports-2.txt"
    ovs-ofctl --no-names dump-flows br0 > "$w/dump-flows.txt"
    sed 's/^/    /' "$w"/dump-ports-[12].txt "$w/dump-flows.txt"
    port_stat() { # PORTNO rx|tx
        sed -n "s/.*$2 pkts=\([0-9]*\),.*/\1/p" "$w/dump-ports-$1.txt"
    }
    check "OVS vhu0 rx pkts = packets the tx guest sent ($tx_sent)" \
        test "$(port_stat 1 rx)" = "$tx_sent"
    check "flow in_port=1 n_packets = $tx_sent" \
        grep -q "n_packets=$tx_sent,.*in_port=1 actions=output:2" "$w/dump-flows.txt"
    check "OVS vhu1 tx pkts = packets the rx guest received ($rx_got)" \
        test "$(port_stat 2 tx)" = "$rx_got"
}
json() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$@" 2>/dev/null
}
# stop_and_check LOGDIR: ovs-ctl stop; no errors in the log.
stop_and_check() {
    stop_ovs
    check "ovs-ctl stop: ovs-vswitchd (pid $VSWITCHD_PID) exited" \
        eval "! kill -0 $VSWITCHD_PID 2>/dev/null"
    errors=$(grep -E '\|(ERR|EMER)\|' "$1/ovs-vswitchd.log" | grep -vE 'dpdk\|(EAL|VHOST_CONFIG|TELEMETRY)' )
    [ -z "$errors" ] || echo "$errors" | sed 's/^/    /'
    check "no ERR/EMER lines in ovs-vswitchd.log (besides DPDK's own)" test -z "$errors"
}

LOG_OURS=$WORK/log-ours
start_ovs "$LOG_OURS" "$OURS"
took_over() {
    grep -q 'netdev-vhost .* took over port types: dpdkvhostuser, dpdkvhostuserclient' \
        "$LOG_OURS/ovs-vswitchd.log"
}
check "log: netdev-vhost ... took over port types" wait_until 60 took_over
grep -E 'netdev_vhost|took over|DPDK Enabled' "$LOG_OURS/ovs-vswitchd.log" \
    | head -n 5 | sed 's/^/    /'
check "ovs-vsctl get Open_vSwitch . dpdk_initialized = true" wait_until 60 dpdk_up

# --- 4. Ports and traffic. -------------------------------------------------
traffic "$LOG_OURS" /usr/bin/ovs-vhost-guest ours
if ovs-appctl netdev-vhost/show > "$WORK/netdev-vhost-show.txt" 2>&1; then
    pass "ovs-appctl netdev-vhost/show"
else
    fail "ovs-appctl netdev-vhost/show"
fi
sed 's/^/    /' "$WORK/netdev-vhost-show.txt"
check "netdev-vhost/show lists vhu0 and vhu1" \
    eval "grep -q '^vhu0: type dpdkvhostuser' '$WORK/netdev-vhost-show.txt' && grep -q '^vhu1: type dpdkvhostuser' '$WORK/netdev-vhost-show.txt'"

# --- 5. Stop, remove: back on stock's DPDK binary. -------------------------
stop_and_check "$LOG_OURS"
# The guest goes with the package; stock's run below still needs one.
mkdir -p "$WORK/bin" && cp /usr/bin/ovs-vhost-guest "$WORK/bin/" \
    || die "copying ovs-vhost-guest"
log "removing $PKG"
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$PKG" > "$WORK/remove.out" 2>&1; then
    pkg_installed=false
    pass "apt-get purge $PKG"
else
    cat "$WORK/remove.out"
    fail "apt-get purge $PKG"
fi
grep "^$PKG:" "$WORK/remove.out" | sed 's/^/    /'
update-alternatives --display ovs-vswitchd > "$WORK/alt-removed.txt"
log "alternatives after removal:"; sed 's/^/    /' "$WORK/alt-removed.txt"
check "alternative removed" eval "! grep -q '$OURS' '$WORK/alt-removed.txt'"
check "update-alternatives --display: manual mode" \
    grep -q '^ovs-vswitchd - manual mode' "$WORK/alt-removed.txt"
check "update-alternatives --display: link currently points to $STOCK_DPDK" \
    grep -q "link currently points to $STOCK_DPDK\$" "$WORK/alt-removed.txt"
check "/usr/sbin/ovs-vswitchd resolves to $STOCK_DPDK" \
    test "$(readlink -f /usr/sbin/ovs-vswitchd)" = "$STOCK_DPDK"
check "$OURS is gone" test ! -e "$OURS"
check "/var/lib/$PKG is gone" test ! -e "/var/lib/$PKG"

# --- 6. Stock again, nothing restored by hand. -----------------------------
LOG_STOCK=$WORK/log-stock
start_ovs "$LOG_STOCK" "$STOCK_DPDK"
check "ovs-vsctl get Open_vSwitch . dpdk_initialized = true" wait_until 60 dpdk_up
check "log: no netdev-vhost (stock's vhost-user)" \
    eval "! grep -q 'netdev_vhost' '$LOG_STOCK/ovs-vswitchd.log'"
traffic "$LOG_STOCK" "$WORK/bin/ovs-vhost-guest" stock
stop_and_check "$LOG_STOCK"

cleanup
[ "$n_fail" = 0 ]
