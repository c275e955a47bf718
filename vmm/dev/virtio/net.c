/* SPDX-License-Identifier: GPL-2.0-only */
/* virtio-net (vmm/dev/virtio/net.h): the queues, the header, the switch port. */
#include "vmm/dev/virtio/net.h"

#include "abi/virtio.h"
#include "lib/format.h"
#include "lib/string.h"
#include "stats/stats.h"

static struct virtio_net *net_of(struct virtio_mmio *t)
{
    return (struct virtio_net *)t;
}

void virtio_net_mac(unsigned vm_number, uint8_t mac[NET_ETH_ALEN])
{
    const uint8_t prefix[] = {VIRTIO_NET_MAC_PREFIX};
    _Static_assert(sizeof(prefix) == NET_ETH_ALEN - 1, "the MAC rule: a prefix, then the index");
    memcpy(mac, prefix, sizeof(prefix));
    mac[NET_ETH_ALEN - 1] = (uint8_t)vm_number;
}

void virtio_net_mac_text(const uint8_t mac[NET_ETH_ALEN], char out[18])
{
    snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
             mac[5]);
}

/*
 * The configuration space (5.1.4), little-endian: mac, status, then
 * max_virtqueue_pairs (0: VIRTIO_NET_F_MQ is not offered) and mtu, the
 * switch's: a driver that negotiates F_MTU sends nothing longer, and Linux
 * refuses a larger MTU (`ip link set mtu 9000`) instead of losing every
 * frame the switch cannot carry.
 */
static void config_read(struct virtio_mmio *t, unsigned off, uint8_t *buf, unsigned len)
{
    const struct virtio_net *n = net_of(t);
    uint8_t config[VIRTIO_NET_CONFIG_LEN] = {0};
    memcpy(config, n->mac, NET_ETH_ALEN);
    config[6] = VIRTIO_NET_S_LINK_UP;
    config[10] = NET_MTU & 0xff;
    config[11] = NET_MTU >> 8;
    memcpy(buf, config + off, len);
}

/*
 * virtq_pop, and on an empty ring notifications back on: buffers the driver added meanwhile
 * (while they were off) are taken now, since no notify will come for them.
 */
static int pop_or_notify(struct virtio_mmio *t, struct virtio_queue *q, enum virtq_fault *fault)
{
    int got = virtq_pop(&q->vq, &t->ram, &q->chain, fault);
    if (!got && virtq_set_notify(&q->vq, &t->ram, true))
        got = virtq_pop(&q->vq, &t->ram, &q->chain, fault);
    return got;
}

/*
 * A frame from the switch, under the receive queue's lock (the port's). No
 * buffer: ask to be notified of the next one (avail_event, or NO_NOTIFY
 * cleared), which re-reads the ring, since the driver may have added one
 * while notifications were off.
 */
static enum net_rx rx_deliver(struct net_port *p, const uint8_t *frame, unsigned len)
{
    struct virtio_net *n = p->owner;
    struct virtio_mmio *t = &n->transport;
    struct virtio_queue *q = &t->queues[VIRTIO_NET_RXQ];
    if (!virtio_mmio_live(t) || !q->vq.ready)
        return NET_RX_DROPPED;
    enum virtq_fault fault;
    int got = pop_or_notify(t, q, &fault);
    if (!got)
        return NET_RX_NO_BUFFER;
    if (got < 0) {
        virtio_mmio_fail(t, VIRTIO_NET_RXQ, fault);
        return NET_RX_DROPPED;
    }
    if (q->chain.nread) {
        virtio_mmio_fail(t, VIRTIO_NET_RXQ, VIRTQ_FAULT_DIRECTION);
        return NET_RX_DROPPED;
    }
    uint32_t written = 0;
    if (q->chain.write_bytes >= VIRTIO_NET_HDR_LEN + len) {
        uint8_t hdr[VIRTIO_NET_HDR_LEN] = {0};
        hdr[VIRTIO_NET_HDR_NUM_BUFFERS] = 1;
        virtq_chain_write(&q->chain, 0, hdr, sizeof(hdr));
        virtq_chain_write(&q->chain, VIRTIO_NET_HDR_LEN, frame, len);
        written = VIRTIO_NET_HDR_LEN + len;
    }
    /* A buffer too short for the frame goes back empty: the driver counts a short packet. */
    virtq_push(&q->vq, &t->ram, q->chain.head, written);
    virtio_mmio_used(t, VIRTIO_NET_RXQ);
    return written ? NET_RX_DELIVERED : NET_RX_DROPPED;
}

/*
 * The driver posted receive buffers: the held frames go out. While none is
 * held, refills need no notify (the Benchmark's floor in docs/virtio.md);
 * rx_deliver turns notifications back on when a frame has to wait.
 */
static void rx_notify(struct virtio_net *n)
{
    struct virtio_mmio *t = &n->transport;
    struct virtio_queue *q = &t->queues[VIRTIO_NET_RXQ];
    uint64_t flags = spin_lock_irqsave(&q->lock);
    if (net_port_resume(&n->port))
        virtq_set_notify(&q->vq, &t->ram, false);
    spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * The frame of one transmit chain, copied out under the queue's lock: its
 * length, or more than NET_FRAME_MAX (nothing copied) for a chain too long
 * or too short to hold a header and a frame, which the switch counts as a
 * drop. -1 if the queue broke or is empty.
 */
static long tx_take(struct virtio_net *n, uint8_t frame[NET_FRAME_MAX])
{
    struct virtio_mmio *t = &n->transport;
    struct virtio_queue *q = &t->queues[VIRTIO_NET_TXQ];
    enum virtq_fault fault;
    int got = pop_or_notify(t, q, &fault);
    if (!got)
        return -1;
    if (got < 0) {
        virtio_mmio_fail(t, VIRTIO_NET_TXQ, fault);
        return -1;
    }
    if (q->chain.nwrite) {
        virtio_mmio_fail(t, VIRTIO_NET_TXQ, VIRTQ_FAULT_DIRECTION);
        return -1;
    }
    uint64_t bytes = q->chain.read_bytes;
    long len = NET_FRAME_MAX + 1;
    if (bytes >= VIRTIO_NET_HDR_LEN && bytes - VIRTIO_NET_HDR_LEN <= NET_FRAME_MAX) {
        len = (long)(bytes - VIRTIO_NET_HDR_LEN);
        virtq_chain_read(&q->chain, VIRTIO_NET_HDR_LEN, frame, (size_t)len);
    }
    /* Used transmit buffers interrupt too: a driver may wait for them (Firecracker #1436). */
    virtq_push(&q->vq, &t->ram, q->chain.head, 0);
    virtio_mmio_used(t, VIRTIO_NET_TXQ);
    return len;
}

/*
 * One pass over the transmit queue: each frame is copied out under the
 * queue's lock, which is dropped before the switch copies it to the
 * receivers. Notifications are off while the queue is being emptied, and
 * stay off if the pass stops at its budget (VIRTIO_PASS_CHAINS frames: a
 * guest that keeps adding while the device takes, or whose used ring
 * overlaps its avail->idx so that the device's own writes move it, does
 * not hold the host CPU): true then, and deferred work takes the rest
 * (with EVENT_IDX, avail_event stays behind the driver, which need not
 * notify again). pop_or_notify turns them on at the empty ring.
 */
static bool tx_pass(struct virtio_net *n)
{
    struct virtio_mmio *t = &n->transport;
    struct virtio_queue *q = &t->queues[VIRTIO_NET_TXQ];
    uint8_t frame[NET_FRAME_MAX];
    bool more = false;
    uint64_t flags = spin_lock_irqsave(&q->lock);
    virtq_set_notify(&q->vq, &t->ram, false);
    for (unsigned taken = 0;; taken++) {
        if (taken == VIRTIO_PASS_CHAINS) {
            more = virtio_mmio_live(t);
            break;
        }
        long len = virtio_mmio_live(t) ? tx_take(n, frame) : -1;
        if (len < 0)
            break;
        spin_unlock_irqrestore(&q->lock, flags);
        net_switch_send(&n->port, frame, (unsigned)len);
        flags = spin_lock_irqsave(&q->lock);
    }
    spin_unlock_irqrestore(&q->lock, flags);
    return more;
}

static void notify(struct virtio_mmio *t, unsigned queue)
{
    if (queue == VIRTIO_NET_RXQ)
        rx_notify(net_of(t));
    else if (queue == VIRTIO_NET_TXQ && tx_pass(net_of(t)))
        virtio_mmio_defer(t);
}

/* Only transmit defers. */
static bool deferred(struct virtio_mmio *t)
{
    return tx_pass(net_of(t));
}

/* Status 0, under the transport's and the queues' locks (the port's among them). */
static void reset(struct virtio_mmio *t)
{
    net_port_drain(&net_of(t)->port);
}

const struct virtio_device_ops virtio_net_ops = {
    .name = "net",
    .device_id = VIRTIO_ID_NET,
    .features = VIRTIO_BIT(VIRTIO_NET_F_MAC) | VIRTIO_BIT(VIRTIO_NET_F_STATUS) |
                VIRTIO_BIT(VIRTIO_NET_F_MTU),
    .nqueues = 2,
    .config_len = VIRTIO_NET_CONFIG_LEN,
    .config_read = config_read,
    .notify = notify,
    .reset = reset,
    .deferred = deferred,
};

int virtio_net_join(struct virtio_net *n, const uint8_t mac[NET_ETH_ALEN], const char *switch_name,
                    char *err, size_t errlen)
{
    memcpy(n->mac, mac, NET_ETH_ALEN);
    return net_switch_join(&n->port, switch_name, &n->transport.queues[VIRTIO_NET_RXQ].lock,
                           rx_deliver, n, err, errlen);
}

void virtio_net_leave(struct virtio_net *n)
{
    net_switch_leave(&n->port);
}

#define ROW(key, unit, doc)                                                                        \
    STATS_ROW(key, COUNTER, unit, S_DEVICES, struct virtio_net, port.stats.key,                    \
              "`virtio-net`: " doc)
static const struct stats_desc rows[] = {
    ROW(tx_packets, NONE, "frames the guest sent that the switch took"),
    ROW(tx_bytes, NONE, "their bytes, without the virtio header"),
    ROW(tx_drops, NONE, "frames the guest sent of a length no Ethernet frame has"),
    ROW(rx_packets, NONE, "frames delivered into the guest's buffers"),
    ROW(rx_bytes, NONE, "their bytes"),
    ROW(rx_drops, NONE, "frames for the VM that never reached it, the sum of the next three"),
    ROW(rx_drops_full, NONE, "... the hold queue was full"),
    ROW(rx_drops_reset, NONE, "... held when the device was reset, or the VM stopped"),
    ROW(rx_drops_device, NONE, "... the device refused it: not running, or its buffer too short"),
    ROW(rx_held, NONE, "frames that had to wait for a buffer"),
    ROW(tx_lock_waits, NONE, "sends that found the lock all of a switch's senders share held"),
    ROW(tx_lock_wait_cycles, CYCLES, "the TSC cycles they spun for it"),
    STATS_ROW(transport, INLINE, NONE, S_DEVICES, struct virtio_net, transport, 0,
              .sub = &virtio_mmio_stats_table),
};
const struct stats_table virtio_net_stats_table = STATS_TABLE(rows, 0);
