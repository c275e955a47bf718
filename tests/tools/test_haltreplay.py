# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/haltreplay.py (run by `make test` as tools/unittest): reading trace=halt
lines and live counters from a console log, and the replay's rows."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import haltreplay  # noqa: E402
from consolelog import ConsoleLog  # noqa: E402

with open(os.path.join(HERE, "haltreplay-sample.log")) as f:
    SAMPLE = ConsoleLog(f.read())


class Halts(unittest.TestCase):
    def test_one_record_per_halt_of_the_vm_in_order(self):
        got = haltreplay.halts(SAMPLE, "pp")
        # Not the guest's look-alike line, not the other VM's, not trace=sched's.
        self.assertEqual([h["start"] for h in got], [1466114327, 1466155526, 1466223575,
                                                     1466364222])
        self.assertEqual(got[0], {"start": 1466114327, "vcpu": 1, "waited": True, "ns": 32799,
                                  "valid": True, "source": "ipi", "window": 0,
                                  "opted_out": False, "cpu_wanted": False})
        self.assertTrue(got[1]["cpu_wanted"] and not got[1]["opted_out"])
        self.assertEqual(got[1]["source"], "timer")
        self.assertTrue(got[2]["opted_out"] and not got[2]["cpu_wanted"])
        self.assertFalse(got[3]["valid"])
        self.assertEqual(got[3]["source"], "stop")
        other = haltreplay.halts(SAMPLE, "other")
        self.assertEqual([(h["waited"], h["ns"], h["window"]) for h in other],
                         [(False, 900, 50000)])

    def test_records_text_is_what_the_binary_reads(self):
        self.assertEqual(haltreplay.records_text(haltreplay.halts(SAMPLE, "pp")),
                         "1 32799 0 1 0 0\n0 59398 0 1 0 1\n1 250000 0 1 1 0\n0 5000 0 0 0 0\n")

    def test_a_malformed_line_is_an_error_not_a_skip(self):
        log = ConsoleLog("5: pp: kvm_vcpu_wakeup: vcpu 0: wait time ns, polling valid\n")
        with self.assertRaises(ValueError):
            haltreplay.halts(log, "pp")


class Policies(unittest.TestCase):
    def test_the_recorded_policy_by_the_replay_s_names(self):
        self.assertEqual(haltreplay.policy_name(haltreplay.policy(SAMPLE, "pp")), "none")
        self.assertEqual(haltreplay.policy_name(haltreplay.policy(SAMPLE, "other")), "fixed")
        base = {"halt_poll_ns": 200000, "halt_poll_mode": "adaptive", "halt_poll_ns_shrink": 2}
        self.assertEqual(haltreplay.policy_name(base), "adaptive")
        self.assertEqual(haltreplay.policy_name(dict(base, halt_poll_ns_shrink=0)),
                         "adaptive-shrink0")
        self.assertIsNone(haltreplay.policy_name(dict(base, halt_poll_ns_shrink=4)))
        self.assertEqual(haltreplay.policy_name(dict(base, halt_poll_mode="predict")), "predict")

    def test_live_counters_are_the_last_stats_summed_over_vcpus(self):
        self.assertEqual(haltreplay.live(SAMPLE, "pp"),
                         {"halts": 4, "polls": 3, "caught": 2, "blocked": 2, "poll_ns": 45000,
                          "wasted_ns": 10000})


class Table(unittest.TestCase):
    ROWS = {name: {"max_ns": 200000, "polls": 2, "caught": 1, "blocked": 3, "poll_ns": 60000,
                   "wasted_ns": 50000, "compared": 2, "same_window": 2 if name == "none" else 0}
            for name in haltreplay.POLICIES}

    def test_saved_is_a_block_per_catch_less_the_waste(self):
        self.assertEqual(haltreplay.saved_ns(self.ROWS["fixed"], 133000), 133000 - 50000)

    def test_a_row_per_policy_the_recorded_one_marked_live_beside(self):
        recorded = haltreplay.halts(SAMPLE, "pp")
        live = haltreplay.live(SAMPLE, "pp")
        lines = haltreplay.table("pp", recorded, self.ROWS, "none", {"fixed": live},
                                 block_ns=133000).splitlines()
        self.assertEqual(lines[0], "pp: 4 halts of 2 vCPUs, woken by ipi 2, stop 1, timer 1; "
                         "recorded under none, replayed at a maximum of 200000 ns")
        self.assertIn("saved us at 133000 ns/block (live)", lines[2])
        self.assertTrue(lines[4].startswith("| none (recorded) | 2 | 1 | 3 | 60.0 | 50.0 | 83.0 |"))
        self.assertEqual(lines[5], "| fixed | 2 (3) | 1 (2) | 3 (2) | 60.0 (45.0) | 50.0 (10.0) | "
                         "83.0 (256.0) | 0 of 2 |")
        self.assertEqual(len(lines), 4 + len(haltreplay.POLICIES))


@unittest.skipUnless(os.access(haltreplay.BINARY, os.X_OK), "build/haltreplay not built")
class Replay(unittest.TestCase):
    def test_rows_per_policy(self):
        rows = haltreplay.replay(haltreplay.halts(SAMPLE, "pp"), 200000, 2, 10000)
        self.assertEqual(list(rows), haltreplay.POLICIES)
        # The opted-out halt polls under no policy, the cpu-wanted one neither.
        fixed = rows["fixed"]
        self.assertEqual((fixed["halts"], fixed["polls"], fixed["caught"], fixed["blocked"]),
                         (4, 2, 2, 2))
        self.assertEqual(fixed["poll_ns"], 32799 + 5000)
        none = rows["none"]
        self.assertEqual((none["polls"], none["compared"], none["same_window"]), (0, 2, 2))


if __name__ == "__main__":
    unittest.main()
