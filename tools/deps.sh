#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install what building, running and testing pollux needs (Debian 12).
# As root it installs the missing packages with apt-get and says which;
# otherwise it prints the exact command and fails.
set -e
PACKAGES="gcc make binutils python3 python3-matplotlib python3-scipy qemu-system-x86 grub-pc-bin grub-common xorriso mtools \
bochs bochs-term bochsbios vgabios libcmocka-dev clang libclang-rt-14-dev acpica-tools cpio libc6-dev libnuma1 libstdc++6 libaio1"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >/dev/null
    echo "deps: done"
else
    echo "deps: missing packages:$missing" >&2
    echo "deps: run as root:  apt-get install -y$missing" >&2
    exit 1
fi
