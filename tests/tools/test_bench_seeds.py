# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/bench_linux.py's seed cells (make test: tools/unittest): a chain of
workloads repeated R times splits into R repetitions of every word, each with its @bench
result and what its window cost the host (the difference of its mark rounds)."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import bench_linux  # noqa: E402
from consolelog import ConsoleLog  # noqa: E402


def mark(round_, t_s, blocked_us, polling_us, halts, poll_ns, caught, attempted):
    return "@stats " + json.dumps({
        "scope": "vm", "round": round_, "vm": "lx", "vcpus": 1, "t": int(t_s * 1e9),
        "blocked_us": blocked_us, "wait_us": 0, "run_us": 0,
        "polling_us": polling_us, "halt_exits": halts, "halt_poll_success_ns": poll_ns,
        "halt_poll_fail_ns": 0, "halt_successful_poll": caught,
        "halt_attempted_poll": attempted})


def bench(op, **body):
    return "[lx] @bench " + json.dumps(dict(guest="linux", op=op, **body))


def chain_log(words, reps, result):
    """Each word's window lasts 2 s; in it the vCPU is halted off its CPU 1.88 s and polls
    0.02 s, halts 50 times, polls 20 ms in all, catching 10 of 40 wake-ups (run_us stays 0:
    a running stretch is counted only when it ends, so it is not used)."""
    lines, round_, t = [], 1, 10.0
    for i, word in enumerate(list(words) * reps):
        lines.append(bench("workload", index=i, workload=word))
        start = (round_, t, 1_880_000 * i, 20_000 * i, 50 * i, 20_000_000 * i, 10 * i, 40 * i)
        end = (round_ + 1, t + 2, 1_880_000 * (i + 1), 20_000 * (i + 1), 50 * (i + 1),
               20_000_000 * (i + 1), 10 * (i + 1), 40 * (i + 1))
        lines += [mark(*start), mark(*end), result(word, i)]
        round_, t = round_ + 2, t + 3
    lines.append('@vm_stop {"vm":"lx","code":0,"reason":"poweroff"}')
    return ConsoleLog("\n".join(lines) + "\n", 0)


def fio_line(word, i):
    _, rw, bs, mib = word.split(":")
    return bench("fio", rw=rw, bs=bs, mib=int(mib), seconds=1.0, iops=100 + i, mb_s=1.0 + i,
                 clat_median_us=500, clat_p99_us=900)


class SeedChain(unittest.TestCase):
    def test_repetitions_of_every_word(self):
        words = bench_linux.fio_words()
        got = bench_linux.seed_chain(chain_log(words, 2, fio_line), "lx", words, 2,
                                     bench_linux.fio_result)
        self.assertIsInstance(got, list, got)
        self.assertEqual(len(got), 2)
        self.assertEqual([got[r][w]["mb_s"] for r in range(2) for w in words],
                         [1.0 + i for i in range(8)])
        host = got[1][words[2]]["host"]
        self.assertAlmostEqual(host["seconds"], 2.0)
        self.assertAlmostEqual(host["poll_ms_per_s"], 10.0)   # 20 ms in 2 s
        self.assertAlmostEqual(host["busy_pct"], 6.0)         # 0.12 s of 2 s
        self.assertAlmostEqual(host["halts_per_s"], 25.0)
        self.assertAlmostEqual(host["polls_caught"], 0.25)

    def test_a_chain_of_other_words_is_an_error(self):
        words = bench_linux.fio_words()
        got = bench_linux.seed_chain(chain_log(words[:3], 2, fio_line), "lx", words, 2,
                                     bench_linux.fio_result)
        self.assertIsInstance(got, str)
        self.assertIn("want", got)

    def test_a_missing_result_is_an_error(self):
        words = bench_linux.fio_words()
        log = chain_log(words, 1, lambda w, i: fio_line(w, i) if i != 2 else
                        bench("idle", seconds=1))
        got = bench_linux.seed_chain(log, "lx", words, 1, bench_linux.fio_result)
        self.assertEqual(got, f"lx: no result of {words[2]} in repetition 0")

    def test_ebizzy_and_hackbench_results(self):
        word = bench_linux.EBIZZY_WORKLOADS[0]
        log = chain_log((word,), 3, lambda w, i: bench("ebizzy", seconds=5.0, threads=4,
                                                       records=100 * i, records_per_s=20.0 * i))
        got = bench_linux.seed_chain(log, "lx", (word,), 3, bench_linux.ebizzy_result)
        self.assertEqual([r[word]["records_per_s"] for r in got], [0.0, 20.0, 40.0])
        word = bench_linux.EBIZZY_WORKLOADS[1]
        log = chain_log((word,), 1, lambda w, i: bench("hackbench", seconds=3.5))
        got = bench_linux.seed_chain(log, "lx", (word,), 1, bench_linux.ebizzy_result)
        self.assertEqual(got[0][word]["seconds"], 3.5)


if __name__ == "__main__":
    unittest.main()
