/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtiocheck: pollux's virtio devices (docs/virtio.md, issue 24) under a
 * well-behaved driver and a hostile one. It needs both devices: net= (slot
 * 0) and disk= (slot 1), the disk made as tests/boot/suite.py's
 * make_fixtures makes virtiocheck.disk: sector s holds s (le64) in bytes
 * 0-7 and (i + s) & 0xff in byte i after them.
 *
 * With no argument, or "peer":
 *   - the good paths: blk reads sector 0 and the last sector and compares
 *     them with the pattern, writes a sector and reads it back, flushes,
 *     gets its ID, and gets IOERR for data beyond the disk and UNSUPP for an
 *     unknown request type (answers, not faults); net sends a broadcast frame
 *     (header and frame apart, and in one buffer) and gets each transmit
 *     element back with length 0, and a frame over 1518 bytes comes back too
 *     (a counted drop, not a fault); FEATURES_OK is refused without
 *     VERSION_1;
 *   - then each hostile ring of the list (HOSTILE below), one check
 *     each: the device must set DEVICE_NEEDS_RESET, give back nothing of the
 *     bad chain, raise the CONFIG interrupt, answer nothing more on any queue
 *     while the other device goes on working, read Status 0 after a reset,
 *     and then work again. pollux prints a @warning naming VM, device, queue
 *     and fault for each; the boot test matches them with this list.
 *   - "peer": before the hostile rings, wait for the bystander's first round
 *     (a frame of its round 2); at the end, broadcast a done frame until it
 *     acks it.
 * With "bystander": the good paths of both devices in a loop, a round every
 * ROUND_US, checking every answer, until the peer's done frame comes (at
 * most BYSTANDER_MS), then an ack: its own devices keep working while the
 * peer breaks its own. Its summary gives the longest gap between two
 * rounds' starts: the boot test bounds it for a bystander sharing a CPU
 * with a flood.
 * With "flood" (two vCPUs, a disk of at least SIZE_MAX × SEG_MAX bytes or
 * a 1 MiB one, the bystander's peer as with "peer"), after the good paths,
 * a device's work per exit (issue 37): a buffer over SIZE_MAX must be
 * answered IOERR; 256 avail entries naming one chain as long as SIZE_MAX
 * and SEG_MAX allow (within the disk) are all served after one notify; and
 * while the second vCPU keeps the ring full for FLOOD_MS without a notify
 * (the first vCPU kicks the queue whenever the device asks, and once at
 * the end), every chain comes back. A device that serves a notify until
 * the ring is empty never returns from the first kick: the first vCPU
 * never ends the flood.
 *
 * With "longexit" (a disk as "flood"'s, the bystander's peer as with
 * "peer"; issue 37): after the good paths, the longest exit it can make
 * through each device and hypercall, one after the other while the
 * bystander shares its CPU (docs/robustness.md, "Bounded exits"): a burst
 * of trace marks, KVM_HC_SEND_IPI naming 64 vCPUs, one virtio-blk notify
 * whose pass is the longest the budget allows (63 one-page reads, then the
 * longest chain), a full transmit ring of the longest frames into the
 * switch, every I/O APIC redirection entry, broadcast IPIs through the
 * ICR, the 8259s and the 8254 programmed as a BIOS does, a COM1 line as
 * long as the UART keeps, every CPUID leaf and KVM's MSRs. The boot test
 * bounds the VM's exit_max_ns and the bystander's pace.
 *
 * Each check prints "check <name>: ok" or "check <name>: FAIL ...", then a
 * summary; the exit code is the number of failures.
 */
#include <stddef.h>

#include "abi/hypercall.h"
#include "guest-tests/runtime/check.h"
#include "guest-tests/runtime/cpu.h"
#include "guest-tests/runtime/kvm.h"
#include "guest-tests/runtime/lapic.h"
#include "guest-tests/runtime/runtime.h"
#include "guest-tests/runtime/timing.h"
#include "guest-tests/runtime/virtio.h"

#define MIB            0x100000u
#define QNUM           8      /* every queue's size */
#define WAIT_US        100000 /* for an answer that must come (the devices answer at the notify) */
#define QUIET_US       10000  /* for one that must not */
#define SETTLE_POLL_US 1000   /* between Status polls while a fault may still come */
#define FAR_GPA        (1ull << 40)
#define RX_BUFS        4
#define FRAME_MAX      1518 /* the longest frame the receive buffers hold (without the header) */
#define ETH_MIN        60
#define ETH_HLEN       14
#define ETH_TYPE       0x88b5 /* IEEE 802 local experimental */
#define TAG_LEN        8
#define OVERSIZED      1600 /* a frame the device must drop and count */
#define BYSTANDER_MS   30000
#define ROUND_US       2000 /* the bystander's pace: a round, then a halt until its timer ticks */
#define TICK_VECTOR    0x40
#define DONE_TRIES     100
#define WRITE_SECTOR   2
#define ODD_TYPE       0x77 /* no such virtio-blk request type */
#define BIG_QNUM       256  /* the flood's queue: QueueNumMax */
#define FLOOD_MS       300
#define FLOOD_WAIT_US  20000000 /* for a flood's chains to come back */
#define DRAIN_POLLS    50       /* receive polls after the flood, 4 frames each at least */

#define BLK_CFG_CAPACITY 0  /* le64, 512-byte sectors */
#define BLK_CFG_SIZE_MAX 8  /* le32 */
#define BLK_CFG_SEG_MAX  12 /* le32 */
#define NET_CFG_MAC      0  /* 6 bytes */
#define NET_CFG_STATUS   6  /* le16 */
#define NET_CFG_MTU      10 /* le16, with VIRTIO_NET_F_MTU */
#define NET_MTU          1500

/* The offload features pollux must not offer (5.1.3): CSUM, GUEST_CSUM, the TSO/UFO family. */
#define NET_OFFLOADS 0x3fc3ull

struct blk_req {
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
};

static struct vdev blk, net;
static struct vq blkq, rxq, txq;
static uint8_t blk_ring[VQ_PAGE_SIZE] __attribute__((aligned(4096)));
static uint8_t rx_ring[VQ_PAGE_SIZE] __attribute__((aligned(4096)));
static uint8_t tx_ring[VQ_PAGE_SIZE] __attribute__((aligned(4096)));
static struct blk_req blk_hdr __attribute__((aligned(16)));
static uint8_t blk_data[2 * VIRTIO_BLK_SECTOR] __attribute__((aligned(16)));
static volatile uint8_t blk_status;
static struct virtq_desc indirect_table[3] __attribute__((aligned(16)));
static uint8_t rx_buf[RX_BUFS][VIRTIO_NET_HDR_LEN + FRAME_MAX];
static uint8_t tx_buf[VIRTIO_NET_HDR_LEN + OVERSIZED];

static uint64_t capacity; /* sectors */
static uint8_t mac[6];
static uint32_t ram_end; /* the guest's RAM: [0, ram_end) */

/* What the receive queue brought since the last look. */
static unsigned peer_good, peer_done, peer_ack, peer_ready, rx_bad;

static uint64_t gpa(const volatile void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static bool same(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return false;
    return true;
}

/* Spin on the TSC alone: no exits, and no PAUSE for the spin detector to take for a lock. */
static void spin_us(uint32_t us)
{
    uint64_t end = rdtsc() + us_to_tsc(us);
    while (rdtsc() < end)
        ;
}

static bool needs_reset(const struct vdev *d)
{
    return vdev_status(d) & VIRTIO_STATUS_DEVICE_NEEDS_RESET;
}

/* ------------------------------------------------------------ virtio-blk */

static uint8_t disk_byte(uint64_t sector, unsigned i)
{
    return i < 8 ? (uint8_t)(sector >> (8 * i)) : (uint8_t)(i + sector);
}

static bool disk_pattern(const uint8_t *buf, uint64_t sector)
{
    for (unsigned i = 0; i < VIRTIO_BLK_SECTOR; i++)
        if (buf[i] != disk_byte(sector, i))
            return false;
    return true;
}

/* A request's chain in descriptors 0-2 (0-1 without data), published; no notify. */
static void blk_publish(uint32_t type, uint64_t sector, uint32_t len)
{
    blk_hdr = (struct blk_req){.type = type, .sector = sector};
    blk_status = 0xff;
    uint16_t data_flags = type == VIRTIO_BLK_T_OUT ? 0 : VIRTQ_DESC_F_WRITE;
    if (len == 0) {
        vq_desc(&blkq, 0, gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 1);
        vq_desc(&blkq, 1, gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
    } else {
        vq_desc(&blkq, 0, gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 1);
        vq_desc(&blkq, 1, gpa(blk_data), len, data_flags | VIRTQ_DESC_F_NEXT, 2);
        vq_desc(&blkq, 2, gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
    }
    vq_publish(&blkq, 0);
}

/*
 * One request of `len` data bytes in blk_data: the status byte, or -1 if no
 * used element came (or not for head 0); *written is its length.
 */
static int blk_request(uint32_t type, uint64_t sector, uint32_t len, uint32_t *written)
{
    struct virtq_used_elem e;
    blk_publish(type, sector, len);
    vq_notify(&blkq);
    if (!vq_wait_used(&blkq, &e, WAIT_US) || e.id != 0)
        return -1;
    vdev_ack_interrupt(&blk);
    *written = e.len;
    return blk_status;
}

static bool blk_read(uint64_t sector, uint32_t len)
{
    uint32_t written;
    return blk_request(VIRTIO_BLK_T_IN, sector, len, &written) == VIRTIO_BLK_S_OK &&
           written == len + 1;
}

static bool blk_start(void)
{
    return vdev_negotiate(&blk, 0) && vq_setup(&blkq, &blk, 0, QNUM, blk_ring) &&
           (vdev_driver_ok(&blk), true);
}

/* The short good path: sector 0 as the disk file has it. */
static bool blk_good(void)
{
    return blk_read(0, VIRTIO_BLK_SECTOR) && disk_pattern(blk_data, 0);
}

/* Write WRITE_SECTOR with a pattern of `round`, read it back: whether both worked. */
static bool blk_write_read_back(uint32_t round)
{
    uint32_t written;
    for (unsigned i = 0; i < VIRTIO_BLK_SECTOR; i++)
        blk_data[i] = (uint8_t)(i * 3 + round);
    if (blk_request(VIRTIO_BLK_T_OUT, WRITE_SECTOR, VIRTIO_BLK_SECTOR, &written) !=
            VIRTIO_BLK_S_OK ||
        written != 1)
        return false;
    for (unsigned i = 0; i < VIRTIO_BLK_SECTOR; i++)
        blk_data[i] = 0;
    if (!blk_read(WRITE_SECTOR, VIRTIO_BLK_SECTOR))
        return false;
    for (unsigned i = 0; i < VIRTIO_BLK_SECTOR; i++)
        if (blk_data[i] != (uint8_t)(i * 3 + round))
            return false;
    return true;
}

static void blk_checks(void)
{
    uint32_t written;
    vcheck(vdev_probe(&blk, VIRTIO_SLOT_BLK, VIRTIO_ID_BLOCK), "blk-probe", "no virtio-blk");
    uint64_t offered = vdev_offered(&blk);
    uint64_t want = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_BLK_F_SIZE_MAX) |
                    VIRTIO_BIT(VIRTIO_BLK_F_SEG_MAX) | VIRTIO_BIT(VIRTIO_BLK_F_BLK_SIZE) |
                    VIRTIO_BIT(VIRTIO_BLK_F_FLUSH);
    uint64_t never = VIRTIO_BIT(VIRTIO_F_ACCESS_PLATFORM) | VIRTIO_BIT(VIRTIO_F_RING_PACKED);
    printf("blk features 0x%llx\n", (unsigned long long)offered);
    vcheck((offered & want) == want && !(offered & never), "blk-features",
           "VERSION_1, SIZE_MAX, SEG_MAX, BLK_SIZE, FLUSH offered; ACCESS_PLATFORM, PACKED not");
    vcheck(vdev_begin(&blk) && !vdev_features_ok(&blk, 0), "blk-features-need-version-1",
           "FEATURES_OK kept without VERSION_1");
    vcheck(blk_start(), "blk-start", "negotiation or queue setup failed");

    capacity = vdev_config32(&blk, BLK_CFG_CAPACITY) |
               (uint64_t)vdev_config32(&blk, BLK_CFG_CAPACITY + 4) << 32;
    uint32_t seg_max = vdev_config32(&blk, BLK_CFG_SEG_MAX);
    printf("blk capacity %llu sectors, size_max %u, seg_max %u\n", (unsigned long long)capacity,
           vdev_config32(&blk, BLK_CFG_SIZE_MAX), seg_max);
    vcheck(capacity > 0, "blk-capacity", "capacity 0");
    /* Linux sizes its requests by QueueNumMax (issue 24: SEG_MAX at most it minus 2). */
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_SEL, 0);
    vcheck(seg_max >= 1 && seg_max <= vdev_read(&blk, VIRTIO_MMIO_QUEUE_NUM_MAX) - 2, "blk-seg-max",
           "SEG_MAX not within the queue size minus 2");

    vcheck(blk_good(), "blk-read-sector-0", "not the disk file's sector 0");
    vcheck(blk_read(capacity - 1, VIRTIO_BLK_SECTOR) && disk_pattern(blk_data, capacity - 1),
           "blk-read-last-sector", "not the disk file's last sector");
    vcheck(blk_read(0, 2 * VIRTIO_BLK_SECTOR) && disk_pattern(blk_data, 0) &&
               disk_pattern(blk_data + VIRTIO_BLK_SECTOR, 1),
           "blk-read-two-sectors", "not the disk file's sectors 0 and 1");
    vcheck(blk_write_read_back(0), "blk-write-read-back", "what was written did not come back");
    vcheck(blk_request(VIRTIO_BLK_T_FLUSH, 0, 0, &written) == VIRTIO_BLK_S_OK && written == 1,
           "blk-flush", "flush did not answer OK");
    for (unsigned i = 0; i < VIRTIO_BLK_ID_BYTES; i++)
        blk_data[i] = 0xff;
    vcheck(blk_request(VIRTIO_BLK_T_GET_ID, 0, VIRTIO_BLK_ID_BYTES, &written) == VIRTIO_BLK_S_OK &&
               blk_data[VIRTIO_BLK_ID_BYTES - 1] != 0xff,
           "blk-get-id", "get-id did not answer OK with its 20 bytes");
    vcheck(blk_request(ODD_TYPE, 0, VIRTIO_BLK_SECTOR, &written) == VIRTIO_BLK_S_UNSUPP,
           "blk-unsupported", "an unknown request type did not answer UNSUPP");
    vcheck(blk_request(VIRTIO_BLK_T_IN, capacity, VIRTIO_BLK_SECTOR, &written) ==
                   VIRTIO_BLK_S_IOERR &&
               !needs_reset(&blk),
           "blk-beyond-disk", "a sector past the end did not answer IOERR (or broke the device)");
    vcheck(blk_request(VIRTIO_BLK_T_IN, capacity - 1, 2 * VIRTIO_BLK_SECTOR, &written) ==
                   VIRTIO_BLK_S_IOERR &&
               !needs_reset(&blk),
           "blk-across-end", "data across the end did not answer IOERR (or broke the device)");
    vcheck(blk_good(), "blk-still-good", "sector 0 after the errors");
}

/* ------------------------------------------------------------ virtio-net */

static void rx_post(uint16_t i)
{
    vq_desc(&rxq, i, gpa(rx_buf[i]), sizeof(rx_buf[i]), VIRTQ_DESC_F_WRITE, 0);
    vq_publish(&rxq, i);
}

static bool net_start(uint64_t want)
{
    want |= VIRTIO_BIT(VIRTIO_NET_F_MAC) | VIRTIO_BIT(VIRTIO_NET_F_STATUS);
    if (!vdev_negotiate(&net, want) || !vq_setup(&rxq, &net, 0, QNUM, rx_ring) ||
        !vq_setup(&txq, &net, 1, QNUM, tx_ring))
        return false;
    for (uint16_t i = 0; i < RX_BUFS; i++)
        rx_post(i);
    vdev_driver_ok(&net);
    vq_notify(&rxq);
    return true;
}

/* A broadcast frame of `len` bytes after the header, tagged, in tx_buf. */
static void frame_build(const char *tag, uint32_t len)
{
    uint8_t *f = tx_buf + VIRTIO_NET_HDR_LEN;
    for (unsigned i = 0; i < VIRTIO_NET_HDR_LEN; i++)
        tx_buf[i] = 0;
    for (unsigned i = 0; i < 6; i++) {
        f[i] = 0xff;
        f[6 + i] = mac[i];
    }
    f[12] = ETH_TYPE >> 8;
    f[13] = ETH_TYPE & 0xff;
    unsigned i = ETH_HLEN;
    for (; *tag != '\0'; tag++)
        f[i++] = (uint8_t)*tag;
    for (; i < len; i++)
        f[i] = 0;
}

/* A frame's chain in descriptors 0-1 (header and frame apart) or 0 (together), published. */
static void tx_publish(const char *tag, uint32_t len, bool one_buffer)
{
    frame_build(tag, len);
    if (one_buffer) {
        vq_desc(&txq, 0, gpa(tx_buf), VIRTIO_NET_HDR_LEN + len, 0, 0);
    } else {
        vq_desc(&txq, 0, gpa(tx_buf), VIRTIO_NET_HDR_LEN, VIRTQ_DESC_F_NEXT, 1);
        vq_desc(&txq, 1, gpa(tx_buf + VIRTIO_NET_HDR_LEN), len, 0, 0);
    }
    vq_publish(&txq, 0);
}

/* Send a frame: whether its element came back, for head 0, with length 0 (nothing written). */
static bool net_send(const char *tag, uint32_t len, bool one_buffer)
{
    struct virtq_used_elem e;
    tx_publish(tag, len, one_buffer);
    vq_notify(&txq);
    bool ok = vq_wait_used(&txq, &e, WAIT_US) && e.id == 0 && e.len == 0;
    vdev_ack_interrupt(&net);
    return ok;
}

static bool net_good(void)
{
    return net_send("vc-good", ETH_MIN, false);
}

/* Take what the receive queue holds, count the peer's frames by tag, post the buffers again. */
static void rx_poll(void)
{
    struct virtq_used_elem e;
    bool posted = false;
    while (vq_wait_used(&rxq, &e, 0)) {
        if (e.id >= RX_BUFS || e.len < VIRTIO_NET_HDR_LEN + ETH_HLEN || e.len > sizeof(rx_buf[0])) {
            rx_bad++;
            continue;
        }
        const uint8_t *b = rx_buf[e.id], *f = b + VIRTIO_NET_HDR_LEN;
        /* VERSION_1's header: flags and GSO 0, num_buffers 1 (no offloads, no MRG_RXBUF). */
        if (b[0] != 0 || b[1] != 0 || b[VIRTIO_NET_HDR_NUM_BUFFERS] != 1 ||
            b[VIRTIO_NET_HDR_NUM_BUFFERS + 1] != 0)
            rx_bad++;
        if (f[12] == ETH_TYPE >> 8 && f[13] == (ETH_TYPE & 0xff)) {
            peer_good += same(f + ETH_HLEN, "vc-good", TAG_LEN);
            peer_done += same(f + ETH_HLEN, "vc-done", TAG_LEN);
            peer_ack += same(f + ETH_HLEN, "vc-ack", 7);
            peer_ready += same(f + ETH_HLEN, "vc-rnd", 7);
        }
        rx_post((uint16_t)e.id);
        posted = true;
    }
    if (posted)
        vq_notify(&rxq);
    vdev_ack_interrupt(&net);
}

static void net_checks(bool bystander)
{
    vcheck(vdev_probe(&net, VIRTIO_SLOT_NET, VIRTIO_ID_NET), "net-probe", "no virtio-net");
    uint64_t offered = vdev_offered(&net);
    uint64_t want = VIRTIO_BIT(VIRTIO_F_VERSION_1) | VIRTIO_BIT(VIRTIO_NET_F_MAC) |
                    VIRTIO_BIT(VIRTIO_NET_F_STATUS) | VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX);
    uint64_t never =
        NET_OFFLOADS | VIRTIO_BIT(VIRTIO_F_ACCESS_PLATFORM) | VIRTIO_BIT(VIRTIO_F_RING_PACKED);
    printf("net features 0x%llx\n", (unsigned long long)offered);
    vcheck((offered & want) == want && !(offered & never), "net-features",
           "VERSION_1, MAC, STATUS, EVENT_IDX offered; offloads, ACCESS_PLATFORM, PACKED not");
    vcheck(vdev_begin(&net) && !vdev_features_ok(&net, VIRTIO_BIT(VIRTIO_NET_F_MAC)),
           "net-features-need-version-1", "FEATURES_OK kept without VERSION_1");
    /* The bystander drives its rings with EVENT_IDX, the hostile VM without. */
    vcheck(net_start(bystander ? VIRTIO_BIT(VIRTIO_F_RING_EVENT_IDX) : 0), "net-start",
           "negotiation or queue setup failed");
    for (unsigned i = 0; i < 6; i++)
        mac[i] = vdev_config8(&net, NET_CFG_MAC + i);
    static const uint8_t prefix[] = {VIRTIO_NET_MAC_PREFIX};
    printf("net mac %02x:%02x:%02x:%02x:%02x:%02x\n", mac[0], mac[1], mac[2], mac[3], mac[4],
           mac[5]);
    vcheck(same(mac, prefix, sizeof(prefix)), "net-mac", "not 02:50:4c:58:00:<VM index>");
    vcheck(vdev_config8(&net, NET_CFG_STATUS) & VIRTIO_NET_S_LINK_UP, "net-link-up",
           "STATUS without LINK_UP");
    uint32_t mtu = vdev_config8(&net, NET_CFG_MTU) | vdev_config8(&net, NET_CFG_MTU + 1) << 8;
    vcheck((offered & VIRTIO_BIT(VIRTIO_NET_F_MTU)) && mtu == NET_MTU, "net-mtu",
           "F_MTU not offered, or its mtu not the switch's 1500");
    vcheck(net_good(), "net-tx", "the transmit element did not come back with length 0");
    vcheck(net_send("vc-good", ETH_MIN, true), "net-tx-one-buffer",
           "a frame with its header in one buffer did not come back");
    vcheck(net_send("vc-big", OVERSIZED, false) && !needs_reset(&net), "net-tx-oversized",
           "a frame over 1518 bytes was not dropped and given back (or broke the device)");
    vcheck(net_good(), "net-still-good", "a frame after the oversized one");
}

/* ------------------------------------------------------------ hostile rings */

/* What a hostile ring breaks, and how to tell it works. */
struct target {
    struct vdev *dev;
    struct vq *q; /* the queue the hostile chains go to */
    bool (*start)(void);
    void (*publish_good)(void); /* a good chain published on q, no notify */
    bool (*good)(void);
    bool (*other_good)(void); /* the other device's good path */
};

static bool net_start_plain(void)
{
    return net_start(0);
}

static void blk_publish_good(void)
{
    blk_publish(VIRTIO_BLK_T_IN, 0, VIRTIO_BLK_SECTOR);
}

static void tx_publish_good(void)
{
    tx_publish("vc-good", ETH_MIN, false);
}

static const struct target BLK = {&blk, &blkq, blk_start, blk_publish_good, blk_good, net_good};
static const struct target NET = {&net, &txq, net_start_plain, tx_publish_good, net_good, blk_good};
static void rx_publish_good(void);
static const struct target NET_RX = {&net,     &rxq,    net_start_plain, rx_publish_good,
                                     net_good, blk_good};

/* Chains the device takes in first; each hostile builder puts its chain at head 0. */
static void blk_chain(uint16_t hdr_flags, uint64_t data_gpa, uint32_t data_len, uint16_t data_flags,
                      uint16_t status_flags)
{
    blk_hdr = (struct blk_req){.type = VIRTIO_BLK_T_IN};
    vq_desc(&blkq, 0, gpa(&blk_hdr), sizeof(blk_hdr), hdr_flags | VIRTQ_DESC_F_NEXT, 1);
    vq_desc(&blkq, 1, data_gpa, data_len, data_flags | VIRTQ_DESC_F_NEXT, 2);
    vq_desc(&blkq, 2, gpa(&blk_status), 1, status_flags, 0);
    vq_publish(&blkq, 0);
}

/* 0 -> 1 -> 2 -> 1: a loop that does not come back to the head. */
static const char *build_loop(void)
{
    for (uint16_t i = 0; i < 3; i++)
        vq_desc(&blkq, i, gpa(blk_data), 16, VIRTQ_DESC_F_NEXT, i == 2 ? 1 : i + 1);
    vq_publish(&blkq, 0);
    return NULL;
}

/* Every descriptor of the queue, then the head again: longer than the queue. */
static const char *build_longer_than_queue(void)
{
    for (uint16_t i = 0; i < QNUM; i++)
        vq_desc(&blkq, i, gpa(blk_data), 16, VIRTQ_DESC_F_NEXT, (i + 1) % QNUM);
    vq_publish(&blkq, 0);
    return NULL;
}

static const char *build_zero_length(void)
{
    blk_chain(0, gpa(blk_data), 0, VIRTQ_DESC_F_WRITE, VIRTQ_DESC_F_WRITE);
    return NULL;
}

/* blk's header is the device's to read. */
static const char *build_writable_header(void)
{
    blk_chain(VIRTQ_DESC_F_WRITE, gpa(blk_data), VIRTIO_BLK_SECTOR, VIRTQ_DESC_F_WRITE,
              VIRTQ_DESC_F_WRITE);
    return NULL;
}

/* A readable descriptor after a writable one (2.7.4.2). */
static const char *build_readable_after_writable(void)
{
    blk_chain(0, gpa(blk_data), VIRTIO_BLK_SECTOR, VIRTQ_DESC_F_WRITE, 0);
    return NULL;
}

/* A header shorter than blk's 16 bytes. */
static const char *build_short_header(void)
{
    blk_hdr = (struct blk_req){.type = VIRTIO_BLK_T_IN};
    vq_desc(&blkq, 0, gpa(&blk_hdr), sizeof(blk_hdr) / 2, VIRTQ_DESC_F_NEXT, 1);
    vq_desc(&blkq, 1, gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
    vq_publish(&blkq, 0);
    return NULL;
}

/* A good read in an indirect table, INDIRECT_DESC not negotiated. */
static const char *build_indirect(void)
{
    blk_hdr = (struct blk_req){.type = VIRTIO_BLK_T_IN};
    indirect_table[0] = (struct virtq_desc){gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 1};
    indirect_table[1] = (struct virtq_desc){gpa(blk_data), VIRTIO_BLK_SECTOR,
                                            VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2};
    indirect_table[2] = (struct virtq_desc){gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0};
    vq_desc(&blkq, 0, gpa(indirect_table), sizeof(indirect_table), VIRTQ_DESC_F_INDIRECT, 0);
    vq_publish(&blkq, 0);
    return NULL;
}

static const char *build_far_buffer(void)
{
    blk_chain(0, FAR_GPA, VIRTIO_BLK_SECTOR, VIRTQ_DESC_F_WRITE, VIRTQ_DESC_F_WRITE);
    return NULL;
}

/* A buffer that starts in RAM and ends past it. */
static const char *build_buffer_across_ram_end(void)
{
    blk_chain(0, ram_end - VIRTIO_BLK_SECTOR / 2, VIRTIO_BLK_SECTOR, VIRTQ_DESC_F_WRITE,
              VIRTQ_DESC_F_WRITE);
    return NULL;
}

static const char *build_head(void)
{
    blk_publish_good();
    blkq.avail->ring[(uint16_t)(blkq.next_avail - 1) % QNUM] = QNUM;
    return NULL;
}

static const char *build_next(void)
{
    blk_publish_good();
    blkq.desc[0].next = QNUM;
    return NULL;
}

/* The good chain, and avail->idx one past the queue size beyond what the device took. */
static const char *build_avail_advance(void)
{
    blk_publish_good();
    blkq.next_avail += QNUM;
    blkq.avail->idx = blkq.next_avail;
    return NULL;
}

/* net's transmit buffers are the device's to read. */
static const char *build_tx_writable(void)
{
    frame_build("vc-bad", ETH_MIN);
    vq_desc(&txq, 0, gpa(tx_buf), VIRTIO_NET_HDR_LEN + ETH_MIN, VIRTQ_DESC_F_WRITE, 0);
    vq_publish(&txq, 0);
    return NULL;
}

static const char *build_tx_zero_length(void)
{
    frame_build("vc-bad", ETH_MIN);
    vq_desc(&txq, 0, gpa(tx_buf), VIRTIO_NET_HDR_LEN, VIRTQ_DESC_F_NEXT, 1);
    vq_desc(&txq, 1, gpa(tx_buf + VIRTIO_NET_HDR_LEN), 0, 0, 0);
    vq_publish(&txq, 0);
    return NULL;
}

static const char *build_tx_head(void)
{
    tx_publish_good();
    txq.avail->ring[(uint16_t)(txq.next_avail - 1) % QNUM] = QNUM;
    return NULL;
}

/* blk's rings with the descriptor table at 1 TiB: QueueReady must stay 0. */
static const char *build_ring_outside_ram(void)
{
    if (!vdev_negotiate(&blk, 0))
        return "negotiation failed";
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_SEL, 0);
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_NUM, QNUM);
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)FAR_GPA);
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(FAR_GPA >> 32));
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)gpa(blkq.avail));
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_DRIVER_HIGH, 0);
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)gpa(blkq.used));
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_DEVICE_HIGH, 0);
    vdev_write(&blk, VIRTIO_MMIO_QUEUE_READY, 1);
    if (vdev_read(&blk, VIRTIO_MMIO_QUEUE_READY) != 0)
        return "QueueReady reads 1 with the descriptors outside RAM";
    vdev_driver_ok(&blk);
    return NULL;
}

/* net's receive buffers are the device's to write: a fresh start with a readable one only. */
static const char *build_rx_readable(void)
{
    if (!vdev_negotiate(&net, VIRTIO_BIT(VIRTIO_NET_F_MAC)) ||
        !vq_setup(&rxq, &net, 0, QNUM, rx_ring) || !vq_setup(&txq, &net, 1, QNUM, tx_ring))
        return "negotiation or queue setup failed";
    vq_desc(&rxq, 0, gpa(rx_buf[0]), sizeof(rx_buf[0]), 0, 0);
    vq_publish(&rxq, 0);
    vdev_driver_ok(&net);
    return NULL;
}

static void rx_publish_good(void)
{
    rx_post(1);
}

struct hostile {
    const char *name;
    const struct target *t;
    /* Sets the ring up, published: NULL, or what the device did wrong meanwhile. */
    const char *(*build)(void);
    /* How long the fault may take to come (a receive queue's, until a frame arrives). */
    uint32_t settle_us;
    bool needs_peer; /* the peer's frames set it off */
};

/* In this order; the boot test expects one @warning for each (tests/boot/suite.py). */
static const struct hostile HOSTILE[] = {
    {"blk-loop", &BLK, build_loop, 0, false},
    {"blk-longer-than-queue", &BLK, build_longer_than_queue, 0, false},
    {"blk-zero-length", &BLK, build_zero_length, 0, false},
    {"blk-writable-header", &BLK, build_writable_header, 0, false},
    {"blk-readable-after-writable", &BLK, build_readable_after_writable, 0, false},
    {"blk-short-header", &BLK, build_short_header, 0, false},
    {"blk-indirect", &BLK, build_indirect, 0, false},
    {"blk-far-buffer", &BLK, build_far_buffer, 0, false},
    {"blk-buffer-across-ram-end", &BLK, build_buffer_across_ram_end, 0, false},
    {"blk-head", &BLK, build_head, 0, false},
    {"blk-next", &BLK, build_next, 0, false},
    {"blk-avail-advance", &BLK, build_avail_advance, 0, false},
    {"net-tx-writable", &NET, build_tx_writable, 0, false},
    {"net-tx-zero-length", &NET, build_tx_zero_length, 0, false},
    {"net-tx-head", &NET, build_tx_head, 0, false},
    {"blk-ring-outside-ram", &BLK, build_ring_outside_ram, 0, false},
    {"net-rx-readable", &NET_RX, build_rx_readable, 1000000, true},
};

/*
 * One hostile ring, and one check of what followed: the first step that
 * went wrong is the check's reason.
 */
static void check_hostile(const struct hostile *h)
{
    const struct target *t = h->t;
    struct vq *q = t->q;
    const char *failed = NULL;

    vdev_ack_interrupt(t->dev);
    failed = h->build();
    uint16_t used_before = q->used->idx;
    vq_notify(q);
    uint64_t end = rdtsc() + us_to_tsc(h->settle_us);
    while (!needs_reset(t->dev) && rdtsc() < end)
        spin_us(SETTLE_POLL_US);
    if (failed == NULL && (!needs_reset(t->dev) || q->used->idx != used_before))
        failed = "no DEVICE_NEEDS_RESET, or the bad chain came back";
    if (failed == NULL && !(vdev_ack_interrupt(t->dev) & VIRTIO_MMIO_INT_CONFIG))
        failed = "InterruptStatus lacks the CONFIG bit";
    if (failed == NULL) {
        /* Stopped: a good chain gets no answer, on this queue or (net) the receive queue. */
        q->last_used = q->used->idx;
        uint16_t rx_used = rxq.used->idx;
        t->publish_good();
        vq_notify(q);
        if (vq_wait_used(q, NULL, QUIET_US) || !needs_reset(t->dev) ||
            (t->dev == &net && rxq.used->idx != rx_used) ||
            (vdev_ack_interrupt(t->dev) & VIRTIO_MMIO_INT_VRING))
            failed = "the device answered before its reset";
        else if (!t->other_good())
            failed = "the VM's other device stopped too";
    }
    /* Reset whatever happened, so that the next scenario starts from a live device. */
    if (!vdev_reset(t->dev) && failed == NULL)
        failed = "Status does not read 0 after the reset";
    if (!(t->start() && t->good()) && failed == NULL)
        failed = "the good path fails after the reset";
    vcheck(failed == NULL, h->name, failed);
}

/* ------------------------------------------------------------ the two roles */

/*
 * The hostile rings wait for the bystander's first round: it must be seen
 * working while they break, however the two VMs were scheduled (under TCG
 * the peer could finish all of them first). Its frames from round 2 on say
 * so, one every round: a frame sent while the peer was still resetting its
 * device in its own checks would be lost.
 */
static void await_bystander_round(void)
{
    uint64_t end = rdtsc() + us_to_tsc(BYSTANDER_MS * 1000ull);
    while (peer_ready == 0 && rdtsc() < end) {
        rx_poll();
        spin_us(SETTLE_POLL_US);
    }
    vcheck(peer_ready > 0, "peer-ready", "the bystander's first round never came");
}

/* Broadcast done until the bystander's ack comes. */
static void await_peer_ack(void)
{
    peer_ack = 0;
    for (unsigned i = 0; i < DONE_TRIES && peer_ack == 0; i++) {
        net_send("vc-done", ETH_MIN, false);
        uint64_t end = rdtsc() + us_to_tsc(QUIET_US);
        while (peer_ack == 0 && rdtsc() < end) {
            rx_poll();
            spin_us(SETTLE_POLL_US);
        }
    }
    vcheck(peer_ack > 0, "peer-ack", "the bystander never acknowledged the done frame");
}

static volatile uint32_t ticks;

__attribute__((interrupt)) static void tick(struct interrupt_frame *f)
{
    (void)f;
    ticks++;
    lapic_eoi();
}

/*
 * Rounds at a pace, halted in between: a busy loop of MMIO exits would
 * take the emulator from the hostile VM (and the boot's others).
 */
static void bystander(void)
{
    uint32_t rounds = 0, blk_failed = 0, net_failed = 0;
    uint64_t end = rdtsc() + us_to_tsc(BYSTANDER_MS * 1000ull), last = 0, longest = 0;
    set_interrupt_handler(TICK_VECTOR, tick);
    lapic_timer_start(LAPIC_TIMER_PERIODIC, TICK_VECTOR,
                      (uint32_t)div64((uint64_t)apic_timer_khz() * ROUND_US, 1000), 1);
    while (peer_done == 0 && rdtsc() < end) {
        uint64_t now = rdtsc();
        /* From round 2 on: round 1's line waits for the console, which is not its CPU's share. */
        if (rounds > 1 && now - last > longest)
            longest = now - last;
        last = now;
        rounds++;
        blk_failed += !(blk_good() && blk_write_read_back(rounds));
        /* From round 2 on, its frames tell the peer it ran a round (a reset loses none then). */
        net_failed += !net_send(rounds == 1 ? "vc-good" : "vc-rnd", ETH_MIN, false);
        rx_poll();
        if (rounds == 1)
            printf("bystander: round 1 %s\n", blk_failed + net_failed ? "FAIL" : "ok");
        for (uint32_t seen = ticks; ticks == seen;)
            wait_for_interrupt();
    }
    lapic_timer_stop();
    net_send("vc-ack", ETH_MIN, false);
    printf("bystander: %u rounds, %u frames from the peer, %u bad, longest gap %u us\n", rounds,
           peer_good, rx_bad, (uint32_t)div64(longest * 1000, tsc_khz()));
    vcheck(blk_failed == 0, "bystander-blk", "a round's disk read or write failed");
    vcheck(net_failed == 0, "bystander-net", "a round's frame did not come back");
    vcheck(rx_bad == 0, "bystander-rx", "a received frame or header was malformed");
    vcheck(peer_done > 0, "bystander-peer-done", "the peer's done frame never came");
    vcheck(peer_good > 0, "bystander-peer-frames", "no frame of the peer's came through");
}

/* ------------------------------------------------------------ work per exit */

static uint8_t big_ring[3 * 4096] __attribute__((aligned(4096)));
static struct vq bigq;
static volatile uint32_t flood_phase; /* 0: the second vCPU waits, 1: it floods, 2: it stops */
static volatile uint32_t flood_done;

static bool big_start(void)
{
    for (unsigned i = 0; i < sizeof(big_ring); i++)
        big_ring[i] = 0;
    return vdev_negotiate(&blk, 0) &&
           vq_setup_at(&bigq, &blk, 0, BIG_QNUM, big_ring, big_ring + 4096, big_ring + 8192) &&
           (vdev_driver_ok(&blk), true);
}

/* n more avail entries naming head 0, then avail->idx once. */
static void big_publish(uint16_t n)
{
    for (uint16_t i = 0; i < n; i++)
        bigq.avail->ring[(uint16_t)(bigq.next_avail + i) % BIG_QNUM] = 0;
    __asm__ volatile("" ::: "memory");
    bigq.next_avail = (uint16_t)(bigq.next_avail + n);
    bigq.avail->idx = bigq.next_avail;
}

/*
 * Halted until the next tick: the waits leave the CPU to the bystander and
 * the device's deferred work (a spinning vCPU would take its slices).
 */
static void tick_wait(void)
{
    for (uint32_t seen = ticks; ticks == seen;)
        wait_for_interrupt();
}

/* Ticks every ROUND_US on this vCPU (again after smp_start, whose cpu_init loads the IDT). */
static void ticks_start(void)
{
    set_interrupt_handler(TICK_VECTOR, tick);
    lapic_timer_start(LAPIC_TIMER_PERIODIC, TICK_VECTOR,
                      (uint32_t)div64((uint64_t)apic_timer_khz() * ROUND_US, 1000), 1);
}

/* Until used->idx reaches avail->idx (or FLOOD_WAIT_US): whether it did. */
static bool big_drained(void)
{
    uint64_t end = rdtsc() + us_to_tsc(FLOOD_WAIT_US);
    while (bigq.used->idx != bigq.next_avail) {
        if (rdtsc() >= end)
            return false;
        tick_wait();
    }
    return true;
}

/* The last num used elements are head 0's with this length, and the status says OK. */
static bool big_answers(uint32_t len)
{
    for (uint16_t i = 0; i < BIG_QNUM; i++) {
        const volatile struct virtq_used_elem *e = &bigq.used->ring[i];
        if (e->id != 0 || e->len != len)
            return false;
    }
    return blk_status == VIRTIO_BLK_S_OK && !needs_reset(&blk);
}

/* A request chain at head 0: header, n buffers of len bytes all at buf (written), status. */
static void big_chain(uint32_t type, uint32_t n, uint32_t len, uint32_t buf)
{
    blk_hdr = (struct blk_req){.type = type};
    blk_status = 0xff;
    vq_desc(&bigq, 0, gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 1);
    for (uint16_t i = 1; i <= n; i++)
        vq_desc(&bigq, i, buf, len, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, (uint16_t)(i + 1));
    vq_desc(&bigq, (uint16_t)(n + 1), gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
}

/*
 * The second vCPU: keep the ring full, never notifying (the first vCPU
 * kicks the queue when the device asks). A PAUSE a turn: under QEMU's single-threaded
 * TCG a CPU that never exits keeps the one host thread for up to 100 ms
 * (docs/robustness.md), which would stall the CPU the bystander shares
 * with the first vCPU as surely as a notify that never ends.
 */
static void flooder(uint32_t index)
{
    (void)index;
    while (flood_phase == 0)
        cpu_relax();
    while (flood_phase == 1) {
        cpu_relax();
        big_publish((uint16_t)(BIG_QNUM - (uint16_t)(bigq.next_avail - bigq.used->idx)));
    }
    flood_done = 1;
}

static void flood(void)
{
    uint32_t size_max = vdev_config32(&blk, BLK_CFG_SIZE_MAX);
    uint32_t seg_max = vdev_config32(&blk, BLK_CFG_SEG_MAX);
    /* Far from the image: the top 2 x SIZE_MAX of RAM. */
    uint32_t buf = (ram_end - 2 * size_max) & ~0xfffu;
    blk_hdr = (struct blk_req){.type = VIRTIO_BLK_T_IN};
    blk_status = 0xff;
    vq_desc(&blkq, 0, gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 1);
    vq_desc(&blkq, 1, buf, size_max + VIRTIO_BLK_SECTOR, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
    vq_desc(&blkq, 2, gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
    vq_publish(&blkq, 0);
    vq_notify(&blkq);
    struct virtq_used_elem e;
    vcheck(vq_wait_used(&blkq, &e, WAIT_US) && e.len == 1 && blk_status == VIRTIO_BLK_S_IOERR &&
               !needs_reset(&blk),
           "blk-over-size-max", "a buffer over SIZE_MAX was not answered IOERR");

    /* 256 copies of a chain of SEG_MAX buffers of SIZE_MAX bytes, as far as the disk goes. */
    uint64_t fit = div64(capacity * VIRTIO_BLK_SECTOR, size_max);
    uint32_t n = fit < seg_max ? (uint32_t)fit : seg_max;
    uint64_t t0 = rdtsc();
    ticks_start();
    bool ok = big_start();
    big_chain(VIRTIO_BLK_T_IN, n, size_max, buf);
    big_publish(BIG_QNUM);
    vq_notify(&bigq);
    ok = ok && big_drained() && big_answers(n * size_max + 1);
    printf("flood: %u copies of a chain of %u x %u bytes in %u ms\n", BIG_QNUM, n, size_max,
           (uint32_t)div64(rdtsc() - t0, tsc_khz()));
    vcheck(ok, "flood-huge-chain", "the copies of the longest chain did not all come back OK");

    /* The second vCPU keeps the ring full of one-sector reads for FLOOD_MS. */
    big_chain(VIRTIO_BLK_T_IN, 1, VIRTIO_BLK_SECTOR, gpa(blk_data));
    uint16_t first = bigq.next_avail;
    ok = smp_start(false, flooder) == 2;
    ticks_start();
    flood_phase = 1;
    uint32_t kicks = 0;
    /* This vCPU kicks whenever the device asks for it and the ring holds chains. */
    for (uint64_t end = rdtsc() + us_to_tsc(FLOOD_MS * 1000); ok && rdtsc() < end;) {
        if (bigq.avail->idx != bigq.used->idx && !(bigq.used->flags & VIRTQ_USED_F_NO_NOTIFY)) {
            vq_notify(&bigq);
            kicks++;
        }
        tick_wait();
    }
    flood_phase = 2;
    while (ok && !flood_done)
        tick_wait();
    __asm__ volatile("" ::: "memory"); /* bigq as the second vCPU left it */
    vq_notify(&bigq);                  /* for what came after the last look */
    uint16_t added = (uint16_t)(bigq.next_avail - first);
    ok = ok && big_drained() && big_answers(VIRTIO_BLK_SECTOR + 1) && added > BIG_QNUM;
    printf("flood: %u chains from the second vCPU in %u ms, %u kicks\n", added, FLOOD_MS, kicks);
    vcheck(ok, "flood-two-vcpus", "a flooded chain did not come back OK");
    lapic_timer_stop();
    /* Its frames come through: the bystander hears from its peer after the flood too. */
    vcheck(net_good(), "flood-net-after", "a frame after the flood did not come back");
    /* The bystander's frames held for this VM while it flooded: room for its ack. */
    for (unsigned i = 0; i < DRAIN_POLLS; i++) {
        rx_poll();
        spin_us(SETTLE_POLL_US);
    }
}

/* ------------------------------------------------------------ the longest exits */

#define LONG_MARKS          32 /* trace marks in a row: past the console buffer on the old code */
#define PV_IPI_VECTOR       0x44
#define SMALL_CHAINS        63 /* one-page reads before the longest chain: the pass's byte budget */
#define IOAPIC_BASE         0xfec00000u
#define IOAPIC_PINS         24
#define COM1_PORT           0x3f8
#define COM1_LINE           1100 /* past the UART's line (VUART_LINE_MAX, 1024) */
#define PIC1                0x20
#define PIC2                0xa0
#define PIT_CH0             0x40
#define PIT_MODE            0x43
#define ICR_LOW             0x300
#define ICR_ALL_BUT_ME      (3u << 18)
#define CONSOLE_FLOOD_LINES 40  /* of each kind (COM1, HC_PUTS): 80 KB, past the console's 64 KiB  \
                                 */
#define CONSOLE_FLOOD_LINE 1000 /* bytes a flood line holds, its end not counted */
#define CONSOLE_FLOOD_PUTS 4    /* lines an HC_PUTS carries (HC_PUTS_MAX 4096) */

static volatile uint32_t pv_ipis;
static uint8_t steal_area[64] __attribute__((aligned(64)));

__attribute__((interrupt)) static void pv_ipi(struct interrupt_frame *f)
{
    (void)f;
    pv_ipis++;
    lapic_eoi();
}

/* The other vCPUs: halted, taking the IPIs. */
static void ap_idle(uint32_t index)
{
    (void)index;
    for (;;)
        wait_for_interrupt();
}

/* One notify: SMALL_CHAINS one-page reads (head 0), then the longest chain (head 3). */
static bool long_blk_pass(void)
{
    uint32_t size_max = vdev_config32(&blk, BLK_CFG_SIZE_MAX);
    uint32_t seg_max = vdev_config32(&blk, BLK_CFG_SEG_MAX);
    uint32_t buf = (ram_end - 2 * MIB) & ~0xfffu;
    uint64_t fit = div64(capacity * VIRTIO_BLK_SECTOR, size_max);
    uint32_t n = fit < seg_max ? (uint32_t)fit : seg_max;
    n = n < BIG_QNUM - 5 ? n : BIG_QNUM - 5; /* both chains in the table */
    if (!big_start())
        return false;
    blk_hdr = (struct blk_req){.type = VIRTIO_BLK_T_IN};
    blk_status = 0xff;
    vq_desc(&bigq, 0, gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 1);
    vq_desc(&bigq, 1, buf, size_max, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, 2);
    vq_desc(&bigq, 2, gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
    vq_desc(&bigq, 3, gpa(&blk_hdr), sizeof(blk_hdr), VIRTQ_DESC_F_NEXT, 4);
    for (uint16_t i = 4; i < 4 + n; i++)
        vq_desc(&bigq, i, buf, size_max, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT, (uint16_t)(i + 1));
    vq_desc(&bigq, (uint16_t)(4 + n), gpa(&blk_status), 1, VIRTQ_DESC_F_WRITE, 0);
    for (uint16_t i = 0; i <= SMALL_CHAINS; i++)
        bigq.avail->ring[(uint16_t)(bigq.next_avail + i) % BIG_QNUM] = i < SMALL_CHAINS ? 0 : 3;
    __asm__ volatile("" ::: "memory");
    bigq.next_avail = (uint16_t)(bigq.next_avail + SMALL_CHAINS + 1);
    bigq.avail->idx = bigq.next_avail;
    vq_notify(&bigq);
    ticks_start();
    bool ok = big_drained() && blk_status == VIRTIO_BLK_S_OK && !needs_reset(&blk);
    lapic_timer_stop();
    return ok;
}

/* QNUM copies of the longest frame (head 0) after one notify: each to the bystander. */
static bool long_net_burst(void)
{
    frame_build("vc-long", FRAME_MAX);
    vq_desc(&txq, 0, gpa(tx_buf), VIRTIO_NET_HDR_LEN, VIRTQ_DESC_F_NEXT, 1);
    vq_desc(&txq, 1, gpa(tx_buf + VIRTIO_NET_HDR_LEN), FRAME_MAX, 0, 0);
    for (unsigned i = 0; i < QNUM; i++)
        vq_publish(&txq, 0);
    vq_notify(&txq);
    struct virtq_used_elem e;
    bool ok = true;
    for (unsigned i = 0; i < QNUM; i++)
        ok = ok && vq_wait_used(&txq, &e, WAIT_US) && e.id == 0;
    vdev_ack_interrupt(&net);
    return ok;
}

/* Flood line n, "console-flood <n> " and letters from n's: the test finds each whole. */
static void flood_line(char *buf, unsigned n)
{
    static const char head[] = "console-flood ";
    unsigned len = 0;
    for (const char *h = head; *h;)
        buf[len++] = *h++;
    buf[len++] = (char)('0' + n / 10);
    buf[len++] = (char)('0' + n % 10);
    buf[len++] = ' ';
    for (unsigned i = 0; len < CONSOLE_FLOOD_LINE; i++)
        buf[len++] = (char)('a' + (n + i) % 26);
    buf[len] = '\n';
}

/*
 * More console output than the host's buffer holds, through COM1 and then
 * HC_PUTS: each write that finds it full waits off its CPU (not in its exit)
 * and none is lost. True if every HC_PUTS answered HC_OK.
 */
static bool console_flood(void)
{
    static char lines[CONSOLE_FLOOD_PUTS * (CONSOLE_FLOOD_LINE + 1)];
    uint64_t t0 = rdtsc();
    for (unsigned n = 0; n < CONSOLE_FLOOD_LINES; n++) {
        flood_line(lines, n);
        for (unsigned i = 0; i <= CONSOLE_FLOOD_LINE; i++)
            serial_putc(lines[i]);
    }
    bool ok = true;
    for (unsigned n = CONSOLE_FLOOD_LINES; n < 2 * CONSOLE_FLOOD_LINES; n += CONSOLE_FLOOD_PUTS) {
        for (unsigned k = 0; k < CONSOLE_FLOOD_PUTS; k++)
            flood_line(lines + k * (CONSOLE_FLOOD_LINE + 1), n + k);
        ok = ok && hypercall(HC_PUTS, (uint32_t)lines, sizeof(lines), 0) == HC_OK;
    }
    printf("longexit: console flood of %u lines in %u ms\n", 2 * CONSOLE_FLOOD_LINES,
           (uint32_t)div64(rdtsc() - t0, tsc_khz()));
    return ok;
}

static void ioapic_write(uint32_t reg, uint32_t value)
{
    *(volatile uint32_t *)IOAPIC_BASE = reg;
    *(volatile uint32_t *)(IOAPIC_BASE + 0x10) = value;
}

static void long_exits(void)
{
    /* The marks: on the old code each printed a whole round inside its exit. */
    for (unsigned i = 0; i < LONG_MARKS; i++)
        trace_mark(i % 2 == 0);

    /* KVM_HC_SEND_IPI naming 64 vCPUs: every one of the VM's takes it, halted. */
    uint32_t cpus = smp_start(false, ap_idle);
    set_interrupt_handler(PV_IPI_VECTOR, pv_ipi); /* after smp_start's cpu_init */
    uint32_t sent = hypercall4(KVM_HC_SEND_IPI, ~0u, ~0u, 0, PV_IPI_VECTOR);
    for (uint64_t end = rdtsc() + us_to_tsc(WAIT_US); pv_ipis < sent && rdtsc() < end;)
        __asm__ volatile("sti; nop; cli" ::: "memory");
    vcheck(cpus >= 1 && sent == cpus && pv_ipis == sent, "long-send-ipi",
           "KVM_HC_SEND_IPI to every vCPU did not reach each once");

    vcheck(long_blk_pass(), "long-blk-pass", "the longest pass's chains did not all come back");
    vcheck(long_net_burst(), "long-net-burst", "a frame of the burst did not come back");

    /* Every redirection entry, masked, to every APIC (logical, all ones), then back. */
    for (uint32_t pin = 0; pin < IOAPIC_PINS; pin++) {
        ioapic_write(0x11 + 2 * pin, 0xff000000u);
        ioapic_write(0x10 + 2 * pin, 0x10800u | (0x50 + pin)); /* masked, logical, edge */
        ioapic_write(0x10 + 2 * pin, 0x10000u);
    }
    /* Fixed IPIs to every other vCPU through the ICR, the vector the PV IPI's. */
    for (unsigned i = 0; i < 8; i++)
        lapic_write(ICR_LOW, ICR_ALL_BUT_ME | PV_IPI_VECTOR);

    /* The 8259s as a BIOS sets them up, all masked after; the 8254's channel 0 at 18.2 Hz. */
    static const uint8_t icw[2][4] = {{0x11, 0x08, 0x04, 0x01}, {0x11, 0x70, 0x02, 0x01}};
    for (unsigned c = 0; c < 2; c++) {
        uint16_t port = c ? PIC2 : PIC1;
        outb(port, icw[c][0]);
        for (unsigned k = 1; k < 4; k++)
            outb((uint16_t)(port + 1), icw[c][k]);
        outb((uint16_t)(port + 1), 0xff);
    }
    outb(PIT_MODE, 0x34);
    outb(PIT_CH0, 0);
    outb(PIT_CH0, 0);
    outb(PIT_MODE, 0x00); /* latch */
    (void)inb(PIT_CH0);
    (void)inb(PIT_CH0);

    /* A line as long as the UART keeps, and past it. */
    for (unsigned i = 0; i < COM1_LINE; i++)
        outb(COM1_PORT, (uint8_t)('a' + i % 26));
    outb(COM1_PORT, '\n');
    vcheck(console_flood(), "long-console-flood", "an HC_PUTS of the flood was refused");

    /* Every CPUID leaf, basic, KVM's and extended; KVM's MSRs. */
    uint32_t max = cpuid(0, 0).eax;
    for (uint32_t leaf = 0; leaf <= max; leaf++)
        (void)cpuid(leaf, 0);
    for (uint32_t leaf = 0x40000000u; leaf <= 0x40000001u; leaf++)
        (void)cpuid(leaf, 0);
    max = cpuid(0x80000000u, 0).eax;
    for (uint32_t leaf = 0x80000000u; leaf <= max && leaf < 0x80000040u; leaf++)
        (void)cpuid(leaf, 0);
    wrmsr(MSR_KVM_STEAL_TIME, gpa(steal_area) | KVM_MSR_ENABLED);
    (void)rdmsr(MSR_KVM_STEAL_TIME);
    wrmsr(MSR_KVM_STEAL_TIME, 0);
    printf("longexit: %u vCPUs, %u PV IPIs accepted\n", cpus, sent);
}

int guest_main(uint32_t magic, const struct mb_info *info)
{
    (void)magic;
    cpu_init();
    lapic_enable();
    timing_init();
    ram_end = MIB + info->mem_upper * 1024;
    const char *args = cmdline_args(info);
    bool is_bystander = word_is(args, "bystander");

    blk_checks();
    net_checks(is_bystander);
    if (is_bystander) {
        bystander();
        return check_summary("virtiocheck");
    }
    if (word_is(args, "longexit")) {
        await_bystander_round();
        long_exits();
        await_peer_ack();
        return check_summary("virtiocheck");
    }
    if (word_is(args, "flood")) {
        await_bystander_round();
        flood();
        await_peer_ack();
        return check_summary("virtiocheck");
    }
    bool peer = word_is(args, "peer");
    if (peer)
        await_bystander_round();
    for (unsigned i = 0; i < sizeof(HOSTILE) / sizeof(HOSTILE[0]); i++)
        if (peer || !HOSTILE[i].needs_peer)
            check_hostile(&HOSTILE[i]);
    if (peer)
        await_peer_ack();
    return check_summary("virtiocheck");
}
