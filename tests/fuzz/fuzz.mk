# SPDX-License-Identifier: GPL-2.0-only
# libFuzzer harnesses (clang, AddressSanitizer, UBSan) for every parser that
# sees outside input. One line per harness: fuzz_<name>_SRCS lists the
# project sources linked with tests/fuzz/fuzz_<name>.c. Seeds live in
# tests/fuzz/corpus/<name>/, inputs that once broke a parser in
# tests/fuzz/regressions/<name>/; both are replayed on every run.
FUZZ_CC := clang
FUZZ_CFLAGS := -std=c11 $(WARN) -g -O1 -I. -DHOST_TEST \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

FUZZ_TARGETS :=
FUZZ_TARGETS += bootinfo
fuzz_bootinfo_SRCS := boot/mb.c
FUZZ_TARGETS += loader
fuzz_loader_SRCS := vmm/load/loader.c vmm/load/e820.c
FUZZ_TARGETS += cmdline
fuzz_cmdline_SRCS := lib/options.c vmm/vmconfig.c vmm/vm_policy.c lib/json.c sched/spin.c sched/yield.c
FUZZ_TARGETS += acpi
fuzz_acpi_SRCS := drivers/acpi.c
FUZZ_TARGETS += mmio_decode
fuzz_mmio_decode_SRCS := vmm/exit/mmio_decode.c
FUZZ_TARGETS += insn
fuzz_insn_SRCS := arch/x86/insn.c
FUZZ_TARGETS += gpt
fuzz_gpt_SRCS := vmm/exit/gpt.c
FUZZ_TARGETS += virtqueue
fuzz_virtqueue_SRCS := vmm/dev/virtio/virtqueue.c
FUZZ_TARGETS += virtio_blk
fuzz_virtio_blk_SRCS := vmm/dev/virtio/blk.c vmm/dev/virtio/virtio_mmio.c sched/deferred.c vmm/dev/virtio/virtqueue.c
FUZZ_TARGETS += virtio_net
fuzz_virtio_net_SRCS := vmm/dev/virtio/net.c vmm/net/switch.c vmm/dev/virtio/virtio_mmio.c sched/deferred.c \
	vmm/dev/virtio/virtqueue.c

FUZZ_BINS := $(patsubst %,$(BUILD)/fuzz/fuzz_%,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $$(fuzz_$$*_SRCS) $$(wildcard */*.h */*/*.h)
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $< $(fuzz_$*_SRCS) -o $@
