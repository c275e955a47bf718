# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/run.py's console views (Console), run by `make test`: a person at a
terminal gets the human lines, the log and a tool's pipe get every line."""
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import run  # noqa: E402

STATS = '@stats {"scope":"vcpu","round":1,"t":5,"vm":"pingpong","vcpu":0,"run_us":17389}'
VM_STOP = '@vm_stop {"vm":"pingpong","code":0,"reason":"debug-exit","run_us":53503,"vcpus":{}}'
BAD_STOP = ('@vm_stop {"vm":"fuzz","code":-1,"reason":"bad-state",'
            '"detail":"VMRUN rejected the VMCB","vcpus":{}}')
LINES = [
    "pollux: hypervisor starting",
    '@boot {"cpus":2,"virt":"svm"}',
    STATS,
    "[pingpong] cpu 0 apic 0 online",
    '[pingpong] @bench {"guest":"pingpong","op":"ipi_roundtrip","cycles":1}',
    "  vCPU   exits   halts",
    '@warning {"kind":"virtio","vm":"lx"}',
    VM_STOP,
    BAD_STOP,
    '@shutdown {"status":0}',
]


def feed(console):
    for line in LINES:
        console.line(line + "\r\n")


class ConsoleViews(unittest.TestCase):
    def test_a_pipe_gets_every_line(self):
        out = io.StringIO()
        console = run.Console(out)
        feed(console)
        self.assertEqual(out.getvalue().splitlines(), LINES)
        self.assertEqual(console.status, 0)

    def test_a_terminal_gets_the_human_view_and_the_log_everything(self):
        out, log = io.StringIO(), io.StringIO()
        console = run.Console(out, log=log)
        feed(console)
        self.assertEqual(log.getvalue().splitlines(), LINES)
        shown = out.getvalue().splitlines()
        self.assertEqual(shown, [
            "pollux: hypervisor starting",
            "[pingpong] cpu 0 apic 0 online",
            '[pingpong] @bench {"guest":"pingpong","op":"ipi_roundtrip","cycles":1}',
            "  vCPU   exits   halts",
            '@warning {"kind":"virtio","vm":"lx"}',
            "run: VM pingpong stopped, code 0 (debug-exit)",
            "run: VM fuzz stopped, code -1 (bad-state: VMRUN rejected the VMCB)",
            '@shutdown {"status":0}',
        ])
        self.assertEqual(console.status, 0)  # the events are still read

    def test_a_panic_is_shown_and_noted(self):
        out, log = io.StringIO(), io.StringIO()
        console = run.Console(out, log=log)
        console.line('@panic {"kind":"lockup","cpu":2}')
        self.assertTrue(console.panicked)
        self.assertIn("@panic", out.getvalue())


if __name__ == "__main__":
    unittest.main()
