# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/run.py's machine memory sizing (machine_mem_mb), run by `make test`."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import run  # noqa: E402

MIB = 1 << 20


class MachineMem(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def module(self, mib, line):
        """A module file of mib MiB with its command line, as parse_guests returns them."""
        path = os.path.join(self.dir.name, f"m{len(os.listdir(self.dir.name))}")
        with open(path, "wb") as f:
            f.truncate(int(mib * MIB))
        return (path, os.path.basename(path), line)

    def test_small_guests_keep_the_default(self):
        self.assertEqual(run.machine_mem_mb([]), run.DEFAULT_MACHINE_MB)
        guests = [self.module(0.1, "name=hello path=/boot/0-hello.elf")]
        self.assertEqual(run.machine_mem_mb(guests), run.DEFAULT_MACHINE_MB)

    def test_two_linux_vms_get_their_ram_modules_and_the_hypervisor(self):
        guests = []
        for i in range(2):
            guests.append(self.module(8, f"name=vm{i} path=/boot/k mem=256M initrd=/boot/i "
                                         "args=console=ttyS0 mem=1G"))
            guests.append(self.module(12, "initrd"))
        # 2 * (256 + 8 + 12) + 128 = 680, rounded up to 768; the kernel's own mem= in args= is
        # not the VM's.
        self.assertEqual(run.machine_mem_mb(guests), 768)

    def test_sizes_take_suffixes_and_default_to_32m(self):
        guests = [self.module(1, "name=a path=/boot/a mem=1G"),
                  self.module(1, "name=b path=/boot/b mem=524288K"),
                  self.module(1, "name=c path=/boot/c")]
        # 1024 + 512 + 32 + 3 + 128 = 1699 -> 1792
        self.assertEqual(run.machine_mem_mb(guests), 1792)
        self.assertEqual(run.size_mb("1"), 1)
        with self.assertRaises(SystemExit):
            run.size_mb("lots")


if __name__ == "__main__":
    unittest.main()
