# SPDX-License-Identifier: GPL-2.0-only
# Bundled guest images: 32-bit multiboot1 kernels that pollux runs as VMs.
# One line per guest: guest-tests/<name>.c becomes $(BUILD)/guests/<name>.elf,
# linked with the runtime in guest-tests/runtime/. `make guests` builds them.
GUEST_NAMES :=
GUEST_NAMES += hello
GUEST_NAMES += echo
GUEST_NAMES += exitbench
GUEST_NAMES += misbehave
GUEST_NAMES += fuzz
GUEST_NAMES += smp
GUEST_NAMES += timer
GUEST_NAMES += pingpong
GUEST_NAMES += cpuhog
GUEST_NAMES += escape
GUEST_NAMES += memsum
GUEST_NAMES += spinlock
GUEST_NAMES += locks
GUEST_NAMES += haltpoll
GUEST_NAMES += idletick
GUEST_NAMES += cpucheck
GUEST_NAMES += selfipi
GUEST_NAMES += pvcheck
GUEST_NAMES += virtiocheck
GUEST_NAMES += legacy

GUEST_OUT := $(BUILD)/guests
GUEST_OBJ := $(GUEST_OUT)/obj
GUEST_CFLAGS := -m32 -std=c11 -Wall -Wextra -Werror -O2 -ffreestanding -fno-builtin \
	-fno-stack-protector -fno-pic -fno-pie -mno-sse -mgeneral-regs-only \
	-fno-asynchronous-unwind-tables -fcf-protection=none -MMD -MP -I.
GUEST_ASFLAGS := -m32 -MMD -MP -I.
GUEST_LDFLAGS := -m elf_i386 -T guest-tests/guest.ld -nostdlib -z max-page-size=0x1000 \
	-z noexecstack --build-id=none
GUEST_RUNTIME := $(GUEST_OBJ)/runtime/entry.o $(GUEST_OBJ)/runtime/runtime.o
# The multiprocessor runtime (CPUs, local APIC, AP trampoline, timing) and the
# polled virtio driver are an archive, so a guest links only the parts it uses
# and the others none.
GUEST_SMP_LIB := $(GUEST_OBJ)/runtime/libsmp.a
GUEST_SMP_OBJS := $(patsubst %,$(GUEST_OBJ)/runtime/%.o,cpu lapic timing trampoline ping fault virtio)
GUEST_ELFS := $(patsubst %,$(GUEST_OUT)/%.elf,$(GUEST_NAMES))

.PHONY: guests
guests: $(GUEST_ELFS)

# escape runs with mem=1M, so that the hypervisor's load address lies outside its RAM.
$(GUEST_OUT)/escape.elf: GUEST_LDFLAGS := --defsym=GUEST_LOAD_ADDR=0x10000 $(GUEST_LDFLAGS)

$(GUEST_ELFS): $(GUEST_OUT)/%.elf: $(GUEST_OBJ)/%.o $(GUEST_RUNTIME) $(GUEST_SMP_LIB) guest-tests/guest.ld
	$(LD) $(GUEST_LDFLAGS) $(GUEST_RUNTIME) $< $(GUEST_SMP_LIB) -o $@

$(GUEST_SMP_LIB): $(GUEST_SMP_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(GUEST_OBJ)/%.o: guest-tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(GUEST_OBJ)/%.o: guest-tests/%.S
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_ASFLAGS) -c $< -o $@

-include $(wildcard $(GUEST_OBJ)/*.d $(GUEST_OBJ)/*/*.d)
