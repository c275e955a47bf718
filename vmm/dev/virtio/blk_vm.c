/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk as a VM's device (vmm/dev/virtio/blk.h): its disk copied into
 * host RAM when the VM is created, freed with the VM; the `struct device`
 * of slot VIRTIO_SLOT_BLK (its page of the virtio window, through the
 * transport's MMIO callbacks of vmm/dev/virtio/virtio_vm.h).
 */
#include "vmm/dev/virtio/blk_vm.h"

#include "arch/x86/mm.h"
#include "lib/format.h"
#include "lib/json.h"
#include "lib/string.h"
#include "sched/watchdog.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/virtio/virtio_vm.h"

#define COPY_CHUNK (2ull << 20) /* a watchdog beat per piece: a big disk takes seconds emulated */

static uint64_t data_pages(uint64_t sectors)
{
    return (sectors * VIRTIO_BLK_SECTOR + PAGE_SIZE - 1) / PAGE_SIZE;
}

static uint64_t blk_pages(void)
{
    return (sizeof(struct virtio_blk) + PAGE_SIZE - 1) / PAGE_SIZE;
}

/* GET_ID's answer: the disk's file name (the path's last part), cut to 20 bytes. */
static const char *disk_id(const char *path)
{
    const char *slash = strchr(path, '/'), *name = path;
    for (; slash; slash = strchr(slash + 1, '/'))
        name = slash + 1;
    return name;
}

int virtio_blk_create(struct vm *vm, const uint8_t *bytes, uint64_t size, char *err, size_t errlen)
{
    uint64_t sectors = (size + VIRTIO_BLK_SECTOR - 1) / VIRTIO_BLK_SECTOR;
    struct virtio_blk *b = page_alloc_zeroed(blk_pages());
    uint8_t *data =
        sectors ? (uint8_t *)pmm_alloc(&host_pmm, data_pages(sectors), PAGE_SIZE, 0) : NULL;
    if (!b || (sectors && !data)) {
        snprintf(err, errlen, "disk=%s: out of host memory for its %llu KiB", vm->cfg.disk,
                 (unsigned long long)(size >> 10));
        if (b)
            pmm_free(&host_pmm, (uint64_t)b, blk_pages());
        return -1;
    }
    for (uint64_t off = 0; off < size; off += COPY_CHUNK) {
        uint64_t len = size - off < COPY_CHUNK ? size - off : COPY_CHUNK;
        memcpy(data + off, bytes + off, len);
        watchdog_beat();
    }
    memset(data + size, 0, sectors * VIRTIO_BLK_SECTOR - size); /* the last sector's tail */
    struct guest_ram ram = {vm_gpa_ptr(vm, 0, vm->cfg.mem), vm->cfg.mem};
    virtio_blk_init(b, data, sectors, size, disk_id(vm->cfg.disk), &virtio_vm_env, vm,
                    VIRTIO_SLOT_BLK, ram);
    vm->blk = b;
    vm->virtio[VIRTIO_SLOT_BLK] = &b->transport;
    return 0;
}

void virtio_blk_free(struct vm *vm)
{
    struct virtio_blk *b = vm->blk;
    if (!b)
        return;
    if (b->data)
        pmm_free(&host_pmm, (uint64_t)b->data, data_pages(b->sectors));
    pmm_free(&host_pmm, (uint64_t)b, blk_pages());
    vm->blk = NULL;
    vm->virtio[VIRTIO_SLOT_BLK] = NULL;
}

static bool present(const struct vm *vm)
{
    return vm->cfg.disk[0] != '\0';
}

static void *state(struct vm *vm, struct vcpu *v)
{
    (void)v;
    return vm->virtio[VIRTIO_SLOT_BLK];
}

/* Read without the queue's lock: each counter is one aligned word, a snapshot is enough. */
static void stats(const struct dev_entry *d, struct json *j)
{
    const struct virtio_blk *b = d->vm->blk;
    const struct virtio_blk_stats *s = &b->stats;
    json_u64(j, "reads", s->reads);
    json_u64(j, "writes", s->writes);
    json_u64(j, "flushes", s->flushes);
    json_u64(j, "get_ids", s->get_ids);
    json_u64(j, "read_bytes", s->read_bytes);
    json_u64(j, "write_bytes", s->write_bytes);
    json_u64(j, "errors", s->errors);
    json_u64(j, "notifies", b->transport.notifies);
    json_u64(j, "interrupts", b->transport.interrupts);
    json_u64(j, "faults", b->transport.faults);
}

static const struct dev_range mmio[] = {
    {VIRTIO_MMIO_BASE + VIRTIO_SLOT_BLK * VIRTIO_MMIO_SIZE,
     VIRTIO_MMIO_BASE + (VIRTIO_SLOT_BLK + 1) * VIRTIO_MMIO_SIZE - 1}};

const struct device virtio_blk_device = {
    .name = "virtio-blk",
    .what = "the virtio-blk device",
    .present = present,
    .mmio = {mmio, 1, virtio_vm_mmio_read, virtio_vm_mmio_write},
    .state = state,
    .stats = stats,
};
