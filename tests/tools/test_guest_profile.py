# SPDX-License-Identifier: GPL-2.0-only
"""tools/guest_profile.py: RIPs named by symbol across KASLR, the kallsyms dump read back."""
import base64
import gzip
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import guest_profile  # noqa: E402
from consolelog import ConsoleLog  # noqa: E402

# The dump's boot put _text at ...81000000.
KALLSYMS = """ffffffff81000000 T _text
ffffffff81000000 T startup_64
ffffffff81001000 t do_one_initcall
ffffffff81002000 T memcpy
ffffffff81002100 D some_data
ffffffff81003000 T clear_page_erms [kernel]
"""


def log_of(lines):
    return ConsoleLog("\n".join(lines) + "\n")


class Profile(unittest.TestCase):
    def test_kaslr_shift_and_symbols(self):
        # This boot put _text 0x20000000 higher.
        log = log_of([
            '[lx] @bench {"guest":"linux","op":"kernel","release":"6.1","text":"ffffffffa1000000"}',
            '@profile {"vm":"lx","period_us":1000,"grain":16,"samples":10,"user":2,"lost":1}',
            '@profile_rips {"vm":"lx","rips":{"ffffffffa1001010":3,"ffffffffa1001ff0":1}}',
            '@profile_rips {"vm":"lx","rips":{"ffffffffa1002100":2,"ffffffffa1003000":1}}',
        ])
        rows = guest_profile.by_symbol(guest_profile.vm_profiles(log)["lx"],
                                       guest_profile.Symbols(KALLSYMS))
        # memcpy's 0x100 bytes past it: data symbols never name code.
        self.assertEqual(rows, [(4, "do_one_initcall"), (2, "[user]"), (2, "memcpy"),
                                (1, "[lost]"), (1, "clear_page_erms [kernel]")])

    def test_without_the_kernel_line_rips_stay_raw(self):
        log = log_of([
            '@profile {"vm":"hello","period_us":100,"grain":16,"samples":3,"user":0,"lost":0}',
            '@profile_rips {"vm":"hello","rips":{"100010":3}}',
        ])
        rows = guest_profile.by_symbol(guest_profile.vm_profiles(log)["hello"],
                                       guest_profile.Symbols(KALLSYMS))
        self.assertEqual(rows, [(3, "0x100010")])
        text = guest_profile.report(log, None, 5)
        self.assertIn("hello: 3 samples every 100 us, by raw RIPs", text)

    def test_a_guest_cannot_forge_a_profile(self):
        log = log_of(['[lx] @profile {"vm":"lx","period_us":1,"grain":16,"samples":1,"user":0,'
                      '"lost":0}'])
        self.assertEqual(guest_profile.vm_profiles(log), {})

    def test_kallsyms_dump_read_back(self):
        b64 = base64.b64encode(gzip.compress(KALLSYMS.encode())).decode()
        chunks = [b64[i:i + 76] for i in range(0, len(b64), 76)]
        log = log_of(["[ksyms] linux: kallsyms begin"] + [f"[ksyms] {c}" for c in chunks] +
                     ["[ksyms] linux: kallsyms end"])
        syms = guest_profile.Symbols(guest_profile.kallsyms_from_log(log))
        self.assertEqual(syms.text, 0xffffffff81000000)
        self.assertEqual(syms.name(0xffffffff81002fff), "memcpy")
        self.assertIsNone(syms.name(0xffffffff80000000))


if __name__ == "__main__":
    unittest.main()
