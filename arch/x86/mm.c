/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/mm.h"

#include "arch/x86/cpu.h"
#include "arch/x86/pagetable.h"
#include "arch/x86/panic.h"
#include "drivers/console.h"
#include "lib/string.h"

#define LOW_MEMORY_END 0x100000ull

struct pmm host_pmm;
uint64_t kernel_cr3;
static struct pagetable host_pt; /* the final map, whose root is kernel_cr3 */

extern char __kernel_start[], __text_end[], __rodata_end[], __kernel_end[];
extern uint32_t boot_efer_nxe;

/*
 * The early map covers 4 GiB from 0; the final one covers all of RAM (and
 * 4 GiB) except page 0.
 */
static uint64_t mapped_start = 0, mapped_end = FOUR_GIB;

const void *phys_map(uint64_t phys, size_t len, void *ctx)
{
    (void)ctx;
    if (phys < mapped_start || phys + len < phys || phys + len > mapped_end)
        return NULL;
    return (const void *)phys;
}

static void *identity(uint64_t phys, void *ctx)
{
    (void)ctx;
    return (void *)phys;
}

void mm_init(const struct boot_info *bi)
{
    struct phys_range reserved[BOOT_MAX_MODULES + 3];
    unsigned n = 0;
    /* Low memory holds the BIOS data, the EBDA and the AP trampoline page. */
    reserved[n++] = (struct phys_range){0, LOW_MEMORY_END};
    reserved[n++] = (struct phys_range){(uint64_t)__kernel_start, (uint64_t)__kernel_end};
    reserved[n++] = (struct phys_range){bi->info_start, bi->info_end};
    for (unsigned i = 0; i < bi->mod_count; i++)
        reserved[n++] = (struct phys_range){bi->mods[i].start, bi->mods[i].end};
    char err[160];
    if (pmm_init(&host_pmm, bi->mmap, bi->mmap_count, reserved, n, identity, 0, err, sizeof(err)))
        panic("page allocator: %s", err);
}

void *page_alloc_zeroed(uint64_t npages)
{
    uint64_t pa = pmm_alloc(&host_pmm, npages, PAGE_SIZE, FOUR_GIB);
    if (!pa)
        return NULL;
    memset((void *)pa, 0, npages * PAGE_SIZE);
    return (void *)pa;
}

static uint64_t alloc_table(void *ctx)
{
    (void)ctx;
    return (uint64_t)page_alloc_zeroed(1);
}

void mm_free_table(uint64_t pa, void *ctx)
{
    (void)ctx;
    pmm_free(&host_pmm, pa, 1);
}

void mm_pagetable_init(struct pagetable *pt, const struct pt_format *fmt)
{
    *pt = (struct pagetable){.fmt = fmt, .alloc_table = alloc_table, .to_virt = identity};
}

static bool is_ram(const struct boot_info *bi, uint64_t start, uint64_t end)
{
    for (unsigned i = 0; i < bi->mmap_count; i++) {
        const struct mem_range *r = &bi->mmap[i];
        if (r->type != MEM_RESERVED && r->type != MEM_BAD && r->base < end &&
            r->base + r->len > start)
            return true;
    }
    return false;
}

static unsigned kernel_page_perms(uint64_t pa)
{
    if (pa < (uint64_t)__text_end)
        return PT_READ | PT_EXEC;
    if (pa < (uint64_t)__rodata_end)
        return PT_READ;
    return PT_READ | PT_WRITE;
}

void mm_init_paging(const struct boot_info *bi)
{
    uint64_t top = FOUR_GIB;
    for (unsigned i = 0; i < bi->mmap_count; i++) {
        uint64_t end = bi->mmap[i].base + bi->mmap[i].len;
        if (bi->mmap[i].type == MEM_USABLE && end > top)
            top = end;
    }
    top = (top + TWO_MIB - 1) & ~(TWO_MIB - 1);

    struct pagetable pt;
    mm_pagetable_init(&pt, boot_efer_nxe ? &pt_format_x86_nx : &pt_format_x86);
    if (pt_init(&pt))
        panic("out of memory for the host page tables");
    uint64_t kstart = (uint64_t)__kernel_start & ~(TWO_MIB - 1);
    uint64_t kend = ((uint64_t)__kernel_end + TWO_MIB - 1) & ~(TWO_MIB - 1);
    for (uint64_t pa = 0; pa < top; pa += TWO_MIB) {
        int rc;
        if (pa >= kstart && pa < kend) {
            /* The kernel's 2 MiB chunks get 4 KiB pages with per-section rights. */
            rc = 0;
            for (uint64_t p = pa; p < pa + TWO_MIB && !rc; p += PAGE_SIZE) {
                if (p == 0)
                    continue;
                unsigned perms = PT_READ | PT_WRITE;
                if (p >= (uint64_t)__kernel_start && p < (uint64_t)__kernel_end)
                    perms = kernel_page_perms(p);
                rc = pt_map(&pt, p, p, PAGE_SIZE, perms, PT_4K);
            }
        } else if (pa == 0) {
            rc = pt_map(&pt, PAGE_SIZE, PAGE_SIZE, TWO_MIB - PAGE_SIZE, PT_READ | PT_WRITE, PT_4K);
        } else {
            unsigned perms = PT_READ | PT_WRITE;
            if (!is_ram(bi, pa, pa + TWO_MIB))
                perms |= PT_UC; /* device memory: the local APIC, I/O APIC, HPET */
            rc = pt_map(&pt, pa, pa, TWO_MIB, perms, PT_2M);
        }
        if (rc)
            panic("cannot build the host page tables at 0x%lx", pa);
    }
    host_pt = pt;
    kernel_cr3 = pt.root;
    write_cr3(kernel_cr3);
    mapped_start = PAGE_SIZE;
    mapped_end = top;
}

int mm_unmap_page(void *page)
{
    if (pt_unmap_page(&host_pt, (uint64_t)page))
        return -1;
    __asm__ volatile("invlpg (%0)" ::"r"(page) : "memory");
    return 0;
}
