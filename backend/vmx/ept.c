/* SPDX-License-Identifier: GPL-2.0-only */
#include "backend/vmx/ept.h"

#define EPT_R        (1ull << 0)
#define EPT_W        (1ull << 1)
#define EPT_X        (1ull << 2)
#define EPT_MT_SHIFT 3
#define EPT_MT_UC    0ull
#define EPT_MT_WB    6ull
#define EPT_MT_MASK  (7ull << EPT_MT_SHIFT)
#define EPT_LARGE    (1ull << 7)
#define EPTP_WALK4   (3ull << 3) /* page-walk length minus one */
#define EPTP_AD      (1ull << 6)

static uint64_t ept_table(uint64_t pa)
{
    return pa | EPT_R | EPT_W | EPT_X;
}

static uint64_t ept_leaf(uint64_t pa, unsigned perms, enum pt_level level)
{
    uint64_t e = pa;
    if (perms & (PT_READ | PT_WRITE))
        e |= EPT_R;
    if (perms & PT_WRITE)
        e |= EPT_W;
    if (perms & PT_EXEC)
        e |= EPT_X;
    e |= ((perms & PT_UC) ? EPT_MT_UC : EPT_MT_WB) << EPT_MT_SHIFT;
    if (level != PT_4K)
        e |= EPT_LARGE;
    return e;
}

static bool ept_present(uint64_t e)
{
    return e & (EPT_R | EPT_W | EPT_X);
}

static bool ept_large(uint64_t e)
{
    return e & EPT_LARGE;
}

static unsigned ept_perms(uint64_t e)
{
    unsigned p = 0;
    if (e & EPT_R)
        p |= PT_READ;
    if (e & EPT_W)
        p |= PT_WRITE;
    if (e & EPT_X)
        p |= PT_EXEC;
    if ((e & EPT_MT_MASK) == EPT_MT_UC << EPT_MT_SHIFT)
        p |= PT_UC;
    return p;
}

const struct pt_format pt_format_ept = {ept_table, ept_leaf, ept_present, ept_large, ept_perms};

uint64_t ept_pointer(uint64_t root, bool accessed_dirty)
{
    return root | EPTP_WALK4 | EPT_MT_WB | (accessed_dirty ? EPTP_AD : 0);
}
