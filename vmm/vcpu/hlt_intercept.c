/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vcpu/hlt_intercept.h"

#include "drivers/console.h"

const char *const idle_hlt_option_names[] = {
    [IDLE_HLT_AUTO] = "auto",
    [IDLE_HLT_OFF] = "off",
    0,
};

unsigned idle_hlt_option = IDLE_HLT_AUTO;

static enum hlt_intercept mode = HLT_INTERCEPT_PLAIN;

enum hlt_intercept hlt_intercept_choose(bool cpu_has_idle_hlt, enum idle_hlt_option opt)
{
    return cpu_has_idle_hlt && opt == IDLE_HLT_AUTO ? HLT_INTERCEPT_IDLE : HLT_INTERCEPT_PLAIN;
}

const char *hlt_intercept_name(enum hlt_intercept m)
{
    return m == HLT_INTERCEPT_IDLE ? "idle_hlt" : "hlt";
}

enum hlt_intercept hlt_intercept_mode(void)
{
    return mode;
}

void hlt_intercept_setup(void)
{
    if (!virt)
        return;
    bool has = virt->set_hlt_intercept && virt_features.idle_hlt;
    mode = hlt_intercept_choose(has, (enum idle_hlt_option)idle_hlt_option);
    if (virt->set_hlt_intercept)
        virt->set_hlt_intercept(mode);
    kprintf("pollux: HLT intercept: %s (the CPU %s Idle HLT, idle_hlt=%s)\n",
            hlt_intercept_name(mode), virt_features.idle_hlt ? "has" : "lacks",
            idle_hlt_option_names[idle_hlt_option]);
}
