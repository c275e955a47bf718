/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The device side of a split virtqueue (virtio 1.x, 2.7), pure: it sees
 * guest RAM only as `struct guest_ram` (one block at guest-physical 0, as a
 * pollux VM's is), so the host unit tests and the fuzzer drive it with a
 * plain buffer. It trusts nothing in the rings:
 *   - avail->idx is read once per pass (when the device has taken all it saw)
 *     and an advance of more than the queue size is a fault;
 *   - a head or `next` index must be below the queue size; a chain longer
 *     than the queue loops; each descriptor is copied before it is checked
 *     (no double fetch); a zero length, a buffer outside RAM, a readable
 *     buffer after a writable one, INDIRECT without its feature (or nested,
 *     or not a whole number of descriptors) are faults;
 *   - the used element is written before used->idx (release); a full fence
 *     comes before reading avail->flags or used_event, and after turning
 *     notifications back on the avail ring is read again.
 * A fault leaves the queue as it was and says which (virtq_fault_name); the
 * queue is then broken: nothing below touches its rings (pop finds nothing,
 * push writes nothing) until virtq_start, and the transport sets
 * DEVICE_NEEDS_RESET (vmm/dev/virtio/virtio_mmio.h). A queue that is not
 * ready is left alone the same way.
 * Not thread-safe: the caller holds the queue's lock.
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_VIRTQUEUE_H
#define POLLUX_VMM_DEV_VIRTIO_VIRTQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIRTQ_NUM_MAX 256 /* QueueNumMax of every queue, and the longest chain */

/* Guest RAM: guest-physical [0, size) at host address base. */
struct guest_ram {
    uint8_t *base;
    uint64_t size;
};

enum virtq_fault {
    VIRTQ_OK,
    VIRTQ_FAULT_RING_ADDRESS,  /* a ring outside RAM or misaligned */
    VIRTQ_FAULT_AVAIL_ADVANCE, /* avail->idx moved by more than the queue size */
    VIRTQ_FAULT_HEAD,          /* an avail entry's head at or past the queue size */
    VIRTQ_FAULT_NEXT,          /* a `next` at or past the queue (or indirect table) size */
    VIRTQ_FAULT_LOOP,          /* a chain longer than the queue (or its indirect table) */
    VIRTQ_FAULT_ZERO_LENGTH,   /* a descriptor of length 0 */
    VIRTQ_FAULT_LENGTH,        /* a length the device cannot take (the device's limit) */
    VIRTQ_FAULT_DIRECTION,     /* readable after writable, or the wrong kind for the device */
    VIRTQ_FAULT_INDIRECT,      /* INDIRECT not negotiated, nested, or a bad table length */
    VIRTQ_FAULT_ADDRESS,       /* a buffer (or indirect table) outside RAM */
    VIRTQ_FAULT_COUNT
};

/* "head", "next", "loop", ...: the token of @warning's `fault`. */
const char *virtq_fault_name(enum virtq_fault f);

/* One queue, as the transport configured it and the device walks it. */
struct virtq {
    /* Set by the driver through the transport, fixed while ready. */
    uint16_t num; /* QueueNum: a power of two, 1..VIRTQ_NUM_MAX */
    bool ready;
    uint64_t desc, avail, used; /* guest-physical: QueueDesc, QueueDriver, QueueDevice */
    bool event_idx, indirect;   /* negotiated VIRTIO_F_RING_EVENT_IDX, VIRTIO_F_INDIRECT_DESC */
    /* The device's side; 0 at QueueReady. */
    uint16_t last_avail;     /* the next avail entry the device takes */
    uint16_t avail_idx;      /* avail->idx as last read (the pass's end) */
    uint16_t used_idx;       /* used->idx as the device last wrote it */
    uint16_t signalled_used; /* used_idx when the driver was last interrupted */
    bool signalled_valid;    /* signalled_used means something (not since QueueReady) */
    bool broken;             /* a fault (or the device's own check) since virtq_start */
};

/* A validated segment of a chain: host memory inside guest RAM. */
struct virtq_seg {
    uint8_t *host;
    uint32_t len;
};

/* A chain as taken: its readable segments, then its writable ones. */
struct virtq_chain {
    uint16_t head;
    unsigned nread, nwrite;           /* segs[0, nread) readable, then nwrite writable */
    uint64_t read_bytes, write_bytes; /* their totals */
    struct virtq_seg segs[VIRTQ_NUM_MAX];
};

/*
 * Check the rings' placement (QueueReady 1): VIRTQ_OK or
 * VIRTQ_FAULT_RING_ADDRESS. Resets the device's side of q.
 */
enum virtq_fault virtq_start(struct virtq *q, const struct guest_ram *ram);

/*
 * Take the next available chain into c. 1: taken; 0: none available;
 * -1: a fault, in *fault (nothing taken; the queue must not be used again
 * until reset).
 */
int virtq_pop(struct virtq *q, const struct guest_ram *ram, struct virtq_chain *c,
              enum virtq_fault *fault);

/* Return chain `head` with `written` bytes written into its writable segments. */
void virtq_push(struct virtq *q, const struct guest_ram *ram, uint16_t head, uint32_t written);

/*
 * After pushes: does the driver want an interrupt for them? With EVENT_IDX,
 * used_event decides (and NO_INTERRUPT is ignored), else NO_INTERRUPT.
 * Remembers what it signalled.
 */
bool virtq_should_interrupt(struct virtq *q, const struct guest_ram *ram);

/*
 * Whether the driver should notify the device of new buffers: with EVENT_IDX
 * through avail_event (on: at the next buffer; off: not until the ring
 * wraps), else used->flags NO_NOTIFY. Turning them on re-reads avail->idx
 * after a full fence: true if buffers are already there (take them: no
 * notify will come for them). Turning them off returns false.
 */
bool virtq_set_notify(struct virtq *q, const struct guest_ram *ram, bool on);

/*
 * Buffers available now (reads avail->idx when the pass is over). True on a
 * bad advance too, so that the caller's virtq_pop reports it.
 */
bool virtq_has_avail(struct virtq *q, const struct guest_ram *ram);

/* Copy out of the chain's readable bytes from offset off; returns bytes copied. */
size_t virtq_chain_read(const struct virtq_chain *c, uint64_t off, void *dst, size_t len);

/* Copy into the chain's writable bytes from offset off; returns bytes copied. */
size_t virtq_chain_write(const struct virtq_chain *c, uint64_t off, const void *src, size_t len);

#endif
