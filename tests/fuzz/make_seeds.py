#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write the seed corpora in tests/fuzz/corpus/<harness>/: small valid inputs
from which libFuzzer mutates. The layouts follow the harnesses' input formats
(see the comment at the top of each tests/fuzz/fuzz_<name>.c). The loader's
seeds are the bundled guest images, so `make guests` must have run.

Run it again after changing a harness's input format; the files it writes
are committed.
"""
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def write(harness, name, data):
    d = os.path.join(CORPUS, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- bootinfo: first byte odd = multiboot2, even = multiboot1; then the info at 0x10000

INFO_BASE = 0x10000


def mb2_tag(type_, payload):
    tag = struct.pack("<II", type_, 8 + len(payload)) + payload
    return tag + b"\0" * (-len(tag) % 8)


def mb2_info(tags):
    body = b"".join(tags) + mb2_tag(0, b"")
    return struct.pack("<II", 8 + len(body), 0) + body


MMAP = [(0, 0x9fc00, 1), (0xf0000, 0x10000, 2), (0x100000, 0x1ff00000, 1)]


def mb2_mmap(entries, entry_size=24):
    out = struct.pack("<II", entry_size, 0)
    for base, length, type_ in entries:
        e = struct.pack("<QQII", base, length, type_, 0)
        out += e + b"\0" * (entry_size - len(e))
    return mb2_tag(6, out)


def bootinfo():
    write("bootinfo", "mb2-grub", b"\x01" + mb2_info([
        mb2_tag(1, b"maxcpus=2 sched_slice_us=2000\0"),
        mb2_tag(2, b"GRUB 2.06\0"),
        mb2_tag(3, struct.pack("<II", 0x400000, 0x402000) + b"name=hello path=/boot/0-hello.elf\0"),
        mb2_tag(3, struct.pack("<II", 0x403000, 0x404000) + b"name=fuzz args=2000 1\0"),
        mb2_mmap(MMAP),
        mb2_tag(14, b"RSD PTR " + bytes(12)),
    ]))
    write("bootinfo", "mb2-minimal", b"\x01" + mb2_info([mb2_mmap(MMAP[:1], 32)]))
    # multiboot1: the info block, then the strings, module list and memory map it points to.
    strings = b"maxcpus=1\0GRUB Legacy\0guest.elf args=1\0"
    s_cmd, s_loader, s_mod = (INFO_BASE + 116 + off for off in (0, 10, 22))
    mods_at = INFO_BASE + 116 + len(strings)
    mods = struct.pack("<IIII", 0x400000, 0x401000, s_mod, 0)
    mmap_at = mods_at + len(mods)
    mmap = b"".join(struct.pack("<IQQI", 20, b, n, t) for b, n, t in MMAP)
    info = bytearray(116)
    struct.pack_into("<IIIIIIII", info, 0, (1 << 2) | (1 << 3) | (1 << 6) | (1 << 9), 639,
                     0x7fc00, 0, s_cmd, 1, mods_at, 0)
    struct.pack_into("<II", info, 44, len(mmap), mmap_at)
    struct.pack_into("<I", info, 64, s_loader)
    write("bootinfo", "mb1-grub", b"\x00" + bytes(info) + strings + mods + mmap)


# ---- loader: first byte picks the guest memory size (index 2: 2 MiB), then the image

def loader():
    guests = os.path.join(ROOT, "build", "guests")
    for name in ("hello", "escape"):
        with open(os.path.join(guests, name + ".elf"), "rb") as f:
            write("loader", f"{name}.elf", b"\x02" + f.read())
    # A flat image: a multiboot header with the address fields (flags bit 16).
    load, entry = 0x100000, 0x100020
    magic, flags = 0x1BADB002, 1 << 16
    hdr = struct.pack("<IIIIIIII", magic, flags, -(magic + flags) & 0xffffffff, load, load,
                      load + 0x40, load + 0x1000, entry)
    write("loader", "flat.bin", b"\x02" + hdr + b"\xf4" * 32)


# ---- cmdline: one line, parsed as hypervisor options and as a module's VM options

def cmdline():
    lines = [b"number=5 size=4M flag=yes colour=blue",
             b"number=0x10 flag=off colour=red bogus=1 size",
             b"name=web-1 path=/boot/x.elf vcpus=4 mem=64M timeout_ms=5000 pin=0,1,1,0 "
             b"unbacked=ignore args=a b=c",
             b"vcpus=2 pin=0,1,2 mem=1G",
             b"\tname=a\nmem=0x100000   args="]
    for i, line in enumerate(lines):
        write("cmdline", f"line{i}", line)


# ---- acpi: RSDP at the start of the input, tables after it, pointers at 0x200000 + offset

TABLES = 0x200000


def sdt(sig, body, rev=1):
    length = 36 + len(body)
    hdr = sig + struct.pack("<IB", length, rev) + b"\0" + b"POLLUX" + b"FUZZTBL " + \
        struct.pack("<IIII", 1, 0, 0, 0)[:16]
    hdr = hdr[:36]
    t = bytearray(hdr + body)
    t[9] = (-sum(t)) & 0xff
    return bytes(t)


def rsdp(root, xsdt=None):
    r = bytearray(b"RSD PTR " + b"\0" + b"POLLUX" + bytes([2 if xsdt else 0]) +
                  struct.pack("<I", root if not xsdt else 0))
    r[8] = (-sum(r[:20])) & 0xff
    if xsdt:
        r += struct.pack("<IQ", 36, xsdt) + b"\0\0\0\0"
        r[32] = (-sum(r)) & 0xff
    return bytes(r)


def acpi():
    madt = sdt(b"APIC", struct.pack("<II", 0xfee00000, 1) +
               bytes([0, 8, 0, 0]) + struct.pack("<I", 1) +        # local APIC 0, enabled
               bytes([0, 8, 1, 1]) + struct.pack("<I", 1) +        # local APIC 1
               bytes([9, 16, 0, 0]) + struct.pack("<III", 2, 1, 2) +  # x2APIC 2
               bytes([5, 12, 0, 0]) + struct.pack("<Q", 0xfee00000))  # address override
    dsdt = sdt(b"DSDT", b"\x08_S5_\x12\x06\x04\x0a\x05\x0a\x05\x00\x00")
    # Layout: RSDP (36, padded to 48), RSDT, MADT, DSDT, FADT.
    at = 48
    rsdt_at = at
    rsdt_len = 36 + 8
    madt_at = rsdt_at + rsdt_len
    dsdt_at = madt_at + len(madt)
    fadt_at = dsdt_at + len(dsdt)
    fadt_body = bytearray(148 - 36)
    struct.pack_into("<II", fadt_body, 0, 0, TABLES + dsdt_at)   # FIRMWARE_CTRL, DSDT
    struct.pack_into("<I", fadt_body, 64 - 36, 0x604)            # PM1a_CNT_BLK
    fadt = sdt(b"FACP", bytes(fadt_body), rev=2)
    rsdt = sdt(b"RSDT", struct.pack("<II", TABLES + madt_at, TABLES + fadt_at))
    blob = rsdp(TABLES + rsdt_at).ljust(48, b"\0") + rsdt + madt + dsdt + fadt
    write("acpi", "rsdt-madt-fadt", blob)
    write("acpi", "madt", madt)
    xsdt = sdt(b"XSDT", struct.pack("<Q", TABLES + 48 + 36 + 8))
    write("acpi", "xsdt-madt", rsdp(0, TABLES + 48).ljust(48, b"\0") + xsdt + madt)


# ---- mmio_decode: first byte is the mode (0: 16, 1: 32, 2: 64), then the bytes

def mmio_decode():
    seeds = {
        "mov-load32": (1, "8b 00"), "mov-store32": (1, "89 08"), "mov-store-imm": (1, "c7 05 00 03 e0 fe 01 00 00 00"),
        "movzx": (1, "0f b6 48 20"), "moffs": (1, "a1 20 00 e0 fe"), "rex-load": (2, "4c 8b 84 24 00 01 00 00"),
        "rip-rel": (2, "8b 05 00 10 00 00"), "sixteen": (0, "66 67 89 87 00 03"), "high-byte": (1, "8a 60 01"),
        "prefixes": (2, "2e 66 41 c6 00 7f"),
    }
    for name, (mode, hexbytes) in seeds.items():
        write("mmio_decode", name, bytes([mode]) + bytes.fromhex(hexbytes))


# ---- insn: first byte = kind + 21 * mode index, then the bytes at RIP

INSN_KINDS = ["0f a2", "0f 32", "0f 30", "f4", "f3 90", "0f 01 d9", "0f 01 c1", "0f 08", "0f 09",
              "0f 01 d1", "0f 01 c8", "0f 01 c9", "0f 01 d8", "0f 01 da", "0f 01 db", "0f 01 dc",
              "0f 01 dd", "0f 01 de", "0f 01 df", "0f 01 fd", "cf"]


def insn():
    for kind, hexbytes in enumerate(INSN_KINDS):
        write("insn", f"kind{kind}", bytes([kind + 21]) + bytes.fromhex(hexbytes) + b"\x90" * 4)
    write("insn", "prefixed64", bytes([20 + 42]) + bytes.fromhex("66 48 cf"))
    write("insn", "rep-hlt16", bytes([3]) + bytes.fromhex("f3 2e f4"))


# ---- gpt: flags, CR0, CR3, CR4, EFER, CPL, linear address, then guest memory from 0

def gpt_input(flags, cr0, cr3, cr4, efer, cpl, linear, mem):
    return struct.pack("<BQQQQBQ", flags, cr0, cr3, cr4, efer, cpl, linear) + bytes(mem)


def gpt():
    pg, pe, pae, pse, lma = 1 << 31, 1, 1 << 5, 1 << 4, (1 << 10) | (1 << 8)
    mem = bytearray(0x5000)
    # 4-level: PML4 0x1000 -> PDPT 0x2000 -> PD 0x3000 -> PT 0x4000 -> page 0x7000.
    struct.pack_into("<Q", mem, 0x1000, 0x2007)
    struct.pack_into("<Q", mem, 0x2000, 0x3007)
    struct.pack_into("<Q", mem, 0x3000, 0x4007)
    struct.pack_into("<Q", mem, 0x4000 + 8, 0x7007)
    struct.pack_into("<Q", mem, 0x3000 + 8, 0x200087)  # a 2 MiB page
    write("gpt", "long4k", gpt_input(0, pg | pe, 0x1000, pae, lma, 0, 0x1abc, mem))
    write("gpt", "long2m", gpt_input(0, pg | pe, 0x1000, pae, lma, 3, 0x212345, mem))
    # PAE: PDPT at 0x20 -> PD 0x3000 (as above).
    pm = bytearray(mem)
    struct.pack_into("<Q", pm, 0x20, 0x3001)
    write("gpt", "pae", gpt_input(2, pg | pe, 0x20, pae, 0, 0, 0x1abc, pm))
    # 32-bit: PD at 0x1000 -> PT 0x2000, and a 4 MiB page with PSE.
    m32 = bytearray(0x3000)
    struct.pack_into("<I", m32, 0x1000, 0x2007)
    struct.pack_into("<I", m32, 0x1004, 0x400087)
    struct.pack_into("<I", m32, 0x2004, 0x9007)
    write("gpt", "legacy", gpt_input(4, pg | pe, 0x1000, pse, 0, 0, 0x1abc, m32))
    write("gpt", "legacy-4m", gpt_input(1, pg | pe, 0x1000, pse, 0, 0, 0x412345, m32))
    write("gpt", "paging-off", gpt_input(0, pe, 0, 0, 0, 0, 0x123456789, b""))
    # The memo: pages 1-7 are tables whose entry 0 points to the next page (7 to 1)
    # and entry 1 to the page itself, so that with CR3 at page 1 address 0x1abc
    # walks pages 1, 2, 3, 4 to 0x4abc, and any table pointer moved by a page still
    # translates, elsewhere. Page 0's words are the edit script: between uses, bit
    # 12 or 13 of the remembered entry at each level (slots 1-4: PML4E to PTE)
    # flipped and flipped back.
    mm = bytearray(0x8000)
    for t in range(1, 8):
        struct.pack_into("<QQ", mm, t << 12, (t % 7 + 1) << 12 | 7, t << 12 | 7)

    def flip(slot, bit):
        return 1 | 0x10 | slot << 8 | bit << 12

    script = [0]
    for slot, bit in ((4, 13), (1, 12), (2, 12), (3, 12)):
        script += [flip(slot, bit), 0, flip(slot, bit), 0]
    struct.pack_into(f"<{len(script)}Q", mm, 0, *script)
    write("gpt", "memo-edits", gpt_input(0, pg | pe, 0x1000, pae, lma, 0, 0x1abc, mm))


# ---- virtqueue: le16 num, u8 flags (1 EVENT_IDX, 2 INDIRECT), u8 written, le32 desc, avail,
# used, then the RAM image from 0. Rings of 8 at 0 (desc), 0x80 (avail), 0xa0 (used).

VQ_NEXT, VQ_WRITE, VQ_INDIRECT = 1, 2, 4


def ring_ram(size, descs, heads, tables=()):
    """Guest RAM holding a descriptor table at 0, indirect tables, and the avail ring at 0x80
    with heads (for the virtqueue and virtio_net harnesses)."""
    ram = bytearray(size)
    for at, entries in [(0, descs)] + list(tables):
        for i, (addr, length, fl, nxt) in enumerate(entries):
            struct.pack_into("<QIHH", ram, at + 16 * i, addr, length, fl, nxt)
    struct.pack_into(f"<HH{len(heads)}H", ram, 0x80, 0, len(heads), *heads)
    return ram


def vq_input(flags, written, descs, heads, tables=(), num=8, size=0x400):
    ram = ring_ram(size, descs, heads, tables)
    return struct.pack("<HBBIII", num, flags, written, 0, 0x80, 0xa0) + bytes(ram)


def virtqueue():
    descs = [(0x100, 16, VQ_NEXT, 1), (0x200, 64, VQ_WRITE, 0), (0x300, 32, VQ_WRITE, 0)]
    write("virtqueue", "two-chains", vq_input(0, 32, descs, [0, 2]))
    write("virtqueue", "event-idx", vq_input(1, 8, descs, [2, 0]))
    table = [(0x300, 12, VQ_NEXT, 2), (0x340, 1, VQ_WRITE, 0), (0x320, 16, VQ_NEXT, 1)]
    write("virtqueue", "indirect", vq_input(3, 1, [(0x180, 48, VQ_INDIRECT, 0)] + descs, [0, 3],
                                            tables=[(0x180, table)]))


# ---- virtio_blk: segment count and disk, readable count, le16 length - 1 each, then the bytes


def blk_input(lens, nread, type_, sector, payload=b"", no_disk=False):
    head = bytes([(len(lens) - 1) | (0x80 if no_disk else 0), nread])
    head += b"".join(struct.pack("<H", n - 1) for n in lens)
    return head + struct.pack("<IIQ", type_, 0, sector) + payload


def virtio_blk():
    t_in, t_out, t_flush, t_get_id = 0, 1, 4, 8
    write("virtio_blk", "in-2-sectors", blk_input([16, 1024, 1], 1, t_in, 2))
    write("virtio_blk", "out-1-sector", blk_input([16, 512, 1], 2, t_out, 7, bytes(range(256)) * 2))
    write("virtio_blk", "flush", blk_input([16, 1], 1, t_flush, 0))
    write("virtio_blk", "get-id", blk_input([16, 20, 1], 1, t_get_id, 0))
    write("virtio_blk", "discard-unsupp", blk_input([16, 16, 1], 2, 11, 0))
    write("virtio_blk", "split-header-status", blk_input([7, 9, 300, 725], 2, t_in, 3))
    write("virtio_blk", "in-past-the-end", blk_input([16, 512, 1], 1, t_in, 8))
    write("virtio_blk", "no-disk", blk_input([16, 512, 1], 1, t_in, 0, no_disk=True))
    write("virtio_blk", "short-header", blk_input([8, 513], 1, t_in, 0))


# ---- virtio_net: u8 flags (1 EVENT_IDX, 2 INDIRECT), u8 log2 num, u8 kicks, u8 0, le32 desc,
# avail, used, then A's RAM from 0. Both of A's queues on rings of 8 at 0, 0x80 and 0xa0.

NET_HDR = 12


def net_frame(dst, length):
    src = bytes([0x02, 0x50, 0x4C, 0x58, 0x00, 0x00])
    body = bytes((14 + i) & 0xFF for i in range(length - 14))
    return bytes(dst) + src + body


def net_input(flags, descs, heads, blobs, tables=(), kicks=1, size=0x1000):
    ram = ring_ram(size, descs, heads, tables)
    for at, blob in blobs:
        ram[at:at + len(blob)] = blob
    return struct.pack("<BBBBIII", flags, 3, kicks - 1, 0, 0, 0x80, 0xA0) + bytes(ram)


def virtio_net():
    bcast = [0xFF] * 6
    to_b = [0x02, 0x50, 0x4C, 0x58, 0x00, 0x01]
    hdr = bytes(NET_HDR)
    write("virtio_net", "header-then-frame",
          net_input(0, [(0x100, NET_HDR, VQ_NEXT, 1), (0x200, 60, 0, 0)], [0],
                    [(0x200, net_frame(bcast, 60))]))
    write("virtio_net", "event-idx-two-frames",
          net_input(1, [(0x300, NET_HDR + 98, 0, 0), (0x400, NET_HDR + 60, 0, 0)], [0, 1],
                    [(0x300, hdr + net_frame(to_b, 98)), (0x400, hdr + net_frame(bcast, 60))],
                    kicks=2))
    write("virtio_net", "indirect",
          net_input(3, [(0x180, 32, VQ_INDIRECT, 0)], [0], [(0x200, net_frame(to_b, 64))],
                    tables=[(0x180, [(0x100, NET_HDR, VQ_NEXT, 1), (0x200, 64, 0, 0)])]))
    write("virtio_net", "too-long",
          net_input(0, [(0x100, NET_HDR + 1519, 0, 0)], [0], [], size=0x1000))
    write("virtio_net", "wrong-direction",
          net_input(0, [(0x100, NET_HDR + 60, VQ_WRITE, 0)], [0], []))


def main():
    for gen in (bootinfo, loader, cmdline, acpi, mmio_decode, insn, gpt, virtqueue, virtio_blk,
                virtio_net):
        gen()
    return 0


if __name__ == "__main__":
    sys.exit(main())
