/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * VMs and vCPUs. A VM owns one contiguous block of host memory mapped at
 * guest-physical 0..mem and nothing else; its vCPUs run on host CPUs chosen
 * by sched/. Vendor state hangs off the `arch` pointers (arch/x86/virt.h).
 */
#ifndef POLLUX_VMM_VM_H
#define POLLUX_VMM_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/virtio.h"
#include "arch/x86/debugreg.h"
#include "arch/x86/fpu.h"
#include "arch/x86/spinlock.h"
#include "arch/x86/virt.h"
#include "sched/halt_poll.h"
#include "sched/entity.h"
#include "sched/spin.h"
#include "sched/timer.h"
#include "sched/yield.h"
#include "vmm/exit/cpuid_cache.h"
#include "stats/stats.h"
#include "vmm/dev/builtin.h"
#include "vmm/dev/device.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/exit/gpt_memo.h"
#include "vmm/dev/guest_msrs.h"
#include "vmm/vcpu/nmi.h"
#include "vmm/vcpu/tsc_sync.h"
#include "vmm/dev/mce_state.h"
#include "vmm/dev/pc_msr_state.h"
#include "vmm/exit/unbacked.h"
#include "vmm/dev/vlapic.h"
#include "vmm/vmconfig.h"
#include "vmm/dev/vuart.h"

#define HALT_HIST_BUCKETS STATS_HIST_BUCKETS /* log2 of halt durations in ns (stats/stats.h) */

/*
 * What a nested page fault reached, the slot of vcpu_stats.npf_exits: a
 * built-in device's page (its enum builtin_device), unbacked memory the
 * unbacked= policy emulates, or an address outside the VM (which stops it).
 */
enum npf_slot { NPF_UNBACKED = BUILTIN_DEVICE_COUNT, NPF_OUTSIDE, NPF_SLOTS };

/*
 * vCPU states. RUNNING: in guest mode or handling an exit on its CPU;
 * RUNNABLE: on its CPU's run queue (or just taken off it); POLLING: halted,
 * its CPU spinning for a wake-up (halt polling); BLOCKED: halted, waiting for
 * an interrupt off its CPU; WAIT_SIPI: an AP before its startup IPI (never
 * scheduled); STOPPED: its VM stopped and the vCPU has left its CPU.
 */

/*
 * Time per state (host TSC cycles) and halt statistics; counters only grow.
 * The halt-polling counters carry KVM's names (docs/halt_polling.md).
 */
struct vcpu_stats {
    uint64_t halts;         /* HLTs that halted (nothing was deliverable) */
    uint64_t hlt_in_shadow; /* HLTs completed at another exit (vcpu.c hlt_in_shadow) */
    uint64_t halt_hist[HALT_HIST_BUCKETS]; /* whole halts, polling plus blocking, by log2(ns) */
    uint64_t exits[EXIT_REASON_COUNT];
    uint64_t exit_cycles[EXIT_REASON_COUNT];     /* from the exit to the end of its handler */
    uint64_t exit_max_cycles[EXIT_REASON_COUNT]; /* ... the longest one */
    uint64_t npf_exits[NPF_SLOTS];               /* the npf exits by what they reached */
    uint64_t npf_cycles[NPF_SLOTS];              /* ... and their share of exit_cycles */
    uint64_t npf_max_cycles[NPF_SLOTS];          /* ... the longest one */
    uint64_t halt_attempted_poll;                /* halts that polled */
    uint64_t halt_successful_poll;               /* ... and never blocked */
    uint64_t halt_poll_invalid; /* successful polls ended by a stop request, not a guest event */
    uint64_t halt_wakeup;       /* wake-ups of a blocked vCPU */
    uint64_t halt_poll_success_ns, halt_poll_fail_ns, halt_wait_ns;
    uint64_t halt_poll_success_hist[HALT_HIST_BUCKETS];
    uint64_t halt_poll_fail_hist[HALT_HIST_BUCKETS];
    uint64_t halt_wait_hist[HALT_HIST_BUCKETS];
    uint64_t halt_attempted_poll_optout; /* polls while the guest had opted out: a pollux bug */
    /* Spin detection and directed yield (docs/directed_yield.md). */
    uint64_t pause_exits;             /* PAUSE exits taken for spin detection */
    uint64_t pause_exits_backstop;    /* ple=off: PAUSE exits kept only for preemption */
    uint64_t spins_detected;          /* exits (or software-counted runs of them) that were spins */
    uint64_t spin_yield_attempted;    /* spins that scanned for a vCPU to yield to */
    uint64_t spin_yield_successful;   /* ... and ran one in the spinner's place */
    uint64_t spin_yield_failed_tries; /* candidates that could not be taken after all */
    uint64_t spin_yield_gave_up;      /* scans ended by YIELD_MAX_FAILED_TRIES */
    uint64_t spin_yield_gone;         /* candidates no longer waiting when taken */
    uint64_t spin_yield_skipped[YIELD_SKIP_COUNT];
    uint64_t spin_slice_yields; /* spins without a target that gave up the rest of the slice */
    /* KVM's PV scheduling hypercalls and PV TLB flush (vmm/dev/kvm_pv_sched.c). */
    uint64_t directed_yield_attempted;  /* KVM_HC_SCHED_YIELD and KICK_CPU yields (KVM's name) */
    uint64_t directed_yield_successful; /* ... that ran the target in the caller's place */
    uint64_t pv_kicks;                  /* KVM_HC_KICK_CPU calls naming a vCPU of the VM */
    uint64_t pv_send_ipis;              /* IPIs delivered through KVM_HC_SEND_IPI */
    uint64_t pv_tlb_flushes; /* entries that flushed for the guest's KVM_VCPU_FLUSH_TLB */
    /*
     * Local APIC timer interrupts: from each expiry's deadline to the entry
     * that injects its vector, in ns of the guest's TSC (vcpu_timer_late),
     * less the C-state model's exit of its CPU in that time, counted beside.
     */
    uint64_t timer_interrupts;
    uint64_t timer_late_ns, timer_late_max_ns;
    uint64_t timer_late_hist[HALT_HIST_BUCKETS];
    uint64_t timer_idle_exit_ns;
    /* The timer advance's waits at entry for deadlines not yet reached (KVM's). */
    uint64_t timer_advance_waits, timer_advance_wait_ns;
};

/* A vCPU's spin detection and directed-yield state (vmm/vcpu/pause.c, sched/yield.h). */
struct vcpu_spin {
    enum spin_detector detector;
    uint64_t window;   /* the hardware window now: ple_window or pause_filter_count */
    struct spin_sw sw; /* the software detector's count */
    bool detected;     /* the last exit was a spin: the run loop acts on it */
};

/* The halt in progress, from vcpu_halt until the vCPU runs again (vmm/vcpu/vcpu_events.c). */
struct vcpu_halt {
    bool active;       /* halted and not yet accounted */
    bool poll_allowed; /* the guest let the host poll (MSR_KVM_POLL_CONTROL) when it halted */
    bool polled;       /* this halt polled */
    bool blocked;      /* ... and blocked: the poll did not catch the wake-up */
    bool valid;        /* ended by a guest event, not a stop request */
    bool cpu_wanted;   /* another vCPU waited for the CPU when it halted: no poll */
    uint8_t source;    /* what woke it (enum trace_wake), for trace=halt */
    uint64_t start;    /* host TSC: the HLT exit */
    uint64_t poll_end; /* host TSC: the poll ended (== start without a poll) */
    uint64_t woken;    /* host TSC: the wake event arrived */
};

struct vcpu {
    struct virt_vcpu hw; /* first: the backend's view (arch/x86/virt.h), vcpu_of below */
    struct vm *vm;
    struct fpu_state fpu;
    struct debug_regs debug; /* DR0-DR3, DR6 while the vCPU is off its CPU */
    struct guest_msrs msrs;
    /*
     * What the scheduler runs (sched/entity.h). se.lock also protects lapic
     * and the pending events below: an event is made pending and the state
     * checked under it, which is what makes blocking and waking race-free
     * (see vcpu_block in vmm/vcpu/vcpu.c).
     */
    struct sched_entity se;
    struct vlapic lapic;
    struct vlapic_advance timer_advance; /* timer_advance_ns= (vmm/dev/vlapic.h) */
    /* The guest TSC of the last entry that offered the timer's vector (SVM V_IRQ). */
    uint64_t timer_offered_at;
    struct timer timer; /* the local APIC timer and the VM's timeout, for this vCPU */
    struct nmi_state nmi;
    bool init_pending;
    bool sipi_armed; /* in WAIT_SIPI and no startup IPI taken yet */
    bool halted;     /* its CPU's own flag: vcpu_halt blocked it, leave the CPU */
    /*
     * seed=: its first entry's stagger, in TSC cycles, until it first runs.
     * resume_at: the host TSC before which it does not enter (its stagger,
     * or a guest write the console had no room for), 0 once passed
     * (vcpu_wait_to_resume).
     */
    uint64_t stagger_cycles, resume_at;
    int sipi_vector;            /* a startup IPI to act on before the next entry, -1 none */
    struct halt_poll halt_poll; /* the halt-polling window (sched/halt_poll.h) */
    struct vcpu_spin spin;
    struct vcpu_halt halt;
    /* A hypercall's directed yield ran a sibling on its CPU: the run loop leaves it. */
    bool yield_taken;
    uint64_t poll_control;    /* MSR_KVM_POLL_CONTROL: bit 0 clear, no host polling */
    struct pc_msrs pc_msrs;   /* MTRRs and AMD platform MSRs (vmm/dev/pc_msr_state.h) */
    struct mce_msrs mce;      /* the machine-check bank (vmm/dev/mce_state.h) */
    uint64_t kvm_system_time; /* MSR_KVM_SYSTEM_TIME_NEW as written (vmm/dev/kvmclock.h) */
    uint64_t tsc_adjust;      /* IA32_TSC_ADJUST (vmm/vcpu/tsc_sync.h) */
    struct kvm_pv_vcpu pv;    /* steal time, the PV kick (vmm/dev/kvm_pv_sched.h) */
    uint32_t pvclock_version;
    uint32_t changed; /* the exit fast path's summary word (vmm/exit/fastpath.h) */
    /* The guest's mode, read at most once per exit: vcpu_mode (vmm/exit/guest_access.h). */
    struct guest_mode exit_mode;
    bool exit_mode_read;
    /* The last instruction fetch's walk without NRIPS, checked at every use (vmm/exit/gpt_memo.h).
     */
    struct gpt_fetch_memo fetch_memo;
    uint64_t exited_at;      /* host TSC of the last exit, for stats.exit_cycles */
    uint64_t profile_sample; /* profile_us=: host TSC of its next RIP sample, 0 = none */
    uint8_t npf_slot;        /* the last npf exit's enum npf_slot, for stats.npf_cycles */
    struct vcpu_stats stats;
};

struct trace_ring;
struct trace_marks;
struct profile;
struct virtio_net;
struct virtio_blk;
struct virtio_mmio;

struct vm {
    struct virt_vm hw;   /* the backend's view: nested paging, RAM, name */
    struct vmconfig cfg; /* name, memory size, vCPU count, ... */
    unsigned index;      /* its module's */
    unsigned number;     /* its place among the boot's VMs from 0 (initramfs and disk modules are
                            not VMs): its MAC (abi/virtio.h) */
    uint64_t mem_hpa;
    struct vcpu *vcpus[VM_MAX_VCPUS];
    unsigned nvcpus;
    struct vuart uart;
    /*
     * The PIC's INT as vCPU 0 reads it without devices_lock, stored under it
     * (vcpu_extint_pending).
     */
    bool extint;
    bool pc_platform; /* a Linux guest's PC: power and reset registers, PCI ports */
    /* The UART, the I/O APIC, the PIC and the PIT (vmm/dev/vm_devices.h). */
    struct spinlock devices_lock;
    uint64_t deadline; /* host TSC at which timeout_ms expires, 0 = none */
    uint64_t start_tsc;
    uint64_t unhandled_io_reads, unhandled_io_writes;
    struct trace_marks *marks;       /* its trace marks' rounds (vmm/dev/trace_marker.h) */
    uint64_t mark_rounds_dropped;    /* marks that found TRACE_MARK_ROUNDS rounds waiting */
    struct unbacked_counts unbacked; /* accesses emulated under unbacked=ignore */
    struct cpuid_cache cpuid;        /* the guest's CPUID answers, filled at creation */
    struct vm_devices devices;       /* its devices: claims and state (vmm/dev/device.h) */
    /* Its virtio devices (docs/virtio.md), NULL where the VM has none: net= and disk=. */
    struct virtio_net *net;
    struct virtio_blk *blk;
    struct virtio_mmio *virtio[VIRTIO_SLOTS]; /* their transports, by slot */
    struct trace_ring *trace; /* trace= records, printed when the VM stops (vmm/vmm.c: when) */
    struct profile *profile;  /* profile_us=: its vCPUs' sampled RIPs (vmm/console/profile.h) */
    unsigned live_vcpus;      /* vCPUs not yet retired; the last one out reports and frees */
    struct sched_group group; /* its vCPUs' entities, for the directed yield */
    struct spin_choice pause; /* its PAUSE handling, from cfg.policy.spin (vmm/vcpu/pause.h) */
    struct sched_entity *group_members[VM_MAX_VCPUS];
    uint64_t kvm_wall_clock; /* MSR_KVM_WALL_CLOCK_NEW as written */
    uint32_t kvm_features;   /* the KVM_FEATURE_* bits pv= offers it (KVM_PV_SCHED_FEATURES) */
    uint32_t wall_clock_version;
    struct tsc_sync tsc_sync; /* its TSC at its vCPUs' creation (vmm/vcpu/tsc_sync.h) */
    /* Set once, by the first stop request. */
    volatile bool stopping;
    int64_t exit_code;
    const char *stop_reason;
    char stop_detail[160];
    uint64_t stop_rip;     /* involuntary stops: the guest's RIP */
    uint64_t stop_address; /* bad-access: the guest-physical address, if stop_has_address */
    bool stop_has_address;
};

/* The code of a VM that asked for a reset (reason "reboot"): pollux does not restart it. */
#define VM_REBOOT_CODE 1

/* Ask the VM to stop (first request wins): code -1 for involuntary stops. */
void vm_request_stop(struct vm *vm, int64_t code, const char *reason);

/*
 * Stop a misbehaving guest's VM: code -1, the reason (a short token such as
 * "triple-fault") and a human detail line, printed now and kept for @vm_stop.
 */
__attribute__((format(printf, 3, 4))) void vm_fail(struct vcpu *v, const char *reason,
                                                   const char *fmt, ...);

/* vm_fail for an access to guest-physical memory the VM does not have (reason bad-access). */
__attribute__((format(printf, 3, 4))) void vm_fail_access(struct vcpu *v, uint64_t gpa,
                                                          const char *fmt, ...);

/* Guest-physical range check and host pointer. NULL unless [gpa, gpa+len) is guest RAM. */
static inline void *vm_gpa_ptr(struct vm *vm, uint64_t gpa, uint64_t len)
{
    return virt_gpa_ptr(&vm->hw, gpa, len);
}

_Static_assert(offsetof(struct vcpu, hw) == 0, "vcpu_of: hw is struct vcpu's first member");

/* The vCPU whose backend view hw is. */
static inline struct vcpu *vcpu_of(struct virt_vcpu *hw)
{
    return (struct vcpu *)hw;
}

#endif
