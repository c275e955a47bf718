#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The include floors (docs/architecture.md): a file includes only headers of its own floor
and of the floors below it.

From the bottom: abi/ (constants shared with the guests) and lib/; the host machine (arch/x86/
and drivers/, which may use each other); stats/; sched/; vmm/; the SVM and VMX backends
(backend/, where svm/ and vmx/ include nothing of each other); boot/ on top. Guests
(guest-tests/) are freestanding programs of their own and include nothing of the hypervisor's
but abi/. Every include form counts, found as the compiler finds it: "x.h" in the including
file's folder first, then "x.h" and <x.h> from the root (the Makefile's -I.); <x.h> that is no
file of the tree is the system's. Prints one line per include that goes up or across, with its
file and line, and exits 1 if there is one that is not listed as debt still to pay (DEBT, each
with its reason; the list only shrinks).

Inside vmm/ the same rule holds between its layers (VMM_FLOORS): what a VM is configured with
and the leaf headers every layer uses; the devices (vmm/dev/); exit dispatch (vmm/exit/); the
vCPU (vmm/vcpu/); the VM itself (vm.h, vm.c, vmm.c) with its loaders and console on top.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLOORS = {"abi": 0, "lib": 0, "arch": 1, "drivers": 1, "stats": 2, "sched": 3, "vmm": 4,
          "backend": 5, "boot": 6}
HYPERVISOR = tuple(FLOORS)
GUESTS = "guest-tests"
# Each backend's folder (backend/svm/, backend/vmx/) includes nothing of another's.
BACKENDS = "backend"

# vmm/'s layers, from the bottom: a path's layer is that of the longest entry it starts with.
# A file named here apart from its folder is a leaf that includes nothing of vmm/ above it.
VMM = "vmm"
VMM_FLOORS = {
    "vmm/": 4,  # the VM: vm.h, vm.c, vmm.c, vm_policy.c, load/, console/
    "vmm/vmconfig.": 0,  # what a VM is configured with, parsed from the options
    "vmm/vm_policy.h": 0,
    "vmm/net/": 0,  # the switch between VMs' network devices
    "vmm/console/trace.h": 0,
    "vmm/console/profile.h": 0,
    "vmm/load/acpi_tables.h": 0,  # the ACPI tables' fixed ports, which acpi_pm serves
    "vmm/exit/cpuid.h": 0,  # the guest's CPU model (guest_features), which the local APIC reads
    "vmm/dev/": 1,  # the devices and their table
    "vmm/exit/": 2,  # exit dispatch: sees the device table
    "vmm/vcpu/": 3,  # the vCPU and its run loop: sees dispatch
}

# Upward includes that are still there, each to go (docs/architecture.md, "Debt"): (file, the
# included file as found, both from the root): the reason. The list only ever shrinks.
DEBT_VM = "struct vm holds the devices' state (issue 36, item 3): no narrow VM interface yet"
DEBT_VCPU = "struct vcpu holds the local APIC's and MSRs' state: no narrow vCPU interface yet"
DEBT_VMM = "a vCPU's retirement and the statistics' walk of every VM call up into vmm.c"
DEBT_STATS = "the trace marker counts its marks in the vCPU's statistics row"
DEBT_MSRS = "TSC sync (vcpu/tsc_sync.c) serves the cpu_msrs device's TSC MSRs"
DEBT_PAUSE = "the PAUSE exit's handler is the vCPU's spin detection (vcpu/pause.c)"
DEBT = {
    ("vmm/exit/exits.c", "vmm/vcpu/pause.h"): DEBT_PAUSE,
    ("vmm/exit/exits.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/exit/exits.h", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/exit/exits.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/exit/fastpath_exit.h", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/exit/fastpath_exit.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/exit/guest_access.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/exit/hypercall.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/exit/io.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/exit/mmio.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/exit/msr.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/acpi_pm.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/cpu_msrs.c", "vmm/vcpu/tsc_sync.h"): DEBT_MSRS,
    ("vmm/dev/cpu_msrs.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/dev/debug_exit.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/device.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/dev/device.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/fwcfg.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/ioapic.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/dev/kvm_msrs.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/kvm_pv.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/kvm_pv_sched.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/dev/kvm_pv_sched.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/lapic.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/dev/mce_msrs.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/pc_msrs.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/pci_latch.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/pic.c", "vmm/vcpu/vcpu.h"): DEBT_VCPU,
    ("vmm/dev/pic_masks.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/shutdown_port.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/trace_marker.c", "vmm/vcpu/vcpu_stats.h"): DEBT_STATS,
    ("vmm/dev/trace_marker.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/vlapic_dev.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/vm_devices.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/virtio/blk_vm.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/dev/virtio/net_vm.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/vcpu/pause.c", "vmm/vm.h"): DEBT_VM,
    ("vmm/vcpu/vcpu.c", "vmm/vmm.h"): DEBT_VMM,
    ("vmm/vcpu/vcpu.h", "vmm/vm.h"): DEBT_VM,
    ("vmm/vcpu/vcpu_stats.c", "vmm/vmm.h"): DEBT_VMM,
    ("vmm/vcpu/vcpu_stats.h", "vmm/vm.h"): DEBT_VM,
}

INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')


def top(path):
    return path.split("/", 1)[0]


def vmm_layer(path):
    """The entry of VMM_FLOORS that a path under vmm/ belongs to."""
    return max((k for k in VMM_FLOORS if path.startswith(k)), key=len)


def apart(a, b):
    """Two paths under backend/ in two backends' folders (backend/'s own files are no one's)."""
    a, b = a.split("/"), b.split("/")
    return len(a) > 2 and len(b) > 2 and a[1] != b[1]


def sources(root):
    for folder in HYPERVISOR + (GUESTS,):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith((".c", ".h", ".S")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def resolve(root, rel, quoted, inc):
    """The included file, from the root, as the compiler finds it; None for one outside the
    tree (a system header). A quoted include that is no file (a generated one) counts by the
    path it writes, from the root."""
    places = [os.path.dirname(rel), ""] if quoted else [""]
    for place in places:
        path = os.path.normpath(os.path.join(place, inc))
        if not path.startswith("..") and os.path.isfile(os.path.join(root, path)):
            return path
    path = os.path.normpath(inc)
    return path if quoted and not path.startswith("..") else None


def violations(root):
    """(file, line number, include as written, included file, why) for every include that
    breaks a floor."""
    for rel in sources(root):
        with open(os.path.join(root, rel), errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                quoted = m.group(1) is not None
                written = f'"{m.group(1)}"' if quoted else f"<{m.group(2)}>"
                path = resolve(root, rel, quoted, m.group(1) if quoted else m.group(2))
                if path is None:
                    continue
                here, there = top(rel), top(path)
                if here == GUESTS:
                    if there in FLOORS and there != "abi":
                        yield rel, n, written, path, "a guest includes a hypervisor header"
                elif there in FLOORS and FLOORS[there] > FLOORS[here]:
                    yield rel, n, written, path, f"{here}/ (floor {FLOORS[here]}) includes " \
                                                 f"{there}/ (floor {FLOORS[there]})"
                elif here == there == VMM and \
                        VMM_FLOORS[vmm_layer(path)] > VMM_FLOORS[vmm_layer(rel)]:
                    a, b = vmm_layer(rel), vmm_layer(path)
                    yield rel, n, written, path, f"{a} (vmm floor {VMM_FLOORS[a]}) includes " \
                                                 f"{b} (vmm floor {VMM_FLOORS[b]})"
                elif here == there == BACKENDS and apart(rel, path):
                    yield rel, n, written, path, "one backend includes another's header"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else ROOT
    bad = debt = 0
    found = list(violations(root))
    for rel, n, written, path, why in found:
        if (rel, path) in DEBT:
            debt += 1
            continue
        bad += 1
        print(f"{rel}:{n}: #include {written} ({path}): {why}")
    seen = {(rel, path) for rel, _, _, path, _ in found}
    stale = [k for k in DEBT if k not in seen]
    for rel, path in stale:
        bad += 1
        print(f"tools/floors.py: DEBT lists {rel} -> {path}, which is paid: remove it from DEBT")
    print(f"floors: {bad} include(s) up a floor or across backends, {debt} listed as debt")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
