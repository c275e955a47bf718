#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot pollux in QEMU or Bochs and stream its serial console to stdout.

Every run works in a directory of its own (grub.cfg, ISO, bochsrc, COM1 file),
so runs can go in parallel. The first line printed is the emulator command.
The exit status is 0 iff the console printed `@shutdown {"status":0}`; the
emulators' own exit codes mean other things and are ignored. TIMEOUT kills
the whole emulator process group and exits 124.

Used by `make run` (see the README for the variables) and by tools/test.py.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
GUEST_DIR = os.path.join(BUILD, "guests")
# `linux`: the Debian kernel `make deps` downloads and the initramfs `make` builds.
LINUX_DIR = os.path.join(BUILD, "linux")
LINUX_KERNEL = os.path.join(LINUX_DIR, "vmlinuz")
LINUX_INITRD = os.path.join(LINUX_DIR, "initrd.cpio")
# Always there for `linux`; args= is appended. panic=-1: a panic resets, so the VM stops;
# reboot=acpi: with hardware-reduced ACPI Linux would reset through EFI, which is absent;
# cryptomgr.notests: the crypto self-tests' RSA private-key operations were 7.8 of the 12.8
# guest seconds to /init on Bochs (docs/linux.md, "Boot time"), and no workload uses them.
LINUX_ARGS = "console=ttyS0 panic=-1 reboot=acpi cryptomgr.notests workload=short"
LINUX_MEM = "256M"
# The machine's memory when --mem is not given: the default, or more when the guests need it
# (machine_mem_mb). A VM without mem= gets vmconfig's 32 MiB (VM_MEM_DEFAULT).
DEFAULT_MACHINE_MB = 512
GUEST_MEM_DEFAULT = "32M"
# What pollux itself takes beyond its guests' RAM and the modules GRUB loads: its image, per-CPU
# stacks, page tables and trace rings (@boot mem_free_mb is about 484 of 512 MiB with one Linux
# guest's 19 MiB of modules), with room to spare; the total is rounded up to a multiple of it.
HYPERVISOR_MB = 128
EVENT_RE = re.compile(r"^(?:\[[^\]]*\] )?@(\w+) (\{.*\})\s*$")
# Seconds the emulator may take to exit after @shutdown before it is killed.
EXIT_GRACE = 5
# Seconds a timed-out QEMU run gets to print pollux's state dump (sched/watchdog.h).
DUMP_GRACE = 3


def parse_guests(spec):
    """GUESTS words `image[:key=value]...` -> [(file, module command line)].

    `args=` must come last and takes the rest of the word, `+` standing for a
    space. Every module gets `name=` (the image name unless given; duplicates
    get a numeric suffix) and `path=/boot/<file>`, because GRUB passes only
    the arguments after the file name. `initrd=FILE` adds FILE as the next
    module (command line `initrd`), the VM's initramfs; `disk=FILE` adds FILE
    after it (command line `disk`), the VM's virtio-blk disk. The image `linux` is
    the Debian kernel with its initramfs, LINUX_ARGS before any args= and
    mem=256M unless given.
    """
    modules, names = [], {}
    for word in spec.split():
        image, _, rest = word.partition(":")
        opts, args = [], None
        while rest:
            if rest.startswith("args="):
                args = rest[len("args="):].replace("+", " ")
                break
            item, _, rest = rest.partition(":")
            if "=" not in item:
                sys.exit(f"run: guest option '{item}' in '{word}' is not key=value")
            opts.append(item)
        keys = dict(o.split("=", 1) for o in opts)
        if image == "linux":
            path = LINUX_KERNEL
            keys.setdefault("initrd", LINUX_INITRD)
            keys.setdefault("mem", LINUX_MEM)
            args = LINUX_ARGS + (f" {args}" if args else "")
        else:
            path = image if os.sep in image or os.path.exists(image) else os.path.join(GUEST_DIR, image + ".elf")
        if not os.path.exists(path):
            hint = " (run `make deps all`)" if image == "linux" else ""
            sys.exit(f"run: guest image '{image}' not found (looked for {path}){hint}")
        initrd = keys.pop("initrd", None)
        if initrd and not os.path.exists(initrd):
            sys.exit(f"run: initrd '{initrd}' of '{word}' not found")
        disk = keys.pop("disk", None)
        if disk is not None and not os.path.isfile(disk):
            sys.exit(f"run: disk '{disk}' of '{word}' not found")
        base = keys.pop("name", os.path.splitext(os.path.basename(image))[0])
        count = names.get(base, 0)
        names[base] = count + 1
        name = base if count == 0 else f"{base}-{count + 1}"
        fname = f"{len(modules)}-{os.path.basename(path)}"
        line = [f"name={name}", f"path=/boot/{fname}"] + [f"{k}={v}" for k, v in keys.items()]
        # The VM's own modules follow it: its initramfs, then its disk (vmm/vmm.c finds them there).
        companions = [(f, kind) for f, kind in ((initrd, "initrd"), (disk, "disk")) if f]
        for n, (f, kind) in enumerate(companions, 1):
            line.append(f"{kind}=/boot/{len(modules) + n}-{os.path.basename(f)}")
        if args is not None:
            line.append(f"args={args}")
        modules.append((path, fname, " ".join(line)))
        for f, kind in companions:
            modules.append((f, f"{len(modules)}-{os.path.basename(f)}", kind))
    return modules


def size_mb(text):
    """A mem= value (bytes, or K/M/G suffixed, as vmconfig reads it) in MiB, rounded up."""
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip(), re.I)
    if not m:
        sys.exit(f"run: mem={text} is not a size (a number with an optional K, M or G)")
    shift = {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]
    return -(-(int(m.group(1)) << shift) // (1 << 20))


def machine_mem_mb(modules):
    """The machine memory the guests need, in MiB: their RAM, every module (GRUB loads each
    into memory, where it stays for the VM's life) and HYPERVISOR_MB, rounded up to a multiple
    of HYPERVISOR_MB; at least DEFAULT_MACHINE_MB. Two 256 MiB Linux VMs: 768."""
    total = HYPERVISOR_MB
    for path, _, line in modules:
        total += -(-os.path.getsize(path) // (1 << 20))
        if line == "initrd":
            continue
        words = dict(w.split("=", 1) for w in line.split(" args=")[0].split() if "=" in w)
        total += size_mb(words.get("mem", GUEST_MEM_DEFAULT))
    return max(DEFAULT_MACHINE_MB, -(-total // HYPERVISOR_MB) * HYPERVISOR_MB)


# Only what grub.cfg uses: GRUB reads every module on the image at boot, 0.45 s of emulated
# time under Bochs for the full set.
GRUB_MODULES = "normal configfile iso9660 biosdisk multiboot multiboot2"


def make_iso(rundir, kernel, hv_args, modules, out):
    iso_root = os.path.join(rundir, "iso")
    boot = os.path.join(iso_root, "boot")
    os.makedirs(os.path.join(boot, "grub"), exist_ok=True)
    shutil.copy(kernel, os.path.join(boot, "pollux.elf"))
    cfg = ["set timeout=0", "set default=0", "", 'menuentry "pollux" {',
           f"    multiboot2 /boot/pollux.elf {hv_args}".rstrip()]
    for path, fname, line in modules:
        shutil.copy(path, os.path.join(boot, fname))
        cfg.append(f"    module2 /boot/{fname} {line}")
    cfg += ["    boot", "}", ""]
    with open(os.path.join(boot, "grub", "grub.cfg"), "w") as f:
        f.write("\n".join(cfg))
    res = subprocess.run(["grub-mkrescue", "-o", out, f"--install-modules={GRUB_MODULES}",
                          "--locales=", "--fonts=", "--themes=", iso_root], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if res.returncode != 0:
        sys.exit("run: grub-mkrescue failed:\n" + res.stdout)


def kvm_usable():
    """/dev/kvm opens and the host CPU offers nested vmx or svm."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
        os.close(fd)
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    for flag, mod in (("vmx", "kvm_intel"), ("svm", "kvm_amd")):
        if re.search(rf"\b{flag}\b", flags):
            try:
                return open(f"/sys/module/{mod}/parameters/nested").read().strip() in ("1", "Y")
            except OSError:
                return False
    return False


def qemu_command(a, rundir, iso, modules):
    accel = a.accel
    if accel == "auto":
        accel = "kvm" if kvm_usable() else "tcg"
    cmd = ["qemu-system-x86_64", "-m", str(a.mem), "-smp", str(a.smp), "-display", "none",
           "-serial", "stdio", "-monitor", "none", "-no-reboot",
           "-qmp", f"unix:{os.path.join(rundir, 'qmp.sock')},server=on,wait=off",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    if accel == "kvm":
        cmd += ["-enable-kvm", "-cpu", a.cpu or "host"]
    else:
        cmd += ["-cpu", a.cpu or "max"]
        if a.icount is not None:
            cmd += ["-accel", "tcg", "-icount", f"shift={a.icount},sleep=off"]
        else:
            # One thread for all CPUs: with multi-threaded TCG, QEMU 7.2 lets any CPU's
            # FXRSTOR/XRSTOR rewrite the first CPU's hflags2 unlocked (cpu_clear_ignne), which
            # can undo that CPU's own #VMEXIT or VMRUN and crash the host (docs/robustness.md).
            cmd += ["-accel", "tcg,thread=single"]
    if a.boot == "mb1":
        cmd += ["-kernel", os.path.join(BUILD, "pollux32.elf")]
        if a.args:
            cmd += ["-append", a.args]
        if modules:
            cmd += ["-initrd", ",".join(f"{p} {line}".replace(",", ",,") for p, _, line in modules)]
    else:
        cmd += ["-cdrom", iso, "-boot", "d"]
    # A triple fault ends the run without a word on the console (-no-reboot): QEMU's log
    # of CPU resets then holds the registers at the fault.
    cmd += ["-d", "cpu_reset", "-D", os.path.join(rundir, "qemu.log")]
    if a.debug:
        cmd += ["-s", "-S"]
    return cmd


# The Bochs BIOS's fastboot skips its boot-menu delay: 3.1 s of emulated time (310 M
# instructions at ips=100000000) before the CD boots, which cost a 2-CPU boot about 13 s of its
# 16 s of host time.
def bochs_command(a, rundir, iso):
    com1 = os.path.join(rundir, "com1.txt")
    rc = os.path.join(rundir, "bochsrc")
    dbg = os.path.join(rundir, "cont.dbg")
    with open(rc, "w") as f:
        f.write(f"""megs: {a.mem}
cpu: model={a.cpu or 'corei7_skylake_x'}, count={a.smp}, ips=100000000, reset_on_triple_fault=0
romimage: file=/usr/share/bochs/BIOS-bochs-latest, options=fastboot
vgaromimage: file=/usr/share/vgabios/vgabios.bin
ata0-master: type=cdrom, path={iso}, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev={com1}
display_library: rfb, options="timeout=0"
log: {os.path.join(rundir, 'bochs.log')}
clock: sync=none
""")
    with open(dbg, "w") as f:
        f.write("c\nquit\n")
    open(com1, "w").close()
    return ["bochs-bin", "-q", "-f", rc, "-rc", dbg], com1


# What a person at a terminal sees of pollux's own @event lines (the whole console goes to the
# run's console.log): the short decisive ones; @vm_stop as one line of its own.
EVENTS_SHOWN = {"shutdown", "panic", "warning", "key"}


def vm_stop_line(body):
    detail = f": {body['detail']}" if body.get("detail") else ""
    return (f"run: VM {body.get('vm')} stopped, code {body.get('code')} "
            f"({body.get('reason')}{detail})")


class Console:
    """Echo console lines and remember the events tools care about. With a log, every line goes
    there and out gets the human view: pollux's @event lines (kilobytes of JSON each) stay in the
    log, but for EVENTS_SHOWN and a line per @vm_stop."""

    def __init__(self, out, keys=(), typist=None, log=None):
        self.out = out
        self.log = log
        self.status = None
        self.panicked = False
        self.done = threading.Event()
        self.keys = list(keys)  # (text a line must contain, bytes to type then), in order
        self.typist = typist

    def line(self, text):
        text = text.rstrip("\r\n").replace("\r", "")
        m = EVENT_RE.match(text)
        own_event = m and not text.startswith("[")
        if self.log:
            self.log.write(text + "\n")
            self.log.flush()
        body = None
        if own_event:
            try:
                body = json.loads(m.group(2))
            except ValueError:
                body = None
        if not self.log or not own_event or m.group(1) in EVENTS_SHOWN:
            self.out.write(text + "\n")
        elif m.group(1) == "vm_stop" and body is not None:
            self.out.write(vm_stop_line(body) + "\n")
        self.out.flush()
        if self.keys and self.keys[0][0] in text:
            self.typist(self.keys.pop(0)[1])
        if body is None:
            return
        if m.group(1) == "shutdown":
            self.status = body.get("status")
            self.done.set()
        elif m.group(1) == "panic":
            self.panicked = True


def stream_pipe(pipe, console):
    for raw in iter(pipe.readline, b""):
        console.line(raw.decode("utf-8", "replace"))


def stream_file(path, console, proc):
    with open(path, "rb") as f:
        buf = b""
        while True:
            chunk = f.read()
            if chunk:
                buf += chunk
                while b"\n" in buf:
                    ln, buf = buf.split(b"\n", 1)
                    console.line(ln.decode("utf-8", "replace"))
            elif proc.poll() is not None:
                if buf:
                    console.line(buf.decode("utf-8", "replace"))
                return
            else:
                time.sleep(0.05)


def inject_nmi(rundir):
    """Ask QEMU (QMP) for an NMI on every CPU: pollux answers with a state dump."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(os.path.join(rundir, "qmp.sock"))
            f = s.makefile("rw")
            f.readline()  # the greeting
            for command in ("qmp_capabilities", "inject-nmi"):
                f.write(json.dumps({"execute": command}) + "\n")
                f.flush()
                if "return" not in json.loads(f.readline()):
                    return False
        return True
    except (OSError, ValueError):
        return False


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--emu", default="qemu", choices=["qemu", "bochs"])
    p.add_argument("--smp", type=int, default=2)
    p.add_argument("--cpu", default="")
    p.add_argument("--mem", type=int, default=None,
                   help=f"machine memory in MiB (default: {DEFAULT_MACHINE_MB}, or what the guests "
                   "need, machine_mem_mb)")
    p.add_argument("--args", default="")
    p.add_argument("--guests", default="")
    p.add_argument("--timeout", type=float, default=0)
    p.add_argument("--accel", default="auto", choices=["auto", "tcg", "kvm"])
    p.add_argument("--boot", default="grub", choices=["grub", "mb1"])
    p.add_argument("--icount", type=int, default=None, help="QEMU -icount shift (deterministic)")
    p.add_argument("--debug", action="store_true", help="start halted with QEMU's gdb stub")
    p.add_argument("--rundir", default="")
    p.add_argument("--iso-only", metavar="OUT", help="only build the ISO at OUT")
    p.add_argument("--kernel", default=os.path.join(BUILD, "pollux.elf"))
    p.add_argument("--console", default="auto", choices=["auto", "human", "all"],
                   help="what stdout gets: human (the @event JSON only in the run's console.log), "
                   "all (every line), auto (human on a terminal, all otherwise)")
    p.add_argument("--keys", default="[]", help="QEMU: type on COM1, a JSON list of "
                   "[text, keys]: once a console line contains text, type keys")
    a = p.parse_args()
    keys = [(str(t), str(k).encode("latin-1")) for t, k in json.loads(a.keys)]
    if keys and a.emu != "qemu":
        sys.exit("run: --keys needs QEMU (Bochs writes COM1 to a file and reads nothing)")

    modules = parse_guests(a.guests)
    if a.mem is None:
        a.mem = machine_mem_mb(modules)
    if a.iso_only:
        rundir = os.path.join(BUILD, "iso-build")
        shutil.rmtree(rundir, ignore_errors=True)
        make_iso(rundir, a.kernel, a.args, modules, a.iso_only)
        return 0
    if a.emu == "bochs" and a.boot == "mb1":
        sys.exit("run: BOOT=mb1 needs QEMU (Bochs has no multiboot loader)")

    rundir = a.rundir or os.path.join(BUILD, "run", time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}")
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    iso = os.path.join(rundir, "pollux.iso")
    if a.boot == "grub":
        make_iso(rundir, a.kernel, a.args, modules, iso)

    com1 = None
    if a.emu == "qemu":
        cmd = qemu_command(a, rundir, iso, modules)
    else:
        cmd, com1 = bochs_command(a, rundir, iso)
    # COM1 input: typed keys (--keys), else the terminal when there is one (QEMU only).
    if keys:
        stdin = subprocess.PIPE
    elif a.emu == "qemu" and sys.stdin.isatty() and not a.debug:
        stdin = None
    else:
        stdin = subprocess.DEVNULL
    proc = None

    def typist(data):
        proc.stdin.write(data)
        proc.stdin.flush()

    # A person at a terminal gets the human view, a tool reading the pipe every line (--console).
    human = a.console == "human" or (a.console == "auto" and sys.stdout.isatty())
    log_path = os.path.join(rundir, "console.log")
    log = open(log_path, "w") if human else None
    console = Console(sys.stdout, keys, typist, log)
    print(shlex.join(cmd), flush=True)
    if human:
        print(f"run: the whole console, @event lines included, goes to {log_path}", flush=True)
    if stdin is None:
        print("run: keys on this terminal go to pollux's key console (h lists them)", flush=True)
    elif a.emu == "bochs":
        print("run: Bochs writes COM1 to a file: no key console", flush=True)
    if a.debug:
        print(f"run: QEMU waits for gdb; in another shell:\n"
              f"  gdb {shlex.quote(a.kernel)} -ex 'target remote :1234'", flush=True)

    emu_out = open(os.path.join(rundir, "emulator.out"), "wb")
    proc = subprocess.Popen(cmd, stdin=stdin,
                            stdout=subprocess.PIPE if com1 is None else emu_out,
                            stderr=emu_out, start_new_session=True, cwd=rundir)
    if com1 is None:
        reader = threading.Thread(target=stream_pipe, args=(proc.stdout, console), daemon=True)
    else:
        reader = threading.Thread(target=stream_file, args=(com1, console, proc), daemon=True)
    reader.start()

    deadline = time.monotonic() + a.timeout if a.timeout > 0 else None
    timed_out = False
    shutdown_at = None
    while proc.poll() is None:
        now = time.monotonic()
        if deadline and now > deadline:
            timed_out = True
            if a.emu == "qemu" and inject_nmi(rundir):
                print(f"run: timeout after {a.timeout:g} s: asked pollux for a state dump (NMI)",
                      flush=True)
                time.sleep(DUMP_GRACE)
            break
        if console.done.is_set():
            shutdown_at = shutdown_at or now
            if now - shutdown_at > EXIT_GRACE:
                break
        time.sleep(0.05)
    kill_group(proc)
    proc.wait()
    reader.join(timeout=2)

    if log:
        log.close()
        print(f"run: the whole console is in {log_path}", flush=True)
    if timed_out:
        print(f"run: timeout after {a.timeout:g} s, emulator killed", flush=True)
        return 124
    if console.status is None:
        print(f"run: the emulator ended without @shutdown (see {rundir})", flush=True)
        return 1
    return 0 if console.status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
