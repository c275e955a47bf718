/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/dev/device.h"

#include "lib/format.h"
#include "lib/json.h"
#include "stats/stats.h"
#include "vmm/vcpu/vcpu.h"
#include "vmm/vm.h"

static bool present(const struct device *dev, const struct vm *vm)
{
    return !dev->present || dev->present(vm);
}

static int add_entry(struct vm_devices *t, const struct device *dev, unsigned index, struct vm *vm,
                     struct vcpu *v, char *err, size_t errlen)
{
    if (t->count >= DEV_ENTRIES_MAX) {
        snprintf(err, errlen, "too many devices (device %s)", dev->name);
        return -1;
    }
    struct dev_entry *d = &t->entries[t->count];
    d->dev = dev;
    d->vm = vm;
    d->vcpu = v;
    d->index = index;
    if (dev->state) {
        d->state = dev->state(vm, v);
    } else if (dev->state_size) {
        size_t at = (t->storage_used + 7) & ~(size_t)7;
        if (v || at + dev->state_size > sizeof(t->storage)) {
            snprintf(err, errlen, "no room for the state of device %s", dev->name);
            return -1;
        }
        d->state = t->storage + at;
        t->storage_used = at + dev->state_size;
    }
    t->count++;
    return 0;
}

static void conflict(const char *other, const struct device *dev, const char *space, uint64_t addr,
                     char *err, size_t errlen)
{
    snprintf(err, errlen, "devices %s and %s both claim %s 0x%lx", other, dev->name, space, addr);
}

static const char *entry_name(const struct vm_devices *t, unsigned entry)
{
    return t->entries[entry].dev->name;
}

static int claim_ports(struct vm_devices *t, unsigned entry, char *err, size_t errlen)
{
    const struct device *dev = t->entries[entry].dev;
    if (dev->ports.count && (dev->per_vcpu || entry >= 255)) {
        snprintf(err, errlen, "device %s: ports need a VM-wide device among the first 255",
                 dev->name);
        return -1;
    }
    for (unsigned r = 0; r < dev->ports.count; r++) {
        const struct dev_range *range = &dev->ports.ranges[r];
        for (uint64_t p = range->first; p <= range->last && p < DEV_PORTS; p++) {
            if (t->port[p]) {
                conflict(entry_name(t, t->port[p] - 1u), dev, "port", p, err, errlen);
                return -1;
            }
            t->port[p] = (uint8_t)(entry + 1);
        }
    }
    return 0;
}

/* Insert into a sorted claim array, refusing an overlap with either neighbour. */
static int claim_ranges(struct vm_devices *t, unsigned entry, const struct dev_space_ops *ops,
                        struct dev_claim *claims, unsigned *n, const char *space, char *err,
                        size_t errlen)
{
    const struct device *dev = t->entries[entry].dev;
    for (unsigned r = 0; r < ops->count; r++) {
        const struct dev_range *range = &ops->ranges[r];
        if (*n >= DEV_RANGES_MAX) {
            snprintf(err, errlen, "too many %s ranges (device %s)", space, dev->name);
            return -1;
        }
        unsigned i = 0;
        while (i < *n && claims[i].first <= range->first)
            i++;
        if (i > 0 && claims[i - 1].last >= range->first) {
            conflict(entry_name(t, claims[i - 1].entry), dev, space, range->first, err, errlen);
            return -1;
        }
        if (i < *n && claims[i].first <= range->last) {
            conflict(entry_name(t, claims[i].entry), dev, space, claims[i].first, err, errlen);
            return -1;
        }
        for (unsigned k = *n; k > i; k--)
            claims[k] = claims[k - 1];
        claims[i] = (struct dev_claim){range->first, range->last, (uint16_t)entry};
        (*n)++;
    }
    return 0;
}

/*
 * The MSRs both backends keep in the VMCB or VMCS (backend/svm/svm_msr.h,
 * backend/vmx/vmx_msr.h), served through the seam's msr_read and msr_write:
 * claimed in the map like a device's, so that no device claims one too.
 */
static const struct dev_range vendor_ranges[] = {{MSR_SYSENTER_CS, MSR_SYSENTER_EIP},
                                                 {MSR_PAT, MSR_PAT},
                                                 {MSR_EFER, MSR_SFMASK},
                                                 {MSR_FS_BASE, MSR_KERNEL_GS_BASE}};
static const struct device vendor_msrs = {.name = "vendor", .msrs = {vendor_ranges, 4, 0, 0}};

/* Mark dev's MSRs in the map as owner's (entry + 1, or DEV_MSR_VENDOR). */
static int claim_msrs(struct vm_devices *t, const struct device *dev, unsigned owner, char *err,
                      size_t errlen)
{
    if (dev->msrs.count && owner >= DEV_MSR_VENDOR && dev != &vendor_msrs) {
        snprintf(err, errlen, "device %s: MSRs need a device among the first 254", dev->name);
        return -1;
    }
    for (unsigned r = 0; r < dev->msrs.count; r++) {
        const struct dev_range *range = &dev->msrs.ranges[r];
        for (uint64_t i = range->first; i <= range->last; i++) {
            int b = i >> 32 ? -1 : dev_msr_block((uint32_t)i);
            if (b < 0) {
                snprintf(err, errlen, "device %s: MSR 0x%lx is outside the MSR map", dev->name, i);
                return -1;
            }
            uint8_t *slot = &t->msr[b][i & (DEV_MSR_BLOCK_SIZE - 1)];
            if (*slot) {
                conflict(*slot == DEV_MSR_VENDOR ? vendor_msrs.name : entry_name(t, *slot - 1u),
                         dev, "MSR", i, err, errlen);
                return -1;
            }
            *slot = (uint8_t)owner;
        }
    }
    return 0;
}

/* The hooks' lists (device.h): each has room for what the built-in devices need. */
static int hook(struct vm_devices *t, unsigned entry, char *err, size_t errlen)
{
    struct dev_entry *d = &t->entries[entry];
    const struct device *dev = d->dev;
    if (dev->per_vcpu) {
        if (t->nper_vcpu >= DEV_VCPU_MAX)
            goto full;
        t->per_vcpu[t->nper_vcpu++] = (uint16_t)entry;
    }
    if (dev->expire) {
        if (dev->per_vcpu || t->ntimed >= DEV_TIMED_MAX)
            goto full;
        t->timed[t->ntimed++] = (uint16_t)entry;
    }
    if (dev->intack) {
        if (dev->per_vcpu || t->intack)
            goto full;
        t->intack = d;
    }
    return 0;
full:
    snprintf(err, errlen, "no room for the hooks of device %s", dev->name);
    return -1;
}

static int claim(struct vm_devices *t, unsigned entry, char *err, size_t errlen)
{
    const struct device *dev = t->entries[entry].dev;
    if (claim_ports(t, entry, err, errlen) ||
        claim_ranges(t, entry, &dev->mmio, t->mmio, &t->nmmio, "guest-physical", err, errlen) ||
        claim_msrs(t, dev, entry + 1, err, errlen))
        return -1;
    return 0;
}

int vm_devices_create(struct vm *vm, const struct device *const *list, unsigned n, char *err,
                      size_t errlen)
{
    struct vm_devices *t = &vm->devices;
    if (claim_msrs(t, &vendor_msrs, DEV_MSR_VENDOR, err, errlen))
        return -1;
    if (n > DEV_LIST_MAX) {
        snprintf(err, errlen, "too many devices in the list (%u)", n);
        return -1;
    }
    /* VM-wide devices first: their entry numbers are what the port index holds. */
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned k = 0; k < n; k++) {
            const struct device *dev = list[k];
            if (dev->per_vcpu != (pass == 1) || !present(dev, vm))
                continue;
            unsigned first = t->count;
            unsigned copies = dev->per_vcpu ? vm->nvcpus : 1;
            for (unsigned i = 0; i < copies; i++)
                if (add_entry(t, dev, k, vm, dev->per_vcpu ? vm->vcpus[i] : 0, err, errlen))
                    return -1;
            if (copies && (claim(t, first, err, errlen) || hook(t, first, err, errlen)))
                return -1;
            if (copies)
                t->of_index[k] = (uint16_t)(first + 1);
        }
    }
    vm_devices_reset_all(vm);
    return 0;
}

void vm_devices_reset_all(struct vm *vm)
{
    struct vm_devices *t = &vm->devices;
    for (unsigned i = 0; i < t->count; i++)
        if (t->entries[i].dev->reset)
            t->entries[i].dev->reset(&t->entries[i]);
}

/* v's entry of the per-vCPU device k. */
static struct dev_entry *vcpu_entry(struct vm_devices *t, unsigned k, const struct vcpu *v)
{
    return &t->entries[t->per_vcpu[k] + v->hw.id];
}

void vm_devices_init_vcpu(struct vm *vm, struct vcpu *v)
{
    struct vm_devices *t = &vm->devices;
    for (unsigned k = 0; k < t->nper_vcpu; k++) {
        struct dev_entry *d = vcpu_entry(t, k, v);
        if (d->dev->init)
            d->dev->init(d);
    }
}

void vm_devices_vcpu_load(struct vcpu *v)
{
    struct vm_devices *t = &v->vm->devices;
    for (unsigned k = 0; k < t->nper_vcpu; k++) {
        struct dev_entry *d = vcpu_entry(t, k, v);
        if (d->dev->vcpu_load)
            d->dev->vcpu_load(d);
    }
}

void vm_devices_vcpu_put(struct vcpu *v, enum sched_run_result r)
{
    struct vm_devices *t = &v->vm->devices;
    for (unsigned k = 0; k < t->nper_vcpu; k++) {
        struct dev_entry *d = vcpu_entry(t, k, v);
        if (d->dev->vcpu_put)
            d->dev->vcpu_put(d, r);
    }
}

void vm_devices_tsc_written(struct vcpu *v)
{
    struct vm_devices *t = &v->vm->devices;
    for (unsigned k = 0; k < t->nper_vcpu; k++) {
        struct dev_entry *d = vcpu_entry(t, k, v);
        if (d->dev->tsc_written)
            d->dev->tsc_written(d);
    }
}

bool vm_devices_expire(struct vm *vm, uint64_t now)
{
    struct vm_devices *t = &vm->devices;
    bool event = false;
    for (unsigned i = 0; i < t->ntimed; i++) {
        struct dev_entry *d = &t->entries[t->timed[i]];
        uint64_t due = __atomic_load_n(&d->deadline, __ATOMIC_ACQUIRE);
        if (due && now >= due)
            event |= d->dev->expire(d, now);
    }
    return event;
}

bool dev_set_deadline(struct dev_entry *d, uint64_t when)
{
    if (when == d->deadline)
        return false;
    __atomic_store_n(&d->deadline, when, __ATOMIC_RELEASE);
    return true;
}

void vm_devices_deadline_moved(struct vm *vm)
{
    struct vcpu *v = vm->vcpus[0];
    uint64_t flags = spin_lock_irqsave(&v->se.lock);
    vcpu_timer_update(v);
    spin_unlock_irqrestore(&v->se.lock, flags);
}

uint8_t vm_devices_intack(struct vm *vm)
{
    struct dev_entry *d = vm->devices.intack;
    return d->dev->intack(d);
}

bool vm_devices_stats(struct vm *vm, struct json *j)
{
    struct vm_devices *t = &vm->devices;
    bool any = false;
    for (unsigned i = 0; i < t->count; i++) {
        const struct device *dev = t->entries[i].dev;
        if (!dev->stats || (i > 0 && t->entries[i - 1].dev == dev))
            continue;
        /*
         * One object per device, a per-vCPU one's rows in it once per entry; read
         * without the devices' locks: each counter is one aligned word.
         */
        json_object(j, dev->name);
        for (unsigned k = i; k < t->count && t->entries[k].dev == dev; k++)
            stats_event_json(j, dev->stats, t->entries[k].state);
        size_t len = j->len;
        json_close_or_drop(j);
        any |= j->len > len;
    }
    return any;
}

/* The claim holding addr (binary search), or NULL. */
static const struct dev_claim *find(const struct dev_claim *claims, unsigned n, uint64_t addr)
{
    unsigned lo = 0, hi = n; /* the answer is below hi: claims[lo..hi) start at or below addr */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (claims[mid].first <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || claims[lo - 1].last < addr)
        return 0;
    return &claims[lo - 1];
}

/* Entry `entry`'s device for vCPU v: a per-vCPU device's entry names its vCPU 0's. */
static struct dev_entry *entry_of(struct vm_devices *t, unsigned entry, struct vcpu *v)
{
    struct dev_entry *d = &t->entries[entry];
    return d->dev->per_vcpu ? d + v->hw.id : d;
}

struct dev_entry *vm_devices_find_mmio(struct vm *vm, struct vcpu *v, uint64_t gpa)
{
    const struct dev_claim *c = find(vm->devices.mmio, vm->devices.nmmio, gpa);
    return c ? entry_of(&vm->devices, c->entry, v) : 0;
}

struct dev_entry *vm_devices_find_msr(struct vm *vm, struct vcpu *v, uint32_t index)
{
    unsigned owner = vm_devices_msr_owner(&vm->devices, index);
    return owner && owner != DEV_MSR_VENDOR ? entry_of(&vm->devices, owner - 1, v) : 0;
}

/* addr's offset in the device's range that holds it. */
static uint64_t offset_in(const struct dev_space_ops *ops, uint64_t addr)
{
    for (unsigned r = 0; r < ops->count; r++)
        if (addr >= ops->ranges[r].first && addr <= ops->ranges[r].last)
            return addr - ops->ranges[r].first;
    return 0;
}

static enum dev_result call(struct dev_entry *d, struct vcpu *v, const struct dev_space_ops *ops,
                            bool write, struct dev_access *a)
{
    dev_access_fn fn = write ? ops->write : ops->read;
    if (!fn)
        return DEV_NOT_MINE;
    a->offset = offset_in(ops, a->addr);
    return fn(d, v, a);
}

enum dev_result vm_devices_port(struct vcpu *v, uint16_t port, unsigned size, bool write,
                                uint32_t *value)
{
    struct dev_entry *d = vm_devices_find_port(&v->vm->devices, port);
    if (!d)
        return DEV_NOT_MINE;
    struct dev_access a = {.addr = port, .size = size, .value = write ? *value : 0};
    enum dev_result r = call(d, v, &d->dev->ports, write, &a);
    if (r == DEV_DONE && !write)
        *value = (uint32_t)a.value;
    return r;
}

enum dev_result vm_devices_msr(struct vcpu *v, uint32_t index, bool write, uint64_t *value)
{
    struct dev_entry *d = vm_devices_find_msr(v->vm, v, index);
    if (!d)
        return DEV_NOT_MINE;
    struct dev_access a = {.addr = index, .size = 8, .value = write ? *value : 0};
    enum dev_result r = call(d, v, &d->dev->msrs, write, &a);
    if (r == DEV_DONE && !write)
        *value = a.value;
    return r;
}

enum dev_result dev_mmio(struct dev_entry *d, struct vcpu *v, bool write, struct dev_access *a)
{
    return call(d, v, &d->dev->mmio, write, a);
}
