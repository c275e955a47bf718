/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The virtio-mmio transport, version 2 (virtio 1.x, 4.2.2): one device's
 * register file, its feature negotiation (VERSION_1 offered and required,
 * FEATURES_OK refused otherwise), its queues' configuration, reset through
 * Status 0, InterruptStatus/InterruptACK, and DEVICE_NEEDS_RESET when a
 * queue breaks. Pure: the VM's side (its I/O APIC pin, the console) comes in
 * through `struct virtio_env`, so the host unit tests drive it as the guest
 * would. The devices (vmm/dev/virtio/net.c, blk.c) embed one and give it
 * their `struct virtio_device_ops`.
 *
 * Locks: `lock` serialises the register file; each queue has its own, which
 * the device holds while it walks the queue. Order: the transport's, then a
 * queue's (reset takes both, the queues in index order); a device never takes
 * the transport's while it holds a queue's, and holds one queue's at a time.
 * The env's interrupt and fault run under a queue's lock (and take the VM's
 * devices lock inside it). InterruptStatus and Status are atomic, since a
 * queue's holder sets their bits. A fault stops the whole device: a device
 * checks virtio_mmio_live under a queue's lock before it walks that queue
 * (the faulted queue itself is also marked broken in its struct virtq).
 */
#ifndef POLLUX_VMM_DEV_VIRTIO_VIRTIO_MMIO_H
#define POLLUX_VMM_DEV_VIRTIO_VIRTIO_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/spinlock.h"
#include "abi/virtio.h"
#include "sched/deferred.h"
#include "stats/stats.h"
#include "vmm/dev/virtio/virtqueue.h"

#define VIRTIO_QUEUES_MAX 2

/*
 * The work one pass over a queue may do, in a notify or in deferred work
 * (docs/robustness.md): at most this many chains, and no chain is started
 * once this many bytes (their buffers' lengths) were served. What is left
 * is deferred work (virtio_mmio_defer), run by the scheduler loop between
 * vCPU entries, pass by pass, with the driver's notifications left off
 * meanwhile (vhost's weight: VHOST_NET_PKT_WEIGHT, VHOST_NET_WEIGHT).
 */
#define VIRTIO_PASS_CHAINS 64
#define VIRTIO_PASS_BYTES  (256u << 10)

struct virtio_mmio;

/* What a device tells the transport. */
struct virtio_device_ops {
    const char *name; /* "net", "blk": messages and statistics */
    uint32_t device_id;
    uint64_t features; /* the device's own bits; the transport adds its own (docs/virtio.md) */
    unsigned nqueues;
    unsigned config_len;
    /* Bytes [off, off + len) of the configuration space (within config_len), under `lock`. */
    void (*config_read)(struct virtio_mmio *t, unsigned off, uint8_t *buf, unsigned len);
    /* QueueNotify of a ready queue of a live device, on the notifying vCPU's CPU, no lock held. */
    void (*notify)(struct virtio_mmio *t, unsigned queue);
    /* Status 0: drop what is in flight (held frames). Under the transport's and queues' locks. */
    void (*reset)(struct virtio_mmio *t);
    /*
     * A later pass of what a notify left (virtio_mmio_defer), no lock held:
     * true if work is still left. NULL: the device never defers.
     */
    bool (*deferred)(struct virtio_mmio *t);
};

/* The VM's side. */
struct virtio_env {
    /* Pulse the device's interrupt (edge-triggered: one message per call). */
    void (*interrupt)(struct virtio_mmio *t);
    /* A broken queue: print @warning naming VM, device, queue and fault. */
    void (*fault)(struct virtio_mmio *t, unsigned queue, enum virtq_fault f);
    /* Queue t->work: virtio_mmio_deferred_pass runs later, on a CPU of the env's choosing. */
    void (*defer)(struct virtio_mmio *t);
};

struct virtio_queue {
    struct spinlock lock; /* the device's walk of vq, and chain */
    struct virtq vq;
    struct virtq_chain chain; /* the chain being handled (under lock) */
};

struct virtio_mmio {
    const struct virtio_device_ops *ops;
    const struct virtio_env *env;
    void *owner;   /* the env's: the VM */
    unsigned slot; /* its place in the window and its pin (abi/virtio.h) */
    struct guest_ram ram;
    struct spinlock lock; /* the register file */
    volatile uint32_t status;
    volatile uint32_t interrupt_status;
    uint32_t device_features_sel, driver_features_sel, queue_sel;
    uint32_t config_generation;
    uint64_t driver_features;
    struct virtio_queue queues[VIRTIO_QUEUES_MAX];
    struct deferred_work work; /* the device's passes after its budget (ops->deferred) */
    /* Statistics: virtio_mmio_stats_table. */
    uint64_t notifies, notifies_ignored, interrupts, faults;
    uint64_t budget_stops, deferred_passes;
};

/* Set up t for a device (power-on: Status 0). */
void virtio_mmio_init(struct virtio_mmio *t, const struct virtio_device_ops *ops,
                      const struct virtio_env *env, void *owner, unsigned slot,
                      struct guest_ram ram);

/* A guest access at offset `off` of the device's page, `size` bytes (registers: 4; config: 1-4). */
uint32_t virtio_mmio_read(struct virtio_mmio *t, uint64_t off, unsigned size);
void virtio_mmio_write(struct virtio_mmio *t, uint64_t off, unsigned size, uint32_t value);

/*
 * A notify's pass stopped at its budget with work left (no lock held): the
 * rest is deferred work (env->defer), which runs virtio_mmio_deferred_pass.
 */
void virtio_mmio_defer(struct virtio_mmio *t);

/* Deferred work's pass (ops->deferred), counted: true if work is still left. */
bool virtio_mmio_deferred_pass(struct virtio_mmio *t);

/* Is the device running: DRIVER_OK and not DEVICE_NEEDS_RESET. */
bool virtio_mmio_live(const struct virtio_mmio *t);

/* The negotiated feature bits. */
static inline bool virtio_mmio_has(const struct virtio_mmio *t, unsigned bit)
{
    return (t->driver_features >> bit) & 1;
}

/*
 * Under queue's lock, after virtq_push: interrupt the driver if the queue
 * wants it (virtq_should_interrupt): InterruptStatus's VRING bit, then the pin.
 */
void virtio_mmio_used(struct virtio_mmio *t, unsigned queue);

/*
 * Under queue's lock: the queue broke (a virtq_pop fault, or the device's
 * own check of a chain; virtq.broken is set, so the walker leaves that queue
 * alone). Sets DEVICE_NEEDS_RESET, stops the device until the
 * driver resets it, reports through env->fault, and interrupts with the
 * CONFIG bit (4.2.2: how a driver learns of the status change).
 */
void virtio_mmio_fail(struct virtio_mmio *t, unsigned queue, enum virtq_fault f);

extern const struct stats_table virtio_mmio_stats_table; /* every virtio device's has them */

#endif
