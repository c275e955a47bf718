/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small AML emitter (ACPI 6.5, section 20.2): the few terms a VM's SSDT
 * needs to declare its virtio-mmio devices (vmm/load/acpi_tables.c), so a
 * table that depends on the VM's configuration is built at run time rather
 * than by iasl at build time (the DSDT, vmm/load/dsdt.asl).
 *
 * Terms that hold others (Scope, Device, Buffer) are opened with a _begin
 * call and closed by aml_end(); their PkgLength, whose own size (1 to 4
 * bytes) depends on what they hold, is inserted when they close. A write past
 * the buffer, too deep a nesting or a bad name sets `failed` and writes
 * nothing more: check it once at the end.
 */
#ifndef POLLUX_VMM_LOAD_AML_H
#define POLLUX_VMM_LOAD_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AML_DEPTH_MAX     8
#define AML_PKGLENGTH_MAX 0x0fffffffu /* 28 bits: a 4-byte PkgLength's limit */

struct aml {
    uint8_t *buf;
    size_t cap, len;
    bool failed;
    unsigned depth;
    struct {
        size_t start;   /* where its PkgLength goes */
        bool is_buffer; /* a Buffer: BufferSize follows the PkgLength */
    } open[AML_DEPTH_MAX];
};

void aml_init(struct aml *a, uint8_t *buf, size_t cap);

/*
 * The PkgLength of a term whose contents after it are n bytes: the encoded
 * length counts the PkgLength's own bytes. Writes 1 to 4 bytes to out and
 * returns how many, 0 if n is too long for 28 bits.
 */
unsigned aml_pkglength(uint8_t out[4], size_t n);

/*
 * A NameString: "\" for the root, then NameSegs separated by dots, each up
 * to 4 characters (A-Z, 0-9, _; not a digit first), padded with '_':
 * "\\_SB", "VIO0", "\\_SB.VIO0".
 */
void aml_name_string(struct aml *a, const char *path);

/* Integer data: ZeroOp, OneOp, or the smallest of Byte/Word/DWord/QWordPrefix. */
void aml_integer(struct aml *a, uint64_t v);
/* A String: ASCII, NUL-terminated. */
void aml_string(struct aml *a, const char *s);
/* Name(path, <the data object emitted next>). */
void aml_name(struct aml *a, const char *path);

void aml_scope_begin(struct aml *a, const char *path);
void aml_device_begin(struct aml *a, const char *path);
/* A Buffer whose bytes are emitted next (its BufferSize is their count). */
void aml_buffer_begin(struct aml *a);
/* Close the innermost open term. */
void aml_end(struct aml *a);

/*
 * ResourceTemplate(): a Buffer of resource descriptors (6.4), closed by
 * aml_resource_template_end(), which appends the End Tag with the checksum
 * that makes the descriptors sum to zero.
 */
void aml_resource_template_begin(struct aml *a);
void aml_resource_template_end(struct aml *a);
/* Memory32Fixed(ReadWrite, base, len). */
void aml_memory32_fixed_rw(struct aml *a, uint32_t base, uint32_t len);
/*
 * Interrupt(ResourceConsumer, Edge, ActiveHigh, Exclusive) { gsi }: the
 * Extended Interrupt descriptor, whose trigger and polarity Linux applies to
 * the I/O APIC pin as written.
 */
void aml_interrupt_edge_high(struct aml *a, uint32_t gsi);

#endif
