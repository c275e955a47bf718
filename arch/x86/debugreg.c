/* SPDX-License-Identifier: GPL-2.0-only */
#include "arch/x86/debugreg.h"

void debugregs_load(const struct debug_regs *d)
{
    __asm__ volatile("mov %0, %%db0\n\t"
                     "mov %1, %%db1\n\t"
                     "mov %2, %%db2\n\t"
                     "mov %3, %%db3\n\t"
                     "mov %4, %%db6" ::"r"(d->dr[0]),
                     "r"(d->dr[1]), "r"(d->dr[2]), "r"(d->dr[3]), "r"(d->dr6));
}

void debugregs_save(struct debug_regs *d)
{
    __asm__ volatile("mov %%db0, %0\n\t"
                     "mov %%db1, %1\n\t"
                     "mov %%db2, %2\n\t"
                     "mov %%db3, %3\n\t"
                     "mov %%db6, %4"
                     : "=r"(d->dr[0]), "=r"(d->dr[1]), "=r"(d->dr[2]), "=r"(d->dr[3]),
                       "=r"(d->dr6));
}
