#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""pollux test runner: host unit tests, short fuzzing runs, then boot tests under QEMU and Bochs.

Prints one line per test and a final `N passed, N failed` line; exits non-zero
on any failure. --only takes a name or a glob; --full adds the long matrix
(`make test-full`). Boot tests are defined in tests/boot/suite.py and assert
on the console's @event lines, never on prose. --layouts N runs each boot test
N more times, each with the kernel in another memory layout: under Bochs a
run is deterministic, so a failure that depends on timing shows in some
layouts every time, and never in others (docs/robustness.md).
"""
import argparse
import concurrent.futures
import fnmatch
import glob
import os
import shutil
import subprocess
import sys
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "boot"))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import suite  # noqa: E402
from consolelog import ConsoleLog  # noqa: E402
from debianpython import DEBIAN_PYTHON  # noqa: E402
from fuzz import harness_name, run_harness  # noqa: E402

BUILD = os.path.join(ROOT, "build")


def run_unit(path):
    if not os.path.exists(path):
        return False, [f"{path} was not built"], None
    res = subprocess.run([path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        return False, res.stdout.strip().splitlines()[-12:], None
    return True, [], None


# Each harness's share of `make test`: its seeds and regressions, then a short
# fuzzing run with a fixed seed, so a failure reproduces.
FUZZ_TEST_SECONDS = 2
FUZZ_WORKDIR = os.path.join(BUILD, "test", "fuzz")


def run_fuzz(binary):
    if not os.path.exists(binary):
        return False, [f"{binary} was not built"], None
    name = harness_name(binary)
    for sub in ("corpus", "crashes"):
        shutil.rmtree(os.path.join(FUZZ_WORKDIR, sub, name), ignore_errors=True)
    ok, stats, tail = run_harness(binary, FUZZ_WORKDIR, seconds=FUZZ_TEST_SECONDS, seed=1)
    if ok:
        return True, [], None
    crashes = os.path.join(FUZZ_WORKDIR, "crashes", name)
    return False, tail[-12:] + [f"input kept in {os.path.relpath(crashes, ROOT)}"], None


# tools/plot.py on a recorded log: the charts it must write, as valid PNG files.
PLOT_SAMPLE = os.path.join(ROOT, "tests", "tools", "plot-sample.log")
PLOT_CHARTS = ("halt_poll_ns.png", "exits.png", "bench.png")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_problem(path):
    """Why path is no valid PNG image, or None: signature, IHDR first, every chunk's CRC, IEND."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(PNG_SIGNATURE):
        return "no PNG signature"
    pos, first = len(PNG_SIGNATURE), True
    while pos + 12 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        crc = int.from_bytes(data[pos + 8 + length:pos + 12 + length], "big")
        if zlib.crc32(kind + body) != crc:
            return f"bad CRC in {kind!r}"
        if first and (kind != b"IHDR" or int.from_bytes(body[:4], "big") == 0):
            return "no IHDR with a width first"
        first = False
        if kind == b"IEND":
            return None
        pos += 12 + length
    return "no IEND"


def run_plot():
    out = os.path.join(BUILD, "test", "plot")
    shutil.rmtree(out, ignore_errors=True)
    res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "plot.py"), PLOT_SAMPLE,
                          out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        return False, res.stdout.strip().splitlines()[-12:], None
    problems = []
    for name in PLOT_CHARTS:
        path = os.path.join(out, name)
        why = png_problem(path) if os.path.exists(path) else "not written"
        if why:
            problems.append(f"{name}: {why}")
    return not problems, problems, None


# The tools' own unit tests (tests/tools/test_*.py, e.g. tools/benchstats.py's statistics),
# under Debian's python3, which has python3-scipy.
TOOL_TESTS = os.path.join(ROOT, "tests", "tools")


def run_tool_tests():
    python = DEBIAN_PYTHON if os.path.exists(DEBIAN_PYTHON) else sys.executable
    res = subprocess.run([python, "-m", "unittest", "discover", "-s", TOOL_TESTS, "-p",
                          "test_*.py"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    return res.returncode == 0, res.stdout.strip().splitlines()[-12:], None


def run_tree_check(script):
    """A check over the source tree (tools/floors.py: no #include goes up a floor;
    tools/license.py: every source file carries its SPDX line): its exit status and last lines."""
    res = subprocess.run([sys.executable, os.path.join(ROOT, "tools", script)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return res.returncode == 0, res.stdout.strip().splitlines()[-12:], None


def run_flags_check():
    """make rebuilds the hypervisor when its flags change (Makefile: KFLAGS_STAMP): after the
    build the kernel is up to date, and with other KDEFS it is not."""
    def up_to_date(*extra):
        return subprocess.run(["make", "-q", "--no-print-directory", os.path.relpath(os.path.join(BUILD, "pollux.elf"), ROOT),
                               *extra], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0
    built, probed = up_to_date(), up_to_date("KDEFS=-DPOLLUX_FLAGS_PROBE")
    lines = [f"after the build, make -q: {'up to date' if built else 'out of date'}",
             f"with KDEFS=-DPOLLUX_FLAGS_PROBE: {'up to date' if probed else 'out of date'}"]
    return built and not probed, lines, None


FIXTURES = suite.FIXTURES
# Console logs of failed boot tests, kept across runs (a test's own directory is
# emptied when it runs again): build/test-failures/<time>-<test>/.
FAILURES = os.path.join(BUILD, "test-failures")


def keep_failure(name, rundir):
    """Copy what a failed boot left (console, emulator output, Bochs log) where it stays."""
    dest = os.path.join(FAILURES, time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}-{name}")
    os.makedirs(dest, exist_ok=True)
    for fname in ("console.log", "emulator.out", "qemu.log", "bochs.log", "com1.txt"):
        src = os.path.join(rundir, fname)
        if os.path.exists(src):
            shutil.copy(src, dest)
    return os.path.join(dest, "console.log")


def padded_kernel(pad, name):
    """build/pollux.elf with a pad-byte section that is never loaded as code or data. GRUB
    still copies every section into memory and places the modules after them, so the guests,
    the hypervisor's heap and every timing after the first module read move."""
    where = os.path.join(BUILD, "test", "layouts")
    os.makedirs(where, exist_ok=True)
    blob = os.path.join(where, f"{name}.pad")
    with open(blob, "wb") as f:
        f.write(bytes(pad))
    out = os.path.join(where, f"{name}.elf")
    subprocess.run(["objcopy", f"--add-section=.layout_pad={blob}",
                    os.path.join(BUILD, "pollux.elf"), out], check=True)
    return out


def run_boot(test, pad=0):
    name = f"{test.name}@pad{pad}" if pad else test.name
    rundir = os.path.join(BUILD, "test", name)
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    flags = [f.replace("{fixtures}", FIXTURES) for f in test.run_flags()]
    if pad:
        flags += ["--kernel", padded_kernel(pad, name)]
    cmd = [sys.executable, os.path.join(ROOT, "tools", "run.py"), "--rundir", rundir,
           "--accel", "tcg", "--timeout", str(test.timeout)] + flags
    res = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    logpath = os.path.join(rundir, "console.log")
    with open(logpath, "w") as f:
        f.write(res.stdout)
    log = ConsoleLog(res.stdout, res.returncode)
    problems = []
    if res.returncode == 124:
        problems.append(f"timed out after {test.timeout} s")
    else:
        for check in test.checks:
            try:
                check(log)
            except AssertionError as e:
                problems.append(str(e) or check.__name__)
            except (LookupError, TypeError, ValueError) as e:  # what the log lacks
                problems.append(f"{check.__name__}: {type(e).__name__} {e}")
    if problems:
        return False, problems, keep_failure(name, rundir)
    shutil.rmtree(os.path.join(rundir, "iso"), ignore_errors=True)
    for iso in glob.glob(os.path.join(rundir, "*.iso")):
        os.remove(iso)
    return True, [], logpath


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--full", action="store_true")
    p.add_argument("--soak", type=int, default=0, metavar="SECONDS",
                   help="only the soak, on every platform, for this much virtual time")
    p.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    p.add_argument("--units", default="", help="the unit-test binaries make built")
    p.add_argument("--fuzz", default="", help="the fuzz harnesses make built")
    p.add_argument("--layouts", type=int, default=0, metavar="N",
                   help="also run each boot test in N other layouts (the kernel padded by 4 KiB steps)")
    a = p.parse_args()

    suite.make_fixtures(FIXTURES, BUILD)
    jobs = []
    if a.soak:
        a.units = a.fuzz = ""
    for path in a.units.split():
        name = "unit/" + os.path.basename(path)[len("test_"):]
        path = os.path.join(ROOT, path)
        jobs.append((name, lambda path=path: run_unit(path)))
    for path in a.fuzz.split():
        path = os.path.join(ROOT, path)
        jobs.append(("fuzz/" + harness_name(path), lambda path=path: run_fuzz(path)))
    if not a.soak and not a.layouts:
        jobs.append(("tools/plot", run_plot))
        jobs.append(("tools/unittest", run_tool_tests))
        jobs.append(("tools/floors", lambda: run_tree_check("floors.py")))
        jobs.append(("tools/license", lambda: run_tree_check("license.py")))
        jobs.append(("tools/build-flags", run_flags_check))
    for t in suite.soak_tests(a.soak) if a.soak else suite.tests(full=a.full):
        jobs.append((t.name, lambda t=t: run_boot(t)))
        for k in range(1, a.layouts + 1):
            jobs.append((f"{t.name}@pad{k * 4096}", lambda t=t, k=k: run_boot(t, k * 4096)))
    if a.only:
        jobs = [j for j in jobs if fnmatch.fnmatch(j[0].split("@")[0], a.only) or j[0] == a.only
                or j[0].split("/")[-1] == a.only]
        if not jobs:
            print(f"test: nothing matches '{a.only}'")
            return 1

    passed = failed = 0
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {}
        for name, fn in jobs:
            futures[pool.submit(lambda fn=fn: (time.monotonic(), fn()))] = name
        for fut in concurrent.futures.as_completed(futures):
            name = futures[fut]
            t0, (ok, problems, logpath) = fut.result()
            secs = time.monotonic() - t0
            if ok:
                passed += 1
                print(f"PASS {name} ({secs:.1f}s)", flush=True)
            else:
                failed += 1
                where = f" (console: {os.path.relpath(logpath, ROOT)})" if logpath else ""
                print(f"FAIL {name} ({secs:.1f}s){where}", flush=True)
                for line in problems:
                    print(f"     {line}", flush=True)
    print(f"{passed} passed, {failed} failed ({time.monotonic() - start:.0f}s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
