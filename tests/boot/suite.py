"""Boot tests: each boots pollux once and asserts on the console's @events.

`make test` runs tests(full=False); `make test-full` adds the long matrix.
Every test pins ACCEL=tcg (tools/test.py), so results do not depend on the
machine. Keep the default set within the 15-minute CI budget on 2 cores.
"""


class Test:
    def __init__(self, name, checks, emu="qemu", smp=2, cpu="", mem=512, args="", guests="",
                 boot="grub", timeout=120, full_only=False):
        self.name, self.checks, self.timeout, self.full_only = name, checks, timeout, full_only
        self.emu, self.smp, self.cpu, self.mem = emu, smp, cpu, mem
        self.args, self.guests, self.boot = args, guests, boot

    def run_flags(self):
        return ["--emu", self.emu, "--smp", str(self.smp), "--cpu", self.cpu, "--mem",
                str(self.mem), "--args", self.args, "--guests", self.guests, "--boot", self.boot]


# ---- reusable checks -------------------------------------------------------

def boot_line(cpus, virt, features=(), protocol=2):
    def check(log):
        b = log.one("boot")
        assert b["cpus"] == cpus, f"@boot cpus={b['cpus']}, want {cpus}"
        assert b["virt"] == virt, f"@boot virt={b['virt']} ({b.get('virt_reason')}), want {virt}"
        assert b["protocol"] == protocol, f"@boot protocol={b['protocol']}, want {protocol}"
        assert b["tsc_khz"] > 0, "@boot tsc_khz is 0"
        for f in features:
            assert b["features"].get(f) is True, f"@boot feature {f} is not true: {b['features']}"
    check.__name__ = f"boot_line({cpus},{virt})"
    return check


def virt_reason(words):
    def check(log):
        reason = log.one("boot").get("virt_reason", "")
        assert words in reason, f"@boot virt_reason '{reason}' does not mention '{words}'"
    return check


def shutdown(status):
    def check(log):
        got = log.shutdown_status()
        if status == "nonzero":
            assert got != 0, "@shutdown status is 0, want non-zero"
            assert log.returncode != 0, "run exited 0 despite a non-zero @shutdown"
        else:
            assert got == status, f"@shutdown status={got}, want {status}"
            assert (log.returncode == 0) == (status == 0), f"run exit code {log.returncode}"
    return check


def bad_option(word):
    def check(log):
        w = [e for e in log.all("warning") if e.get("kind") == "bad_option"]
        assert [e["option"] for e in w] == [word], f"bad_option warnings: {w}"
        assert any("valid options are" in ln for ln in log.lines), "no list of valid options"
    return check


def panic(vector, in_backtrace=None):
    def check(log):
        p = log.one("panic")
        assert p["vector"] == vector, f"@panic vector={p['vector']}, want {vector}"
        assert p["rip"].startswith("0x"), f"@panic rip {p['rip']}"
        assert p["cpu"] == 0, f"@panic cpu={p['cpu']}"
        text = "\n".join(log.lines)
        if vector >= 0:
            for reg in ("rax 0x", "r15 0x", "cr2 0x", "rflags 0x"):
                assert reg in text, f"register dump lacks '{reg}'"
        assert "backtrace:" in text, "no backtrace"
        if in_backtrace:
            bt = text.split("backtrace:", 1)[1]
            assert f"<{in_backtrace}+" in bt, f"backtrace does not name {in_backtrace}"
        assert not log.all("boot") or log.events.index(log.one("boot")) < log.events.index(p)
    return check


def tests(full=False):
    all_tests = [
        Test("qemu-smp1", [boot_line(1, "svm", ["npt"]), shutdown(0)], smp=1),
        Test("qemu-smp4", [boot_line(4, "svm", ["npt", "vgif"]), shutdown(0)], smp=4),
        Test("qemu-multiboot1", [boot_line(2, "svm", ["npt"], protocol=1), shutdown(0)],
             boot="mb1"),
        Test("qemu-bad-option", [bad_option("bogus=1"), boot_line(2, "svm"),
                                 shutdown("nonzero")], args="bogus=1"),
        Test("qemu-fault-pagefault", [panic(14, "kernel_main"), shutdown(3)], smp=2,
             args="fault_test=1", timeout=60),
        Test("qemu-fault-ud", [panic(6, "kernel_main"), shutdown(3)], smp=1,
             args="fault_test=2", timeout=60, full_only=True),
        Test("qemu-fault-panic", [panic(-1, "kernel_main"), shutdown(3)], smp=4,
             args="fault_test=3", timeout=60, full_only=True),
        Test("qemu-maxcpus", [boot_line(2, "svm"), shutdown(0)], smp=4, args="maxcpus=2",
             full_only=True),
        Test("bochs-skylake-smp2",
             [boot_line(2, "vmx", ["ept", "unrestricted_guest", "ple", "preemption_timer", "vpid"]),
              shutdown(0)], emu="bochs", smp=2, timeout=240),
        Test("bochs-ryzen-smp1", [boot_line(1, "svm", ["npt", "nrips", "pause_filter"]),
                                  shutdown(0)], emu="bochs", cpu="ryzen", smp=1, timeout=240),
        Test("bochs-lynnfield", [boot_line(1, "none"), virt_reason("unrestricted guest"),
                                 shutdown(0)], emu="bochs",
             cpu="corei5_lynnfield_750", smp=1, timeout=240, full_only=True),
    ]
    return [t for t in all_tests if full or not t.full_only]
