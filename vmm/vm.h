/*
 * VMs and vCPUs. A VM owns one contiguous block of host memory mapped at
 * guest-physical 0..mem and nothing else; its vCPUs run on host CPUs chosen
 * by sched/. Vendor state hangs off the `arch` pointers (arch/x86/virt.h).
 */
#ifndef POLLUX_VMM_VM_H
#define POLLUX_VMM_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/fpu.h"
#include "arch/x86/virt.h"
#include "vmm/vmconfig.h"
#include "vmm/vuart.h"

enum vcpu_state {
    VCPU_RUNNABLE,
    VCPU_RUNNING,
    VCPU_BLOCKED,
    VCPU_WAIT_SIPI,
    VCPU_STOPPED,
};

struct vcpu {
    struct vm *vm;
    unsigned id;
    struct guest_regs regs;
    struct fpu_state fpu;
    void *arch; /* vendor context: VMCB or VMCS */
    enum vcpu_state state;
    unsigned cpu;      /* host CPU it is placed on */
    struct vcpu *next; /* run-queue link */
    /* Accounting. */
    uint64_t exits[EXIT_REASON_COUNT];
    uint64_t run_cycles;
};

struct vm {
    struct vmconfig cfg; /* name, memory size, vCPU count, ... */
    unsigned index;
    uint8_t *mem; /* host pointer to guest-physical 0 */
    uint64_t mem_hpa;
    void *arch; /* nested page tables */
    struct vcpu *vcpus[VM_MAX_VCPUS];
    unsigned nvcpus;
    struct vuart uart;
    uint64_t tsc_offset; /* guest TSC = host TSC + tsc_offset */
    uint64_t deadline;   /* host TSC at which timeout_ms expires, 0 = none */
    uint64_t start_tsc;
    uint64_t unhandled_io_reads, unhandled_io_writes;
    uint8_t shutdown_port_match; /* bytes of "Shutdown" seen on port 0x8900 */
    /* Set once, by the first stop request. */
    volatile bool stopping;
    int64_t exit_code;
    const char *stop_reason;
    char stop_detail[160];
};

/* Ask the VM to stop (first request wins): code -1 for involuntary stops. */
void vm_request_stop(struct vm *vm, int64_t code, const char *reason);

/*
 * Stop a misbehaving guest's VM: code -1, the reason (a short token such as
 * "triple-fault") and a human detail line, printed now and kept for @vm_stop.
 */
__attribute__((format(printf, 3, 4))) void vm_fail(struct vcpu *v, const char *reason,
                                                   const char *fmt, ...);

/* Guest-physical range check and host pointer. NULL unless [gpa, gpa+len) is guest RAM. */
void *vm_gpa_ptr(struct vm *vm, uint64_t gpa, uint64_t len);

#endif
