# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/benchstats.py (run by `make test` as tools/benchstats)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import benchstats  # noqa: E402
from benchstats import (cluster_median_estimate, cluster_ratio_estimate, format_estimate,  # noqa: E402
                        format_ratio, median_estimate, ratio_estimate, spread)

SPREAD = [100, 104, 98, 101, 97, 103, 99, 102, 100, 105]


class MedianEstimate(unittest.TestCase):
    def test_identical_runs_give_a_point_interval_and_say_so(self):
        est = median_estimate([7, 7, 7, 7, 7])
        self.assertEqual((est.value, est.low, est.high), (7, 7, 7))
        self.assertTrue(est.identical)
        self.assertEqual(format_estimate(est), "7 (all 5 runs equal)")

    def test_one_run_has_no_interval(self):
        est = median_estimate([42])
        self.assertIsNone(est.low)
        self.assertEqual(format_estimate(est), "42 (1 run)")

    def test_interval_brackets_the_median_within_the_range(self):
        est = median_estimate(SPREAD)
        self.assertEqual(est.value, 100.5)
        self.assertLessEqual(min(SPREAD), est.low)
        self.assertLess(est.low, est.value)
        self.assertLess(est.value, est.high)
        self.assertLessEqual(est.high, max(SPREAD))

    def test_same_samples_give_the_same_interval(self):
        a, b = median_estimate(SPREAD), median_estimate(list(SPREAD))
        self.assertEqual((a.low, a.high), (b.low, b.high))

    def test_no_runs_is_an_error(self):
        with self.assertRaises(ValueError):
            median_estimate([])


class RatioEstimate(unittest.TestCase):
    def test_clear_difference_excludes_one(self):
        est = ratio_estimate([2 * v for v in SPREAD], SPREAD)
        self.assertAlmostEqual(est.value, 2.0)
        self.assertLess(1.0, est.low)
        self.assertLessEqual(est.low, est.value)
        self.assertLessEqual(est.value, est.high)
        self.assertNotIn(benchstats.NO_DIFFERENCE, format_ratio(est))

    def test_overlapping_samples_are_no_difference_detected(self):
        other = [101, 99, 103, 98, 100, 102, 97, 104, 100, 101]
        est = ratio_estimate(other, SPREAD)
        self.assertTrue(est.holds(1.0))
        self.assertTrue(format_ratio(est).endswith(" " + benchstats.NO_DIFFERENCE))

    def test_interval_brackets_the_point_estimate(self):
        est = ratio_estimate([90, 120, 95, 130, 85, 110], [100, 101, 99, 100, 102, 98])
        self.assertLessEqual(est.low, est.value)
        self.assertLessEqual(est.value, est.high)
        self.assertLess(est.low, est.high)

    def test_identical_samples_give_an_exact_ratio(self):
        est = ratio_estimate([30, 30, 30], [10, 10, 10])
        self.assertTrue(est.identical)
        self.assertEqual((est.low, est.high), (3.0, 3.0))
        self.assertEqual(format_ratio(est), "3.00 (all 3 runs equal)")

    def test_equal_identical_samples_are_no_difference_detected(self):
        self.assertTrue(format_ratio(ratio_estimate([5, 5], [5, 5])).endswith(
            benchstats.NO_DIFFERENCE))

    def test_a_single_run_detects_nothing(self):
        est = ratio_estimate([5], [5])
        self.assertIsNone(est.low)
        self.assertEqual(format_ratio(est), "1.00 (1 run)")

    def test_baseline_median_zero_has_no_ratio(self):
        self.assertIsNone(ratio_estimate([1, 2, 3], [0, 0, 1]))
        self.assertEqual(format_ratio(None), "n/a (baseline 0)")


# Four boots whose repetitions barely differ while the boots do: between-boot variance
# dominates, as when the seed decides a run's interleaving.
BOOT_MEANS = [100, 120, 90, 110]
WOBBLE = [-0.4, 0.1, 0.3, -0.2, 0.2]
BETWEEN = [[m + w for w in WOBBLE] for m in BOOT_MEANS]


class ClusterEstimate(unittest.TestCase):
    def test_between_boot_spread_widens_the_interval(self):
        cluster = cluster_median_estimate(BETWEEN)
        naive = median_estimate([v for b in BETWEEN for v in b])  # 20 runs, as if independent
        self.assertEqual(cluster.value, naive.value)
        self.assertEqual(cluster.runs, 4)
        self.assertGreater(cluster.high - cluster.low, 2 * (naive.high - naive.low))
        self.assertLessEqual(min(BOOT_MEANS) - 1, cluster.low)
        self.assertLessEqual(cluster.high, max(BOOT_MEANS) + 1)

    def test_one_boot_gives_no_interval_however_many_repetitions(self):
        one = [[100 + (i % 7) * 0.1 for i in range(50)]]
        est = cluster_median_estimate(one)
        self.assertIsNone(est.low)
        self.assertEqual(format_estimate(est, 1), "100.3 (1 boot)")
        self.assertIsNone(cluster_ratio_estimate(one, BETWEEN).low)

    def test_same_boots_give_the_same_interval(self):
        a, b = cluster_median_estimate(BETWEEN), cluster_median_estimate([list(x) for x in BETWEEN])
        self.assertEqual((a.low, a.high), (b.low, b.high))

    def test_identical_repetitions_are_exact(self):
        est = cluster_median_estimate([[5, 5], [5, 5, 5]])
        self.assertTrue(est.identical)
        self.assertEqual(format_estimate(est), "5 (all 2 boots equal)")

    def test_boots_of_unequal_repetitions(self):
        est = cluster_median_estimate([[1, 2], [3], [4, 5, 6]])
        self.assertEqual(est.value, 3.5)
        self.assertLessEqual(1, est.low)
        self.assertLessEqual(est.high, 6)


class ClusterRatio(unittest.TestCase):
    def test_pairing_by_seed_keeps_what_the_seed_shares(self):
        # Each seed moves both cells alike: the ratio is 1.5 in every boot.
        faster = [[1.5 * v for v in b] for b in BETWEEN]
        seeds = [1, 2, 3, 4]
        paired = cluster_ratio_estimate(faster, BETWEEN, seeds, seeds)
        apart = cluster_ratio_estimate(faster, BETWEEN, seeds, [5, 6, 7, 8])
        self.assertAlmostEqual(paired.value, 1.5)
        self.assertLess(paired.high - paired.low, 0.05)
        self.assertGreater(apart.high - apart.low, 5 * (paired.high - paired.low))
        self.assertTrue(paired.low <= 1.5 <= paired.high and apart.low <= 1.5 <= apart.high)

    def test_no_difference_between_one_cell_and_itself(self):
        est = cluster_ratio_estimate(BETWEEN, BETWEEN, [1, 2, 3, 4], [1, 2, 3, 4])
        self.assertEqual(est.value, 1.0)
        self.assertTrue(format_ratio(est).endswith(benchstats.NO_DIFFERENCE))

    def test_baseline_median_zero_has_no_ratio(self):
        self.assertIsNone(cluster_ratio_estimate([[1, 2], [3]], [[0, 0], [0, 1]]))


class Spread(unittest.TestCase):
    def test_within_and_between(self):
        got = spread([[1, 3], [5, 7]])  # each boot: sd sqrt(2); the means 2 and 6: sd sqrt(8)
        self.assertAlmostEqual(got["within"], 2 ** 0.5)
        self.assertAlmostEqual(got["between"], 8 ** 0.5)
        self.assertEqual(spread([[4]]), {"within": None, "between": None})
        self.assertEqual(benchstats.format_spread(got, 2), "within 1.41, between 2.83")


if __name__ == "__main__":
    unittest.main()
