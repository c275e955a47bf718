/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device model (docs/architecture.md): each VM has a table of
 * devices. A device claims port ranges, guest-physical MMIO ranges and MSR
 * ranges, each with read and write callbacks that get the vCPU and the
 * access as decoded; it may have a reset (power-on, at creation, and the
 * unit tests') and, per vCPU, an INIT state, hooks for its vCPU's
 * life (loaded on a CPU, put off it, its TSC written), timed work on vCPU 0's
 * timer, and statistics rows. The run loop calls the hooks, never a device.
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
#include "sched/entity.h"
#include "vmm/vmconfig.h"

struct vm;
struct vcpu;
struct mmio_op;
struct json;
struct stats_table;

#define DEV_VM_MAX      24 /* VM-wide devices (the port index holds their numbers) */
#define DEV_VCPU_MAX    4  /* per-vCPU devices */
#define DEV_TIMED_MAX   2  /* VM-wide devices with an expire hook */
#define DEV_ENTRIES_MAX (DEV_VM_MAX + DEV_VCPU_MAX * VM_MAX_VCPUS)
#define DEV_RANGES_MAX  32  /* MMIO claims per VM */
#define DEV_STATE_BYTES 768 /* the VM-wide devices' own state, all together */
#define DEV_LIST_MAX    32  /* the devices of the list a table is built from */
#define DEV_PORTS       0x10000

/* What a callback answers. */
enum dev_result {
    DEV_DONE,
    DEV_NOT_MINE, /* ports: counted as unhandled I/O; MSRs: #GP, as DEV_FAULT */
    DEV_FAULT,    /* MSRs: #GP */
    DEV_AGAIN,    /* ports: not taken now (COM1, the console full): the guest's access waits */
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
    /* Power-on state: at creation (every device, VM-wide and per vCPU) and the unit tests'. */
    void (*reset)(struct dev_entry *d);
    /* Per vCPU: INIT's state, under the vCPU's lock (KVM's kvm_vcpu_reset with init_event); NULL:
     * INIT keeps it. */
    void (*init)(struct dev_entry *d);
    /*
     * Per vCPU, on its CPU: it is loaded on the CPU (vcpu_run's start) and
     * put off it (r: why it leaves), KVM's vcpu_load and vcpu_put; once per
     * switch, never per exit. And the guest wrote its TSC (vcpu_write_tsc).
     */
    void (*vcpu_load)(struct dev_entry *d);
    void (*vcpu_put)(struct dev_entry *d, enum sched_run_result r);
    void (*tsc_written)(struct dev_entry *d);
    /*
     * VM-wide, timed work on vCPU 0's timer: its next expiry is d->deadline
     * (dev_set_deadline); at or after it, expire runs (no lock held) and
     * answers whether it made an event pending for vCPU 0 (vCPU 0 is told).
     */
    bool (*expire)(struct dev_entry *d, uint64_t now);
    /*
     * VM-wide: the interrupt acknowledge of the source of vm->extint (the
     * 8259's), at vCPU 0's entry that injects it, under vCPU 0's lock.
     */
    uint8_t (*intack)(struct dev_entry *d);
    /* Its statistics' rows, over its state (virtio's: the device, its transport first). */
    const struct stats_table *stats;
};

struct dev_entry {
    const struct device *dev;
    struct vm *vm;
    struct vcpu *vcpu; /* per-vCPU devices: whose; else NULL */
    void *state;
    unsigned index;    /* the device's place in the list the table was built from */
    uint64_t deadline; /* an expire hook's next expiry, host TSC (0: none); vCPU 0 reads it */
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
    /* The hooks' entries: per-vCPU devices (their vCPU 0 entries), timed ones, the INTA's. */
    uint16_t per_vcpu[DEV_VCPU_MAX], timed[DEV_TIMED_MAX];
    unsigned nper_vcpu, ntimed;
    struct dev_entry *intack;
    uint16_t of_index[DEV_LIST_MAX]; /* a list place's (vCPU 0) entry + 1; 0: the VM lacks it */
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
 * Build the VM's table from `list` (its vCPUs exist already) and reset every
 * device, VM-wide and per vCPU, to its power-on state. 0, or -1 with why in
 * err (two devices claim one address: both names; or a table is full).
 */
int vm_devices_create(struct vm *vm, const struct device *const *list, unsigned n, char *err,
                      size_t errlen);

/* INIT of vCPU v (vmm/vcpu/vcpu_events.c, under its lock): its per-vCPU devices' init hooks. */
void vm_devices_init_vcpu(struct vm *vm, struct vcpu *v);

/* The vCPU life hooks of v's per-vCPU devices (vmm/vcpu/vcpu.c), on v's CPU. */
void vm_devices_vcpu_load(struct vcpu *v);
void vm_devices_vcpu_put(struct vcpu *v, enum sched_run_result r);
void vm_devices_tsc_written(struct vcpu *v);

/*
 * The timed devices' earliest deadline, host TSC (0: none), which vCPU 0's
 * timer serves; read without a lock.
 */
static inline uint64_t vm_devices_deadline(const struct vm_devices *t)
{
    uint64_t first = 0;
    for (unsigned i = 0; i < t->ntimed; i++) {
        uint64_t d = __atomic_load_n(&t->entries[t->timed[i]].deadline, __ATOMIC_ACQUIRE);
        if (d && (!first || d < first))
            first = d;
    }
    return first;
}

/*
 * vCPU 0's timer at now (host TSC; no lock held): the due devices' expire
 * hooks. True if one made an event pending for vCPU 0.
 */
bool vm_devices_expire(struct vm *vm, uint64_t now);

/*
 * A timed device's next expiry (host TSC, 0 none), under its own lock. True
 * if it moved: then vm_devices_deadline_moved, with no device lock held.
 */
bool dev_set_deadline(struct dev_entry *d, uint64_t when);

/* vCPU 0's timer takes the timed devices' new deadline (takes vCPU 0's lock). */
void vm_devices_deadline_moved(struct vm *vm);

/* vCPU 0's interrupt acknowledge of vm->extint's source: the vector (device.h intack). */
uint8_t vm_devices_intack(struct vm *vm);

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

/*
 * The VM-wide device at place index of the table's list (enum
 * builtin_device), or NULL if the VM does not have it: how devices wired to
 * each other find one another's state (the PIT's and COM1's IRQ lines into
 * the PIC).
 */
static inline struct dev_entry *vm_devices_entry(struct vm_devices *t, unsigned index)
{
    unsigned n = t->of_index[index];
    return n ? &t->entries[n - 1] : 0;
}

static inline struct dev_entry *vm_devices_find_port(struct vm_devices *t, uint16_t port)
{
    uint8_t n = t->port[port];
    return n ? &t->entries[n - 1] : 0;
}

/* Accesses through the table: DEV_NOT_MINE where nobody claims the address. */
enum dev_result vm_devices_port(struct vcpu *v, uint16_t port, unsigned size, bool write,
                                uint32_t *value);
enum dev_result vm_devices_msr(struct vcpu *v, uint32_t index, bool write, uint64_t *value);

/* A decoded access to d's MMIO range (vmm/exit/npf.c decodes it): d's callback. */
enum dev_result dev_mmio(struct dev_entry *d, struct vcpu *v, bool write, struct dev_access *a);

#endif
