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

# Upward includes that are still there, each to go (docs/architecture.md, "Debt"): (file, the
# included file as found, both from the root). Empty: the list only ever shrinks.
DEBT = {}

INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')


def top(path):
    return path.split("/", 1)[0]


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
