# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/bench_linux.py's virtio-net parsing (make test: tools/unittest): a
phase's counts are the difference of the client's mark rounds, per round trip."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import bench_linux  # noqa: E402
from consolelog import ConsoleLog  # noqa: E402


def stats(round_, scope, vm=None, **body):
    body.update({"scope": scope, "round": round_})
    if vm:
        body["vm"] = vm
    return "@stats " + json.dumps(body)


def vm_round(round_, t, exits, poll_ns, notifies, interrupts):
    npf = exits.get("npf", 0)
    return [stats(round_, "vm", "cli", t=t, exits=exits, halt_poll_success_ns=poll_ns,
                  halt_poll_fail_ns=0, npf_exits={"virtio-net": npf - npf // 4,
                                                  "lapic": npf // 4}),
            stats(round_, "devices", "cli", t=t,
                  **{"virtio-net": {"notifies": notifies, "interrupts": interrupts}})]


def log(rounds=4):
    lines = []
    # A periodic round (it has a global record): not a mark.
    lines += vm_round(1, 0, {"npf": 5}, 0, 0, 0) + [stats(1, "global")]
    marks = [(2, 1_000_000_000, {"npf": 10}, 0, 1, 1),
             (3, 3_000_000_000, {"npf": 12, "hlt": 4}, 6_000_000, 1, 1),    # idle: 2 s, 6 ms
             (4, 4_000_000_000, {"npf": 20, "hlt": 4}, 6_000_000, 2, 3),
             (5, 9_000_000_000, {"npf": 420, "hlt": 104, "msr_write": 200}, 6_000_000, 102, 203)]
    for m in marks[:rounds]:
        lines += vm_round(*m)
    lines += ['[cli] @bench {"guest":"linux","op":"sockperf","proto":"udp","median_us":50,'
              '"p99_us":80,"mean_us":55,"count":60}',
              '[cli] @bench {"guest":"linux","op":"sockperf","proto":"tcp","median_us":60,'
              '"p99_us":90,"mean_us":65,"count":40}',
              '@vm_stop {"vm":"cli","code":0,"reason":"poweroff"}',
              '@vm_stop {"vm":"srv","code":0,"reason":"poweroff"}']
    # The stop's round, after @vm_stop: not a mark either.
    lines += vm_round(6, 9_500_000_000, {"npf": 999}, 0, 999, 999)
    return ConsoleLog("\n".join(lines) + "\n", 0)


class ParseNet(unittest.TestCase):
    def test_phases_are_differences_of_mark_rounds(self):
        got = bench_linux.parse_net(log())
        self.assertTrue(got["ok"], got["error"])
        self.assertEqual(got["udp"]["median_us"], 50)
        self.assertEqual(got["tcp"]["count"], 40)
        self.assertAlmostEqual(got["idle_poll_ms_per_s"], 3.0)  # 6 ms in 2 s
        rt = got["per_rt"]  # 100 round trips between the third and fourth marks
        self.assertAlmostEqual(rt["npf"], 4.0)
        self.assertAlmostEqual(rt["hlt"], 1.0)
        self.assertAlmostEqual(rt["msr_write"], 2.0)
        self.assertAlmostEqual(rt["all"], 7.0)
        self.assertAlmostEqual(rt["npf:virtio-net"], 3.0)  # 305 - 15 over 100 round trips
        self.assertAlmostEqual(rt["npf:lapic"], 1.0)  # 105 - 5
        self.assertAlmostEqual(rt["notifies"], 1.0)
        self.assertAlmostEqual(rt["interrupts"], 2.0)

    def test_missing_marks_are_an_error(self):
        got = bench_linux.parse_net(log(rounds=3))
        self.assertFalse(got["ok"])
        self.assertIn("3 mark rounds", got["error"])


if __name__ == "__main__":
    unittest.main()
