# SPDX-License-Identifier: GPL-2.0-only
"""The benchmark harness's statistics (tools/bench.py): pure functions over samples of runs.

Each cell of a benchmark is run several times with different seeds; a cell is
summarised by the median of its runs with a 95% bootstrap confidence interval
of the median, and a cell against its baseline by the ratio of the two medians
with a bootstrap interval of that ratio itself (two independent samples, each
resampled on its own). A ratio whose interval holds 1 is "no difference
detected". The bootstrap is scipy.stats.bootstrap (Debian's python3-scipy,
`make deps`), percentile method: BCa needs the jackknife's acceleration, which
is 0/0 for the median of small samples with ties (scipy returns NaN there).
A fixed random_state makes every interval reproducible from results.json.
Unit-tested in tests/tools/test_benchstats.py.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debianpython import reexec_under_debian_python  # noqa: E402

try:
    import numpy as np
    from scipy import stats
except ImportError:
    reexec_under_debian_python()
    raise

CONFIDENCE = 0.95
RESAMPLES = 9999
RANDOM_STATE = 20260  # any fixed value: the same results.json gives the same tables


class Estimate:
    """A point estimate and its confidence interval [low, high]; low and high are None
    for a single run (no interval). identical: every run gave the same value, so the
    interval is [value, value] by construction, not by resampling."""

    def __init__(self, value, low, high, runs, identical=False):
        self.value, self.low, self.high = value, low, high
        self.runs, self.identical = runs, identical

    def holds(self, x):
        """The interval contains x (False without an interval)."""
        return self.low is not None and self.low <= x <= self.high

    def as_json(self):
        return {"value": self.value, "low": self.low, "high": self.high, "runs": self.runs,
                "identical": self.identical}


def _interval(samples, statistic):
    res = stats.bootstrap(samples, statistic, n_resamples=RESAMPLES, vectorized=True,
                          paired=False, confidence_level=CONFIDENCE, method="percentile",
                          random_state=np.random.RandomState(RANDOM_STATE))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def median_estimate(values):
    """The median of the runs and the 95% bootstrap interval of the median."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("no runs")
    median = float(np.median(xs))
    if len(xs) == 1:
        return Estimate(median, None, None, 1)
    if len(set(xs)) == 1:
        return Estimate(median, median, median, len(xs), identical=True)
    low, high = _interval((xs,), lambda x, axis: np.median(x, axis=axis))
    return Estimate(median, low, high, len(xs))


def _ratio_of_medians(x, y, axis):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.median(x, axis=axis) / np.median(y, axis=axis)


def ratio_estimate(values, baseline):
    """median(values) / median(baseline) with the 95% bootstrap interval of that ratio,
    the two samples resampled independently; None when the baseline's median is 0."""
    xs, ys = [float(v) for v in values], [float(v) for v in baseline]
    if not xs or not ys:
        raise ValueError("no runs")
    base = float(np.median(ys))
    if base == 0:
        return None
    ratio = float(np.median(xs)) / base
    runs = min(len(xs), len(ys))
    if len(xs) == 1 or len(ys) == 1:
        return Estimate(ratio, None, None, 1)
    if len(set(xs)) == 1 and len(set(ys)) == 1:
        return Estimate(ratio, ratio, ratio, runs, identical=True)
    low, high = _interval((xs, ys), _ratio_of_medians)
    if math.isnan(low) or math.isnan(high):  # a resampled baseline with median 0
        return Estimate(ratio, None, None, runs)
    return Estimate(ratio, low, high, runs)


NO_DIFFERENCE = "no difference detected"


def format_number(x, digits):
    return f"{x:.{digits}f}" if digits else f"{round(x)}"


def format_estimate(est, digits=0):
    """`1234 [1200, 1250]`; `1234 (all 10 runs equal)`; `1234 (1 run)`."""
    value = format_number(est.value, digits)
    if est.identical:
        return f"{value} (all {est.runs} runs equal)"
    if est.low is None:
        return f"{value} (1 run)"
    return f"{value} [{format_number(est.low, digits)}, {format_number(est.high, digits)}]"


def format_ratio(est, digits=2):
    """`1.23 [1.10, 1.37]`, or with `no difference detected` when the interval holds 1."""
    if est is None:
        return "n/a (baseline 0)"
    text = format_estimate(est, digits)
    if est.holds(1.0):
        text += " " + NO_DIFFERENCE
    return text
