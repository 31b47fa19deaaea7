#!/bin/bash
# linux-guest-image.sh: builds the Linux test guest of the system tests
# (tests/system-linux-guest.at) from Debian packages, into a cache outside
# the repository, and prints the directory holding it on the last line:
#   DIR/vmlinuz      Debian's kernel of this platform, the newest ABI apt
#                    knows, its -unsigned variant when there is one:
#                    Debian 12 linux-image-6.1.0-N-amd64, Debian 13
#                    linux-image-6.12.N+deb13-amd64 (its new ABI naming)
#   DIR/kernel       what QEMU boots: the same kernel decompressed (an ELF
#                    vmlinux with a PVH entry point, which QEMU enters
#                    directly: the bzImage's decompressor takes 5 to 10 s
#                    under TCG), or vmlinuz where that cannot be had
#   DIR/initrd.img   busybox-static, nvudp (tests/linux-guest-udp.c, linked
#                    statically here), Debian's iperf3 with the shared
#                    libraries and dynamic loader it needs (from ldd, at
#                    the same paths), the kernel's virtio modules and
#                    tests/linux-guest-init as /init
#   DIR/nvudp        the same nvudp, for the host side of the tests
#   DIR/kernel-version
#   DIR/iperf3-version  the version of iperf3 in the initramfs (only when
#                    iperf3 could be had: utilities/ovs-vhost-bench needs
#                    it, the test suite does not)
# Nothing binary lives in the repository: the kernel package is fetched
# with "apt-get download" and unpacked with "dpkg -x", not installed.
# Missing tools (qemu-system-x86, busybox-static, iperf3, gcc, libc6-dev) are
# installed with apt-get when running as root.
#
# Environment: OVS_VHOST_CACHE   cache root (default /var/cache/ovs-netdev-vhost)
#              LINUX_GUEST_KPKG  kernel package to use instead of the newest
# Exit status 0; 77 when a package cannot be had (no apt access, not
# root): the guest cannot run here; 1 on other errors.  The reason is on
# stderr.
set -e
set -o pipefail

src=$(cd "$(dirname "$0")" && pwd)
cache=${OVS_VHOST_CACHE:-/var/cache/ovs-netdev-vhost}
log() { echo "linux-guest-image: $*" >&2; }
die() { log "$*"; exit 1; }
unavailable() { log "$*"; exit 77; }

apt_updated=false
apt_update() {
    $apt_updated || flock -w 900 /tmp/ovs-netdev-vhost-apt.lock apt-get -o DPkg::Lock::Timeout=900 update -qq >&2 || true
    apt_updated=true
}

# need CHECK-COMMAND PACKAGE: installs PACKAGE when CHECK-COMMAND fails.
need() {
    if ! eval "$1" > /dev/null 2>&1; then
        [ "$(id -u)" = 0 ] || unavailable "$2 is missing (install it as root)"
        log "installing $2"
        DEBIAN_FRONTEND=noninteractive flock -w 900 /tmp/ovs-netdev-vhost-apt.lock apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
            --no-install-recommends "$2" >&2 \
        || { apt_update; DEBIAN_FRONTEND=noninteractive flock -w 900 /tmp/ovs-netdev-vhost-apt.lock apt-get -o DPkg::Lock::Timeout=900 install -y \
                 -qq --no-install-recommends "$2" >&2; } \
        || unavailable "cannot install $2"
    fi
}
need 'command -v qemu-system-x86_64' qemu-system-x86
need 'dpkg -s busybox-static | grep -q "^Status: install ok installed"' busybox-static
need 'command -v gcc' gcc
# iperf3 only for utilities/ovs-vhost-bench (scenario 7): the image is
# built without it when it cannot be had (no DIR/iperf3-version then).
if ! command -v iperf3 > /dev/null 2>&1; then
    (need 'command -v iperf3' iperf3) || log "building the guest without iperf3"
fi
need 'test -f /usr/lib/x86_64-linux-gnu/libc.a' libc6-dev

# The kernel package: the newest of this platform's kernel series that apt
# knows (Debian 12: 6.1.0-N; Debian 13: 6.12.N+deb13).
case $(. /etc/os-release && echo "${VERSION_CODENAME:-}") in
    trixie) kprefix=linux-image-6.12.
            kpattern='^linux-image-6\.12\.[0-9]+\+deb13-amd64(-unsigned)?$' ;;
    *)      kprefix=linux-image-6.1.0-
            kpattern='^linux-image-6\.1\.0-[0-9]+-amd64(-unsigned)?$' ;;
esac
newest_kpkg() {
    apt-cache pkgnames "$kprefix" 2>/dev/null | grep -E "$kpattern" \
        | sed 's/-unsigned$//' | sort -u -V | tail -n 1 || true
}
kpkg=${LINUX_GUEST_KPKG:-}
if [ -z "$kpkg" ]; then
    kpkg=$(newest_kpkg)
    if [ -z "$kpkg" ]; then
        apt_update
        kpkg=$(newest_kpkg)
    fi
    [ -n "$kpkg" ] || unavailable "apt knows no ${kprefix}* amd64 kernel package"
    if apt-cache show "$kpkg-unsigned" > /dev/null 2>&1; then
        kpkg=$kpkg-unsigned
    fi
fi
kver=$(echo "$kpkg" | sed -n 's/^linux-image-\(.*-amd64\)\(-unsigned\)\{0,1\}$/\1/p')
[ -n "$kver" ] || die "cannot tell the kernel version of $kpkg"

mkdir -p "$cache"
exec 9> "$cache/linux-guest.lock"
flock 9

# extract_vmlinux BZIMAGE OUT: writes the ELF kernel inside BZIMAGE to
# OUT (x86 boot protocol 2.08+: payload_offset at 0x248 and payload_length
# at 0x24c, from the protected-mode code after setup_sects at 0x1f1), if
# it has a PVH entry note (Xen ELF note 18).
extract_vmlinux() {
    le() { od -An -t u$2 -j $(($1)) -N $2 "$3" | tr -d ' '; }
    local sects off len
    sects=$(le 0x1f1 1 "$1"); [ "$sects" != 0 ] || sects=4
    off=$(( (sects + 1) * 512 + $(le 0x248 4 "$1") ))
    len=$(le 0x24c 4 "$1")
    case $(od -An -t x1 -j $off -N 4 "$1" | tr -d ' ') in
        fd377a58) unpack="xz -dc" ;;
        1f8b08*) unpack="gzip -dc" ;;
        28b52ffd) unpack="zstd -qdc" ;;
        *) return 1 ;;
    esac
    # The kernel's build appends the uncompressed size, which xz takes
    # for trailing garbage: judge by what came out.
    tail -c +$((off + 1)) "$1" | head -c "$len" | $unpack > "$2" 2>/dev/null \
        || true
    readelf -n "$2" 2>/dev/null | grep -q 'Xen .*(0x00000012)'
}

modules="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev
         virtio_pci failover net_failover virtio_net"

# 1. The kernel and its modules, once per kernel version.
kdir=$cache/guest-kernel-$kver
if [ ! -f "$kdir/done" ]; then
    log "fetching $kpkg"
    rm -rf "$kdir" "$kdir.tmp"
    mkdir -p "$kdir.tmp/x"
    (cd "$kdir.tmp" && apt-get download "$kpkg" >&2 2>/dev/null) \
        || (apt_update; cd "$kdir.tmp" && apt-get download "$kpkg" >&2) \
        || unavailable "apt-get download $kpkg failed"
    dpkg -x "$kdir.tmp"/*.deb "$kdir.tmp/x"
    cp "$kdir.tmp/x/boot/vmlinuz-$kver" "$kdir.tmp/vmlinuz"
    mkdir "$kdir.tmp/modules"
    # Debian 12's kernel package puts its modules in /lib/modules, Debian
    # 13's (merged /usr) in /usr/lib/modules.
    mdir=$kdir.tmp/x/lib/modules/$kver
    [ -d "$mdir" ] || mdir=$kdir.tmp/x/usr/lib/modules/$kver
    [ -d "$mdir" ] || die "$kpkg has no modules directory for $kver"
    for m in $modules; do
        f=$(find "$mdir" -name "$m.ko*" | head -n 1)
        if [ -z "$f" ] && grep -q "/$m\.ko\$" "$mdir/modules.builtin" 2>/dev/null; then
            continue        # built into this kernel
        fi
        [ -n "$f" ] || die "$kpkg has no module $m"
        case $f in
            *.ko) cp "$f" "$kdir.tmp/modules/$m.ko" ;;
            *.ko.xz) xz -dc "$f" > "$kdir.tmp/modules/$m.ko" ;;
            *.ko.zst) zstd -qdc "$f" > "$kdir.tmp/modules/$m.ko" ;;
            *) die "cannot unpack $f" ;;
        esac
    done
    rm -rf "$kdir.tmp/x" "$kdir.tmp"/*.deb
    echo "$kpkg" > "$kdir.tmp/package"
    touch "$kdir.tmp/done"
    mv "$kdir.tmp" "$kdir"
fi

if [ ! -f "$kdir/vmlinux" ] && [ ! -f "$kdir/vmlinux.none" ]; then
    if extract_vmlinux "$kdir/vmlinuz" "$kdir/vmlinux.tmp"; then
        mv "$kdir/vmlinux.tmp" "$kdir/vmlinux"
    else
        log "no PVH-bootable vmlinux in $kpkg: booting the bzImage"
        rm -f "$kdir/vmlinux.tmp"
        touch "$kdir/vmlinux.none"
    fi
fi

# 2. The initramfs, once per kernel and content of the guest's files.
bbver=$(dpkg-query -W -f='${Version}' busybox-static)
ipver=none
command -v iperf3 > /dev/null 2>&1 \
    && ipver=$(dpkg-query -W -f='${Version}' iperf3 2>/dev/null || echo unknown)
key=$( (echo "$kver $bbver $ipver"; cat "$src/linux-guest-init" \
        "$src/linux-guest-udp.c" "$0") | sha256sum | cut -c1-12)
dir=$cache/guest-$kver-$key
if [ ! -f "$dir/done" ]; then
    log "building the initramfs in $dir"
    rm -rf "$dir" "$dir.tmp"
    root=$dir.tmp/root
    mkdir -p "$root"/bin "$root"/dev "$root"/proc "$root"/sys "$root"/tmp \
             "$root"/lib/modules
    cp /bin/busybox "$root/bin/busybox"
    ln -s busybox "$root/bin/sh"
    gcc -std=gnu99 -O2 -Wall -static -o "$root/bin/nvudp" \
        "$src/linux-guest-udp.c" >&2
    cp "$root/bin/nvudp" "$dir.tmp/nvudp"
    # iperf3 (dynamically linked): its libraries and the loader at the
    # paths ldd gives (the guest's /lib is a directory of its own).
    if [ "$ipver" != none ]; then
        cp "$(command -v iperf3)" "$root/bin/iperf3"
        for lib in $(ldd "$(command -v iperf3)" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
            mkdir -p "$root$(dirname "$lib")"
            cp -L "$lib" "$root$lib"
        done
        echo "$ipver" > "$dir.tmp/iperf3-version"
    fi
    cp "$kdir"/modules/*.ko "$root/lib/modules/"
    install -m 755 "$src/linux-guest-init" "$root/init"
    # The kernel opens /dev/console for /init before devtmpfs is mounted.
    mknod "$root/dev/console" c 5 1 2>/dev/null || true
    (cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) \
        | gzip -1 > "$dir.tmp/initrd.img"
    rm -rf "$root"
    ln "$kdir/vmlinuz" "$dir.tmp/vmlinuz" 2>/dev/null \
        || cp "$kdir/vmlinuz" "$dir.tmp/vmlinuz"
    if [ -f "$kdir/vmlinux" ]; then
        ln -s "$kdir/vmlinux" "$dir.tmp/kernel"
    else
        ln -s vmlinuz "$dir.tmp/kernel"
    fi
    echo "$kver" > "$dir.tmp/kernel-version"
    touch "$dir.tmp/done"
    mv "$dir.tmp" "$dir"
    # Images of other versions of the guest's files, unused for a day.
    find "$cache" -maxdepth 1 -name "guest-$kver-*" -mtime +1 \
        ! -path "$dir" -exec rm -rf {} + 2>/dev/null || true
fi
echo "$dir"
