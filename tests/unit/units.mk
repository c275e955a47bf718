# Host unit tests (cmocka). One line per test binary: unit_<name>_SRCS lists
# the project sources linked with tests/unit/test_<name>.c. The host C library
# provides the string functions, so lib/string.c is never listed.
UNIT_TESTS :=
UNIT_TESTS += cmdline
unit_cmdline_SRCS := boot/cmdline.c
UNIT_TESTS += bootinfo
unit_bootinfo_SRCS := boot/mb.c
UNIT_TESTS += pmm
unit_pmm_SRCS := arch/x86/pmm.c
UNIT_TESTS += acpi
unit_acpi_SRCS := drivers/acpi.c
UNIT_TESTS += format
unit_format_SRCS := lib/format.c
UNIT_TESTS += features
unit_features_SRCS := arch/x86/features.c
UNIT_TESTS += pagetable
unit_pagetable_SRCS := arch/x86/pagetable.c
UNIT_TESTS += json
unit_json_SRCS := lib/json.c
UNIT_TESTS += loader
unit_loader_SRCS := vmm/loader.c
UNIT_TESTS += vmconfig
unit_vmconfig_SRCS := vmm/vmconfig.c boot/cmdline.c
UNIT_TESTS += insn
unit_insn_SRCS := vmm/insn.c
UNIT_TESTS += gpt
unit_gpt_SRCS := vmm/gpt.c
UNIT_TESTS += svm_exit
unit_svm_exit_SRCS := arch/x86/svm/svm_exit.c
UNIT_TESTS += cpuid
unit_cpuid_SRCS := vmm/cpuid.c vmm/kvm_pv.c $(CPUID_TABLE)
UNIT_TESTS += vuart
unit_vuart_SRCS := vmm/vuart.c
UNIT_TESTS += vlapic
unit_vlapic_SRCS := vmm/vlapic.c
UNIT_TESTS += mmio_decode
unit_mmio_decode_SRCS := vmm/mmio_decode.c
UNIT_TESTS += runqueue
unit_runqueue_SRCS :=
UNIT_TESTS += vcpu_events
unit_vcpu_events_SRCS := vmm/vcpu_events.c vmm/vlapic.c vmm/nmi.c vmm/kvm_pv.c vmm/trace.c \
	sched/halt_poll.c
UNIT_TESTS += halt_poll
unit_halt_poll_SRCS := sched/halt_poll.c
UNIT_TESTS += vmx
unit_vmx_SRCS := arch/x86/guest_regs.c arch/x86/vmx/vmx_controls.c arch/x86/vmx/vmx_check.c arch/x86/vmx/vmx_exit.c \
	arch/x86/vmx/ept.c arch/x86/pagetable.c
UNIT_TESTS += unbacked
unit_unbacked_SRCS := vmm/unbacked.c
UNIT_TESTS += checksum
unit_checksum_SRCS := lib/checksum.c
UNIT_TESTS += lockup
unit_lockup_SRCS := sched/lockup.c
UNIT_TESTS += guest_msrs
unit_guest_msrs_SRCS := vmm/guest_msrs.c
UNIT_TESTS += nmi
unit_nmi_SRCS := vmm/nmi.c
