/* SPDX-License-Identifier: GPL-2.0-only */
/* Multiboot header constants (specs 0.6.96 and 2.0), shared by C and assembly. */
#ifndef POLLUX_BOOT_MULTIBOOT_H
#define POLLUX_BOOT_MULTIBOOT_H

#define MB1_HEADER_MAGIC 0x1BADB002
#define MB1_HEADER_FLAGS 0x3 /* page-align modules, provide memory info */
#define MB2_HEADER_MAGIC 0xE85250D6

#endif
