#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every source file of pollux carries its license: an SPDX-License-Identifier line of
GPL-2.0-only (LICENSE) in its first lines, after a #! line where it has one. Prints each file
that lacks it and exits 1 if any does; `--add` writes the line into those files.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "SPDX-License-Identifier: GPL-2.0-only"
C_STYLE = (".c", ".h", ".S", ".ld", ".asl")
HASH_STYLE = (".py", ".mk", ".sh")
HASH_FILES = ("Makefile", ".ci/run", "guest-tests/linux/init")


def comment(path):
    """The line that carries TAG in path's language, or None for a file that is not source."""
    if path.endswith(C_STYLE):
        return f"/* {TAG} */"
    if path.endswith(HASH_STYLE) or path in HASH_FILES:
        return f"# {TAG}"
    return None


def sources(root):
    files = subprocess.check_output(["git", "ls-files"], cwd=root, text=True).split()
    return [f for f in files if comment(f) and not f.startswith("tests/fuzz/corpus/")
            and not f.startswith("tests/fuzz/regressions/")]


def has_tag(text):
    return TAG in "\n".join(text.splitlines()[:3])


def add(path, line):
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, line)
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main():
    fix = "--add" in sys.argv[1:]
    missing = []
    for rel in sources(ROOT):
        path = os.path.join(ROOT, rel)
        with open(path, errors="replace") as f:
            if has_tag(f.read()):
                continue
        if fix:
            add(path, comment(rel))
        else:
            missing.append(rel)
    for rel in missing:
        print(f"{rel}: no '{TAG}' line in its first lines")
    print(f"license: {len(missing)} source file(s) without it")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
