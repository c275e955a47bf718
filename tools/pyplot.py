# SPDX-License-Identifier: GPL-2.0-only
"""matplotlib's pyplot on the Agg backend, for the chart tools (plot.py, timeline.py).

matplotlib is Debian's python3-matplotlib (`make deps`), which belongs to
Debian's python3: another python3 first on PATH (a virtualenv, pyenv) does
not see it, so a tool run as a script re-executes itself under Debian's.
"""
import os
import sys

DEBIAN_PYTHON = "/usr/bin/python3"


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        if os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != DEBIAN_PYTHON:
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
        raise
