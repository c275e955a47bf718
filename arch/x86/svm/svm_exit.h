/* Decoding a #VMEXIT into the common exit record; pure, so unit tests run it. */
#ifndef POLLUX_ARCH_X86_SVM_SVM_EXIT_H
#define POLLUX_ARCH_X86_SVM_SVM_EXIT_H

#include <stdbool.h>

#include "arch/x86/svm/vmcb.h"
#include "arch/x86/virt.h"

/*
 * Fill e from the VMCB's exit fields. insn_len comes from nRIP when the CPU
 * has NRIPS, from EXITINFO2 (the next RIP) for IOIO, and is 0 otherwise,
 * with insn_kind telling vmm/ which instruction to decode.
 */
void svm_decode_exit(const struct vmcb *vmcb, bool nrips, struct exit_record *e);

#endif
