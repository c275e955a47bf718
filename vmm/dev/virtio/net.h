/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-net (virtio 1.x, 5.1) on the virtio-mmio transport, one port of a
 * switch between VMs (vmm/net/switch.h; docs/virtio.md). Features: MAC and
 * STATUS (the link is always up), VERSION_1 and the ring features from the
 * transport; no offloads, so the guest computes its checksums and a header's
 * flags are 0. Queue 0 receives, queue 1 transmits. Transmit strips the
 * 12-byte header and hands the frame to the switch; receive writes a header
 * with num_buffers 1, then the frame, into one chain that must hold both (a
 * shorter chain gets nothing: the frame is dropped and counted).
 *
 * Pure, as the transport is: the VM's side (vmm/dev/virtio/net_vm.c) gives it
 * the VM's env, RAM and MAC, and the unit tests and the fuzzer their own.
 *
 * Locks: the receive queue's lock is the switch port's (a frame arrives
 * under it, from another VM's CPU); the transmit queue's lock is dropped
 * before a frame goes to the switch (switch.h says why this cannot
 * deadlock).
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_NET_H
#define POLLUX_VMM_DEV_VIRTIO_NET_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/dev/virtio/virtio_mmio.h"
#include "vmm/net/switch.h"

#define VIRTIO_NET_RXQ        0
#define VIRTIO_NET_TXQ        1
#define VIRTIO_NET_CONFIG_LEN 12 /* mac[6], le16 status, le16 max_virtqueue_pairs, le16 mtu */

struct virtio_net {
    struct virtio_mmio transport; /* first: the transport's callbacks find the device from it */
    struct net_port port;
    uint8_t mac[NET_ETH_ALEN];
};

/* The MAC of the VM with this number: 02:50:4c:58:00:<number> (abi/virtio.h). */
void virtio_net_mac(unsigned vm_number, uint8_t mac[NET_ETH_ALEN]);

/* "02:50:4c:58:00:01": 18 bytes with the NUL. */
void virtio_net_mac_text(const uint8_t mac[NET_ETH_ALEN], char out[18]);

/* The device's side of its transport: virtio_mmio_init (or virtio_vm_init) takes it. */
extern const struct virtio_device_ops virtio_net_ops;

/*
 * Give n (its transport set up, nobody sending yet) its MAC and its port on
 * the switch `switch_name`. 0, or -1 with the switch's refusal in err.
 */
int virtio_net_join(struct virtio_net *n, const uint8_t mac[NET_ETH_ALEN], const char *switch_name,
                    char *err, size_t errlen);

/* Leave the switch: afterwards no other VM touches n or its owner's RAM. */
void virtio_net_leave(struct virtio_net *n);

extern const struct stats_table virtio_net_stats_table; /* its port's rows, its transport's */

#endif
