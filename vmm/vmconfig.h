/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A VM's configuration from its multiboot module command line:
 *   name=<str> path=<str> vcpus=<n> mem=<size> timeout_ms=<n>
 *   unbacked=stop|ignore pin=<cpu,cpu,...> initrd=<str> net=<switch> disk=<str>
 *   legacy_pic=on|off ioapic=on|off args=<rest>
 *   and the scheduling policy's words (vmm/vm_policy.h: yield_pivot=,
 *   halt_poll_ns=, halt_poll_mode=, ple=, ple_window=, ...), whose defaults
 *   are the hypervisor options of the same names.
 * `args=` must come last and takes the rest of the line, spaces included.
 * `initrd=` names the VM's second module (a Linux initramfs): the module
 * right after this one; the value is its path, for messages. `disk=` names
 * the module after that (or after this one, without initrd=): the VM's
 * virtio-blk disk. `net=` joins the VM to the switch of that name
 * (docs/virtio.md). With either, mem stays at or below VIRTIO_MMIO_BASE.
 *
 * Contract: vmconfig_parse fills defaults (name "vm<index>", path "", vcpus
 * 1, mem 32 MiB, timeout_ms 0 = none, the policy vm_policy_hv, unbacked
 * stop, legacy_pic on, ioapic on, no pins, args "") and returns -1 with a
 * one-line reason naming the offending word on: an unknown key, a word with
 * no value, a bad number, vcpus outside [1, max_vcpus], mem below 1 MiB, not
 * a multiple of 4 KiB, or reaching VM_MEM_LIMIT, a policy value out of its
 * range, more pins than vcpus, a name
 * longer than VM_NAME_MAX or holding characters other than [A-Za-z0-9_.-], an
 * unbacked= other than stop or ignore, a legacy_pic= or ioapic= that is no
 * boolean.
 */
#ifndef POLLUX_VMM_VMCONFIG_H
#define POLLUX_VMM_VMCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/vm_policy.h"

#define VM_NAME_MAX     31
#define VM_PATH_MAX     127
#define VM_ARGS_MAX     1023
#define VM_NET_NAME_MAX 15
#define VM_MAX_VCPUS    64
#define VM_MEM_LIMIT    0xfee00000ull /* guest memory stays below the local APIC page */
#define VM_MEM_DEFAULT  (32ull << 20)

/* What an access to guest-physical memory that nothing backs does (vmm/exit/unbacked.h). */
enum unbacked_policy {
    UNBACKED_STOP,   /* stop the VM: the default for the bundled guests */
    UNBACKED_IGNORE, /* reads give all ones, writes are dropped, both counted (as on a PC) */
};

struct vmconfig {
    char name[VM_NAME_MAX + 1];
    char path[VM_PATH_MAX + 1];
    char initrd[VM_PATH_MAX + 1];  /* "" unless the next module is this VM's initramfs */
    char disk[VM_PATH_MAX + 1];    /* "" unless a module after it (and the initrd) is its disk */
    char net[VM_NET_NAME_MAX + 1]; /* the switch it joins, "" for none */
    char args[VM_ARGS_MAX + 1];
    unsigned vcpus;
    uint64_t mem;
    uint64_t timeout_ms;
    struct vm_policy policy; /* halt_poll.max_ns: KVM_CAP_HALT_POLL's per-VM maximum */
    unsigned npins;
    unsigned pins[VM_MAX_VCPUS];
    enum unbacked_policy unbacked;
    bool unbacked_given; /* unbacked= was on the line (Linux guests default to ignore) */
    /* The 8254 PIT and the 8259 PICs, delivering through vCPU 0's LINT0 (vmm/dev/pic.c). */
    bool legacy_pic;
    bool legacy_pic_given; /* legacy_pic= was on the line (Linux guests default to off) */
    /* The I/O APIC's window at IOAPIC_BASE: every PC and every KVM VM has one (vmm/dev/ioapic.c).
     */
    bool ioapic;
};

/* The name of module index's VM when its words give none: vm<index>. */
void vmconfig_default_name(unsigned index, char name[VM_NAME_MAX + 1]);

int vmconfig_parse(const char *cmdline, unsigned index, unsigned max_vcpus, struct vmconfig *out,
                   char *err, size_t errlen);

/*
 * The virtio slots (abi/virtio.h) the configuration asks for, bit n for
 * slot n: net= is VIRTIO_SLOT_NET, disk= VIRTIO_SLOT_BLK.
 */
unsigned vmconfig_virtio_slots(const struct vmconfig *cfg);

/* Does a VM created before already have this name? */
typedef bool (*vmconfig_name_taken)(const char *name, void *ctx);

/*
 * Give the VM of module index a name no earlier VM has: a taken name gets
 * the suffix "-<index>". Returns -1 with the reason, leaving name alone,
 * when the name cannot take its suffix within VM_NAME_MAX characters (it is
 * never cut short) or the suffixed name is taken too.
 */
int vmconfig_unique_name(char name[VM_NAME_MAX + 1], unsigned index, vmconfig_name_taken taken,
                         void *ctx, char *err, size_t errlen);

#endif
