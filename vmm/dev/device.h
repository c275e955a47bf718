/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device model (docs/architecture.md): each VM has a table of
 * devices. A device claims port ranges, guest-physical MMIO ranges and MSR
 * ranges, each with read and write callbacks that get the vCPU and the
 * access as decoded; it may have a reset (a VM-wide device's at creation, a
 * per-vCPU device's at INIT too, and the unit tests') and statistics rows.
 * Its state lives in the device: a slice of the table's own storage, or,
 * for the few whose state the rest of vmm/ reads directly (the 16550, the
 * local APIC, the per-vCPU MSR keepers), where its `state` hook says.
 *
 * A device that exists once per vCPU (per_vcpu: the local APIC) has an
 * entry per vCPU; its claims are made once and an access reaches the
 * entry of the vCPU that made it. Lookup: an owner number per port (64 Ki
 * bytes per VM) and per MSR (the MSR map: DEV_MSR_BLOCKS blocks of 8 Ki,
 * where every MSR a guest may reach lies), a sorted range array (binary
 * search) for MMIO. The MSRs the vendor keeps in the VMCB or VMCS are
 * claimed in the same map, by DEV_MSR_VENDOR. Two owners that claim one
 * address are refused when the VM is created. An access nobody claims is
 * the caller's: unhandled I/O for ports, the unbacked= policy for MMIO, #GP
 * for MSRs.
 */
#ifndef POLLUX_VMM_DEV_DEVICE_H
#define POLLUX_VMM_DEV_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/virt.h"
#include "vmm/vmconfig.h"

struct vm;
struct vcpu;
struct mmio_op;
struct json;
struct stats_table;

#define DEV_VM_MAX      24 /* VM-wide devices (the port index holds their numbers) */
#define DEV_VCPU_MAX    4  /* per-vCPU devices */
#define DEV_ENTRIES_MAX (DEV_VM_MAX + DEV_VCPU_MAX * VM_MAX_VCPUS)
#define DEV_RANGES_MAX  32  /* MMIO claims per VM */
#define DEV_STATE_BYTES 256 /* the VM-wide devices' own state, all together */
#define DEV_PORTS       0x10000

/* What a callback answers. */
enum dev_result {
    DEV_DONE,
    DEV_NOT_MINE, /* ports: counted as unhandled I/O; MSRs: #GP, as DEV_FAULT */
    DEV_FAULT,    /* MSRs: #GP */
};

/* An MSR rule's answer (vmm/dev/kvm_pv.h, vmm/dev/pc_msr_state.h) as a device's. */
static inline enum dev_result dev_result_of_msr(enum msr_result r)
{
    return r == MSR_DONE ? DEV_DONE : r == MSR_FAULT ? DEV_FAULT : DEV_NOT_MINE;
}

/* One access, as decoded. */
struct dev_access {
    uint64_t addr;            /* the port, guest-physical address or MSR index */
    uint64_t offset;          /* addr - its claimed range's first (xAPIC page: unclaimed, 0) */
    unsigned size;            /* bytes: ports 1, 2 or 4; MMIO the operand's; MSRs 8 */
    uint64_t value;           /* a write's value; a read leaves its result here */
    const struct mmio_op *op; /* MMIO: the decoder's operand, else NULL */
};

struct dev_entry;

typedef enum dev_result (*dev_access_fn)(struct dev_entry *d, struct vcpu *v, struct dev_access *a);

/* Inclusive ranges: [first, last]. */
struct dev_range {
    uint64_t first, last;
};

struct dev_space_ops {
    const struct dev_range *ranges;
    unsigned count;
    dev_access_fn read, write;
};

struct device {
    const char *name; /* short, for messages: "com1", "lapic" */
    const char *what; /* MMIO: the decoder's failure message ("the local APIC") */
    bool per_vcpu;
    bool (*present)(const struct vm *vm);   /* NULL: every VM has it */
    struct dev_space_ops ports, mmio, msrs; /* what it claims */
    size_t state_size;                      /* its own state, in the table (VM-wide only) */
    /* Or where its state lives instead (NULL: the table's slice above). */
    void *(*state)(struct vm *vm, struct vcpu *v);
    /* VM-wide: power-on state, at creation. Per vCPU: INIT's, under the vCPU's lock. */
    void (*reset)(struct dev_entry *d);
    /* Its statistics' rows, over its state (virtio's: the device, its transport first). */
    const struct stats_table *stats;
};

struct dev_entry {
    const struct device *dev;
    struct vm *vm;
    struct vcpu *vcpu; /* per-vCPU devices: whose; else NULL */
    void *state;
    unsigned index; /* the device's place in the list the table was built from */
};

/*
 * The MSR map's blocks: 0-0x1fff, 0xc0000000-0xc0001fff, 0xc0010000-0xc0011fff
 * (as SVM's permission map splits MSRs) and KVM's, around 0x4b564d00-0x4b564dff.
 * A claim outside them is refused: an MSR there is nobody's.
 */
#define DEV_MSR_BLOCKS     4
#define DEV_MSR_BLOCK_SIZE 0x2000u
#define DEV_MSR_VENDOR     0xff /* the map's owner of the vendor's MSRs (vmm/exit/msr.h) */

static inline int dev_msr_block(uint32_t index)
{
    switch (index & ~(DEV_MSR_BLOCK_SIZE - 1)) {
    case 0:
        return 0;
    case 0xc0000000u:
        return 1;
    case 0xc0010000u:
        return 2;
    case 0x4b564000u:
        return 3;
    default:
        return -1;
    }
}

struct dev_claim {
    uint64_t first, last;
    uint16_t entry; /* a per-vCPU device's: its vCPU 0 entry */
};

struct vm_devices {
    struct dev_entry entries[DEV_ENTRIES_MAX];
    unsigned count;
    struct dev_claim mmio[DEV_RANGES_MAX]; /* sorted by first */
    unsigned nmmio;
    uint8_t port[DEV_PORTS]; /* entry + 1 of the port's device, 0 for none */
    /* The MSR map: entry + 1 of the MSR's device, DEV_MSR_VENDOR, or 0 for none. */
    uint8_t msr[DEV_MSR_BLOCKS][DEV_MSR_BLOCK_SIZE];
    _Alignas(8) uint8_t storage[DEV_STATE_BYTES];
    size_t storage_used;
};

/* The built-in devices (vmm/dev/builtin.c), in the order they are created. */
extern const struct device *const builtin_devices[];
extern const unsigned builtin_device_count;

/*
 * Build the VM's table from `list` (its vCPUs exist already) and reset its
 * VM-wide devices (a per-vCPU device's power-on state is its vCPU's, set up
 * with it; its reset hook is INIT's). 0, or -1 with why in err (two devices claim one address: both
 * names; or a table is full).
 */
int vm_devices_create(struct vm *vm, const struct device *const *list, unsigned n, char *err,
                      size_t errlen);

/* A per-vCPU device's entry for vCPU v: INIT (vmm/vcpu/vcpu.c) resets them. */
void vm_devices_reset_vcpu(struct vm *vm, struct vcpu *v);

/* Every device's reset, VM-wide and per vCPU (creation, the unit tests). */
void vm_devices_reset_all(struct vm *vm);

/* Each device's rows, as an object named after it (none if no row is present); false if none. */
bool vm_devices_stats(struct vm *vm, struct json *j);

/* The MSR's owner in the map: entry + 1, DEV_MSR_VENDOR, or 0 for nobody. */
static inline unsigned vm_devices_msr_owner(const struct vm_devices *t, uint32_t index)
{
    int b = dev_msr_block(index);
    return b < 0 ? 0 : t->msr[b][index & (DEV_MSR_BLOCK_SIZE - 1)];
}

/* The entry claiming an address for vCPU v, or NULL (an MSR of the vendor's included). */
struct dev_entry *vm_devices_find_mmio(struct vm *vm, struct vcpu *v, uint64_t gpa);
struct dev_entry *vm_devices_find_msr(struct vm *vm, struct vcpu *v, uint32_t index);

static inline struct dev_entry *vm_devices_find_port(struct vm_devices *t, uint16_t port)
{
    uint8_t n = t->port[port];
    return n ? &t->entries[n - 1] : 0;
}

/* Accesses through the table: DEV_NOT_MINE where nobody claims the address. */
enum dev_result vm_devices_port(struct vcpu *v, uint16_t port, unsigned size, bool write,
                                uint32_t *value);
enum dev_result vm_devices_msr(struct vcpu *v, uint32_t index, bool write, uint64_t *value);

/*
 * A nested page fault at d's MMIO range: decode the instruction (the VM
 * stops, bad-state, if it cannot be), run d's callback, give a load its
 * value and step past it.
 */
struct exit_record;
void vm_devices_mmio(struct vcpu *v, const struct exit_record *e, struct dev_entry *d);

#endif
