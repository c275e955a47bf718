# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/seeds.py (make test: tools/unittest): docs/seeds.md's rows from a
synthetic results file: the verdict from the seed's ratio and pollux's interval, the interval
rule (an interval that holds 1 is no difference, whatever the seed said), and rows whose
cells have not run."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import seeds  # noqa: E402
from benchstats import Estimate  # noqa: E402


def boot(cell, seed, values):
    """A results file's boot record: a warm-up repetition, then values."""
    return {"scenario": "m", "cell": list(cell), "run": seed - 1, "seed": seed, "commit": "c",
            "clean": True, "reps": len(values) + 1, "error": "", "logs": [], "wall_s": 1.0,
            "value": {"reps": [{"x": 999.0}] + [{"x": v} for v in values]}}


def results(cells):
    """A folder holding bench-results/m.json with cells {key tuple: [values per boot]}, the
    boots seeded 1, 2, ..."""
    folder = tempfile.mkdtemp()
    data = {"matrix": "m", "commit": "c", "boots": [
        boot(key, seed, values) for key, per_boot in cells.items()
        for seed, values in enumerate(per_boot, 1)]}
    with open(os.path.join(folder, "m.json"), "w") as f:
        json.dump(data, f)
    return seeds.load(folder)


def claim(published):
    return seeds.Claim("x", published, "m", ("new",), ("base",), lambda v: v["x"])


# Five boots of three measured repetitions each, around 100 and 120: well apart.
BASE = [[100.0, 101.0, 99.0], [100.5, 99.5, 100.0], [101.0, 100.0, 99.0], [99.5, 100.5, 100.0],
        [100.0, 100.0, 101.0]]
HIGHER = [[v * 1.2 for v in b] for b in BASE]


class Verdict(unittest.TestCase):
    def test_direction_against_the_seed(self):
        est = Estimate(1.2, 1.1, 1.3, 5, unit="boot")
        self.assertEqual(seeds.verdict(1.05, est), seeds.SAME)
        self.assertEqual(seeds.verdict(0.95, est), seeds.OPPOSITE)
        low = Estimate(0.8, 0.7, 0.9, 5, unit="boot")
        self.assertEqual(seeds.verdict(0.95, low), seeds.SAME)
        self.assertEqual(seeds.verdict(1.24, low), seeds.OPPOSITE)

    def test_an_interval_holding_1_is_no_difference(self):
        for est in (Estimate(1.2, 0.99, 1.3, 5), Estimate(0.9, 0.8, 1.0, 5),
                    Estimate(1.0, 1.0, 1.0, 5, True)):
            self.assertEqual(seeds.verdict(1.24, est), seeds.NO_DIFFERENCE)

    def test_no_interval_no_verdict(self):
        self.assertEqual(seeds.verdict(1.24, Estimate(1.2, None, None, 1)), seeds.NO_INTERVAL)
        self.assertEqual(seeds.verdict(1.24, None), seeds.NO_INTERVAL)


class Rows(unittest.TestCase):
    def test_same_direction_from_the_file(self):
        row = seeds.claim_row(claim((124.0, 100.0)), results({("new",): HIGHER,
                                                                ("base",): BASE}))
        self.assertEqual(row[1], "124 vs 100: 1.240")
        self.assertTrue(row[3].startswith("1.20 ["), row)
        self.assertEqual(row[4], seeds.SAME)

    def test_opposite_from_the_file(self):
        row = seeds.claim_row(claim((95.0, 100.0)), results({("new",): HIGHER,
                                                               ("base",): BASE}))
        self.assertEqual(row[4], seeds.OPPOSITE)

    def test_the_warm_up_is_left_out(self):
        # The warm-up (999) would move the new cell's median if it counted.
        row = seeds.claim_row(claim((124.0, 100.0)), results({("new",): BASE,
                                                                ("base",): BASE}))
        self.assertTrue(row[3].startswith("1.00 ["), row)
        self.assertEqual(row[4], seeds.NO_DIFFERENCE)

    def test_overlapping_cells_are_no_difference(self):
        close = [[v * 1.002 for v in b] for b in BASE]
        row = seeds.claim_row(claim((124.0, 100.0)), results({("new",): close,
                                                                ("base",): BASE}))
        self.assertEqual(row[4], seeds.NO_DIFFERENCE)

    def test_a_missing_cell_is_not_run_yet(self):
        for got in (results({("base",): BASE}), {}):
            row = seeds.claim_row(claim((124.0, 100.0)), got)
            self.assertEqual(row[4], "not run yet: `make bench-full B=m`")
            self.assertEqual(row[2:4], ["", ""])

    def test_a_failed_boot_is_not_a_result(self):
        folder = tempfile.mkdtemp()
        failed = dict(boot(("new",), 1, [1.0]), value=None, error="boom")
        with open(os.path.join(folder, "m.json"), "w") as f:
            json.dump({"matrix": "m", "commit": "c", "boots": [failed]}, f)
        self.assertEqual(seeds.load(folder), {"m": {}})

    def test_info_rows(self):
        got = results({("new",): HIGHER, ("base",): BASE})
        row = seeds.info_row(seeds.Info("y", "m", ("new",), lambda v: v["x"]), got)
        self.assertEqual((row[3], row[4]), ("", "information"))
        ratio = seeds.info_row(seeds.Info("y", "m", ("new",), lambda v: v["x"],
                                          base=("base",)), got)
        self.assertTrue(ratio[3].startswith("1.20 ["), ratio)
        missing = seeds.info_row(seeds.Info("y", "m", ("other",), lambda v: v["x"]), got)
        self.assertTrue(missing[4].startswith("not run yet"), missing)


class Document(unittest.TestCase):
    def test_every_seed_and_the_commands(self):
        text = seeds.render({})
        for n in range(5):
            self.assertIn(f"## Seed 00{n}", text)
        for matrix in ("linux-shrink", "linux-net", "linux-idle", "linux-ebizzy"):
            self.assertIn(f"`make bench-full B={matrix}`", text)
        self.assertIn("--args idle_hlt=off", text)

    def test_cells_name_real_matrix_cells(self):
        """Every row's cells are keys its matrix's scenario defines (tools/bench_linux.py)."""
        import argparse
        import bench
        import bench_linux
        a = argparse.Namespace(full=True, runs=3, runs_given=False, reps=None, scan_runs=3,
                               seed_base=1)
        made = dict((name, make) for name, make in bench_linux.scenarios(bench))
        made["linux-net"] = lambda a: bench_linux.net_scenario(bench, a)
        keys = {}
        for _, _, rows, _ in seeds.SEEDS:
            for r in rows:
                if r.matrix not in keys:
                    s = made[r.matrix](a)
                    keys[r.matrix] = {tuple(bench.key_json(k)) for k in s.cells}
                cells = (r.new, r.base) if isinstance(r, seeds.Claim) else \
                    tuple(c for c in (r.cell, r.base) if c)
                for c in cells:
                    self.assertIn(tuple(c), keys[r.matrix], f"{r.what}: {c}")


if __name__ == "__main__":
    unittest.main()
