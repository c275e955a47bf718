# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/benchstats.py (run by `make test` as tools/benchstats)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import benchstats  # noqa: E402
from benchstats import format_estimate, format_ratio, median_estimate, ratio_estimate  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
