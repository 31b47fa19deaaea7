#!/bin/bash
# Runs the vhost-user cases of OVS's own tests/system-dpdk.at (OVS 3.1 on
# Debian 12, OVS 3.5 on Debian 13, OVS 4.0 on Debian 14), from the OVS source tree, unmodified,
# twice in the same run: against the platform's stock ovs-vswitchd
# (/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk, through a directory
# with a symlink named ovs-vswitchd first in AUTOTEST_PATH) and against ours
# (drop-in parity: at least every case that stock passes).  Then
# prints both result lists side by side and exits non-zero if a case that
# stock passes fails with ours.
#
# The cases are chosen by their content, not by number (numbers differ
# between OVS versions): "EAL init" plus every case whose body adds a
# dpdkvhostuser or dpdkvhostuserclient port; their numbers come from the
# generated testsuite's own list (testsuite -l).
#
# Each suite runs isolated from the machine and from other users of it:
#   - a private mount namespace with an empty directory over
#     /sys/bus/pci/devices (the machine's own NIC is a virtio PCI device:
#     DPDK must not probe it), a hugetlbfs instance of its own on
#     /dev/hugepages and a tmpfs on /run/dpdk (OVS's tests use DPDK's
#     default file prefix "rte"), and a tmpfs on /run/netns (the ping cases
#     create namespaces with fixed names);
#   - a private network namespace (the suite starts an ovs-vswitchd with a
#     netdev datapath, and only one may run per network namespace).
# The two suites run one after the other, never at once.
#
# On a Debian 12 host, --platform=debian13 or debian14 runs this script
# again inside that release's root (utilities/ovs-vhost-prepare-debian13
# or -debian14 --exec), where utilities/ovs-vhost-prepare-ovs gives the
# OVS 3.5 or 4.0 tree.
#
# Run as root after utilities/ovs-vhost-build [--platform=...].
# Usage: tests/ovs-system-dpdk.sh [--platform=debian12|debian13|debian14]
#                                 [--no-stock] [BUILDDIR]
#   --platform  default: the host's own; BUILDDIR default: _build on
#               Debian 12, _build-debian13 and _build-debian14 on Debian 13
#               and 14
#   --no-stock  run ours only (then every failure counts)
# Environment: OVS_VHOST_SYSTEM_DPDK_CASES  case numbers instead of the selection
set -e
set -o pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
platform=
build=
stock=true
for arg in "$@"; do
    case $arg in
        --platform=*) platform=${arg#--platform=} ;;
        --no-stock) stock=false ;;
        -h|--help) sed -n '2,/^set -e$/p' "$0" | sed '$d'; exit 0 ;;
        -*) echo "ovs-system-dpdk.sh: unknown option $arg" >&2; exit 2 ;;
        *) build=$arg ;;
    esac
done

case $(. /etc/os-release && echo "${VERSION_CODENAME:-}") in
    bookworm) native=debian12 ;;
    trixie) native=debian13 ;;
    forky) native=debian14 ;;
    *) native=unknown ;;
esac
platform=${platform:-$native}
case $platform in
    debian12) default_build=$top/_build ;;
    debian13) default_build=$top/_build-debian13 ;;
    debian14) default_build=$top/_build-debian14 ;;
    *) echo "ovs-system-dpdk.sh: unknown platform $platform" >&2; exit 2 ;;
esac
build=${build:-$default_build}
build=$(cd "$build" && pwd)

if [ "$platform" != "$native" ]; then
    if [ "$platform" != debian12 ] && [ "$native" = debian12 ]; then
        # The source tree is bound at the same path inside the root.
        args=(--platform=$platform)
        $stock || args+=(--no-stock)
        exec "$top/utilities/ovs-vhost-prepare-$platform" --exec \
            "$top/tests/ovs-system-dpdk.sh" "${args[@]}" "$build"
    fi
    echo "ovs-system-dpdk.sh: cannot run $platform on $native" >&2
    exit 1
fi

[ "$(id -u)" = 0 ] || { echo "ovs-system-dpdk.sh: run as root" >&2; exit 1; }
ours_bin=$build/vswitchd-plugin/ovs-vswitchd
[ -x "$ours_bin" ] || { echo "ovs-system-dpdk.sh: no $ours_bin (run utilities/ovs-vhost-build --platform=$platform)" >&2; exit 1; }
stock_bin=/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
if $stock && [ ! -x "$stock_bin" ]; then
    echo "ovs-system-dpdk.sh: no $stock_bin (openvswitch-switch-dpdk): running ours only" >&2
    stock=false
fi

ovs=$("$top/utilities/ovs-vhost-prepare-ovs" 2>/dev/null | tail -n 1)
[ -f "$ovs/tests/system-dpdk.at" ] || { echo "ovs-system-dpdk.sh: no OVS tree ($ovs)" >&2; exit 1; }

dir=$(mktemp -d /tmp/ovs-system-dpdk.XXXXXX)
mkdir -p "$dir/empty-pci" "$dir/stock-bin" "$dir/ours" "$dir/stock"
ln -s "$stock_bin" "$dir/stock-bin/ovs-vswitchd"
for d in "$dir" "$dir/ours" "$dir/stock"; do
    cp "$ovs/tests/atconfig" "$ovs/tests/atlocal" "$d/"
done
autom4te -l autotest -I "$ovs" -I "$ovs/tests" -o "$dir/testsuite" \
    "$ovs/tests/system-dpdk-testsuite.at"

# The selection: AT_SETUP lines of system-dpdk.at whose case adds a vhost
# port, and EAL init; mapped to numbers through "testsuite -l", whose
# lines read " NUM: system-dpdk.at:LINE  TITLE".
lines=$(awk '/^AT_SETUP\(/ { l = NR; v = ($0 ~ /EAL init/) }
             /dpdkvhostuser/ { v = 1 }
             /^AT_CLEANUP/ { if (v) print l; v = 0 }' "$ovs/tests/system-dpdk.at")
(cd "$dir" && ./testsuite -l) > "$dir/list"
cases=
for l in $lines; do
    n=$(sed -n "s/^ *\([0-9]*\): system-dpdk\.at:$l .*/\1/p" "$dir/list")
    [ -n "$n" ] && cases="$cases $n"
done
cases=${OVS_VHOST_SYSTEM_DPDK_CASES:-$cases}
[ -n "${cases// /}" ] || { echo "ovs-system-dpdk.sh: no vhost case found in $ovs/tests/system-dpdk.at" >&2; exit 1; }
echo "OVS tree $ovs"
echo "ours:  $("$ours_bin" --version | head -n 1), $build"
$stock && echo "stock: $("$stock_bin" --version | head -n 1), $stock_bin"
echo "cases:$cases"

ovs_path=$ovs/utilities:$ovs/ovsdb:$ovs/vswitchd:$ovs/tests
# run_suite NAME PATHDIR: one suite in its own mount and network namespace.
run_suite() {
    local name=$1 first=$2 start=$(date +%s)
    echo "running OVS's cases against $name ovs-vswitchd ($(readlink -f "$first/ovs-vswitchd"))"
    unshare -m -n /bin/bash -c "
        set -e
        mount --bind $dir/empty-pci /sys/bus/pci/devices
        mount -t hugetlbfs nodev /dev/hugepages
        mkdir -p /run/dpdk /run/netns
        mount -t tmpfs tmpfs /run/dpdk
        mount -t tmpfs tmpfs /run/netns
        ip link set lo up
        cd $dir && ./testsuite -C $dir/$name AUTOTEST_PATH=$first:$ovs_path $cases" \
        > "$dir/$name.out" 2>&1 || true
    echo "  $name: $(( $(date +%s) - start )) s"
}
$stock && run_suite stock "$dir/stock-bin"
run_suite ours "$build/vswitchd-plugin"

# result NAME NUM: ok, FAILED, skipped or - (not run).
result() {
    local r
    r=$(sed -n "s/^ *$2: .* \(ok\|FAILED\|skipped\|expected failure\)\( (.*)\)\{0,1\}$/\1/p" \
            "$dir/$1.out" 2>/dev/null | head -n 1)
    echo "${r:--}"
}
printf '\n%4s  %-55s %-8s %-8s\n' case title "stock" ours
unexpected=
for n in $cases; do
    title=$(sed -n "s/^ *$n: system-dpdk\.at:[0-9]* *//p" "$dir/list" | head -n 1)
    s=-
    $stock && s=$(result stock $n)
    o=$(result ours $n)
    printf '%4s  %-55s %-8s %-8s\n' "$n" "$title" "$s" "$o"
    if [ "$o" != ok ] && [ "$o" != skipped ]; then
        if ! $stock || [ "$s" = ok ]; then
            unexpected="$unexpected $n"
        fi
    fi
done
echo
echo "results in $dir (stock.out, ours.out; logs in $dir/{stock,ours}/testsuite.dir)"
if [ -n "$unexpected" ]; then
    if $stock; then
        echo "cases that stock passes and ours does not:$unexpected"
    else
        echo "failed:$unexpected"
    fi
    exit 1
fi
if $stock; then
    echo "ours passes every case that stock passes"
else
    echo "all selected cases pass"
fi
