/* SPDX-License-Identifier: GPL-2.0-only */
/* The switch between VMs (vmm/net/switch.h): registry, learning, forwarding, hold queues. */
#include "vmm/net/switch.h"

#include "lib/format.h"
#include "lib/string.h"

struct net_mac_entry {
    uint8_t mac[NET_ETH_ALEN];
    struct net_port *port; /* NULL: a free entry */
    uint64_t seen;         /* the switch's clock when the MAC last sent */
};

struct net_switch {
    char name[VM_NET_NAME_MAX + 1]; /* "" for a free slot of the registry */
    struct spinlock lock;           /* ports, macs, clock */
    struct net_port *ports[NET_SWITCH_PORTS];
    unsigned nports;
    struct net_mac_entry macs[NET_MAC_TABLE];
    uint64_t clock; /* frames sent, for the least-recently-seen replacement */
};

static struct net_switch switches[NET_SWITCHES_MAX];
static struct spinlock registry_lock = SPINLOCK_INIT;

static bool is_group(const uint8_t *mac)
{
    return mac[0] & 1; /* the I/G bit: broadcast and multicast */
}

static struct net_switch *switch_find_or_create(const char *name, char *err, size_t errlen)
{
    struct net_switch *free_slot = 0;
    for (unsigned i = 0; i < NET_SWITCHES_MAX; i++) {
        if (!strcmp(switches[i].name, name))
            return &switches[i];
        if (!free_slot && !switches[i].name[0])
            free_slot = &switches[i];
    }
    if (!free_slot) {
        snprintf(err, errlen, "no room for switch %s: %u switches in use", name, NET_SWITCHES_MAX);
        return 0;
    }
    memset(free_slot, 0, sizeof(*free_slot));
    memcpy(free_slot->name, name, strlen(name) + 1);
    return free_slot;
}

int net_switch_join(struct net_port *p, const char *name, struct spinlock *lock,
                    net_deliver_fn deliver, void *owner, char *err, size_t errlen)
{
    if (!name[0] || strnlen(name, VM_NET_NAME_MAX + 1) > VM_NET_NAME_MAX) {
        snprintf(err, errlen, "a switch's name has 1 to %u characters", VM_NET_NAME_MAX);
        return -1;
    }
    uint64_t flags = spin_lock_irqsave(&registry_lock);
    struct net_switch *sw = switch_find_or_create(name, err, errlen);
    int ret = -1;
    if (sw) {
        uint64_t sw_flags = spin_lock_irqsave(&sw->lock);
        if (sw->nports == NET_SWITCH_PORTS) {
            snprintf(err, errlen, "switch %s is full: %u ports", name, NET_SWITCH_PORTS);
        } else {
            memset(p, 0, sizeof(*p));
            p->sw = sw;
            p->lock = lock;
            p->deliver = deliver;
            p->owner = owner;
            sw->ports[sw->nports++] = p;
            ret = 0;
        }
        spin_unlock_irqrestore(&sw->lock, sw_flags);
    }
    spin_unlock_irqrestore(&registry_lock, flags);
    return ret;
}

void net_switch_leave(struct net_port *p)
{
    struct net_switch *sw = p->sw;
    uint64_t flags = spin_lock_irqsave(&registry_lock);
    uint64_t sw_flags = spin_lock_irqsave(&sw->lock);
    for (unsigned i = 0; i < sw->nports; i++)
        if (sw->ports[i] == p) {
            sw->ports[i] = sw->ports[--sw->nports];
            break;
        }
    for (unsigned i = 0; i < NET_MAC_TABLE; i++)
        if (sw->macs[i].port == p)
            sw->macs[i].port = 0;
    uint64_t port_flags = spin_lock_irqsave(p->lock);
    net_port_drain(p);
    spin_unlock_irqrestore(p->lock, port_flags);
    if (!sw->nports)
        sw->name[0] = 0;
    spin_unlock_irqrestore(&sw->lock, sw_flags);
    spin_unlock_irqrestore(&registry_lock, flags);
    p->sw = 0;
}

const char *net_switch_name(const struct net_port *p)
{
    return p->sw->name;
}

static struct net_mac_entry *mac_find(struct net_switch *sw, const uint8_t *mac)
{
    for (unsigned i = 0; i < NET_MAC_TABLE; i++)
        if (sw->macs[i].port && !memcmp(sw->macs[i].mac, mac, NET_ETH_ALEN))
            return &sw->macs[i];
    return 0;
}

/* Under sw->lock: mac sent from p. A full table gives the entry seen least recently. */
static void mac_learn(struct net_switch *sw, struct net_port *p, const uint8_t *mac)
{
    struct net_mac_entry *e = mac_find(sw, mac);
    if (!e) {
        e = &sw->macs[0];
        for (unsigned i = 0; i < NET_MAC_TABLE && e->port; i++)
            if (!sw->macs[i].port || sw->macs[i].seen < e->seen)
                e = &sw->macs[i];
        memcpy(e->mac, mac, NET_ETH_ALEN);
    }
    e->port = p; /* a MAC that moved to another port goes with it */
    e->seen = sw->clock;
}

/* Under *p->lock: append to the hold queue, or count the drop. */
static void hold(struct net_port *p, const uint8_t *frame, unsigned len)
{
    if (p->held_count == NET_HOLD_MAX) {
        p->stats.rx_drops++;
        p->stats.rx_drops_full++;
        return;
    }
    struct net_held_frame *h = &p->held[(p->held_first + p->held_count++) % NET_HOLD_MAX];
    h->len = (uint16_t)len;
    memcpy(h->data, frame, len);
    p->stats.rx_held++;
}

/* Under *p->lock: offer a frame to the device; false if it has no buffer (frame not taken). */
static bool offer(struct net_port *p, const uint8_t *frame, unsigned len)
{
    switch (p->deliver(p, frame, len)) {
    case NET_RX_DELIVERED:
        p->stats.rx_packets++;
        p->stats.rx_bytes += len;
        return true;
    case NET_RX_NO_BUFFER:
        return false;
    case NET_RX_DROPPED:
        break;
    }
    p->stats.rx_drops++;
    p->stats.rx_drops_device++;
    return true;
}

/* Under sw->lock: one port's copy; frames already held go first. */
static void forward(struct net_port *to, const uint8_t *frame, unsigned len)
{
    uint64_t flags = spin_lock_irqsave(to->lock);
    if (to->held_count || !offer(to, frame, len))
        hold(to, frame, len);
    spin_unlock_irqrestore(to->lock, flags);
}

/* The switch's lock, counting the waits: one lock serves every sender of the switch. */
static uint64_t switch_lock(struct net_switch *sw, struct net_port *p)
{
    uint64_t flags = irq_save();
    if (spin_trylock(&sw->lock))
        return flags;
    uint64_t start = rdtsc();
    spin_lock(&sw->lock);
    p->stats.tx_lock_waits++;
    p->stats.tx_lock_wait_cycles += rdtsc() - start;
    return flags;
}

void net_switch_send(struct net_port *p, const uint8_t *frame, unsigned len)
{
    struct net_switch *sw = p->sw;
    uint64_t flags = switch_lock(sw, p);
    if (len < NET_FRAME_MIN || len > NET_FRAME_MAX) {
        p->stats.tx_drops++;
        spin_unlock_irqrestore(&sw->lock, flags);
        return;
    }
    p->stats.tx_packets++;
    p->stats.tx_bytes += len;
    const uint8_t *dst = frame, *src = frame + NET_ETH_ALEN;
    sw->clock++;
    if (!is_group(src))
        mac_learn(sw, p, src);
    struct net_mac_entry *e = is_group(dst) ? 0 : mac_find(sw, dst);
    if (e) {
        if (e->port != p) /* a destination on the sender's own port stays there */
            forward(e->port, frame, len);
    } else {
        for (unsigned i = 0; i < sw->nports; i++)
            if (sw->ports[i] != p)
                forward(sw->ports[i], frame, len);
    }
    spin_unlock_irqrestore(&sw->lock, flags);
}

bool net_port_resume(struct net_port *p)
{
    while (p->held_count) {
        const struct net_held_frame *h = &p->held[p->held_first];
        if (!offer(p, h->data, h->len))
            return false;
        p->held_first = (p->held_first + 1) % NET_HOLD_MAX;
        p->held_count--;
    }
    return true;
}

void net_port_drain(struct net_port *p)
{
    p->stats.rx_drops += p->held_count;
    p->stats.rx_drops_reset += p->held_count;
    p->held_first = p->held_count = 0;
}
