# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/bench_linux.py's virtio-net parsing (make test: tools/unittest): a
phase's counts are the difference of the client's mark rounds, per round trip, and each
repetition of sockperf in a boot has its own pair of marks."""
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


def workload(index, name):
    return ('[cli] @bench {"guest":"linux","op":"workload","index":%d,"workload":"%s"}'
            % (index, name))


def sockperf(proto, median, count):
    return ('[cli] @bench {"guest":"linux","op":"sockperf","proto":"%s","median_us":%d,'
            '"p99_us":80,"mean_us":55,"count":%d}' % (proto, median, count))


def cpuidle(poll_usage, poll_us):
    return ('[cli] @bench {"guest":"linux","op":"cpuidle","governor":"menu","state":"POLL",'
            '"usage":%d,"time_us":%d}' % (poll_usage, poll_us))


def log(rounds=4, reps=1, polls=None):
    """polls: the client's cumulative POLL entries and us after the idle and each repetition
    (the init script's cpuidle lines), or None for a guest without a cpuidle driver."""
    lines = []
    # A periodic round (it has a global record): not a mark.
    lines += vm_round(1, 0, {"npf": 5}, 0, 0, 0) + [stats(1, "global")]
    lines.append(workload(0, "idle:2"))
    marks = [(2, 1_000_000_000, {"npf": 10}, 0, 1, 1),
             (3, 3_000_000_000, {"npf": 12, "hlt": 4}, 6_000_000, 1, 1)]    # idle: 2 s, 6 ms
    for m in marks[:rounds]:
        lines += vm_round(*m)
    if polls:
        lines.append(cpuidle(*polls[0]))
    # Repetition r: 100 round trips, with r + 1 times the first's exits and device counts.
    npf, hlt, msr, notifies, interrupts, round_, t = 12, 4, 0, 1, 1, 4, 4_000_000_000
    for r in range(reps):
        lines.append(workload(r + 1, "net-client:10.0.0.1:3"))
        start = (round_, t, {"npf": npf + 8, "hlt": hlt}, 6_000_000, notifies + 1,
                 interrupts + 2)
        npf, hlt, msr = npf + 8 + 400 * (r + 1), hlt + 100 * (r + 1), msr + 200 * (r + 1)
        notifies, interrupts = notifies + 1 + 100 * (r + 1), interrupts + 2 + 200 * (r + 1)
        end = (round_ + 1, t + 5_000_000_000, {"npf": npf, "hlt": hlt, "msr_write": msr},
               6_000_000, notifies, interrupts)
        for m in (start, end):
            if len([ln for ln in lines if '"scope": "vm"' in ln]) - 1 < rounds:
                lines += vm_round(*m)
        lines += [sockperf("udp", 50 + r, 60), sockperf("tcp", 60 + r, 40)]
        if polls:
            lines.append(cpuidle(*polls[r + 1]))
        round_, t = round_ + 2, t + 6_000_000_000
    lines += ['@vm_stop {"vm":"cli","code":0,"reason":"poweroff"}',
              '@vm_stop {"vm":"srv","code":0,"reason":"poweroff"}']
    # The stop's round, after @vm_stop: not a mark either.
    lines += vm_round(round_, t, {"npf": 99999}, 0, 999, 999)
    return ConsoleLog("\n".join(lines) + "\n", 0)


class ParseNet(unittest.TestCase):
    def test_phases_are_differences_of_mark_rounds(self):
        got = bench_linux.parse_net(log())
        self.assertTrue(got["ok"], got["error"])
        [rep] = got["reps"]
        self.assertEqual(rep["udp"]["median_us"], 50)
        self.assertEqual(rep["tcp"]["count"], 40)
        self.assertAlmostEqual(rep["idle_poll_ms_per_s"], 3.0)  # 6 ms in 2 s
        rt = rep["per_rt"]  # 100 round trips between the third and fourth marks
        self.assertAlmostEqual(rt["npf"], 4.0)
        self.assertAlmostEqual(rt["hlt"], 1.0)
        self.assertAlmostEqual(rt["msr_write"], 2.0)
        self.assertAlmostEqual(rt["all"], 7.0)
        self.assertAlmostEqual(rt["npf:virtio-net"], 3.0)  # 300 of the 400 over 100 round trips
        self.assertAlmostEqual(rt["npf:lapic"], 1.0)
        self.assertAlmostEqual(rt["notifies"], 1.0)
        self.assertAlmostEqual(rt["interrupts"], 2.0)

    def test_each_repetition_has_its_own_marks(self):
        got = bench_linux.parse_net(log(rounds=8, reps=3))
        self.assertTrue(got["ok"], got["error"])
        self.assertEqual([r["udp"]["median_us"] for r in got["reps"]], [50, 51, 52])
        self.assertEqual([r["per_rt"]["npf"] for r in got["reps"]], [4.0, 8.0, 12.0])
        self.assertEqual([r["per_rt"]["interrupts"] for r in got["reps"]], [2.0, 4.0, 6.0])
        self.assertEqual({r["idle_poll_ms_per_s"] for r in got["reps"]}, {3.0})

    def test_guest_polling_per_round_trip(self):
        """The cpuidle lines are cumulative: a repetition's POLL entries are the difference
        from the line before it; its share is of the window's 5 s."""
        got = bench_linux.parse_net(log(rounds=8, reps=2, polls=[(7, 100), (57, 500_100),
                                                                 (257, 1_500_100)]))
        self.assertTrue(got["ok"], got["error"])
        polls = [r["guest_poll"] for r in got["reps"]]
        self.assertEqual([p["entries_per_rt"] for p in polls], [0.5, 2.0])
        self.assertEqual([p["share"] for p in polls], [0.1, 0.2])
        self.assertEqual({p["governor"] for p in polls}, {"menu"})
        self.assertNotIn("guest_poll", bench_linux.parse_net(log())["reps"][0])

    def test_missing_marks_are_an_error(self):
        got = bench_linux.parse_net(log(rounds=3))
        self.assertFalse(got["ok"])
        self.assertIn("3 mark rounds for 2 workloads", got["error"])


if __name__ == "__main__":
    unittest.main()
