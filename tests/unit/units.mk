# SPDX-License-Identifier: GPL-2.0-only
# Host unit tests (cmocka). One line per test binary: unit_<name>_SRCS lists
# the project sources linked with tests/unit/test_<name>.c. The host C library
# provides the string functions, so lib/string.c is never listed.
UNIT_TESTS :=
UNIT_TESTS += cmdline
unit_cmdline_SRCS := lib/options.c
UNIT_TESTS += bootinfo
unit_bootinfo_SRCS := boot/mb.c
UNIT_TESTS += pmm
unit_pmm_SRCS := arch/x86/pmm.c
UNIT_TESTS += acpi
unit_acpi_SRCS := drivers/acpi.c
UNIT_TESTS += format
unit_format_SRCS := lib/format.c
UNIT_TESTS += features
unit_features_SRCS := arch/x86/features.c backend/svm/svm_sched.c sched/spin.c
UNIT_TESTS += pagetable
unit_pagetable_SRCS := arch/x86/pagetable.c
UNIT_TESTS += percpu
unit_percpu_SRCS := arch/x86/percpu.c
UNIT_TESTS += json
unit_json_SRCS := lib/json.c
UNIT_TESTS += loader
unit_loader_SRCS := vmm/load/loader.c vmm/load/e820.c
UNIT_TESTS += vmconfig
unit_vmconfig_SRCS := vmm/vmconfig.c vmm/vm_policy.c lib/options.c lib/json.c sched/spin.c sched/yield.c
UNIT_TESTS += insn
unit_insn_SRCS := arch/x86/insn.c
UNIT_TESTS += gpt
unit_gpt_SRCS := vmm/exit/gpt.c
UNIT_TESTS += gpt_memo
unit_gpt_memo_SRCS := vmm/exit/gpt.c
UNIT_TESTS += guest_access
unit_guest_access_SRCS := vmm/exit/guest_access.c vmm/exit/gpt.c arch/x86/insn.c
UNIT_TESTS += svm_exit
unit_svm_exit_SRCS := backend/svm/svm_exit.c backend/svm/svm_sched.c
UNIT_TESTS += cpuid
unit_cpuid_SRCS := vmm/exit/cpuid.c vmm/dev/kvm_pv.c vmm/dev/kvmclock.c vmm/dev/steal_time.c $(CPUID_TABLE)
UNIT_TESTS += cpuid_cache
unit_cpuid_cache_SRCS := vmm/exit/cpuid_cache.c vmm/exit/cpuid.c vmm/dev/kvm_pv.c vmm/dev/kvmclock.c vmm/dev/steal_time.c $(CPUID_TABLE)
UNIT_TESTS += vuart
unit_vuart_SRCS := vmm/dev/vuart.c
UNIT_TESTS += vlapic
unit_vlapic_SRCS := vmm/dev/vlapic.c
UNIT_TESTS += mmio_decode
unit_mmio_decode_SRCS := vmm/exit/mmio_decode.c
UNIT_TESTS += runqueue
unit_runqueue_SRCS :=
UNIT_TESTS += vcpu_events
unit_vcpu_events_SRCS := sched/entity.c vmm/vcpu/vcpu_events.c vmm/dev/vlapic.c vmm/vcpu/nmi.c vmm/dev/kvm_pv.c vmm/dev/kvmclock.c vmm/dev/steal_time.c vmm/console/trace.c \
	sched/halt_poll.c sched/yield.c lib/json.c
UNIT_TESTS += halt_poll
unit_halt_poll_SRCS := sched/halt_poll.c
UNIT_TESTS += halt_replay
unit_halt_replay_SRCS := tools/halt_replay.c sched/halt_poll.c
UNIT_TESTS += vmx
unit_vmx_SRCS := arch/x86/guest_regs.c backend/vmx/vmx_controls.c backend/vmx/vmx_check.c backend/vmx/vmx_exit.c \
	backend/vmx/vmx_timer.c backend/vmx/ept.c arch/x86/pagetable.c sched/spin.c
UNIT_TESTS += spin
unit_spin_SRCS := sched/spin.c
UNIT_TESTS += yield
unit_yield_SRCS := sched/yield.c
UNIT_TESTS += slice
unit_slice_SRCS :=
UNIT_TESTS += deferred
unit_deferred_SRCS := sched/deferred.c
UNIT_TESTS += stagger
unit_stagger_SRCS := sched/stagger.c
UNIT_TESTS += balance
unit_balance_SRCS := sched/balance.c
UNIT_TESTS += svm_sched
unit_svm_sched_SRCS := backend/svm/svm_sched.c
UNIT_TESTS += unbacked
unit_unbacked_SRCS := vmm/exit/unbacked.c
UNIT_TESTS += checksum
unit_checksum_SRCS := lib/checksum.c
UNIT_TESTS += profile
unit_profile_SRCS := vmm/console/profile.c lib/json.c
UNIT_TESTS += timer
unit_timer_SRCS := sched/timer.c
UNIT_TESTS += lockup
unit_lockup_SRCS := sched/lockup.c
UNIT_TESTS += guest_msrs
unit_guest_msrs_SRCS := vmm/dev/guest_msrs.c
UNIT_TESTS += nmi
unit_nmi_SRCS := vmm/vcpu/nmi.c
UNIT_TESTS += kvm_pv
unit_kvm_pv_SRCS := vmm/dev/kvm_pv_sched.c vmm/dev/vlapic.c vmm/dev/kvm_pv.c vmm/dev/kvmclock.c vmm/dev/steal_time.c
UNIT_TESTS += tsc_sync
unit_tsc_sync_SRCS := vmm/vcpu/tsc_sync.c vmm/dev/kvmclock.c
UNIT_TESTS += hypercall
unit_hypercall_SRCS := vmm/exit/hypercall.c vmm/dev/kvm_pv_sched.c vmm/dev/vlapic.c vmm/dev/kvm_pv.c vmm/dev/kvmclock.c vmm/dev/steal_time.c
UNIT_TESTS += bzimage
unit_bzimage_SRCS := vmm/load/bzimage.c vmm/load/e820.c
UNIT_TESTS += acpi_tables
unit_acpi_tables_SRCS := vmm/load/acpi_tables.c vmm/load/aml.c drivers/acpi.c $(DSDT_S)
UNIT_TESTS += aml
unit_aml_SRCS := vmm/load/aml.c
UNIT_TESTS += ioapic
unit_ioapic_SRCS := vmm/dev/vioapic.c
UNIT_TESTS += pc_msrs
unit_pc_msrs_SRCS := vmm/dev/pc_msr_state.c
UNIT_TESTS += svm_intr
unit_svm_intr_SRCS := backend/svm/svm_intr.c vmm/dev/vlapic.c
UNIT_TESTS += hlt_intercept
unit_hlt_intercept_SRCS := vmm/vcpu/hlt_intercept.c
UNIT_TESTS += fastpath
unit_fastpath_SRCS := sched/entity.c vmm/vcpu/vcpu_events.c vmm/dev/vlapic.c vmm/vcpu/nmi.c vmm/dev/kvm_pv.c vmm/dev/kvmclock.c vmm/dev/steal_time.c \
	vmm/console/trace.c sched/halt_poll.c sched/yield.c lib/json.c
UNIT_TESTS += stats
# The statistics tables and what they link against (also make stats-doc's).
STATS_TABLE_SRCS := stats/stats.c lib/json.c vmm/vcpu/vcpu_stats.c sched/cpu_stats.c sched/spin.c \
	vmm/vcpu/hlt_intercept.c arch/x86/virt.c \
	vmm/dev/vuart.c vmm/dev/vpic.c vmm/dev/vpit.c vmm/dev/virtio/blk.c vmm/dev/virtio/net.c vmm/net/switch.c \
	vmm/dev/virtio/virtio_mmio.c vmm/dev/virtio/virtqueue.c sched/deferred.c
unit_stats_SRCS := $(STATS_TABLE_SRCS) stats/table.c
UNIT_TESTS += devices
unit_devices_SRCS := $(wildcard vmm/dev/*.c) stats/stats.c vmm/exit/io.c vmm/exit/npf.c vmm/exit/unbacked.c \
	vmm/vcpu/nmi.c vmm/dev/virtio/virtio_vm.c vmm/dev/virtio/virtio_mmio.c sched/deferred.c \
	vmm/dev/virtio/virtqueue.c vmm/dev/virtio/blk.c vmm/dev/virtio/blk_vm.c vmm/dev/virtio/net.c \
	vmm/dev/virtio/net_vm.c vmm/net/switch.c lib/json.c
UNIT_TESTS += serial_mux
unit_serial_mux_SRCS := vmm/console/serial_mux.c
UNIT_TESTS += console
unit_console_SRCS := drivers/console.c lib/format.c lib/json.c
UNIT_TESTS += mce
unit_mce_SRCS := vmm/dev/mce_state.c
UNIT_TESTS += virtqueue
unit_virtqueue_SRCS := vmm/dev/virtio/virtqueue.c
UNIT_TESTS += virtio_mmio
unit_virtio_mmio_SRCS := vmm/dev/virtio/virtio_mmio.c sched/deferred.c vmm/dev/virtio/virtqueue.c
UNIT_TESTS += virtio_blk
unit_virtio_blk_SRCS := vmm/dev/virtio/blk.c vmm/dev/virtio/virtio_mmio.c sched/deferred.c vmm/dev/virtio/virtqueue.c
UNIT_TESTS += net_switch
unit_net_switch_SRCS := vmm/net/switch.c
UNIT_TESTS += virtio_net
unit_virtio_net_SRCS := vmm/dev/virtio/net.c vmm/net/switch.c vmm/dev/virtio/virtio_mmio.c sched/deferred.c \
	vmm/dev/virtio/virtqueue.c lib/json.c stats/stats.c
UNIT_TESTS += pit
unit_pit_SRCS := vmm/dev/vpit.c
UNIT_TESTS += pic
unit_pic_SRCS := vmm/dev/vpic.c
