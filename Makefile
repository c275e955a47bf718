# SPDX-License-Identifier: GPL-2.0-only
# pollux build. `make` builds the hypervisor image and the default ISO;
# `make run` boots it, `make test` runs the unit and boot tests.
# See README.md for the variables (EMU, SMP, CPU, MEM, ARGS, GUESTS, TIMEOUT, ACCEL).

.SECONDEXPANSION:
SHELL := /bin/bash
BUILD := build
HOSTCC ?= cc
CC := gcc
LD := ld
OBJCOPY := objcopy
PYTHON ?= python3

WARN := -Wall -Wextra -Werror
KDEFS ?=
KCFLAGS := -std=c11 $(WARN) -O2 -g -ffreestanding -fno-builtin -fno-stack-protector \
	-fno-pic -fno-pie -mno-red-zone -mgeneral-regs-only -mcmodel=small \
	-fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-asynchronous-unwind-tables \
	-fcf-protection=none -mno-shstk -m64 -MMD -MP -I. $(KDEFS)
KASFLAGS := -g -m64 -MMD -MP -I. -D__ASSEMBLY__ $(KDEFS)
HOSTCFLAGS := -std=c11 $(WARN) -g -O1 -I. -DHOST_TEST -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined

# Hypervisor sources, by folder.
KSRCS_C := $(wildcard boot/*.c arch/x86/*.c backend/svm/*.c backend/vmx/*.c vmm/*.c vmm/*/*.c \
	vmm/dev/virtio/*.c sched/*.c stats/*.c drivers/*.c lib/*.c)
KSRCS_S := $(wildcard boot/*.S arch/x86/*.S backend/svm/*.S backend/vmx/*.S)
# The guest CPUID policy: the table in docs/cpuid.md, turned into C.
CPUID_TABLE := $(BUILD)/gen/cpuid_table.c
# The guests' DSDT: ASL compiled by iasl, its AML embedded by an .incbin.
DSDT_AML := $(BUILD)/gen/dsdt.aml
DSDT_S := $(BUILD)/gen/dsdt.S
KOBJS := $(patsubst %.c,$(BUILD)/k/%.o,$(KSRCS_C) $(CPUID_TABLE)) \
	$(patsubst %.S,$(BUILD)/k/%.o,$(KSRCS_S) $(DSDT_S))

# The Linux guest (docs/linux.md): built once `make deps` has fetched its packages.
LINUX_INITRD := $(if $(wildcard $(BUILD)/linux/versions.txt),$(BUILD)/linux/initrd.cpio)

# Every target checks its tools first (tools/deps.sh: as root it installs what
# is missing, otherwise it prints the apt-get command), so a fresh machine gets
# a clear word rather than a traceback from a missing tool.
NO_TOOLS_GOALS := deps clean format stats-doc seeds
ifneq ($(filter-out $(NO_TOOLS_GOALS),$(or $(MAKECMDGOALS),all)),)
ifneq ($(shell tools/deps.sh >&2; echo $$?),0)
$(error missing tools, see above)
endif
endif

.PHONY: all
all: $(BUILD)/pollux.elf $(BUILD)/pollux32.elf guests $(BUILD)/pollux.iso $(LINUX_INITRD)

$(BUILD)/linux/initrd.cpio: $(BUILD)/linux/versions.txt guest-tests/linux/init guest-tests/linux/outb.c guest-tests/linux/ebizzy.c \
		tools/linux.sh
	tools/linux.sh initramfs

$(BUILD)/linux/versions.txt:
	tools/linux.sh fetch

# Two links: the second adds the symbol table (placed after all code and
# data, so nothing moves) generated from the first.
$(BUILD)/ksyms0.o: | $(BUILD)/
	@printf '\t.section .ksyms,"a"\n\t.balign 8\n\t.globl ksyms_count, ksyms_table\nksyms_count: .quad 0\nksyms_table:\n' \
		| $(CC) $(KASFLAGS) -x assembler -c - -o $@
	@echo "  AS      $@"

$(BUILD)/pollux.pass1.elf: $(KOBJS) $(BUILD)/ksyms0.o linker.ld
	@echo "  LD      $@"
	@$(LD) -T linker.ld -nostdlib -z max-page-size=0x1000 -z noexecstack $(KOBJS) $(BUILD)/ksyms0.o -o $@

$(BUILD)/ksyms.S: $(BUILD)/pollux.pass1.elf tools/gensyms.py
	@echo "  SYMS    $@"
	@nm -n --defined-only $< | $(PYTHON) tools/gensyms.py > $@

$(BUILD)/ksyms.o: $(BUILD)/ksyms.S
	@echo "  AS      $@"
	@$(CC) $(KASFLAGS) -c $< -o $@

$(BUILD)/pollux.elf: $(KOBJS) $(BUILD)/ksyms.o linker.ld
	@echo "  LD      $@"
	@$(LD) -T linker.ld -nostdlib -z max-page-size=0x1000 -z noexecstack $(KOBJS) $(BUILD)/ksyms.o -o $@
	@cmp -s <(nm $(BUILD)/pollux.pass1.elf | grep -i ' t ') <(nm $@ | grep -i ' t ') \
		|| { echo "error: code moved between the two links" >&2; rm -f $@; exit 1; }

# QEMU's -kernel loads multiboot1 only, from a 32-bit ELF.
$(BUILD)/pollux32.elf: $(BUILD)/pollux.elf
	@echo "  OBJCOPY $@"
	@$(OBJCOPY) -O elf32-i386 $< $@

$(BUILD)/:
	mkdir -p $@

$(CPUID_TABLE): docs/cpuid.md tools/cpuid_policy.py
	@mkdir -p $(dir $@)
	$(PYTHON) tools/cpuid_policy.py $< $@

$(DSDT_AML): vmm/load/dsdt.asl
	@mkdir -p $(dir $@)
	iasl -p $(basename $@) $< >/dev/null

$(DSDT_S): $(DSDT_AML)
	printf '\t.section .rodata\n\t.globl acpi_dsdt_aml, acpi_dsdt_aml_end\nacpi_dsdt_aml:\n\t.incbin "%s"\nacpi_dsdt_aml_end:\n\t.section .note.GNU-stack,"",@progbits\n' $< > $@

# The flags the objects are built with, as a file named after them: a change of KDEFS,
# SVM_CFLAGS or the compiler flags makes a new one, newer than every object, so they are all
# rebuilt (make sees no other sign of it).
KFLAGS_TEXT := $(CC) $(KCFLAGS) | $(KASFLAGS) | $(SVM_CFLAGS)
KFLAGS_STAMP := $(BUILD)/k/flags-$(shell printf '%s' '$(KFLAGS_TEXT)' | md5sum | cut -c1-16)
$(KFLAGS_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/k/flags-*
	@printf '%s\n' '$(KFLAGS_TEXT)' > $@

$(BUILD)/k/%.o: %.c $(KFLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) -c $< -o $@

$(BUILD)/k/%.o: %.S $(KFLAGS_STAMP)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(KASFLAGS) -c $< -o $@

# The default ISO: `make` builds it with the default configuration; `make run`
# builds one per run in its own directory.
$(BUILD)/pollux.iso: $(BUILD)/pollux.elf $(GUEST_ELFS) tools/run.py
	$(PYTHON) tools/run.py --iso-only $@ --args "$(strip $(DEMO_ARGS) $(ARGS))" --guests "$(GUESTS)"

include tests/unit/units.mk
UNIT_BINS := $(patsubst %,$(BUILD)/unit/test_%,$(UNIT_TESTS))
include tests/fuzz/fuzz.mk

# ---------------------------------------------------------------- run
EMU ?= qemu
SMP ?= 2
CPU ?=
# Machine memory in MiB; unset, tools/run.py sizes it from GUESTS (512, or more for big guests).
MEM ?=
# The default demo (README.md): an IPI ping-pong, a spinlock with 4 vCPUs on 2 CPUs and
# an idle ticker together, with a statistics round every 2 s; GUESTS= boots none.
# The demo's own hypervisor options. ARGS's words come after them: a word of ARGS with the same
# name overrides one of these (the last word wins).
DEMO_ARGS := stats_interval_ms=2000
ARGS ?=
GUESTS ?= pingpong:vcpus=2:args=4000 spinlock:vcpus=4:args=5000000000 idletick:vcpus=2:args=4000+1000
TIMEOUT ?= 0
ACCEL ?= auto
BOOT ?= grub
# What the terminal shows (tools/run.py --console): auto is the human view on a terminal (the
# @event JSON only in the run's console.log), every line to a pipe; all shows every line.
CONSOLE ?= auto
RUN_FLAGS = --emu $(EMU) --smp $(SMP) --cpu "$(CPU)" $(if $(MEM),--mem $(MEM)) --args "$(strip $(DEMO_ARGS) $(ARGS))" \
	--guests "$(GUESTS)" --timeout $(TIMEOUT) --accel $(ACCEL) --boot $(BOOT) --console $(CONSOLE)

.PHONY: deps run debug test test-full test-layouts soak bench bench-full seeds unit fuzz format clean
deps:
	@tools/deps.sh
	@tools/linux.sh fetch

run: deps all
	@$(PYTHON) tools/run.py $(RUN_FLAGS)

debug: deps all
	@$(PYTHON) tools/run.py $(RUN_FLAGS) --emu qemu --debug

# T=<name or glob> runs only the matching tests.
T ?=
# The counting build is built too, so that it cannot rot between benchmarks.
test: deps all counts $(BUILD)/linux/initrd.cpio $(UNIT_BINS) $(FUZZ_BINS) $(BUILD)/haltreplay
	@$(PYTHON) tools/test.py --units "$(UNIT_BINS)" --fuzz "$(FUZZ_BINS)" $(if $(T),--only '$(T)')

test-full: deps all $(BUILD)/linux/initrd.cpio $(UNIT_BINS) $(FUZZ_BINS)
	@$(PYTHON) tools/test.py --full --units "$(UNIT_BINS)" --fuzz "$(FUZZ_BINS)" \
		$(if $(T),--only '$(T)')

# The boot tests again in LAYOUTS other memory layouts (the kernel padded by 4 KiB steps): a
# failure that depends on timing shows in some layouts every time (docs/robustness.md).
LAYOUTS ?= 4
test-layouts: deps all $(BUILD)/linux/initrd.cpio
	@$(PYTHON) tools/test.py --layouts $(LAYOUTS) $(if $(T),--only '$(T)')

# The soak: an overcommitted mix on every platform for SOAK_SECONDS of virtual time.
SOAK_SECONDS ?= 60
soak: deps all
	@$(PYTHON) tools/test.py --soak $(SOAK_SECONDS) $(if $(T),--only '$(T)')

# Each harness for FUZZ_SECONDS (default 60), or FUZZ_RUNS executions, at FUZZ_NICE;
# FUZZ_ONLY=<name> runs one.
FUZZ_SECONDS ?=
FUZZ_RUNS ?=
FUZZ_NICE ?= 0
FUZZ_ONLY ?=
fuzz: deps $(FUZZ_BINS)
	@$(PYTHON) tools/fuzz.py $(if $(FUZZ_SECONDS),--seconds $(FUZZ_SECONDS)) \
		$(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS)) --nice $(FUZZ_NICE) \
		$(if $(FUZZ_ONLY),--only $(FUZZ_ONLY)) $(FUZZ_BINS)

# B=<scenario> runs one (tools/bench.py --help names them); RUNS=N runs each claim cell
# N times (default 10; with bench-full every cell, and a Linux matrix's cells N boots).
# The Linux matrices across sessions (docs/linux.md, "Running a matrix"): PLAN=1 prints
# the plan and runs nothing, RESUME=1 continues bench-results/<scenario>.json, HOURS=H
# starts no boot that would not end within H hours.
B ?=
RUNS ?=
PLAN ?=
RESUME ?=
HOURS ?=
BENCH_FLAGS = $(if $(B),--only $(B)) $(if $(RUNS),--runs $(RUNS)) $(if $(PLAN),--plan) \
	$(if $(RESUME),--resume) $(if $(HOURS),--hours $(HOURS))
# When make started, for bench.py's total (its builds come before it runs).
bench bench-full: export POLLUX_MAKE_START := $(shell date +%s.%N)
bench: deps all floor counts $(BUILD)/linux/initrd.cpio
	@$(PYTHON) tools/bench.py $(BENCH_FLAGS)

# The whole matrix of every scenario at RUNS, and the Linux scenarios (README: its duration).
bench-full: deps all floor counts $(BUILD)/linux/initrd.cpio
	@$(PYTHON) tools/bench.py --full $(BENCH_FLAGS)

# docs/seeds.md, each seed's published result beside pollux's, from bench-results/*.json.
seeds:
	@$(PYTHON) tools/seeds.py

# The exit path's floor (arch/x86/exit_floor.h): its own build, for `make bench` only.
.PHONY: floor
floor:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/floor KDEFS=-DPOLLUX_EXIT_FLOOR \
		$(BUILD)/floor/pollux.elf

# The counting build (arch/x86/exit_counts.h): its own build, for `make bench` only. Each
# load and store of backend/svm/ calls arch/x86/exit_counts.c, which counts the VMCB's.
VMCB_COUNT_CFLAGS := -fsanitize=thread --param tsan-instrument-func-entry-exit=0
SVM_CFLAGS ?=
$(BUILD)/k/backend/svm/%.o: KCFLAGS += $(SVM_CFLAGS)
.PHONY: counts
counts:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/counts KDEFS=-DPOLLUX_EXIT_COUNTS \
		SVM_CFLAGS="$(VMCB_COUNT_CFLAGS)" $(BUILD)/counts/pollux.elf

format:
	clang-format -i $(KSRCS_C) $(wildcard */*.h */*/*.h */*/*/*.h tests/unit/*.c tests/fuzz/*.c \
		guest-tests/*.c guest-tests/runtime/*.c guest-tests/linux/*.c)

clean:
	rm -rf $(BUILD)

include guest-tests/guests.mk

# ---------------------------------------------------------------- unit tests

$(BUILD)/unit/test_%: tests/unit/test_%.c $$(unit_$$*_SRCS) $$(wildcard */*.h */*/*.h */*/*/*.h)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) $(HOSTCFLAGS) $< $(unit_$*_SRCS) -lcmocka -lpthread -o $@

.PHONY: unit
unit: $(UNIT_BINS) $(BUILD)/haltreplay
	@for t in $(UNIT_BINS); do $$t || exit 1; done

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# What each halt-polling policy would have done over a trace=halt recording: tools/haltreplay.py
# runs it (docs/halt_polling.md). Built with `unit` and `test` so that it always compiles.
HALTREPLAY_SRCS := tools/haltreplay.c tools/halt_replay.c sched/halt_poll.c
$(BUILD)/haltreplay: $(HALTREPLAY_SRCS) tools/halt_replay.h sched/halt_poll.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) -std=c11 $(WARN) -O2 -I. $(HALTREPLAY_SRCS) -o $@

# docs/stats.md's table of statistics, rewritten from the descriptors (stats/stats.h);
# the unit test stats fails while it is out of date.
.PHONY: stats-doc
stats-doc:
	@mkdir -p $(BUILD)
	$(HOSTCC) -std=c11 $(WARN) -I. -DHOST_TEST tools/statsdoc.c $(STATS_TABLE_SRCS) -o $(BUILD)/statsdoc
	sed -i '/^| key |/,$$d' docs/stats.md
	$(BUILD)/statsdoc >> docs/stats.md
