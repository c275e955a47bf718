# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of a Linux matrix across sessions (make test: tools/unittest): a repetition's
counters are the difference of its own mark rounds (tools/bench_linux.py); --plan's hours
(tools/bench.py plan); the results file that --resume continues (Results, boots_to_run,
tree_state)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import bench  # noqa: E402
import bench_linux  # noqa: E402
from consolelog import ConsoleLog  # noqa: E402


def hackbench_log(seconds, spins):
    """One 8-vCPU VM lx running hackbench len(seconds) times: repetition i took seconds[i]
    and detected spins[i] spins between its marks."""
    lines = ['[lx] @bench {"guest":"linux","op":"found","cpus_online":8,"cpuidle":"none",'
             '"clocksource":"kvm-clock","spinlock":"virt_spin_lock"}']
    total, round_ = 7, 1  # spins of the boot before the first mark
    for i, (s, n) in enumerate(zip(seconds, spins)):
        lines.append('[lx] @bench {"guest":"linux","op":"workload","index":%d,'
                     '"workload":"hackbench:4:20"}' % i)
        for add in (0, n):
            total += add
            lines.append('@stats {"scope":"vm","vm":"lx","round":%d,"t":%d,"spins_detected":%d}'
                         % (round_, round_, total))
            round_ += 1
        lines.append('[lx] @bench {"guest":"linux","op":"hackbench","seconds":%s}' % s)
        total += 3  # between repetitions: not any repetition's
    lines += ['@vm_stop {"vm":"lx","code":0,"reason":"poweroff"}',
              '@stats {"scope":"vm","vm":"lx","round":%d,"t":99,"spins_detected":%d}'
              % (round_, total + 1000)]
    return ConsoleLog("\n".join(lines) + "\n", 0)


class Repetitions(unittest.TestCase):
    VMS = (("lx", 8),)

    def test_counters_are_each_repetitions_mark_difference(self):
        got = bench_linux.parse_hackbench(hackbench_log([1.5, 1.25, 1.375], [40, 25, 30]),
                                          self.VMS, "virt_spin_lock")
        self.assertTrue(got["ok"], got["error"])
        reps = got["vms"]["lx"]["reps"]
        self.assertEqual([r["seconds"] for r in reps], [1.5, 1.25, 1.375])
        self.assertEqual([r["stats"]["spins_detected"] for r in reps], [40, 25, 30])
        self.assertEqual(got["vms"]["lx"]["stats"]["spins_detected"], 7 + 95 + 9 + 1000)

    def test_a_repetition_without_its_result_is_an_error(self):
        log = hackbench_log([1.5, 1.25], [40, 25])
        log = ConsoleLog("\n".join(ln for ln in log.lines if '"seconds":1.25' not in ln), 0)
        got = bench_linux.parse_hackbench(log, self.VMS, "virt_spin_lock")
        self.assertFalse(got["ok"])
        self.assertIn("no hackbench result in repetition 1", got["error"])

    def test_the_first_repetition_is_a_warm_up(self):
        run = bench.Run(0, 1)
        run.value = {"reps": [{"seconds": 9.0}, {"seconds": 1.0}, {"seconds": 2.0}]}
        self.assertEqual(bench.boots([run], lambda v: v["seconds"]), [[1.0, 2.0]])
        run.value = {"reps": [{"seconds": 9.0}]}
        self.assertEqual(bench.boots([run], lambda v: v["seconds"]), [[9.0]])

    def test_the_workload_is_chained_reps_times(self):
        c = bench_linux.pv_cell(bench_linux.PV_LOCKS[1], bench_linux.PV_POLICIES[0], reps=3)
        self.assertIn("args=workload=hackbench:4:20,hackbench:4:20,hackbench:4:20+nopvspin",
                      c.guests)
        self.assertIn("workload=idle:2,net-client:10.0.0.1:3,net-client:10.0.0.1:3 ",
                      bench_linux.net_guests("", 2) + " ")


def cell(seeds, reps=4, boot_s=600, emu="bochs"):
    return bench.Cell(["--emu", emu, "--smp", "4"], None, seeds, reps, boot_s)


class Plan(unittest.TestCase):
    def test_hours_left(self):
        s = bench.Scenario("m", {("a", 1): cell([1, 2, 3]), ("b", 2): cell([1, 2, 3, 4]),
                                 "qemu": cell([None], boot_s=360, emu="qemu")}, None,
                           bench.Matrix(None, (), {("c", 3): "it answers nothing"}))
        lines, seconds = bench.plan(s, {(("a", "1"), 1), (("a", "1"), 3)}, 2)
        # a: 1 boot left, b: 4, at 600 s two at a time; QEMU alone: 360 s.
        self.assertEqual(seconds, 5 * 600 / 2 + 360)
        self.assertIn("| a, 1 | 3 (2) | 4 | 10.0 | 0.08 |", lines)
        self.assertIn("cut (it answers nothing): c, 3", lines)
        self.assertEqual(lines[-1], "m: 8 boots, 0.52 h left with 2 emulators at once")

    def test_no_estimate(self):
        s = bench.Scenario("m", {"a": cell([1], boot_s=None)}, None)
        self.assertIsNone(bench.plan(s, set(), 2)[1])

    def test_budgets_fit_their_sessions(self):
        """linux-net and linux-pv within 2.5 h each, Linux at scale within three sessions of
        2.5 h, the seeds' linux-shrink and linux-idle within one and linux-ebizzy within two,
        with 2 emulators at once; every claim cell at least 3 boots."""
        class Options:
            full, runs_given, runs, scan_runs, reps, seed_base = True, False, 10, 3, None, 1
        hours = {}
        for name, make, _ in bench.linux_scenarios() + [("linux-net", bench.linux_net_scenario,
                                                           True)]:
            s = make(Options())
            hours[name] = bench.plan(s, set(), 2)[1] / 3600
            for key in s.matrix.claims:
                self.assertGreaterEqual(len(s.cells[key].seeds), 3, (name, key))
        self.assertLessEqual(hours["linux-net"], 2.5)
        self.assertLessEqual(hours["linux-pv"], 2.5)
        self.assertLessEqual(hours["linux-hackbench"] + hours["linux-pivot"] +
                             hours["linux-cyclictest"], 3 * 2.5)
        self.assertLessEqual(hours["linux-shrink"] + hours["linux-idle"], 2.5)
        self.assertLessEqual(hours["linux-ebizzy"], 2 * 2.5)


class Resume(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "bench-results", "m.json")
        self.scenario = bench.Scenario("m", {("a", 1): cell([1, 2]), ("b", 2): cell([1, 2])},
                                       None, bench.Matrix(None, (), {}))

    def tearDown(self):
        self.dir.cleanup()

    def finish(self, results, key, seed, value):
        job = bench.Job(self.scenario, key, self.scenario.cells[key], seed - 1, seed)
        job.run.value = value
        results.append(job)

    def test_resume_skips_the_boots_done(self):
        first = bench.Results(self.path, "m", "c0ffee", False, resume=False)
        self.finish(first, ("a", 1), 1, {"reps": [{"s": 1}]})
        self.finish(first, ("b", 2), 2, None)  # failed: run again
        again = bench.Results(self.path, "m", "c0ffee", True, resume=True)
        left = bench.boots_to_run([self.scenario], {"m": again.done()})
        self.assertEqual([(j.key, j.run.seed) for j in left],
                         [(("a", 1), 2), (("b", 2), 1), (("b", 2), 2)])
        self.finish(again, ("b", 2), 2, {"reps": [{"s": 2}]})
        with open(self.path) as f:
            data = json.load(f)
        self.assertEqual(data["commit"], "c0ffee")
        self.assertEqual([(b["cell"], b["seed"], b["clean"], b["reps"]) for b in data["boots"]],
                         [(["a", "1"], 1, False, 4), (["b", "2"], 2, False, 4),
                          (["b", "2"], 2, True, 4)])
        done = bench.Results(self.path, "m", "c0ffee", True, resume=True).done()
        self.assertEqual(sorted(done), [(("a", "1"), 1), (("b", "2"), 2)])
        self.assertEqual(bench.recorded_run(done[(("b", "2"), 2)]).value, {"reps": [{"s": 2}]})

    def test_a_results_file_of_another_commit_is_refused(self):
        self.finish(bench.Results(self.path, "m", "c0ffee", True, resume=False), ("a", 1), 1,
                    {"reps": []})
        with self.assertRaises(SystemExit) as e:
            bench.Results(self.path, "m", "decade", True, resume=True)
        self.assertIn("holds boots of commit c0ffee, the code is at decade", str(e.exception))

    def test_an_existing_file_needs_resume(self):
        self.finish(bench.Results(self.path, "m", "c0ffee", True, resume=False), ("a", 1), 1,
                    {"reps": []})
        with self.assertRaises(SystemExit) as e:
            bench.Results(self.path, "m", "c0ffee", True, resume=False)
        self.assertIn("--resume", str(e.exception))

    def test_tree_state_sets_the_results_files_aside(self):
        root = self.dir.name

        def git(*args):
            subprocess.run(["git", "-C", root, "-c", "user.name=t", "-c", "user.email=t@t"] +
                           list(args), check=True, stdout=subprocess.DEVNULL)
        git("init", "-q")
        with open(os.path.join(root, "f"), "w") as f:
            f.write("1\n")
        git("add", "f")
        git("commit", "-q", "-m", "f")
        commit, clean = bench.tree_state(root)
        self.assertEqual(len(commit), 40)
        self.assertTrue(clean)
        os.makedirs(os.path.join(root, "bench-results"), exist_ok=True)
        with open(os.path.join(root, "bench-results", "m.json"), "w") as f:
            f.write("{}\n")
        self.assertEqual(bench.tree_state(root), (commit, True))
        git("add", "bench-results")
        git("commit", "-q", "-m", "results")  # a session's results: the code's commit stays
        self.assertEqual(bench.tree_state(root), (commit, True))
        with open(os.path.join(root, "f"), "w") as f:
            f.write("2\n")
        self.assertEqual(bench.tree_state(root), (commit, False))
        git("commit", "-q", "-a", "-m", "code")
        self.assertNotEqual(bench.tree_state(root)[0], commit)


if __name__ == "__main__":
    unittest.main()
