#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Linux guest (docs/linux.md), in build/linux/:
#   tools/linux.sh fetch       download Debian 12's cloud kernel, busybox-static and rt-tests
#                              with apt-get download (run by `make deps`; needs root or a
#                              writable apt cache, and the Debian archive)
#   tools/linux.sh initramfs   build initrd.cpio from them, offline (run by `make`)
# Nothing of it is committed; versions.txt records what was fetched.
set -e
DIR=build/linux
DEBS=$DIR/debs

fetch() {
    mkdir -p "$DEBS"
    # The metapackage holds no kernel: it depends on the versioned image.
    kernel=$(apt-cache depends linux-image-cloud-amd64 | sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-cloud-amd64\)$/\1/p' | head -n1)
    if [ -z "$kernel" ]; then
        echo "linux: apt-cache knows no linux-image-cloud-amd64 (run apt-get update as root)" >&2
        exit 1
    fi
    if [ -f "$DIR/versions.txt" ] && grep -q "^$kernel " "$DIR/versions.txt"; then
        exit 0
    fi
    echo "linux: downloading $kernel busybox-static rt-tests"
    rm -f "$DEBS"/*.deb
    (cd "$DEBS" && apt-get download -q "$kernel" busybox-static rt-tests 2>&1 | grep -v "unsandboxed" >&2 || true)
    ls "$DEBS"/linux-image-*.deb >/dev/null
    for deb in "$DEBS"/*.deb; do
        dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"
    done > "$DIR/versions.txt"
    rm -f "$DIR/vmlinuz" "$DIR/initrd.cpio"
}

initramfs() {
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
    cp "$tmp/pkg/usr/bin/hackbench" "$tmp/pkg/usr/bin/cyclictest" "$root/bin/"
    # The trace marker's port write (the kernel has no /dev/port), built here.
    ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o "$root/bin/outb" guest-tests/linux/outb.c
    # They are dynamically linked: their libraries and loader come from this (Debian 12)
    # host (cyclictest's libnuma from libnuma1, which `make deps` installs).
    for bin in hackbench cyclictest outb; do
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
