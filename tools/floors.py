#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The include floors (docs/architecture.md): a file includes only headers of its own floor
and of the floors below it.

From the bottom: abi/ (constants shared with the guests) and lib/; the host machine (arch/x86/ and drivers/, which may use each other);
stats/; sched/; vmm/; boot/ on top. Guests (guest-tests/) are freestanding programs of their
own and include nothing of the hypervisor's but abi/. Prints one line per include that goes up, with its
file and line, and exits 1 if there is one that is neither the named exception nor listed as
debt still to pay (DEBT, each with its reason; the list only shrinks).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FLOORS = {"abi": 0, "lib": 0, "arch": 1, "drivers": 1, "stats": 2, "sched": 3, "vmm": 4, "boot": 5}
HYPERVISOR = tuple(FLOORS)
GUESTS = "guest-tests"

# The one exception by design: the exit fast path is inlined into the vendors' run loops, so
# that the hottest exits cost no call; those two files see the fast path and the struct vcpu it
# works on (docs/architecture.md, "The named exception").
EXCEPTIONS = {
    ("arch/x86/svm/svm.c", "vmm/exit/fastpath_exit.h"),
    ("arch/x86/vmx/vmx.c", "vmm/exit/fastpath_exit.h"),
    ("arch/x86/svm/svm.c", "vmm/vm.h"),
    ("arch/x86/vmx/vmx.c", "vmm/vm.h"),
}

# Upward includes that are still there, each to go (docs/architecture.md, "Debt"). Empty: the
# list only ever shrinks, and a new upward include is either paid at once or a named exception.
DEBT = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def top(path):
    return path.split("/", 1)[0]


def sources(root):
    for folder in HYPERVISOR + (GUESTS,):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith((".c", ".h", ".S")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def violations(root):
    """(file, line number, included path, why) for every include that breaks a floor."""
    for rel in sources(root):
        with open(os.path.join(root, rel), errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc, here, there = m.group(1), top(rel), top(m.group(1))
                if here == GUESTS:
                    if there in FLOORS and there != "abi":
                        yield rel, n, inc, "a guest includes a hypervisor header"
                elif there in FLOORS and FLOORS[there] > FLOORS[here]:
                    yield rel, n, inc, f"{here}/ (floor {FLOORS[here]}) includes {there}/ " \
                                       f"(floor {FLOORS[there]})"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else ROOT
    bad = debt = 0
    found = list(violations(root))
    for rel, n, inc, why in found:
        if (rel, inc) in EXCEPTIONS:
            continue
        if (rel, inc) in DEBT:
            debt += 1
            continue
        bad += 1
        print(f"{rel}:{n}: #include \"{inc}\": {why}")
    seen = {(rel, inc) for rel, _, inc, _ in found}
    stale = [k for k in DEBT if k not in seen]
    for rel, inc in stale:
        bad += 1
        print(f"tools/floors.py: DEBT lists {rel} -> {inc}, which is paid: remove it from DEBT")
    print(f"floors: {bad} upward include(s), {debt} listed as debt")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
