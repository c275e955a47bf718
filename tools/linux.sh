#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Linux guest (docs/linux.md), in build/linux/:
#   tools/linux.sh fetch       download Debian 12's cloud kernel, busybox-static, rt-tests and
#                              sockperf with apt-get download (run by `make deps`; needs root
#                              or a writable apt cache, and the Debian archive)
#   tools/linux.sh initramfs   build initrd.cpio from them, offline (run by `make`; it fetches
#                              first if versions.txt lacks a package, as after an update)
# Nothing of it is committed; versions.txt records what was fetched.
set -e
DIR=build/linux
DEBS=$DIR/debs
PACKAGES="busybox-static rt-tests sockperf"
# The virtio modules (docs/virtio/linux.md) in the order they load: each needs those before it.
# The kernel package ships no modules.dep; the init script insmods them in this order.
MODULES="virtio_ring virtio virtio_mmio failover net_failover virtio_net virtio_blk"

# Does versions.txt name the kernel ($1) and every package?
fetched() {
    [ -f "$DIR/versions.txt" ] || return 1
    for p in "$1" $PACKAGES; do
        grep -q "^$p " "$DIR/versions.txt" || return 1
    done
}

kernel_package() {
    # The metapackage holds no kernel: it depends on the versioned image.
    apt-cache depends linux-image-cloud-amd64 | sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-cloud-amd64\)$/\1/p' | head -n1
}

fetch() {
    mkdir -p "$DEBS"
    kernel=$(kernel_package)
    if [ -z "$kernel" ]; then
        echo "linux: apt-cache knows no linux-image-cloud-amd64 (run apt-get update as root)" >&2
        exit 1
    fi
    if fetched "$kernel"; then
        return 0
    fi
    echo "linux: downloading $kernel $PACKAGES"
    rm -f "$DEBS"/*.deb
    # shellcheck disable=SC2086
    (cd "$DEBS" && apt-get download -q "$kernel" $PACKAGES 2>&1 | grep -v "unsandboxed" >&2 || true)
    ls "$DEBS"/linux-image-*.deb >/dev/null
    for p in $PACKAGES; do
        if ! ls "$DEBS/${p}_"*.deb >/dev/null 2>&1; then
            echo "linux: apt-get download $p failed" >&2
            exit 1
        fi
    done
    for deb in "$DEBS"/*.deb; do
        dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"
    done > "$DIR/versions.txt"
    rm -f "$DIR/vmlinuz" "$DIR/initrd.cpio"
}

initramfs() {
    # A tree fetched before a package joined PACKAGES: fetch what is missing first.
    if ! fetched "$(sed -n 's/^\(linux-image-[^ ]*\) .*/\1/p' "$DIR/versions.txt")"; then
        fetch
    fi
    out=$(pwd)/$DIR
    tmp=$DIR/x
    rm -rf "$tmp"
    # A failed build must not leave it: its *.d directories would be make's dependency files.
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp"
    for deb in "$DEBS"/*.deb; do
        dpkg-deb -x "$deb" "$tmp/pkg"
    done
    cp "$tmp"/pkg/boot/vmlinuz-* "$DIR/vmlinuz"
    cp "$tmp"/pkg/boot/config-* "$DIR/config"
    root=$tmp/root
    mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
    cp "$tmp/pkg/bin/busybox" "$root/bin/busybox"
    cp "$tmp/pkg/usr/bin/hackbench" "$tmp/pkg/usr/bin/cyclictest" "$tmp/pkg/usr/bin/sockperf" "$root/bin/"
    # The virtio modules, plain .ko files, with their load order for the init script.
    mkdir -p "$root/lib/modules"
    for m in $MODULES; do
        ko=$(find "$tmp"/pkg/lib/modules/*/kernel -name "$m.ko")
        if [ -z "$ko" ]; then
            echo "linux: the kernel package has no $m.ko" >&2
            exit 1
        fi
        cp "$ko" "$root/lib/modules/"
    done
    echo "$MODULES" > "$root/lib/modules/load-order"
    # The trace marker's port write (the kernel has no /dev/port), built here.
    ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$root/bin/outb" guest-tests/linux/outb.c
    # They are dynamically linked: their libraries and loader come from this (Debian 12)
    # host (cyclictest's libnuma from libnuma1, sockperf's libstdc++ from libstdc++6, which
    # `make deps` installs).
    for bin in hackbench cyclictest sockperf outb; do
        for lib in $(ldd "$root/bin/$bin" | grep -o '/[^ ]*'); do
            mkdir -p "$root$(dirname "$lib")"
            cp -L "$lib" "$root$lib"
        done
    done
    cp guest-tests/linux/init "$root/init"
    chmod 755 "$root/init"
    (cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$out/initrd.cpio"
    rm -rf "$tmp"
}

case "$1" in
fetch) fetch ;;
initramfs) initramfs ;;
*) echo "usage: $0 fetch|initramfs" >&2; exit 2 ;;
esac
