#!/bin/bash
# Runs the vhost-user cases of OVS 3.1's own tests/system-dpdk.at, from the
# OVS source tree, unmodified, against our ovs-vswitchd (issue: drop-in
# parity).  PCI devices are hidden from DPDK (the machine's own NIC is a
# virtio PCI device): the suite runs in a private mount namespace with an
# empty directory over /sys/bus/pci/devices.  Run as root after
# utilities/ovs-vhost-build.  Prints OVS's result lines and exits non-zero
# if a case other than the known machine-specific ones fails:
#   5  (needs more than 2 cores for testpmd),
#   16 17 20 21 (MTU on vhost ports: pass functionally, then trip on "failed
#      to enumerate system datapaths" in the final log check because this
#      machine has no OVS kernel module; stock OVS fails them the same way).
# Usage: tests/ovs-system-dpdk.sh [BUILDDIR]   (default: _build)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build}
ovs=$("$top/utilities/ovs-vhost-prepare-ovs" 2>/dev/null | tail -n 1)
cases="1 3 4 5 7 8 9 11 12 13 16 17 20 21"
known="5 16 17 20 21"

dir=$(mktemp -d /tmp/ovs-system-dpdk.XXXXXX)
empty=$dir/empty-pci
mkdir -p $empty
cp "$ovs/tests/atconfig" "$ovs/tests/atlocal" "$dir/"
autom4te -l autotest -I "$ovs" -I "$ovs/tests" -o "$dir/testsuite" \
    "$ovs/tests/system-dpdk-testsuite.at"
path=$build/vswitchd-plugin:$ovs/utilities:$ovs/ovsdb:$ovs/vswitchd:$ovs/tests
unshare -m /bin/bash -c "
    mount --bind $empty /sys/bus/pci/devices
    cd $dir && ./testsuite -C $dir AUTOTEST_PATH=$path $cases" \
    > "$dir/out" 2>&1 || true
grep -E '^ *[0-9]+: ' "$dir/out"
failed=$(sed -n 's/^ *\([0-9]*\): .*FAILED.*/\1/p' "$dir/out")
unexpected=
for n in $failed; do
    case " $known " in *" $n "*) ;; *) unexpected="$unexpected $n" ;; esac
done
echo "results in $dir"
if [ -n "$unexpected" ]; then
    echo "unexpected failures:$unexpected"
    exit 1
fi
echo "all vhost cases pass except the known machine-specific ones ($known)"
