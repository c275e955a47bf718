/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vm_policy.h"

#include "lib/format.h"
#include "lib/string.h"
#include "sched/yield.h"
#include "vmm/dev/kvm_pv.h"
#include "vmm/dev/vlapic.h"

struct vm_policy vm_policy_hv = {
    .yield_pivot = YIELD_PIVOT_VCPU_ID,
    .halt_poll = HALT_POLL_PARAMS_KVM,
    .spin = SPIN_PARAMS_KVM,
    .timer_advance_ns = VLAPIC_ADVANCE_ADAPTIVE,
};

const char *const vm_policy_pv_words[] = {
    [PV_WORD_STEAL_TIME] = "steal_time",
    [PV_WORD_PV_UNHALT] = "pv_unhalt",
    [PV_WORD_PV_SCHED_YIELD] = "pv_sched_yield",
    [PV_WORD_PV_TLB_FLUSH] = "pv_tlb_flush",
    [PV_WORD_PV_SEND_IPI] = "pv_send_ipi",
    [PV_WORD_ALL] = "all",
    [PV_WORD_NONE] = "none",
    NULL,
};

/* Each single word's feature, in word order. */
static const unsigned pv_word_feature[] = {
    [PV_WORD_STEAL_TIME] = KVM_FEATURE_STEAL_TIME,
    [PV_WORD_PV_UNHALT] = KVM_FEATURE_PV_UNHALT,
    [PV_WORD_PV_SCHED_YIELD] = KVM_FEATURE_PV_SCHED_YIELD,
    [PV_WORD_PV_TLB_FLUSH] = KVM_FEATURE_PV_TLB_FLUSH,
    [PV_WORD_PV_SEND_IPI] = KVM_FEATURE_PV_SEND_IPI,
};
#define PV_SINGLE_WORDS (sizeof(pv_word_feature) / sizeof(pv_word_feature[0]))

uint32_t vm_policy_kvm_features(unsigned pv_words, bool linux)
{
    if (!pv_words)
        return linux ? KVM_PV_SCHED_FEATURES : 0;
    uint32_t f = pv_words & (1u << PV_WORD_ALL) ? KVM_PV_SCHED_FEATURES : 0;
    for (unsigned w = 0; w < PV_SINGLE_WORDS; w++)
        if (pv_words & (1u << w))
            f |= 1u << pv_word_feature[w];
    if (f & (1u << KVM_FEATURE_PV_SCHED_YIELD | 1u << KVM_FEATURE_PV_TLB_FLUSH))
        f |= 1u << KVM_FEATURE_STEAL_TIME;
    return f;
}

void vm_policy_pv_names(uint32_t features, char *buf, size_t len)
{
    size_t used = 0;
    if (!len)
        return;
    snprintf(buf, len, "none");
    for (unsigned w = 0; w < PV_SINGLE_WORDS && used < len; w++)
        if (features & (1u << pv_word_feature[w]))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                     vm_policy_pv_words[w]);
}

static const char *const halt_poll_modes[] = {
    [HALT_POLL_ADAPTIVE] = "adaptive",
    [HALT_POLL_FIXED] = "fixed",
    [HALT_POLL_PREDICT] = "predict",
    NULL,
};

size_t vm_policy_options(struct vm_policy *p, struct option out[VM_POLICY_OPTIONS])
{
    struct halt_poll_params *hp = &p->halt_poll;
    struct spin_params *sp = &p->spin;
    const struct option opts[VM_POLICY_OPTIONS] = {
        {"pv", OPT_FLAGS, &p->pv, 0, 0, vm_policy_pv_words,
         "KVM's PV scheduling interfaces offered: steal_time, pv_unhalt, pv_sched_yield, "
         "pv_tlb_flush, pv_send_ipi, all or none; Linux guests default to all, others none"},
        {"pv_enforce", OPT_BOOL, &p->pv_enforce, 0, 0, 0,
         "refuse the PV MSRs and hypercalls pv= does not offer (KVM_CAP_ENFORCE_PV_FEATURE_CPUID)"},
        {"yield_pivot", OPT_ENUM, &p->yield_pivot, 0, 0, yield_pivot_names,
         "where a directed yield's scan starts: vcpu_id, last_boosted or none"},
        {"halt_poll_ns", OPT_UINT, &hp->max_ns, 0, 0xffffffffu, 0,
         "the longest halt poll in ns; 0 turns polling off"},
        {"halt_poll_ns_grow", OPT_UINT, &hp->grow, 0, 0xffffffffu, 0,
         "factor a vCPU's poll window grows by; 0: it never grows"},
        {"halt_poll_ns_grow_start", OPT_UINT, &hp->grow_start, 0, 0xffffffffu, 0,
         "the first non-zero poll window in ns"},
        {"halt_poll_ns_shrink", OPT_UINT, &hp->shrink, 0, 0xffffffffu, 0,
         "divisor a poll window shrinks by; 0: back to 0 at once"},
        {"halt_poll_mode", OPT_ENUM, &hp->mode, 0, 0, halt_poll_modes,
         "adaptive (KVM's rules), fixed (always the maximum) or predict"},
        {"ple", OPT_BOOL, &sp->enabled, 0, 0, 0,
         "spin detection from PAUSE exits (PLE, pause filter, software): on or off"},
        {"pause_filter_count_only", OPT_ENUM, &sp->count_only, 0, 0, spin_count_only_names,
         "a pause filter without a threshold: spin (its exits are spins) or off (KVM's)"},
        {"ple_gap", OPT_UINT, &sp->ple.gap, 1, 0xffffffffu, 0,
         "VMX: most TSC cycles between two PAUSEs of one loop"},
        {"ple_window", OPT_UINT, &sp->ple.base, 1, 0xffffffffu, 0,
         "VMX: TSC cycles of PAUSE loop before an exit, initially"},
        {"ple_window_grow", OPT_UINT, &sp->ple.grow, 0, 0xffffffffu, 0,
         "VMX: window growth per exit, a factor below ple_window, else added; 0 resets"},
        {"ple_window_shrink", OPT_UINT, &sp->ple.shrink, 0, 0xffffffffu, 0,
         "VMX: window shrink when scheduled in, as grow; 0 resets to ple_window"},
        {"ple_window_max", OPT_UINT, &sp->ple.max, 1, 0xffffffffu, 0, "VMX: the largest window"},
        {"pause_filter_count", OPT_UINT, &sp->pause_filter.base, 1, 0xffff, 0,
         "SVM: PAUSEs before an exit, initially"},
        {"pause_filter_thresh", OPT_UINT, &sp->pause_filter.gap, 0, 0xffff, 0,
         "SVM: most cycles between two counted PAUSEs, where the CPU has it"},
        {"pause_filter_count_grow", OPT_UINT, &sp->pause_filter.grow, 0, 0xffffffffu, 0,
         "SVM: count growth per exit, as ple_window_grow"},
        {"pause_filter_count_shrink", OPT_UINT, &sp->pause_filter.shrink, 0, 0xffffffffu, 0,
         "SVM: count shrink when scheduled in, as ple_window_shrink"},
        {"pause_filter_count_max", OPT_UINT, &sp->pause_filter.max, 1, 0xffff, 0,
         "SVM: the largest count"},
        {"spin_sw_threshold", OPT_UINT, &sp->sw_threshold, 1, 1000000, 0,
         "software detector: PAUSE exits that make a spin"},
        {"spin_sw_window_us", OPT_UINT, &sp->sw_window_us, 1, 1000000, 0,
         "software detector: ... within this many us"},
        {"timer_advance_ns", OPT_INT, &p->timer_advance_ns, (uint64_t)VLAPIC_ADVANCE_ADAPTIVE,
         1000000, 0, "local APIC TSC-deadline timer fired early by: -1 adaptive, 0 off, N ns"},
    };
    memcpy(out, opts, sizeof(opts));
    return VM_POLICY_OPTIONS;
}

void vm_policy_json(const struct vm_policy *p, const struct spin_choice *spin, struct json *j)
{
    json_bool(j, "pv_enforce", p->pv_enforce);
    json_str(j, "yield_pivot", yield_pivot_names[p->yield_pivot]);
    json_str(j, "halt_poll_mode", halt_poll_modes[p->halt_poll.mode]);
    json_u64(j, "halt_poll_ns", p->halt_poll.max_ns);
    json_u64(j, "halt_poll_ns_grow", p->halt_poll.grow);
    json_u64(j, "halt_poll_ns_grow_start", p->halt_poll.grow_start);
    json_u64(j, "halt_poll_ns_shrink", p->halt_poll.shrink);
    json_i64(j, "timer_advance_ns", p->timer_advance_ns);
    json_bool(j, "ple", p->spin.enabled);
    json_str(j, "spin_detector", spin_detector_name(spin->detector));
    json_bool(j, "pause_backstop", spin->backstop);
    if (spin->count_only)
        json_str(j, "pause_filter_count_only", spin_count_only_names[p->spin.count_only]);
    if (spin->window) {
        json_u64(j, "window", spin->window->base);
        json_u64(j, "gap", spin->gap);
        json_u64(j, "window_grow", spin->window->grow);
        json_u64(j, "window_shrink", spin->window->shrink);
        json_u64(j, "window_max", spin->window->max);
        json_bool(j, "window_by_l0", spin->window_by_l0);
    }
    if (spin->detector == SPIN_DETECT_SOFTWARE) {
        json_u64(j, "spin_sw_threshold", p->spin.sw_threshold);
        json_u64(j, "spin_sw_window_us", p->spin.sw_window_us);
    }
}
