/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Ethernet switch between VMs inside pollux (docs/virtio.md): a VM with
 * net=NAME has one port on the switch of that name, created with its first
 * port and gone with its last. The switch learns source MACs (a bounded
 * table: a full table forgets the source seen least recently), floods
 * broadcast, multicast and unknown destinations to every other port, and
 * copies each frame into the receiving port's device through the port's
 * `deliver` callback. A frame for a port whose device has no free receive
 * buffer waits in that port's bounded hold queue, in order, until the
 * device's receive notify (net_port_resume); a frame for a full hold queue is
 * dropped and counted. Nobody spins on a peer without buffers: a sender
 * holds the frame, counts, and goes on. Pure: the unit tests drive it with
 * fake devices.
 *
 * Locks, and why two VMs sending to each other at once cannot deadlock.
 * There are three kinds, always taken in this order:
 *   1. the registry's (join, leave: which switches exist, by name);
 *   2. a switch's (its port list and its MAC table): a sender holds it from
 *      learning until the last receiver has its copy, which is also what
 *      keeps a leaving port's device, and the VM under it, alive while a
 *      frame is on its way there;
 *   3. a port's (p->lock, its device's: its hold queue, and through
 *      `deliver` its receive queue). The sender takes each receiver's in
 *      turn and drops it before taking the next: no one ever holds two
 *      ports' locks.
 * A sender holds no lock of its own port while it sends: the device copies
 * the frame out of its transmit buffers under its transmit queue's lock and
 * drops that lock before net_switch_send (the transmit queue's lock is taken
 * after a port's, by the transport's reset, never the other way round). The
 * receiver's own paths (its notify: net_port_resume; its reset:
 * net_port_drain) hold only its port's lock, never a switch's. So when A and
 * B send to each other at once, one of them waits for the switch's lock
 * with nothing else held, and every chain of waiting follows the order
 * above: no cycle. Under a port's lock the device may raise its interrupt
 * (the VM's I/O APIC lock, below all of these).
 */
#ifndef POLLUX_VMM_NET_SWITCH_H
#define POLLUX_VMM_NET_SWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/spinlock.h"
#include "vmm/vmconfig.h"

#define NET_ETH_ALEN     6
#define NET_FRAME_MIN    14   /* an Ethernet header: destination, source, type */
#define NET_MTU          1500 /* the payload a frame carries: the switch's, offered as F_MTU */
#define NET_FRAME_MAX    (NET_MTU + 18) /* the payload, the header and a VLAN tag; no FCS */
#define NET_HOLD_MAX     32             /* frames a port holds for its device */
#define NET_SWITCH_PORTS 16             /* ports on one switch */
#define NET_SWITCHES_MAX 8              /* switches at once */
#define NET_MAC_TABLE    64             /* learned MACs per switch */

struct net_port;
struct net_switch;

/* What a device did with a frame offered to it (under the port's lock). */
enum net_rx {
    NET_RX_DELIVERED, /* in a receive buffer, the driver told */
    NET_RX_NO_BUFFER, /* no free buffer: hold it (the device asked to be notified of new ones) */
    NET_RX_DROPPED,   /* the device takes no frame: not running, or its buffer is too short */
};

typedef enum net_rx (*net_deliver_fn)(struct net_port *p, const uint8_t *frame, unsigned len);

/* A port's counters, the frames each way: virtio_net_stats_table (vmm/dev/virtio/net.h). */
struct net_port_stats {
    uint64_t tx_packets, tx_bytes, tx_drops;
    uint64_t rx_packets, rx_bytes, rx_drops, rx_drops_full, rx_drops_reset, rx_drops_device;
    uint64_t rx_held, tx_lock_waits, tx_lock_wait_cycles;
};

struct net_held_frame {
    uint16_t len;
    uint8_t data[NET_FRAME_MAX];
};

struct net_port {
    /* Set by net_switch_join. */
    struct net_switch *sw;
    struct spinlock *lock; /* the device's: held frames, its receive queue */
    net_deliver_fn deliver;
    void *owner; /* the device */
    /* Under *lock: the hold queue, a ring. */
    unsigned held_first, held_count;
    struct net_held_frame held[NET_HOLD_MAX];
    /* Written under the switch's lock (tx_*) or *lock (rx_*); read without either. */
    struct net_port_stats stats;
};

/*
 * Join p to the switch `name` (created if none has that name yet); its device
 * takes frames through deliver under *lock. 0, or -1 with why in err (the
 * name too long, the switch full, no room for another switch).
 */
int net_switch_join(struct net_port *p, const char *name, struct spinlock *lock,
                    net_deliver_fn deliver, void *owner, char *err, size_t errlen);

/*
 * Leave the switch (no lock held): forget the MACs learned on p, drop its
 * held frames. When it returns no sender is delivering to p any more, so
 * its device may be freed. The last port out frees the switch's name.
 */
void net_switch_leave(struct net_port *p);

/* The switch's name. */
const char *net_switch_name(const struct net_port *p);

/*
 * A frame of len bytes from p's device (no port's lock held): learn its
 * source, forward it. A length outside [NET_FRAME_MIN, NET_FRAME_MAX] is
 * counted in tx_drops and frame is not read.
 */
void net_switch_send(struct net_port *p, const uint8_t *frame, unsigned len);

/*
 * Under *p->lock (the device's receive notify): offer the held frames to the
 * device in order until it has no buffer. True if none is left held.
 */
bool net_port_resume(struct net_port *p);

/* Under *p->lock (the device's reset): drop the held frames, counted in rx_drops_reset. */
void net_port_drain(struct net_port *p);

#endif
