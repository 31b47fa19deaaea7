#!/bin/bash
# Checks the Debian package openvswitch-switch-vhost on this machine, as an
# operator would use it.  Not part of "make check": run it by hand,
# as root, on Debian 12 or 13 with openvswitch-switch installed:
#
#   tests/package-deb.sh [--platform=debian12|debian13] [PACKAGE.deb]
#
# --platform defaults to the host's own; --platform=debian13 on a Debian 12
# host runs the whole test inside the Debian 13 root of
# utilities/ovs-vhost-prepare-debian13 (--exec; the source tree is at the
# same path there), so the package builds against Debian 13's OVS 3.5 and
# DPDK 24.11 and installs there as an alternative to its ovs-vswitchd.
#
# Without an argument it builds the package first, with
# "dpkg-buildpackage -us -uc -b" in a copy of this work tree (tracked and
# untracked, not ignored files) under $PKGTEST_DIR (default: a new
# /tmp/ovs-vhost-pkgtest.XXXXXX), installing missing Build-Depends with apt.
# Then it:
#   1. installs the .deb (apt-get install ./PACKAGE.deb) and checks that the
#      alternative is registered below the stock ones and not selected;
#   2. selects it with update-alternatives --set and checks --display;
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
#      that update-alternatives --display ovs-vswitchd is back to what it was.
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
OVS_CTL=/usr/share/openvswitch/scripts/ovs-ctl
RUNDIR=/var/run/openvswitch
HUGEDIR=/dev/hugepages
OVS_MEM_MB=512
GUEST_MEM_MB=128
COUNT=1000

top=$(cd "$(dirname "$0")/.." && pwd)

platform=
args=()
for arg in "$@"; do
    case $arg in
        --platform=*) platform=${arg#--platform=} ;;
        --workdir=*) PKGTEST_DIR=${arg#--workdir=} ;;
        -*) echo "package-deb: unknown option $arg" >&2; exit 2 ;;
        *) args+=("$(readlink -f "$arg")") ;;
    esac
done
set -- "${args[@]}"
case $(. /etc/os-release && echo "${VERSION_CODENAME:-}") in
    bookworm) native=debian12 ;;
    trixie) native=debian13 ;;
    *) native=unknown ;;
esac
platform=${platform:-$native}
if [ "$platform" != "$native" ]; then
    if [ "$platform" = debian13 ] && [ "$native" = debian12 ]; then
        # A .deb given as an argument must be inside the source tree (or
        # another path the root shares).  Without one, the work tree is
        # copied here (git runs on the host: the root has no git, and a
        # worktree's .git points outside the tree) into a work directory
        # inside the root, which the run there reuses.
        root=$("$top/utilities/ovs-vhost-prepare-debian13" | tail -n 1)
        inner=$(mktemp -d "$root/tmp/ovs-vhost-pkgtest.XXXXXX")
        if [ $# -eq 0 ]; then
            mkdir -p "$inner/src"
            (cd "$top" && git ls-files -co --exclude-standard -z \
                | grep -zEv '^_build[^/]*/' | tar --null -cf - -T -) \
                | tar -xf - -C "$inner/src" \
                || { echo "package-deb: copying the work tree" >&2; exit 1; }
        fi
        exec "$top/utilities/ovs-vhost-prepare-debian13" --exec \
            "$top/tests/package-deb.sh" --platform=debian13 \
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
for t in "$OVS_CTL" /usr/lib/openvswitch-switch/ovs-vswitchd; do
    [ -e "$t" ] || { echo "package-deb: $t missing (apt-get install openvswitch-switch)" >&2; exit 2; }
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
    OVS_LOGDIR=$WORK/log "$OVS_CTL" stop > "$WORK/ovs-ctl-stop.out" 2>&1
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

# --- 0. The package. -------------------------------------------------------
if [ $# -ge 1 ]; then
    DEB=$(readlink -f "$1")
    [ -f "$DEB" ] || die "no such package file: $1"
else
    log "building the package in $WORK/src (log: $WORK/build.log)"
    if [ -f "$WORK/src/debian/rules" ] && ! command -v git > /dev/null; then
        log "using the copy of the work tree made before entering the root"
    else
        rm -rf "$WORK/src"
        mkdir -p "$WORK/src"
        (cd "$top" && git ls-files -co --exclude-standard -z | grep -zEv '^_build[^/]*/' \
            | tar --null -cf - -T -) | tar -xf - -C "$WORK/src" \
            || die "copying the work tree"
    fi
    export DEBIAN_FRONTEND=noninteractive
    for tool in dpkg-buildpackage dh fakeroot; do
        command -v $tool > /dev/null && continue
        apt-get install -y -q --no-install-recommends dpkg-dev debhelper fakeroot \
            > "$WORK/apt.out" 2>&1 || die "installing dpkg-dev debhelper fakeroot"
        break
    done
    if ! (cd "$WORK/src" && dpkg-checkbuilddeps) > /dev/null 2>&1; then
        log "installing Build-Depends"
        (cd "$WORK/src" && apt-get build-dep -y -q ./) > "$WORK/apt.out" 2>&1 \
            || die "installing Build-Depends (see $WORK/apt.out)"
    fi
    t0=$(date +%s)
    if (cd "$WORK/src" && dpkg-buildpackage -us -uc -b -j"$(nproc)") \
            > "$WORK/build.log" 2>&1; then
        pass "dpkg-buildpackage -us -uc -b ($(( $(date +%s) - t0 )) s)"
    else
        tail -30 "$WORK/build.log"
        die "dpkg-buildpackage failed (see $WORK/build.log)"
    fi
    DEB=$(ls "$WORK"/${PKG}_*.deb | head -n 1)
    rm -rf "$WORK/src"
fi
log "package $DEB"
dpkg-deb -I "$DEB" control | sed 's/^/    /'

# --- 1. Install. -----------------------------------------------------------
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
check "README.Debian is installed" test -f /usr/share/doc/$PKG/README.Debian
update-alternatives --display ovs-vswitchd > "$WORK/alt-installed.txt"
prio_ours=$(sed -n "s|^$OURS - priority ||p" "$WORK/alt-installed.txt")
prio_max_stock=$(sed -n 's|^/.* - priority ||p' "$WORK/alt-installed.txt" \
    | sort -n | tail -n 1)
prio_stock=$(sed -n "s|^/usr/lib/openvswitch-switch/ovs-vswitchd - priority ||p" "$WORK/alt-installed.txt")
log "alternatives after install:"; sed 's/^/    /' "$WORK/alt-installed.txt"
check "alternative registered (priority $prio_ours)" test -n "$prio_ours"
check "priority $prio_ours is below stock's ($prio_stock)" \
    test "${prio_ours:-999}" -lt "${prio_stock:-0}"
if [ "$ALT_STATUS_BEFORE" = auto ]; then
    check "installing did not select it (link is $(alt_query Value))" \
        test "$(alt_query Value)" = "$ALT_VALUE_BEFORE"
fi

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
mkdir -p "$WORK/log"
# The database and logs stay in $WORK; --system-id given so that ovs-ctl
# writes no /etc/openvswitch/system-id.conf.
CTL_OPTS="--db-file=$WORK/conf.db --system-id=ovs-vhost-pkgtest-$$ \
--no-record-hostname --no-monitor"
export OVS_LOGDIR=$WORK/log
if ip netns exec "$NS" "$OVS_CTL" $CTL_OPTS --no-ovs-vswitchd start \
        > "$WORK/ovs-ctl-start-db.out" 2>&1; then
    pass "ovs-ctl --no-ovs-vswitchd start (ovsdb-server)"
else
    cat "$WORK/ovs-ctl-start-db.out"
    die "ovs-ctl start ovsdb-server"
fi
ovs-vsctl --no-wait set Open_vSwitch . \
    other_config:dpdk-init=true \
    other_config:dpdk-socket-mem=$OVS_MEM_MB \
    other_config:dpdk-extra="--no-pci --file-prefix=pkgtest$$" \
    other_config:pmd-cpu-mask=0x2 \
    || die "ovs-vsctl set dpdk config"
if ip netns exec "$NS" "$OVS_CTL" $CTL_OPTS --no-ovsdb-server start \
        > "$WORK/ovs-ctl-start-vswitchd.out" 2>&1; then
    pass "ovs-ctl --no-ovsdb-server start (ovs-vswitchd, dpdk-init=true)"
else
    cat "$WORK/ovs-ctl-start-vswitchd.out"
    tail -20 "$WORK/log/ovs-vswitchd.log"
    die "ovs-ctl start ovs-vswitchd"
fi
VSWITCHD_PID=$(cat "$RUNDIR/ovs-vswitchd.pid" 2>/dev/null)
# By inode, not by the link's text: in a chroot (the Debian 13 root) with
# ip netns exec's mount namespace, /proc/PID/exe may read as another path.
check "running ovs-vswitchd (pid $VSWITCHD_PID) is $OURS ($(readlink "/proc/$VSWITCHD_PID/exe"))" \
    test "/proc/$VSWITCHD_PID/exe" -ef "$OURS"
check "ovs-vswitchd runs in network namespace $NS" \
    test "$(ip netns identify "$VSWITCHD_PID")" = "$NS"
took_over() {
    grep -q 'netdev-vhost .* took over port types: dpdkvhostuser, dpdkvhostuserclient' \
        "$WORK/log/ovs-vswitchd.log"
}
check "log: netdev-vhost ... took over port types" wait_until 60 took_over
grep -E 'netdev_vhost|took over|DPDK Enabled' "$WORK/log/ovs-vswitchd.log" \
    | head -n 5 | sed 's/^/    /'
check "ovs-vsctl get Open_vSwitch . dpdk_initialized = true" \
    test "$(ovs-vsctl get Open_vSwitch . dpdk_initialized)" = true

# --- 4. Ports and traffic. -------------------------------------------------
ovs-vsctl add-br br0 -- set bridge br0 datapath_type=netdev \
    -- add-port br0 vhu0 -- set Interface vhu0 type=dpdkvhostuser ofport_request=1 \
    -- add-port br0 vhu1 -- set Interface vhu1 type=dpdkvhostuser ofport_request=2 \
    || die "ovs-vsctl add-br br0, add-port vhu0 vhu1"
check "vhost-user sockets $RUNDIR/vhu0 and vhu1 created" \
    wait_until 20 eval "test -S $RUNDIR/vhu0 && test -S $RUNDIR/vhu1"
ovs-ofctl del-flows br0 && ovs-ofctl add-flow br0 in_port=1,actions=output:2 \
    || die "ovs-ofctl add-flow"

# The rx guest sleeps on Rx interrupts (it shares CPU 0 with the tx guest;
# OVS's PMD thread has CPU 1).
ovs-vhost-guest --socket="$RUNDIR/vhu1" --role=rx --mode=interrupt --count=$COUNT --idle-ms=2000 \
    --duration=60 --mem=$GUEST_MEM_MB --lcore=0 --file-prefix=pkgrx$$ \
    > "$WORK/rx.json" 2> "$WORK/rx.err" &
RX_PID=$!
GUEST_PIDS="$GUEST_PIDS $RX_PID"
link_up() { test "$(ovs-vsctl get Interface vhu1 link_state)" = up; }
check "rx guest connected to vhu1 (link_state up)" wait_until 30 link_up
ovs-vhost-guest --socket="$RUNDIR/vhu0" --role=tx --count=$COUNT --rate=10000 \
    --mem=$GUEST_MEM_MB --lcore=0 --file-prefix=pkgtx$$ \
    > "$WORK/tx.json" 2> "$WORK/tx.err" &
TX_PID=$!
GUEST_PIDS="$GUEST_PIDS $TX_PID"
wait $TX_PID; tx_status=$?
wait $RX_PID; rx_status=$?
GUEST_PIDS=
json() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))' "$@" 2>/dev/null
}
log "tx guest: $(cat "$WORK/tx.json")"
log "rx guest: $(cat "$WORK/rx.json")"
check "tx guest exited 0" test "$tx_status" = 0
check "rx guest exited 0" test "$rx_status" = 0
tx_sent=$(json "$WORK/tx.json" tx_packets)
tx_dropped=$(json "$WORK/tx.json" tx_dropped)
rx_got=$(json "$WORK/rx.json" rx_packets)
check "tx guest sent $tx_sent packets (+ $tx_dropped it could not enqueue) = $COUNT" \
    test "$(( ${tx_sent:-0} + ${tx_dropped:-0} ))" = $COUNT
check "tx guest sent at least 99% of $COUNT" test "${tx_sent:-0}" -ge $(( COUNT * 99 / 100 ))
check "rx guest received all $tx_sent packets sent ($rx_got)" test "${rx_got:-x}" = "${tx_sent:-y}"
ovs-ofctl --no-names dump-ports br0 1 > "$WORK/dump-ports-1.txt"
ovs-ofctl --no-names dump-ports br0 2 > "$WORK/dump-ports-2.txt"
ovs-ofctl --no-names dump-flows br0 > "$WORK/dump-flows.txt"
sed 's/^/    /' "$WORK"/dump-ports-[12].txt "$WORK/dump-flows.txt"
port_stat() { # PORTNO rx|tx
    sed -n "s/.*$2 pkts=\([0-9]*\),.*/\1/p" "$WORK/dump-ports-$1.txt"
}
check "OVS vhu0 rx pkts = packets the tx guest sent ($tx_sent)" \
    test "$(port_stat 1 rx)" = "$tx_sent"
check "flow in_port=1 n_packets = $tx_sent" \
    grep -q "n_packets=$tx_sent,.*in_port=1 actions=output:2" "$WORK/dump-flows.txt"
check "OVS vhu1 tx pkts = packets the rx guest received ($rx_got)" \
    test "$(port_stat 2 tx)" = "$rx_got"
if ovs-appctl netdev-vhost/show > "$WORK/netdev-vhost-show.txt" 2>&1; then
    pass "ovs-appctl netdev-vhost/show"
else
    fail "ovs-appctl netdev-vhost/show"
fi
sed 's/^/    /' "$WORK/netdev-vhost-show.txt"
check "netdev-vhost/show lists vhu0 and vhu1" \
    eval "grep -q '^vhu0: type dpdkvhostuser' '$WORK/netdev-vhost-show.txt' && grep -q '^vhu1: type dpdkvhostuser' '$WORK/netdev-vhost-show.txt'"

# --- 5. Stop, remove, check stock is back. ---------------------------------
stop_ovs
check "ovs-ctl stop: ovs-vswitchd (pid $VSWITCHD_PID) exited" \
    eval "! kill -0 $VSWITCHD_PID 2>/dev/null"
errors=$(grep -E '\|(ERR|EMER)\|' "$WORK/log/ovs-vswitchd.log" | grep -vE 'dpdk\|(EAL|VHOST_CONFIG|TELEMETRY)' )
[ -z "$errors" ] || echo "$errors" | sed 's/^/    /'
check "no ERR/EMER lines in ovs-vswitchd.log (besides DPDK's own)" test -z "$errors"

log "removing $PKG"
if DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$PKG" > "$WORK/remove.out" 2>&1; then
    pkg_installed=false
    pass "apt-get purge $PKG"
else
    cat "$WORK/remove.out"
    fail "apt-get purge $PKG"
fi
update-alternatives --display ovs-vswitchd > "$WORK/alt-removed.txt"
log "alternatives after removal:"; sed 's/^/    /' "$WORK/alt-removed.txt"
check "alternative removed" eval "! grep -q '$OURS' '$WORK/alt-removed.txt'"
if [ "$ALT_STATUS_BEFORE" = auto ]; then
    check "update-alternatives --display: auto mode" \
        grep -q '^ovs-vswitchd - auto mode' "$WORK/alt-removed.txt"
    check "link points to stock again: $(alt_query Value)" \
        test "$(readlink -f /usr/sbin/ovs-vswitchd)" = "$ALT_VALUE_BEFORE"
else
    # Manual before the test: cleanup sets it back to that choice.
    log "alternatives were in manual mode ($ALT_VALUE_BEFORE) before: restoring"
fi
check "$OURS is gone" test ! -e "$OURS"

cleanup
[ "$n_fail" = 0 ]
