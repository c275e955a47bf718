/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/console/profile.h"

#include "drivers/console.h"
#include "lib/format.h"
#include "lib/json.h"
#include "vmm/vm.h"

uint64_t profile_us;

_Static_assert((PROFILE_SLOTS & (PROFILE_SLOTS - 1)) == 0, "PROFILE_SLOTS is a power of 2");

/* Fibonacci hashing of the slot's address: neighbouring grains land far apart. */
static unsigned home_slot(uint64_t key)
{
    return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 52) & (PROFILE_SLOTS - 1);
}

void profile_add(struct profile *p, uint64_t rip, bool user)
{
    uint64_t key = rip & ~(uint64_t)(PROFILE_GRAIN - 1);
    uint64_t flags = spin_lock_irqsave(&p->lock);
    p->samples++;
    if (user) {
        p->user++;
    } else if (!key) {
        p->lost++; /* page 0 is no kernel's code, and 0 marks a free slot */
    } else {
        /* Open addressing, linear probing; slots are never freed while the VM lives. */
        unsigned i = home_slot(key), probes = 0;
        while (probes < PROFILE_SLOTS && p->slots[i].rip && p->slots[i].rip != key) {
            i = (i + 1) & (PROFILE_SLOTS - 1);
            probes++;
        }
        if (probes == PROFILE_SLOTS) {
            p->lost++;
        } else {
            p->slots[i].rip = key;
            p->slots[i].count++;
        }
    }
    spin_unlock_irqrestore(&p->lock, flags);
}

const struct profile_slot *profile_next(const struct profile *p, unsigned *cursor)
{
    for (; *cursor < PROFILE_SLOTS; (*cursor)++) {
        if (p->slots[*cursor].rip)
            return &p->slots[(*cursor)++];
    }
    return 0;
}

/* A line of RIPs stays well under the console's 1024 bytes: 32 of about 28 each. */
#define RIPS_PER_LINE 32

void profile_print(const struct vm *vm, const struct profile *p, uint64_t period_us)
{
    if (!p)
        return;
    char buf[1024];
    struct json j;
    json_begin(&j, buf, sizeof(buf));
    json_str(&j, "vm", vm->cfg.name);
    json_u64(&j, "period_us", period_us);
    json_u64(&j, "grain", PROFILE_GRAIN);
    json_u64(&j, "samples", p->samples);
    json_u64(&j, "user", p->user);
    json_u64(&j, "lost", p->lost);
    console_event("profile", &j);
    unsigned cursor = 0;
    const struct profile_slot *s = profile_next(p, &cursor);
    while (s) {
        json_begin(&j, buf, sizeof(buf));
        json_str(&j, "vm", vm->cfg.name);
        json_object(&j, "rips");
        for (unsigned n = 0; s && n < RIPS_PER_LINE; n++, s = profile_next(p, &cursor)) {
            char rip[20];
            snprintf(rip, sizeof(rip), "%llx", (unsigned long long)s->rip);
            json_u64(&j, rip, s->count);
        }
        json_close(&j);
        console_event("profile_rips", &j);
    }
}
