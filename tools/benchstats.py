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

A Linux cell repeats its workload inside each boot (tools/bench_linux.py): its
sample is boots of repetitions, and repetitions of one boot share the boot's
seed, so they are not independent runs. cluster_median_estimate and
cluster_ratio_estimate bootstrap in two levels: draw the boots with
replacement, then within each drawn boot its repetitions with replacement, and
take the median of everything drawn. One boot is one cluster: however many its
repetitions, it gives no interval (the spread between boots is unknown). A
ratio of two cells resamples their boots together, pair by pair, when both
have the same seeds in the same order (run r of every cell boots with seed
BASE+r, so boot r of one cell and boot r of the other are a pair; a pair may be
correlated through the seed, and resampling pairs keeps what they share),
and each cell's boots on their own otherwise. spread() says what the
repetitions bought: the spread within a boot against the spread between boots.
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
    interval is [value, value] by construction, not by resampling. unit: what runs counts,
    "run" or (the cluster estimates) "boot"."""

    def __init__(self, value, low, high, runs, identical=False, unit="run"):
        self.value, self.low, self.high = value, low, high
        self.runs, self.identical, self.unit = runs, identical, unit

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


def _clusters(boots):
    """boots (lists of values) as a NaN-padded array of shape (boots, most repetitions) and
    the repetitions of each."""
    counts = np.array([len(b) for b in boots])
    if not len(boots) or counts.min() == 0:
        raise ValueError("a boot without repetitions")
    values = np.full((len(boots), counts.max()), np.nan)
    for i, b in enumerate(boots):
        values[i, :len(b)] = [float(v) for v in b]
    return values, counts


def _cluster_draws(values, counts, rng, picks):
    """RESAMPLES two-level resamples, shape (RESAMPLES, boots * most repetitions), NaN where a
    drawn boot has fewer repetitions: the boots of picks (RESAMPLES x boots), then each drawn
    boot's repetitions with replacement."""
    n, m = values.shape
    reps = counts[picks]
    slots = np.floor(rng.random_sample((RESAMPLES, n, m)) * reps[..., None]).astype(int)
    drawn = values[picks[..., None], slots]
    drawn[np.arange(m) >= reps[..., None]] = np.nan
    return drawn.reshape(RESAMPLES, n * m)


def _boot_picks(boots, rng):
    return rng.randint(0, boots, size=(RESAMPLES, boots))


def _percentiles(stat):
    low, high = np.percentile(stat, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)])
    return float(low), float(high)


def cluster_median_estimate(boots):
    """The median of every boot's repetitions and its 95% two-level bootstrap interval;
    runs is the number of boots. One boot gives no interval, whatever its repetitions."""
    values, counts = _clusters(boots)
    pooled = values[~np.isnan(values)]
    median = float(np.median(pooled))
    if len(boots) == 1:
        return Estimate(median, None, None, 1, unit="boot")
    if np.all(pooled == pooled[0]):
        return Estimate(median, median, median, len(boots), True, "boot")
    rng = np.random.RandomState(RANDOM_STATE)
    draws = _cluster_draws(values, counts, rng, _boot_picks(len(boots), rng))
    low, high = _percentiles(np.nanmedian(draws, axis=1))
    return Estimate(median, low, high, len(boots), unit="boot")


def cluster_ratio_estimate(boots, baseline, seeds=None, baseline_seeds=None):
    """median(boots' repetitions) / median(baseline's) with its 95% two-level bootstrap
    interval: the boots resampled in pairs when seeds equal baseline_seeds (and are given),
    each cell's on its own otherwise; None when the baseline's median is 0."""
    xv, xc = _clusters(boots)
    yv, yc = _clusters(baseline)
    xs, ys = xv[~np.isnan(xv)], yv[~np.isnan(yv)]
    base = float(np.median(ys))
    if base == 0:
        return None
    ratio = float(np.median(xs)) / base
    runs = min(len(boots), len(baseline))
    if runs == 1:
        return Estimate(ratio, None, None, 1, unit="boot")
    if np.all(xs == xs[0]) and np.all(ys == ys[0]):
        return Estimate(ratio, ratio, ratio, runs, True, "boot")
    rng = np.random.RandomState(RANDOM_STATE)
    paired = seeds is not None and list(seeds) == list(baseline_seeds or ())
    picks = _boot_picks(len(boots), rng)
    x = _cluster_draws(xv, xc, rng, picks)
    y = _cluster_draws(yv, yc, rng, picks if paired else _boot_picks(len(baseline), rng))
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high = _percentiles(np.nanmedian(x, axis=1) / np.nanmedian(y, axis=1))
    if math.isnan(low) or math.isnan(high):
        return Estimate(ratio, None, None, runs, unit="boot")
    return Estimate(ratio, low, high, runs, unit="boot")


def spread(boots):
    """What the repetitions bought: {"within": the standard deviation of a boot's repetitions
    (pooled over the boots with two or more), "between": the standard deviation of the boots'
    means}; None where there are too few to say."""
    values, counts = _clusters(boots)
    multi = [values[i, :c] for i, c in enumerate(counts) if c > 1]
    within = float(math.sqrt(np.mean([np.var(b, ddof=1) for b in multi]))) if multi else None
    means = np.nanmean(values, axis=1)
    between = float(np.std(means, ddof=1)) if len(means) > 1 else None
    return {"within": within, "between": between}


def format_spread(s, digits=0):
    """`within 0.01, between 0.03` (n/a where unknown)."""
    def text(x):
        return "n/a" if x is None else format_number(x, digits)
    return f"within {text(s['within'])}, between {text(s['between'])}"


NO_DIFFERENCE = "no difference detected"


def format_number(x, digits):
    return f"{x:.{digits}f}" if digits else f"{round(x)}"


def format_estimate(est, digits=0):
    """`1234 [1200, 1250]`; `1234 (all 10 runs equal)`; `1234 (1 run)` (or boots)."""
    value = format_number(est.value, digits)
    if est.identical:
        return f"{value} (all {est.runs} {est.unit}s equal)"
    if est.low is None:
        return f"{value} (1 {est.unit})"
    return f"{value} [{format_number(est.low, digits)}, {format_number(est.high, digits)}]"


def format_ratio(est, digits=2):
    """`1.23 [1.10, 1.37]`, or with `no difference detected` when the interval holds 1."""
    if est is None:
        return "n/a (baseline 0)"
    text = format_estimate(est, digits)
    if est.holds(1.0):
        text += " " + NO_DIFFERENCE
    return text
