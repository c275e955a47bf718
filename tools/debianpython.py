# SPDX-License-Identifier: GPL-2.0-only
"""Re-run a tool under Debian's python3 when the python3 first on PATH lacks a Debian package.

Debian's python3-matplotlib and python3-scipy (`make deps`) belong to Debian's
python3; another python3 first on PATH (a virtualenv, pyenv) does not see them.
"""
import os
import sys

DEBIAN_PYTHON = "/usr/bin/python3"


def reexec_under_debian_python():
    """Replace this process by the same script under Debian's python3, if that is another
    interpreter and a script file is running; otherwise return (the caller re-raises)."""
    if os.path.exists(DEBIAN_PYTHON) and os.path.isfile(sys.argv[0]) and \
            os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
