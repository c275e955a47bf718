/* SPDX-License-Identifier: GPL-2.0-only */
/* The VMCB layout (AMD APM vol. 2, appendix B) and SVM constants. */
#ifndef POLLUX_ARCH_X86_VMCB_H
#define POLLUX_ARCH_X86_VMCB_H

#include <stdint.h>

struct vmcb_seg {
    uint16_t selector;
    uint16_t attrib; /* type[3:0] S[4] DPL[6:5] P[7] AVL[8] L[9] DB[10] G[11] */
    uint32_t limit;
    uint64_t base;
};

struct vmcb {
    /* Control area, 0x000 - 0x3ff. */
    uint32_t intercept_cr;         /* 0x000 */
    uint32_t intercept_dr;         /* 0x004 */
    uint32_t intercept_exceptions; /* 0x008 */
    uint32_t intercept_misc1;      /* 0x00c */
    uint32_t intercept_misc2;      /* 0x010 */
    uint32_t intercept_misc3;      /* 0x014 */
    uint8_t reserved_018[0x03c - 0x018];
    uint16_t pause_filter_thresh; /* 0x03c */
    uint16_t pause_filter_count;  /* 0x03e */
    uint64_t iopm_base_pa;        /* 0x040 */
    uint64_t msrpm_base_pa;       /* 0x048 */
    uint64_t tsc_offset;          /* 0x050 */
    uint32_t asid;                /* 0x058 */
    uint8_t tlb_control;          /* 0x05c */
    uint8_t reserved_05d[3];
    uint64_t vintr;            /* 0x060: V_TPR, V_IRQ, V_INTR_PRIO, V_INTR_MASKING, vector */
    uint64_t interrupt_shadow; /* 0x068 */
    uint64_t exit_code;        /* 0x070 */
    uint64_t exit_info1;       /* 0x078 */
    uint64_t exit_info2;       /* 0x080 */
    uint64_t exit_int_info;    /* 0x088 */
    uint64_t np_enable;        /* 0x090 */
    uint8_t reserved_098[0x0a8 - 0x098];
    uint64_t event_inj;  /* 0x0a8 */
    uint64_t n_cr3;      /* 0x0b0 */
    uint64_t lbr_virt;   /* 0x0b8 */
    uint32_t clean_bits; /* 0x0c0 */
    uint32_t reserved_0c4;
    uint64_t next_rip; /* 0x0c8 */
    uint8_t reserved_0d0[0x400 - 0x0d0];
    /* State save area, 0x400 - */
    struct vmcb_seg es, cs, ss, ds, fs, gs, gdtr, ldtr, idtr, tr; /* 0x400 - 0x49f */
    uint8_t reserved_4a0[0x4cb - 0x4a0];
    uint8_t cpl; /* 0x4cb */
    uint32_t reserved_4cc;
    uint64_t efer; /* 0x4d0 */
    uint8_t reserved_4d8[0x548 - 0x4d8];
    uint64_t cr4;    /* 0x548 */
    uint64_t cr3;    /* 0x550 */
    uint64_t cr0;    /* 0x558 */
    uint64_t dr7;    /* 0x560 */
    uint64_t dr6;    /* 0x568 */
    uint64_t rflags; /* 0x570 */
    uint64_t rip;    /* 0x578 */
    uint8_t reserved_580[0x5d8 - 0x580];
    uint64_t rsp; /* 0x5d8 */
    uint8_t reserved_5e0[0x5f8 - 0x5e0];
    uint64_t rax;            /* 0x5f8 */
    uint64_t star;           /* 0x600 */
    uint64_t lstar;          /* 0x608 */
    uint64_t cstar;          /* 0x610 */
    uint64_t sfmask;         /* 0x618 */
    uint64_t kernel_gs_base; /* 0x620 */
    uint64_t sysenter_cs;    /* 0x628 */
    uint64_t sysenter_esp;   /* 0x630 */
    uint64_t sysenter_eip;   /* 0x638 */
    uint64_t cr2;            /* 0x640 */
    uint8_t reserved_648[0x668 - 0x648];
    uint64_t g_pat; /* 0x668 */
    uint8_t reserved_670[0x1000 - 0x670];
};

_Static_assert(sizeof(struct vmcb) == 4096, "VMCB is one page");
_Static_assert(__builtin_offsetof(struct vmcb, next_rip) == 0x0c8, "VMCB next_rip");
_Static_assert(__builtin_offsetof(struct vmcb, cpl) == 0x4cb, "VMCB cpl");
_Static_assert(__builtin_offsetof(struct vmcb, rsp) == 0x5d8, "VMCB rsp");
_Static_assert(__builtin_offsetof(struct vmcb, g_pat) == 0x668, "VMCB g_pat");

/* intercept_cr: bits 0-15 reads of CR0-CR15, bits 16-31 writes */
#define SVM_INTERCEPT_CR8_WRITE (1u << 24)
/* intercept_misc1 */
#define SVM_INTERCEPT_INTR     (1u << 0)
#define SVM_INTERCEPT_NMI      (1u << 1)
#define SVM_INTERCEPT_VINTR    (1u << 4)
#define SVM_INTERCEPT_CPUID    (1u << 18)
#define SVM_INTERCEPT_IRET     (1u << 20)
#define SVM_INTERCEPT_INVD     (1u << 22)
#define SVM_INTERCEPT_PAUSE    (1u << 23)
#define SVM_INTERCEPT_HLT      (1u << 24)
#define SVM_INTERCEPT_INVLPGA  (1u << 26)
#define SVM_INTERCEPT_IOIO     (1u << 27)
#define SVM_INTERCEPT_MSR      (1u << 28)
#define SVM_INTERCEPT_SHUTDOWN (1u << 31)
/* intercept_misc2 */
#define SVM_INTERCEPT_VMRUN   (1u << 0)
#define SVM_INTERCEPT_VMMCALL (1u << 1)
#define SVM_INTERCEPT_VMLOAD  (1u << 2)
#define SVM_INTERCEPT_VMSAVE  (1u << 3)
#define SVM_INTERCEPT_STGI    (1u << 4)
#define SVM_INTERCEPT_CLGI    (1u << 5)
#define SVM_INTERCEPT_SKINIT  (1u << 6)
#define SVM_INTERCEPT_WBINVD  (1u << 9)
#define SVM_INTERCEPT_MONITOR (1u << 10)
#define SVM_INTERCEPT_MWAIT   (1u << 11)
#define SVM_INTERCEPT_XSETBV  (1u << 13)
#define SVM_INTERCEPT_RDPRU   (1u << 14)
/* intercept_misc3 */
#define SVM_INTERCEPT_IDLE_HLT (1u << 6)

#define SVM_VINTR_V_TPR        0xfull /* the guest's CR8 */
#define SVM_VINTR_V_IRQ        (1ull << 8)
#define SVM_VINTR_PRIO_SHIFT   16
#define SVM_VINTR_PRIO_MAX     (0xfull << SVM_VINTR_PRIO_SHIFT)
#define SVM_VINTR_IGN_TPR      (1ull << 20)
#define SVM_VINTR_MASKING      (1ull << 24)
#define SVM_VINTR_VECTOR_SHIFT 32
#define SVM_VINTR_VECTOR_MASK  (0xffull << SVM_VINTR_VECTOR_SHIFT)

/* Exit codes. */
#define SVM_EXIT_WRITE_CR8 0x018
#define SVM_EXIT_EXCP_BASE 0x040
#define SVM_EXIT_INTR      0x060
#define SVM_EXIT_NMI       0x061
#define SVM_EXIT_SMI       0x062
#define SVM_EXIT_INIT      0x063
#define SVM_EXIT_VINTR     0x064
#define SVM_EXIT_CPUID     0x072
#define SVM_EXIT_IRET      0x074
#define SVM_EXIT_INVD      0x076
#define SVM_EXIT_PAUSE     0x077
#define SVM_EXIT_HLT       0x078
#define SVM_EXIT_INVLPGA   0x07a
#define SVM_EXIT_IOIO      0x07b
#define SVM_EXIT_MSR       0x07c
#define SVM_EXIT_SHUTDOWN  0x07f
#define SVM_EXIT_VMRUN     0x080
#define SVM_EXIT_VMMCALL   0x081
#define SVM_EXIT_VMLOAD    0x082
#define SVM_EXIT_VMSAVE    0x083
#define SVM_EXIT_STGI      0x084
#define SVM_EXIT_CLGI      0x085
#define SVM_EXIT_SKINIT    0x086
#define SVM_EXIT_WBINVD    0x089
#define SVM_EXIT_MONITOR   0x08a
#define SVM_EXIT_MWAIT     0x08b
#define SVM_EXIT_XSETBV    0x08d
#define SVM_EXIT_RDPRU     0x08e
#define SVM_EXIT_IDLE_HLT  0x0a6
#define SVM_EXIT_NPF       0x400
#define SVM_EXIT_INVALID   0xffffffffu /* compare the low 32 bits: QEMU writes a 32-bit -1 */

/* EVENTINJ / EXITINTINFO */
#define SVM_EVTINJ_VALID      (1u << 31)
#define SVM_EVTINJ_VALID_ERR  (1u << 11)
#define SVM_EVTINJ_TYPE_INTR  (0u << 8)
#define SVM_EVTINJ_TYPE_NMI   (2u << 8)
#define SVM_EVTINJ_TYPE_EXEPT (3u << 8)
#define SVM_EVTINJ_TYPE_MASK  (7u << 8)

/* MOV CR exit_info1 with decode assists: bit 63 says bits 3:0 hold the GPR */
#define SVM_CR_EXIT_VALID (1ull << 63)
#define SVM_CR_EXIT_GPR   0xfull

/* IOIO exit_info1 */
#define SVM_IOIO_IN   (1u << 0)
#define SVM_IOIO_STR  (1u << 2)
#define SVM_IOIO_REP  (1u << 3)
#define SVM_IOIO_SZ8  (1u << 4)
#define SVM_IOIO_SZ16 (1u << 5)
#define SVM_IOIO_SZ32 (1u << 6)

#define MSR_VM_HSAVE_PA 0xc0010117

/* TLB_CONTROL */
#define SVM_TLB_FLUSH_ALL        1 /* flush every ASID's entries */
#define SVM_TLB_FLUSH_ASID       3 /* flush this guest's ASID (FlushByASID) */
#define SVM_TLB_FLUSH_ASID_LOCAL 7 /* ... its non-global entries (FlushByASID) */

/* The permission maps' sizes in pages: I/O 12 KiB, MSR 8 KiB. */
#define SVM_IOPM_PAGES  3
#define SVM_MSRPM_PAGES 2

#endif
