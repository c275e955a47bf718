/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * QEMU's fw_cfg interface, the part guests use to learn their shape: a
 * 16-bit selector written to port 0x510 and the item read byte by byte from
 * port 0x511. Items: 0x00 signature "QEMU", 0x03 RAM size (u64), 0x05
 * number of vCPUs (u16); any other key reads as zeros. The fw-cfg device
 * (vmm/dev/fwcfg.c, docs/architecture.md) keeps one per VM.
 */
#ifndef POLLUX_VMM_DEV_FWCFG_H
#define POLLUX_VMM_DEV_FWCFG_H

#include <stdint.h>

#define FWCFG_PORT_SELECTOR 0x510
#define FWCFG_PORT_DATA     0x511

struct fwcfg {
    uint16_t key;
    uint32_t offset;
    uint64_t ram_size;
    uint16_t ncpus;
};

void fwcfg_init(struct fwcfg *f, uint64_t ram_size, uint16_t ncpus);
void fwcfg_select(struct fwcfg *f, uint16_t key);
uint8_t fwcfg_read(struct fwcfg *f);

#endif
