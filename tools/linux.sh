#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Linux guest (docs/linux.md), in build/linux/:
#   tools/linux.sh fetch       download Debian 12's cloud kernel, busybox-static, rt-tests,
#                              sockperf and fio with apt-get download (run by `make deps`; needs root
#                              or a writable apt cache, and the Debian archive)
#   tools/linux.sh initramfs   build initrd.cpio from them, offline (run by `make`; it fetches
#                              first if versions.txt lacks a package, as after an update)
# Nothing of it is committed; versions.txt records what was fetched.
set -e
DIR=build/linux
DEBS=$DIR/debs
PACKAGES="busybox-static rt-tests sockperf fio"
# fio links every I/O engine's library (Ceph's librados and librbd, GlusterFS, NBD, PMDK, RDMA):
# with their own dependencies they would add tens of MiB. The guest uses fio's psync engine on
# /dev/vda only, so each of these is a stub of a few KiB that defines what fio imports from it
# (fio_stubs) and traps if ever called.
FIO_STUBS="libgfapi.so.0 libnbd.so.0 libibverbs.so.1 librdmacm.so.1 librados.so.2 librbd.so.1
libpmemblk.so.1 libpmem.so.1"
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

# fio_stubs <fio> <dir>: FIO_STUBS in <dir>, each defining every function <fio> imports that
# the libraries it keeps (libc, libm, libz, libaio, libnuma) do not, in the symbol versions fio
# asks for (its BIND_NOW resolves them all at start-up), each a trap.
fio_stubs() {
    kept=$(ldd "$1" | grep -Eo '/[^ ]*/lib(c|m|z|aio|numa)\.so[^ ]*')
    # shellcheck disable=SC2086
    nm -D --defined-only $kept | awk '{ sub(/@.*/, "", $3); print $3 }' | LC_ALL=C sort -u >"$2/kept"
    objdump -T "$1" | awk '$2 == "DF" && $3 == "*UND*" { print $(NF - 1), $NF }' |
        LC_ALL=C sort -k2 | LC_ALL=C join -1 2 -2 1 -v 1 -o 1.1,1.2 - "$2/kept" >"$2/imports"
    awk '{ printf "void %s(void) { __builtin_trap(); }\n", $2 }' "$2/imports" >"$2/stub.c"
    awk '$1 != "Base" { gsub(/[()]/, "", $1); v[$1] = v[$1] " " $2 ";" }
        END { for (n in v) printf "%s {%s };\n", n, v[n] }' "$2/imports" >"$2/stub.map"
    for so in $FIO_STUBS; do
        ${CC:-cc} -shared -fPIC -nostdlib -fno-builtin -o "$2/$so" -Wl,-soname,"$so" \
            -Wl,--version-script="$2/stub.map" "$2/stub.c"
    done
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
    cp "$tmp/pkg/usr/bin/hackbench" "$tmp/pkg/usr/bin/cyclictest" "$tmp/pkg/usr/bin/sockperf" \
        "$tmp/pkg/usr/bin/fio" "$root/bin/"
    stubs=$(pwd)/$tmp/stubs
    mkdir -p "$stubs"
    fio_stubs "$root/bin/fio" "$stubs"
    mkdir -p "$root/lib/x86_64-linux-gnu"
    for so in $FIO_STUBS; do
        cp "$stubs/$so" "$root/lib/x86_64-linux-gnu/"
    done
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
    # The ebizzy-shaped workload (docs/seeds.md), static: it needs nothing of the host at run time.
    ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -static -pthread -o "$root/bin/ebizzy" \
        guest-tests/linux/ebizzy.c
    # They are dynamically linked: their libraries and loader come from this (Debian 12)
    # host (cyclictest's libnuma from libnuma1, sockperf's libstdc++ from libstdc++6, which
    # `make deps` installs; fio's libaio from libaio1), but fio's stubbed ones.
    for bin in hackbench cyclictest sockperf fio outb; do
        for lib in $(LD_LIBRARY_PATH=$stubs ldd "$root/bin/$bin" | grep -o '/[^ ]*' | grep -v "^$stubs/"); do
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
