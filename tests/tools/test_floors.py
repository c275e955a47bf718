# SPDX-License-Identifier: GPL-2.0-only
"""Unit tests of tools/floors.py (make test: tools/unittest): in a small tree of its own, an
upward include is caught in every form the build accepts (quoted from the root, in angle
brackets through -I., relative to the including file's folder, in a .S file, from a guest),
one backend's include of another's, and one of vmm/'s layers including a layer above it;
what goes down or stays on its floor, a system header
and a file's own folder pass."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import floors  # noqa: E402

# file: its text. Lines that include upward say "up" in a comment.
TREE = {
    "abi/kvm.h": "",
    "lib/string.h": "",
    "arch/x86/cpu.h": "",
    "arch/x86/svm_state.h": "",
    "vmm/vm.h": "",
    "vmm/exit/exits.h": "",
    "vmm/dev/device.h": "",
    "backend/svm/svm_state.h": "",
    "arch/x86/quoted.c": '#include "vmm/vm.h" /* up */\n',
    "arch/x86/angle.c": "#include <stdint.h>\n#include <vmm/vm.h> /* up */\n",
    "arch/x86/relative.c": '#include "cpu.h"\n#include "../../vmm/vm.h" /* up */\n',
    "arch/x86/entry.S": "#include <arch/x86/cpu.h>\n#  include <vmm/exit/exits.h> /* up */\n",
    "vmm/exit/exits.c": '#include "exits.h"\n#include "../dev/device.h"\n'
                        '#include "../../backend/svm/svm_state.h" /* up */\n',
    # The including file's folder comes first: this svm_state.h is backend/'s own.
    "backend/svm/svm.c": '#include "svm_state.h"\n#include <vmm/vm.h>\n#include "arch/x86/cpu.h"\n',
    # And only the including file's folder: from arch/x86/, "svm_state.h" is arch/x86/'s.
    "arch/x86/svm_user.c": '#include "svm_state.h"\n',
    "guest-tests/guest.c": '#include "../abi/kvm.h"\n#include <lib/string.h> /* up */\n',
}


def make_tree(files):
    root = tempfile.mkdtemp()
    for rel, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    return root


def expected(files):
    return {(rel, n) for rel, text in files.items()
            for n, line in enumerate(text.splitlines(), 1) if "/* up */" in line}


class Floors(unittest.TestCase):
    def test_every_include_form(self):
        root = make_tree(TREE)
        found = {(v[0], v[1]) for v in floors.violations(root)}
        self.assertEqual(found, expected(TREE))

    def test_main_names_the_file_found(self):
        root = make_tree({"vmm/vm.h": "", "arch/x86/relative.c": '#include "../../vmm/vm.h"\n'})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            sys.argv, argv = ["floors.py", root], sys.argv
            try:
                rc = floors.main()
            finally:
                sys.argv = argv
        self.assertEqual(rc, 1)
        self.assertIn('arch/x86/relative.c:1: #include "../../vmm/vm.h" (vmm/vm.h): arch/ '
                      "(floor 1) includes vmm/ (floor 4)", out.getvalue())

    def test_backends_above_vmm_and_apart(self):
        root = make_tree({"vmm/vm.h": "", "backend/vmx/vmx.h": "",
                          "backend/vmx/vmx.c": '#include "vmm/vm.h"\n',
                          "vmm/vm.c": '#include "backend/vmx/vmx.h" /* up */\n',
                          "backend/backend.h": '#include "backend/vmx/vmx.h"\n',
                          "backend/svm/svm.c": '#include "../backend.h"\n'
                                               '#include "../vmx/vmx.h" /* up */\n',
                          "boot/main.c": '#include "backend/vmx/vmx.h"\n'})
        found = {(v[0], v[1]) for v in floors.violations(root)}
        self.assertEqual(found, {("vmm/vm.c", 1), ("backend/svm/svm.c", 2)})

    def test_vmm_layers(self):
        """Inside vmm/: dev/ < exit/ < vcpu/ < the VM, in every include form; a leaf header
        ranked apart from its folder (console/trace.h) is below them all."""
        root = make_tree({
            "vmm/vm.h": "", "vmm/vmconfig.h": "", "vmm/dev/device.h": "",
            "vmm/exit/exits.h": "", "vmm/vcpu/vcpu.h": "", "vmm/console/trace.h": "",
            "vmm/dev/virtio/net.c": '#include "../device.h"\n#include "vmm/vmconfig.h"\n'
                                    '#include "../../exit/exits.h" /* up */\n',
            "vmm/dev/lapic.c": '#include <vmm/vcpu/vcpu.h> /* up */\n'
                               '#include "vmm/console/trace.h"\n#include "../vm.h" /* up */\n',
            "vmm/exit/exits.c": '#include "exits.h"\n#include "vmm/dev/device.h"\n'
                                '#include "../vcpu/vcpu.h" /* up */\n',
            "vmm/vcpu/vcpu.c": '#include "vcpu.h"\n#include "vmm/exit/exits.h"\n'
                               '#include "vmm/vm.h" /* up */\n',
            "vmm/vm.c": '#include "vm.h"\n#include "vcpu/vcpu.h"\n#include "dev/device.h"\n',
            "vmm/console/trace.c": '#include "trace.h"\n#include "vmm/vm.h"\n',
            "vmm/vmconfig.c": '#include "vmconfig.h"\n#include "dev/device.h" /* up */\n',
        })
        found = {(v[0], v[1]) for v in floors.violations(root)}
        self.assertEqual(found, {("vmm/dev/virtio/net.c", 3), ("vmm/dev/lapic.c", 1),
                                 ("vmm/dev/lapic.c", 3), ("vmm/exit/exits.c", 3),
                                 ("vmm/vcpu/vcpu.c", 3), ("vmm/vmconfig.c", 2)})
        why = {v[0]: v[4] for v in floors.violations(root) if v[0] == "vmm/exit/exits.c"}
        self.assertEqual(why["vmm/exit/exits.c"],
                         "vmm/exit/ (vmm floor 2) includes vmm/vcpu/ (vmm floor 3)")


if __name__ == "__main__":
    unittest.main()
