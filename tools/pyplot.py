# SPDX-License-Identifier: GPL-2.0-only
"""matplotlib's pyplot on the Agg backend, for the chart tools (plot.py, timeline.py).

matplotlib is Debian's python3-matplotlib (`make deps`): without it, a tool
run as a script re-executes itself under Debian's python3 (debianpython.py).
"""
from debianpython import reexec_under_debian_python


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        reexec_under_debian_python()
        raise
