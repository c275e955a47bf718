/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio 1.x over MMIO (docs/virtio.md): the constants of the spec (OASIS
 * virtio v1.2, sections 2, 4.2 and 5) that pollux's transport and devices
 * use, and where a VM's devices sit; shared with the bundled guests that
 * drive them. Only the modern (version 2) register
 * layout exists; VIRTIO_F_VERSION_1 is offered and required.
 */
#ifndef POLLUX_ABI_VIRTIO_H
#define POLLUX_ABI_VIRTIO_H

#include <stdint.h>

/*
 * Where a VM's virtio devices are: slot n is the 4 KiB page at
 * VIRTIO_MMIO_BASE + n * VIRTIO_MMIO_SIZE, interrupting on I/O APIC pin
 * VIRTIO_GSI_FIRST + n (edge-triggered, active high, as its ACPI _CRS says).
 * A VM with a virtio device keeps its RAM below VIRTIO_MMIO_BASE.
 */
#define VIRTIO_MMIO_BASE 0xd0000000ull
#define VIRTIO_MMIO_SIZE 0x1000u
#define VIRTIO_GSI_FIRST 5
#define VIRTIO_SLOT_NET  0 /* net=: 0xd0000000, GSI 5 */
#define VIRTIO_SLOT_BLK  1 /* disk=: 0xd0001000, GSI 6 */
#define VIRTIO_SLOTS     2
/*
 * A VM's MAC: locally administered unicast, 02:50:4c:58:00:<VM number>, its
 * place among the boot's VMs from 0 (initramfs and disk modules are no VMs);
 * the Linux guest's init takes 10.0.0.<number + 1> from it.
 */
#define VIRTIO_NET_MAC_PREFIX 0x02, 0x50, 0x4c, 0x58, 0x00
#define VIRTIO_ACPI_HID                                                                            \
    "LNRO0005" /* what Linux's virtio_mmio binds to (as Firecracker declares)                      \
                */

/* Device IDs (5). */
#define VIRTIO_ID_NET   1
#define VIRTIO_ID_BLOCK 2

/* MMIO registers (4.2.2), offsets in the device's page; all 32-bit. */
#define VIRTIO_MMIO_MAGIC_VALUE         0x000 /* "virt" */
#define VIRTIO_MMIO_VERSION             0x004 /* 2 */
#define VIRTIO_MMIO_DEVICE_ID           0x008
#define VIRTIO_MMIO_VENDOR_ID           0x00c
#define VIRTIO_MMIO_DEVICE_FEATURES     0x010
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL 0x014
#define VIRTIO_MMIO_DRIVER_FEATURES     0x020
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL 0x024
#define VIRTIO_MMIO_QUEUE_SEL           0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX       0x034
#define VIRTIO_MMIO_QUEUE_NUM           0x038
#define VIRTIO_MMIO_QUEUE_READY         0x044
#define VIRTIO_MMIO_QUEUE_NOTIFY        0x050
#define VIRTIO_MMIO_INTERRUPT_STATUS    0x060
#define VIRTIO_MMIO_INTERRUPT_ACK       0x064
#define VIRTIO_MMIO_STATUS              0x070
#define VIRTIO_MMIO_QUEUE_DESC_LOW      0x080
#define VIRTIO_MMIO_QUEUE_DESC_HIGH     0x084
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW    0x090
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH   0x094
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW    0x0a0
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH   0x0a4
#define VIRTIO_MMIO_SHM_SEL             0x0ac /* a shared memory region (there are none) */
#define VIRTIO_MMIO_SHM_LEN_LOW         0x0b0 /* its length: -1, no such region */
#define VIRTIO_MMIO_SHM_LEN_HIGH        0x0b4
#define VIRTIO_MMIO_CONFIG_GENERATION   0x0fc
#define VIRTIO_MMIO_CONFIG              0x100 /* the device's configuration space */

#define VIRTIO_MMIO_MAGIC     0x74726976u /* "virt", little-endian */
#define VIRTIO_MMIO_VERSION_2 2
#define VIRTIO_VENDOR_POLLUX  0x554c4f50u /* "POLU": any value; QEMU's is "QEMU" */

/* InterruptStatus bits (4.2.2). */
#define VIRTIO_MMIO_INT_VRING  1u /* a used buffer */
#define VIRTIO_MMIO_INT_CONFIG 2u /* the configuration changed */

/* Device status bits (2.1). */
#define VIRTIO_STATUS_ACKNOWLEDGE        1u
#define VIRTIO_STATUS_DRIVER             2u
#define VIRTIO_STATUS_DRIVER_OK          4u
#define VIRTIO_STATUS_FEATURES_OK        8u
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 64u
#define VIRTIO_STATUS_FAILED             128u

/* Feature bits (6): the transport's, then each device's (5.1.3, 5.2.3). */
#define VIRTIO_F_INDIRECT_DESC  28
#define VIRTIO_F_RING_EVENT_IDX 29
#define VIRTIO_F_VERSION_1      32
#define VIRTIO_F_ACCESS_PLATFORM                                                                   \
    33                          /* never offered: no IOMMU, rings hold guest-physical addresses */
#define VIRTIO_F_RING_PACKED 34 /* never offered */
#define VIRTIO_BIT(b)        (1ull << (b))

#define VIRTIO_NET_F_MTU     3
#define VIRTIO_NET_F_MAC     5
#define VIRTIO_NET_F_STATUS  16
#define VIRTIO_NET_S_LINK_UP 1

#define VIRTIO_BLK_F_SIZE_MAX 1
#define VIRTIO_BLK_F_SEG_MAX  2
#define VIRTIO_BLK_F_RO       5
#define VIRTIO_BLK_F_BLK_SIZE 6
#define VIRTIO_BLK_F_FLUSH    9

/* Split virtqueues (2.7). */
#define VIRTQ_DESC_F_NEXT          1u
#define VIRTQ_DESC_F_WRITE         2u
#define VIRTQ_DESC_F_INDIRECT      4u
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1u
#define VIRTQ_USED_F_NO_NOTIFY     1u

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_used_elem {
    uint32_t id;
    uint32_t len;
};

/* virtio-net's header with VERSION_1, MRG_RXBUF or not (5.1.6). */
#define VIRTIO_NET_HDR_LEN         12
#define VIRTIO_NET_HDR_NUM_BUFFERS 10 /* its le16 num_buffers */

/* virtio-blk requests (5.2.6): a 16-byte header, data, a status byte. */
#define VIRTIO_BLK_T_IN     0
#define VIRTIO_BLK_T_OUT    1
#define VIRTIO_BLK_T_FLUSH  4
#define VIRTIO_BLK_T_GET_ID 8
#define VIRTIO_BLK_S_OK     0
#define VIRTIO_BLK_S_IOERR  1
#define VIRTIO_BLK_S_UNSUPP 2
#define VIRTIO_BLK_ID_BYTES 20
#define VIRTIO_BLK_SECTOR   512

#endif
