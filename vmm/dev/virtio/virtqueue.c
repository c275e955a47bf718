/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device side of a split virtqueue (virtio 1.x, 2.7): the rules are in
 * virtqueue.h and docs/virtio.md. The rings live in guest RAM, which the
 * guest's vCPUs write while the device reads it: every ring field is read
 * once, by an atomic load, into a local that is then checked and used, and
 * each descriptor is copied whole before any of it is looked at.
 */
#include "vmm/dev/virtio/virtqueue.h"

#include "abi/virtio.h"
#include "lib/string.h"

/* The split rings' layout (2.7): byte offsets and sizes for a queue of num entries. */
#define DESC_ALIGN         16
#define AVAIL_ALIGN        2
#define USED_ALIGN         4
#define AVAIL_FLAGS        0
#define AVAIL_IDX          2
#define AVAIL_RING(i)      (4 + 2 * (uint64_t)(i))
#define AVAIL_BYTES(num)   (6 + 2 * (uint64_t)(num)) /* used_event after the ring */
#define USED_FLAGS         0
#define USED_IDX           2
#define USED_RING(i)       (4 + 8 * (uint64_t)(i))
#define USED_BYTES(num)    (6 + 8 * (uint64_t)(num)) /* avail_event after the ring */
#define DESC_BYTES         sizeof(struct virtq_desc)
#define INDIRECT_MAX_BYTES (VIRTQ_NUM_MAX * DESC_BYTES)

static const char *const fault_names[VIRTQ_FAULT_COUNT] = {
    [VIRTQ_OK] = "ok",
    [VIRTQ_FAULT_RING_ADDRESS] = "ring_address",
    [VIRTQ_FAULT_AVAIL_ADVANCE] = "avail_advance",
    [VIRTQ_FAULT_HEAD] = "head",
    [VIRTQ_FAULT_NEXT] = "next",
    [VIRTQ_FAULT_LOOP] = "loop",
    [VIRTQ_FAULT_ZERO_LENGTH] = "zero_length",
    [VIRTQ_FAULT_LENGTH] = "length",
    [VIRTQ_FAULT_DIRECTION] = "direction",
    [VIRTQ_FAULT_INDIRECT] = "indirect",
    [VIRTQ_FAULT_ADDRESS] = "address",
};

const char *virtq_fault_name(enum virtq_fault f)
{
    return (unsigned)f < VIRTQ_FAULT_COUNT ? fault_names[f] : "unknown";
}

/* Host address of guest-physical [gpa, gpa + len), or NULL unless all of it is RAM. */
static uint8_t *ram_range(const struct guest_ram *ram, uint64_t gpa, uint64_t len)
{
    if (gpa > ram->size || len > ram->size - gpa)
        return NULL;
    return ram->base + gpa;
}

static bool ring_placed(const struct guest_ram *ram, uint64_t gpa, uint64_t len, uint64_t align)
{
    return (gpa & (align - 1)) == 0 && ram_range(ram, gpa, len) != NULL;
}

/* The guest-shared ring fields: atomic, so each is one load or store the compiler cannot redo. */
static uint16_t *ring16(const struct guest_ram *ram, uint64_t gpa)
{
    return (uint16_t *)(ram->base + gpa);
}

static uint16_t load16(const struct guest_ram *ram, uint64_t gpa)
{
    return __atomic_load_n(ring16(ram, gpa), __ATOMIC_RELAXED);
}

static void store16(const struct guest_ram *ram, uint64_t gpa, uint16_t v)
{
    __atomic_store_n(ring16(ram, gpa), v, __ATOMIC_RELAXED);
}

/* avail->idx; acquire: the entries and descriptors it publishes are read after it. */
static uint16_t load_avail_idx(const struct virtq *q, const struct guest_ram *ram)
{
    return __atomic_load_n(ring16(ram, q->avail + AVAIL_IDX), __ATOMIC_ACQUIRE);
}

/*
 * One descriptor, copied byte by byte through a volatile pointer: a single
 * fetch whatever the table's alignment (an indirect table need not be
 * aligned), after which only the copy is looked at.
 */
static struct virtq_desc desc_copy(const uint8_t *host)
{
    uint8_t bytes[DESC_BYTES];
    const volatile uint8_t *src = host;
    for (unsigned i = 0; i < DESC_BYTES; i++)
        bytes[i] = src[i];
    struct virtq_desc d;
    memcpy(&d, bytes, sizeof(d));
    return d;
}

static bool is_pow2(uint16_t n)
{
    return n != 0 && (n & (n - 1)) == 0;
}

enum virtq_fault virtq_start(struct virtq *q, const struct guest_ram *ram)
{
    q->last_avail = q->avail_idx = q->used_idx = q->signalled_used = 0;
    q->signalled_valid = false;
    q->broken = false;
    if (!is_pow2(q->num) || q->num > VIRTQ_NUM_MAX ||
        !ring_placed(ram, q->desc, DESC_BYTES * q->num, DESC_ALIGN) ||
        !ring_placed(ram, q->avail, AVAIL_BYTES(q->num), AVAIL_ALIGN) ||
        !ring_placed(ram, q->used, USED_BYTES(q->num), USED_ALIGN)) {
        q->broken = true;
        return VIRTQ_FAULT_RING_ADDRESS;
    }
    return VIRTQ_OK;
}

/* Whether the device may touch the rings: configured, and no fault since virtq_start. */
static bool walkable(const struct virtq *q)
{
    return q->ready && !q->broken;
}

/* One descriptor table being walked: the queue's, or an indirect one. */
struct desc_table {
    const uint8_t *host;
    uint16_t entries;
};

/* Add the checked buffer d to c: readable ones first, then writable ones. */
static enum virtq_fault take_buffer(const struct guest_ram *ram, const struct virtq_desc *d,
                                    struct virtq_chain *c)
{
    if (d->len == 0)
        return VIRTQ_FAULT_ZERO_LENGTH;
    uint8_t *host = ram_range(ram, d->addr, d->len);
    if (host == NULL)
        return VIRTQ_FAULT_ADDRESS;
    struct virtq_seg *s = &c->segs[c->nread + c->nwrite];
    s->host = host;
    s->len = d->len;
    if (d->flags & VIRTQ_DESC_F_WRITE) {
        c->nwrite++;
        c->write_bytes += d->len;
    } else {
        if (c->nwrite)
            return VIRTQ_FAULT_DIRECTION;
        c->nread++;
        c->read_bytes += d->len;
    }
    return VIRTQ_OK;
}

/*
 * Walk the chain at head into c. A chain is the queue's descriptors, the
 * last of which may instead point to an indirect table (its own chain, with
 * its own `next` bounds); all of it together is at most the queue size.
 */
static enum virtq_fault walk_chain(const struct virtq *q, const struct guest_ram *ram,
                                   uint16_t head, struct virtq_chain *c)
{
    struct desc_table t = {ram->base + q->desc, q->num};
    bool indirect = false;
    unsigned visited = 0; /* in the current table: more than its entries is a loop */
    uint16_t i = head;
    c->head = head;
    c->nread = c->nwrite = 0;
    c->read_bytes = c->write_bytes = 0;
    for (;;) {
        if (++visited > t.entries)
            return VIRTQ_FAULT_LOOP;
        struct virtq_desc d = desc_copy(t.host + (uint64_t)i * DESC_BYTES);
        if (d.flags & VIRTQ_DESC_F_INDIRECT) {
            /* 2.7.5.3.1: negotiated, not inside a table, never with NEXT. */
            if (!q->indirect || indirect || (d.flags & VIRTQ_DESC_F_NEXT) || d.len == 0 ||
                d.len % DESC_BYTES != 0 || d.len > INDIRECT_MAX_BYTES)
                return VIRTQ_FAULT_INDIRECT;
            const uint8_t *host = ram_range(ram, d.addr, d.len);
            if (host == NULL)
                return VIRTQ_FAULT_ADDRESS;
            t = (struct desc_table){host, (uint16_t)(d.len / DESC_BYTES)};
            indirect = true;
            visited = 0;
            i = 0;
            continue;
        }
        /* 2.7.5.3.1: no chain longer than the queue, through an indirect table too. */
        if (c->nread + c->nwrite >= q->num)
            return VIRTQ_FAULT_LOOP;
        enum virtq_fault f = take_buffer(ram, &d, c);
        if (f != VIRTQ_OK)
            return f;
        if (!(d.flags & VIRTQ_DESC_F_NEXT))
            return VIRTQ_OK;
        if (d.next >= t.entries)
            return VIRTQ_FAULT_NEXT;
        i = d.next;
    }
}

int virtq_pop(struct virtq *q, const struct guest_ram *ram, struct virtq_chain *c,
              enum virtq_fault *fault)
{
    if (!walkable(q))
        return 0;
    uint16_t avail_idx = q->avail_idx;
    if (q->last_avail == avail_idx) {
        /* The pass is over: read avail->idx again, once. */
        avail_idx = load_avail_idx(q, ram);
        if ((uint16_t)(avail_idx - q->last_avail) > q->num) {
            *fault = VIRTQ_FAULT_AVAIL_ADVANCE;
            q->broken = true;
            return -1;
        }
        q->avail_idx = avail_idx;
        if (q->last_avail == avail_idx)
            return 0;
    }
    uint16_t head = load16(ram, q->avail + AVAIL_RING(q->last_avail & (q->num - 1)));
    enum virtq_fault f = head < q->num ? walk_chain(q, ram, head, c) : VIRTQ_FAULT_HEAD;
    if (f != VIRTQ_OK) {
        *fault = f;
        q->broken = true;
        return -1;
    }
    q->last_avail++;
    return 1;
}

void virtq_push(struct virtq *q, const struct guest_ram *ram, uint16_t head, uint32_t written)
{
    if (!walkable(q))
        return;
    uint32_t *elem = (uint32_t *)(ram->base + q->used + USED_RING(q->used_idx & (q->num - 1)));
    __atomic_store_n(&elem[0], head, __ATOMIC_RELAXED);
    __atomic_store_n(&elem[1], written, __ATOMIC_RELAXED);
    q->used_idx++;
    /* Release: the driver that sees the new used->idx sees the element. */
    __atomic_store_n(ring16(ram, q->used + USED_IDX), q->used_idx, __ATOMIC_RELEASE);
}

/* 2.7.7.2 (vring_need_event): has the index moved from old to new_idx past event? */
static bool need_event(uint16_t event, uint16_t new_idx, uint16_t old)
{
    return (uint16_t)(new_idx - event - 1) < (uint16_t)(new_idx - old);
}

bool virtq_should_interrupt(struct virtq *q, const struct guest_ram *ram)
{
    if (!walkable(q))
        return false;
    /*
     * Full fence: the used->idx store must be visible before the driver's
     * flags or used_event is read, or a driver that has just re-enabled
     * interrupts and found no new used buffers would wait forever.
     */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!q->event_idx)
        return !(load16(ram, q->avail + AVAIL_FLAGS) & VIRTQ_AVAIL_F_NO_INTERRUPT);
    /* EVENT_IDX: used_event decides and NO_INTERRUPT is ignored (2.7.10). */
    uint16_t used_event = load16(ram, q->avail + AVAIL_RING(q->num));
    uint16_t old = q->signalled_used;
    bool valid = q->signalled_valid;
    q->signalled_used = q->used_idx;
    q->signalled_valid = true;
    if (!valid)
        return true;
    return need_event(used_event, q->used_idx, old);
}

bool virtq_set_notify(struct virtq *q, const struct guest_ram *ram, bool on)
{
    if (!walkable(q))
        return false;
    if (q->event_idx) {
        /*
         * avail_event: on, the driver notifies once avail->idx passes what
         * the device has seen; off, an index just behind it, which the
         * driver's advance reaches only after the 16-bit index wraps.
         */
        uint16_t event = on ? q->avail_idx : (uint16_t)(q->avail_idx - 1);
        store16(ram, q->used + USED_RING(q->num), event);
    } else {
        store16(ram, q->used + USED_FLAGS, on ? 0 : VIRTQ_USED_F_NO_NOTIFY);
    }
    if (!on)
        return false;
    /*
     * Full fence: the store above before the avail->idx load, or a buffer
     * the driver added while it still saw notifications off would be missed.
     */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return virtq_has_avail(q, ram);
}

bool virtq_has_avail(struct virtq *q, const struct guest_ram *ram)
{
    if (!walkable(q))
        return false;
    if (q->last_avail != q->avail_idx)
        return true;
    uint16_t avail_idx = load_avail_idx(q, ram);
    if ((uint16_t)(avail_idx - q->last_avail) > q->num)
        return true; /* let virtq_pop report it */
    q->avail_idx = avail_idx;
    return avail_idx != q->last_avail;
}

/*
 * Copy between buf and the chain's segments [first, first + count), from byte off of them:
 * into the guest's memory when to_guest, out of it otherwise. Returns the bytes copied.
 */
static size_t chain_copy(const struct virtq_chain *c, unsigned first, unsigned count, uint64_t off,
                         uint8_t *buf, size_t len, bool to_guest)
{
    size_t done = 0;
    for (unsigned i = first; i < first + count && done < len; i++) {
        const struct virtq_seg *s = &c->segs[i];
        if (off >= s->len) {
            off -= s->len;
            continue;
        }
        size_t n = s->len - off;
        if (n > len - done)
            n = len - done;
        if (to_guest)
            memcpy(s->host + off, buf + done, n);
        else
            memcpy(buf + done, s->host + off, n);
        done += n;
        off = 0;
    }
    return done;
}

size_t virtq_chain_read(const struct virtq_chain *c, uint64_t off, void *dst, size_t len)
{
    return chain_copy(c, 0, c->nread, off, dst, len, false);
}

size_t virtq_chain_write(const struct virtq_chain *c, uint64_t off, const void *src, size_t len)
{
    /* chain_copy only reads buf when to_guest. */
    return chain_copy(c, c->nread, c->nwrite, off, (uint8_t *)(uintptr_t)src, len, true);
}
