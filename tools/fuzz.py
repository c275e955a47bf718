#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run the libFuzzer harnesses (tests/fuzz/, built by `make fuzz`).

Each harness runs alone, for --seconds or until --runs executions, on its
seeds (tests/fuzz/corpus/<name>/), the inputs that once broke a parser
(tests/fuzz/regressions/<name>/, replayed first, so an old bug that returns
fails at once) and a working corpus under build/fuzz/corpus/<name>/ that
grows from run to run. A crash or broken contract leaves its input in
build/fuzz/crashes/<name>/; once fixed it belongs in the regressions.
Prints one Markdown table row per harness and exits non-zero on any failure.
tools/test.py uses run_harness for the short runs inside `make test`.
"""
import argparse
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ_SRC = os.path.join(ROOT, "tests", "fuzz")
STAT_RE = re.compile(r"^stat::(\w+):\s+(\d+)", re.M)
COV_RE = re.compile(r"\bcov: (\d+)")


def harness_name(binary):
    return os.path.basename(binary)[len("fuzz_"):]


def run_harness(binary, workdir, seconds=None, runs=None, seed=None, nice=0):
    """Fuzz once; returns (ok, stats dict, the last lines of output on failure)."""
    name = harness_name(binary)
    corpus = os.path.join(workdir, "corpus", name)
    crashes = os.path.join(workdir, "crashes", name)
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(crashes, exist_ok=True)
    cmd = [binary, "-print_final_stats=1", "-timeout=10", "-rss_limit_mb=2048",
           f"-artifact_prefix={crashes}/"]
    if seconds is not None:
        cmd.append(f"-max_total_time={seconds}")
    if runs is not None:
        cmd.append(f"-runs={runs}")
    if seed is not None:
        cmd.append(f"-seed={seed}")
    cmd.append(corpus)
    for sub in ("corpus", "regressions"):
        d = os.path.join(FUZZ_SRC, sub, name)
        if os.path.isdir(d):
            cmd.append(d)
    if nice:
        cmd = ["nice", "-n", str(nice)] + cmd
    t0 = time.monotonic()
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace")
    stats = {k: int(v) for k, v in STAT_RE.findall(res.stdout)}
    stats["seconds"] = time.monotonic() - t0
    cov = COV_RE.findall(res.stdout)
    stats["cov"] = int(cov[-1]) if cov else 0
    if res.returncode != 0:
        return False, stats, res.stdout.strip().splitlines()[-20:]
    return True, stats, []


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=int, default=None, help="time per harness")
    p.add_argument("--runs", type=int, default=None, help="executions per harness")
    p.add_argument("--nice", type=int, default=0, help="run at this niceness")
    p.add_argument("--only", default="", help="one harness by name")
    p.add_argument("binaries", nargs="+")
    a = p.parse_args()
    if a.seconds is None and a.runs is None:
        a.seconds = 60
    workdir = os.path.join(ROOT, "build", "fuzz")
    failed = 0
    print("| harness | executions | seconds | exec/s | coverage | result |")
    print("|---|---:|---:|---:|---:|---|", flush=True)
    for binary in a.binaries:
        name = harness_name(binary)
        if a.only and name != a.only:
            continue
        ok, stats, tail = run_harness(binary, workdir, a.seconds, a.runs, nice=a.nice)
        execs = stats.get("number_of_executed_units", 0)
        secs = stats["seconds"]
        print(f"| {name} | {execs} | {secs:.0f} | {execs / secs if secs else 0:.0f} | "
              f"{stats['cov']} | {'ok' if ok else 'FAILED'} |", flush=True)
        if not ok:
            failed += 1
            for line in tail:
                print(f"    {line}", file=sys.stderr)
            print(f"    input kept in {os.path.relpath(os.path.join(workdir, 'crashes', name), ROOT)}",
                  file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
