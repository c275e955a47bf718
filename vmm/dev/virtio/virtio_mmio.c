/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtio-mmio transport, version 2 (virtio 1.2, 4.2.2): see
 * virtio_mmio.h for the locks and docs/virtio.md for what is offered.
 */
#include "vmm/dev/virtio/virtio_mmio.h"

#include "lib/string.h"
#include "stats/stats.h"

/*
 * Bits 24-41 are the transport's (6): only these three are offered, whatever
 * the device says; ACCESS_PLATFORM and RING_PACKED never are.
 */
#define TRANSPORT_BITS (((1ull << 42) - 1) & ~((1ull << 24) - 1))
#define TRANSPORT_OFFERED                                                                          \
    (VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX) |                        \
     VIRTIO_BIT(VIRTIO_F_INDIRECT_DESC))
/* The status bits a driver sets; DEVICE_NEEDS_RESET is the device's. */
#define DRIVER_STATUS_BITS                                                                         \
    (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |                \
     VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FAILED)

static uint64_t offered(const struct virtio_mmio *t)
{
    return (t->ops->features & ~TRANSPORT_BITS) | TRANSPORT_OFFERED;
}

static uint32_t status(const struct virtio_mmio *t)
{
    return __atomic_load_n(&t->status, __ATOMIC_ACQUIRE);
}

static void queues_reset(struct virtio_mmio *t)
{
    for (unsigned i = 0; i < VIRTIO_QUEUES_MAX; i++)
        t->queues[i].vq = (struct virtq){.num = VIRTQ_NUM_MAX};
}

static bool run_work(struct deferred_work *w)
{
    return virtio_mmio_deferred_pass(
        (struct virtio_mmio *)((char *)w - __builtin_offsetof(struct virtio_mmio, work)));
}

void virtio_mmio_init(struct virtio_mmio *t, const struct virtio_device_ops *ops,
                      const struct virtio_env *env, void *owner, unsigned slot,
                      struct guest_ram ram)
{
    memset(t, 0, sizeof(*t));
    t->ops = ops;
    t->env = env;
    t->owner = owner;
    t->slot = slot;
    t->ram = ram;
    t->lock = (struct spinlock)SPINLOCK_INIT;
    for (unsigned i = 0; i < VIRTIO_QUEUES_MAX; i++)
        t->queues[i].lock = (struct spinlock)SPINLOCK_INIT;
    queues_reset(t);
    deferred_init(&t->work, run_work);
}

void virtio_mmio_defer(struct virtio_mmio *t)
{
    __atomic_fetch_add(&t->budget_stops, 1, __ATOMIC_RELAXED);
    t->env->defer(t);
}

bool virtio_mmio_deferred_pass(struct virtio_mmio *t)
{
    __atomic_fetch_add(&t->deferred_passes, 1, __ATOMIC_RELAXED);
    bool more = t->ops->deferred(t);
    if (more)
        __atomic_fetch_add(&t->budget_stops, 1, __ATOMIC_RELAXED);
    return more;
}

bool virtio_mmio_live(const struct virtio_mmio *t)
{
    return (status(t) & (VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_DEVICE_NEEDS_RESET)) ==
           VIRTIO_STATUS_DRIVER_OK;
}

/* The selected queue, or NULL where QueueSel names none of the device's. */
static struct virtio_queue *selected(struct virtio_mmio *t)
{
    return t->queue_sel < t->ops->nqueues ? &t->queues[t->queue_sel] : NULL;
}

static uint32_t config_read(struct virtio_mmio *t, uint64_t off, unsigned size)
{
    if (off > t->ops->config_len || size > t->ops->config_len - off)
        return 0;
    uint8_t buf[4] = {0};
    t->ops->config_read(t, (unsigned)off, buf, size);
    return (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
           (uint32_t)buf[3] << 24;
}

static uint32_t register_read(struct virtio_mmio *t, uint64_t off)
{
    struct virtio_queue *q = selected(t);
    switch (off) {
    case VIRTIO_MMIO_MAGIC_VALUE:
        return VIRTIO_MMIO_MAGIC;
    case VIRTIO_MMIO_VERSION:
        return VIRTIO_MMIO_VERSION_2;
    case VIRTIO_MMIO_DEVICE_ID:
        return t->ops->device_id;
    case VIRTIO_MMIO_VENDOR_ID:
        return VIRTIO_VENDOR_POLLUX;
    case VIRTIO_MMIO_DEVICE_FEATURES:
        return t->device_features_sel < 2 ? (uint32_t)(offered(t) >> (32 * t->device_features_sel))
                                          : 0;
    case VIRTIO_MMIO_QUEUE_NUM_MAX:
        return q ? VIRTQ_NUM_MAX : 0; /* 0: no such queue */
    case VIRTIO_MMIO_QUEUE_READY:
        return q ? q->vq.ready : 0;
    case VIRTIO_MMIO_INTERRUPT_STATUS:
        return __atomic_load_n(&t->interrupt_status, __ATOMIC_ACQUIRE);
    case VIRTIO_MMIO_STATUS:
        return status(t);
    case VIRTIO_MMIO_CONFIG_GENERATION:
        return t->config_generation;
    case VIRTIO_MMIO_SHM_LEN_LOW:
    case VIRTIO_MMIO_SHM_LEN_HIGH:
        return UINT32_MAX; /* length -1: no shared memory region, whatever SHMSel says (4.2.2) */
    default:
        return 0; /* the write-only registers, and the holes */
    }
}

uint32_t virtio_mmio_read(struct virtio_mmio *t, uint64_t off, unsigned size)
{
    uint64_t flags = spin_lock_irqsave(&t->lock);
    uint32_t value = 0;
    if (off >= VIRTIO_MMIO_CONFIG) {
        if (size == 1 || size == 2 || size == 4)
            value = config_read(t, off - VIRTIO_MMIO_CONFIG, size);
    } else if (size == 4 && off % 4 == 0) {
        value = register_read(t, off);
    }
    spin_unlock_irqrestore(&t->lock, flags);
    return value;
}

/* Status 0 (2.4): everything back to power-on, under every lock, the device's state too. */
static void device_reset(struct virtio_mmio *t)
{
    uint64_t flags[VIRTIO_QUEUES_MAX];
    for (unsigned i = 0; i < VIRTIO_QUEUES_MAX; i++)
        flags[i] = spin_lock_irqsave(&t->queues[i].lock);
    t->ops->reset(t);
    queues_reset(t);
    t->driver_features = 0;
    t->device_features_sel = t->driver_features_sel = t->queue_sel = 0;
    __atomic_store_n(&t->interrupt_status, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&t->status, 0, __ATOMIC_RELEASE);
    for (unsigned i = VIRTIO_QUEUES_MAX; i-- > 0;)
        spin_unlock_irqrestore(&t->queues[i].lock, flags[i]);
}

/* The driver may accept only what is offered, and must accept VERSION_1 (6.1). */
static bool features_acceptable(const struct virtio_mmio *t)
{
    return (t->driver_features & ~offered(t)) == 0 &&
           (t->driver_features & VIRTIO_BIT(VIRTIO_F_VERSION_1));
}

static void status_write(struct virtio_mmio *t, uint32_t value)
{
    if (value == 0) {
        device_reset(t);
        return;
    }
    uint32_t old = status(t);
    uint32_t want = (value & DRIVER_STATUS_BITS) | (old & VIRTIO_STATUS_DEVICE_NEEDS_RESET);
    if (old & ~want)
        return; /* only a reset clears bits */
    uint32_t add = want & ~old;
    if ((add & VIRTIO_STATUS_FEATURES_OK) && !features_acceptable(t))
        add &= ~VIRTIO_STATUS_FEATURES_OK; /* refused: the driver reads it back clear */
    if ((add & VIRTIO_STATUS_DRIVER_OK) && !((old | add) & VIRTIO_STATUS_FEATURES_OK))
        add &= ~VIRTIO_STATUS_DRIVER_OK;
    /* An or: a queue's holder may be setting DEVICE_NEEDS_RESET meanwhile. */
    __atomic_fetch_or(&t->status, add, __ATOMIC_ACQ_REL);
}

static void set_low(uint64_t *v, uint32_t low)
{
    *v = (*v & ~0xffffffffull) | low;
}

static void set_high(uint64_t *v, uint32_t high)
{
    *v = (*v & 0xffffffffull) | (uint64_t)high << 32;
}

/* QueueReady: 1 checks the rings and starts the queue, 0 stops it. */
static void queue_ready_write(struct virtio_mmio *t, struct virtio_queue *q, uint32_t value)
{
    uint64_t flags = spin_lock_irqsave(&q->lock);
    if (value == 0) {
        q->vq.ready = false;
    } else if (!q->vq.ready && (status(t) & VIRTIO_STATUS_FEATURES_OK)) {
        q->vq.event_idx = virtio_mmio_has(t, VIRTIO_F_RING_EVENT_IDX);
        q->vq.indirect = virtio_mmio_has(t, VIRTIO_F_INDIRECT_DESC);
        enum virtq_fault f = virtq_start(&q->vq, &t->ram);
        if (f == VIRTQ_OK)
            q->vq.ready = true;
        else
            virtio_mmio_fail(t, (unsigned)(q - t->queues), f);
    }
    spin_unlock_irqrestore(&q->lock, flags);
}

/* The selected queue's configuration: only while it is not ready (4.2.3.2). */
static void queue_write(struct virtio_mmio *t, uint64_t off, uint32_t value)
{
    struct virtio_queue *q = selected(t);
    if (q == NULL)
        return;
    if (off == VIRTIO_MMIO_QUEUE_READY) {
        queue_ready_write(t, q, value);
        return;
    }
    if (q->vq.ready)
        return;
    switch (off) {
    case VIRTIO_MMIO_QUEUE_NUM:
        if (value != 0 && value <= VIRTQ_NUM_MAX && (value & (value - 1)) == 0)
            q->vq.num = (uint16_t)value;
        break;
    case VIRTIO_MMIO_QUEUE_DESC_LOW:
        set_low(&q->vq.desc, value);
        break;
    case VIRTIO_MMIO_QUEUE_DESC_HIGH:
        set_high(&q->vq.desc, value);
        break;
    case VIRTIO_MMIO_QUEUE_DRIVER_LOW:
        set_low(&q->vq.avail, value);
        break;
    case VIRTIO_MMIO_QUEUE_DRIVER_HIGH:
        set_high(&q->vq.avail, value);
        break;
    case VIRTIO_MMIO_QUEUE_DEVICE_LOW:
        set_low(&q->vq.used, value);
        break;
    case VIRTIO_MMIO_QUEUE_DEVICE_HIGH:
        set_high(&q->vq.used, value);
        break;
    }
}

/* Under t->lock. Returns the queue to notify, or -1. */
static int register_write(struct virtio_mmio *t, uint64_t off, uint32_t value)
{
    if (off == VIRTIO_MMIO_STATUS) {
        status_write(t, value);
        return -1;
    }
    if (off == VIRTIO_MMIO_INTERRUPT_ACK) {
        __atomic_fetch_and(&t->interrupt_status, ~value, __ATOMIC_ACQ_REL);
        return -1;
    }
    if (off == VIRTIO_MMIO_QUEUE_NOTIFY) {
        if (virtio_mmio_live(t) && value < t->ops->nqueues && t->queues[value].vq.ready) {
            t->notifies++;
            return (int)value;
        }
        t->notifies_ignored++;
        return -1;
    }
    if (status(t) & VIRTIO_STATUS_DEVICE_NEEDS_RESET)
        return -1; /* stopped until the driver resets it */
    switch (off) {
    case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
        t->device_features_sel = value;
        break;
    case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
        t->driver_features_sel = value;
        break;
    case VIRTIO_MMIO_DRIVER_FEATURES:
        if (status(t) & VIRTIO_STATUS_FEATURES_OK)
            break; /* fixed once accepted */
        if (t->driver_features_sel == 0)
            set_low(&t->driver_features, value);
        else if (t->driver_features_sel == 1)
            set_high(&t->driver_features, value);
        break;
    case VIRTIO_MMIO_QUEUE_SEL:
        t->queue_sel = value;
        break;
    default:
        queue_write(t, off, value);
        break;
    }
    return -1;
}

void virtio_mmio_write(struct virtio_mmio *t, uint64_t off, unsigned size, uint32_t value)
{
    if (off >= VIRTIO_MMIO_CONFIG || size != 4 || off % 4 != 0)
        return; /* the configuration space is read-only; registers are 32-bit */
    uint64_t flags = spin_lock_irqsave(&t->lock);
    int notify = register_write(t, off, value);
    spin_unlock_irqrestore(&t->lock, flags);
    if (notify >= 0)
        t->ops->notify(t, (unsigned)notify);
}

static void interrupt_driver(struct virtio_mmio *t, uint32_t bit)
{
    __atomic_fetch_or(&t->interrupt_status, bit, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&t->interrupts, 1, __ATOMIC_RELAXED);
    t->env->interrupt(t);
}

void virtio_mmio_used(struct virtio_mmio *t, unsigned queue)
{
    if (virtq_should_interrupt(&t->queues[queue].vq, &t->ram))
        interrupt_driver(t, VIRTIO_MMIO_INT_VRING);
}

void virtio_mmio_fail(struct virtio_mmio *t, unsigned queue, enum virtq_fault f)
{
    t->queues[queue].vq.broken = true;
    __atomic_fetch_or(&t->status, VIRTIO_STATUS_DEVICE_NEEDS_RESET, __ATOMIC_ACQ_REL);
    __atomic_fetch_add(&t->faults, 1, __ATOMIC_RELAXED);
    t->env->fault(t, queue, f);
    interrupt_driver(t, VIRTIO_MMIO_INT_CONFIG);
}

#define ROW(key, doc)                                                                              \
    STATS_ROW(key, COUNTER, NONE, S_DEVICES, struct virtio_mmio, key, "virtio's transport: " doc)
static const struct stats_desc rows[] = {
    ROW(notifies, "QueueNotify writes passed to the device"),
    ROW(notifies_ignored, "those ignored: the device not live, or no such ready queue"),
    ROW(interrupts, "interrupts raised, VRING and CONFIG"),
    ROW(faults, "queues the driver broke (each with its `@warning`)"),
    ROW(budget_stops, "passes over a queue that stopped at their budget with work left"),
    ROW(deferred_passes, "passes run as deferred work, between vCPU entries"),
};
const struct stats_table virtio_mmio_stats_table = STATS_TABLE(rows, 0);
