/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * virtio-blk's request parsing (virtio_blk_request, vmm/dev/virtio/blk.c)
 * on chains as the virtqueue walker hands them over: readable segments, then
 * writable ones, each 1 to twice SIZE_MAX bytes, laid end to end in an exactly sized
 * "guest RAM". Input: byte 0 gives the segment count (1 + bits 0-2) and the
 * disk (bit 7: none, else 8 sectors); byte 1 how many segments are readable
 * (mod count + 1); then a le16 length per segment; then the segments' bytes
 * in order (the header first), zeros where the input ends.
 * The contract: a fault exactly when there is no whole header or no
 * writable byte, with nothing written; else the status byte, the last
 * writable byte, says IOERR for any chain with a buffer over SIZE_MAX
 * (nothing else written, the disk untouched), else OK, IOERR (an IN or OUT
 * not whole sectors inside the disk) or UNSUPP (a type other than IN, OUT, FLUSH, GET_ID); the used
 * length is the data written plus the status; an IN's data is the disk's,
 * an OUT's lands in the disk, and nothing else of the disk changes.
 */
#include "tests/fuzz/fuzz.h"

#include "lib/bytes.h"
#include "vmm/dev/virtio/blk.h"

#define SEGS_MAX 8
#define SEG_LEN  (2 * VIRTIO_BLK_SIZE_MAX) /* the longest segment: past SIZE_MAX too */
#define SECTORS  8

void kprintf(const char *fmt, ...)
{
    (void)fmt;
}

/* len bytes of segments [first, first + n), from offset off, into out. */
static void chain_bytes(const struct virtq_chain *c, unsigned first, unsigned n, uint64_t off,
                        uint8_t *out, uint64_t len)
{
    uint64_t pos = 0;
    for (unsigned i = first; i < first + n && len; i++) {
        const struct virtq_seg *s = &c->segs[i];
        for (uint32_t k = 0; k < s->len && len; k++, pos++) {
            if (pos >= off) {
                *out++ = s->host[k];
                len--;
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned nseg = 1 + (data[0] & 7), nread = data[1] % (nseg + 1);
    uint64_t sectors = data[0] & 0x80 ? 0 : SECTORS;
    data += 2, size -= 2;
    uint32_t lens[SEGS_MAX];
    uint64_t total = 0;
    bool oversized = false;
    for (unsigned i = 0; i < nseg; i++) {
        uint16_t v = size >= 2 ? get_le16(data) : 0;
        if (size >= 2)
            data += 2, size -= 2;
        lens[i] = 1 + v % SEG_LEN;
        total += lens[i];
        oversized |= lens[i] > VIRTIO_BLK_SIZE_MAX;
    }
    uint8_t *ram = malloc(total);
    memset(ram, 0, total);
    memcpy(ram, data, size < total ? size : total);

    struct virtq_chain *c = calloc(1, sizeof(*c));
    uint8_t *p = ram;
    for (unsigned i = 0; i < nseg; i++) {
        c->segs[i] = (struct virtq_seg){p, lens[i]};
        p += lens[i];
        if (i < nread)
            c->read_bytes += lens[i];
        else
            c->write_bytes += lens[i];
    }
    c->nread = nread;
    c->nwrite = nseg - nread;

    size_t disk_len = sectors * VIRTIO_BLK_SECTOR;
    uint8_t *disk = disk_len ? malloc(disk_len) : NULL, *before = malloc(disk_len + 1);
    for (size_t i = 0; i < disk_len; i++)
        disk[i] = (uint8_t)(i * 13 + 5);
    if (disk_len)
        memcpy(before, disk, disk_len);
    uint8_t *ram_before = malloc(total);
    memcpy(ram_before, ram, total);

    static struct virtio_blk b;
    virtio_blk_init(&b, disk, sectors, disk_len, "fuzz-disk");
    uint32_t written = 0;
    enum virtq_fault fault = VIRTQ_OK;
    int r = virtio_blk_request(&b, c, &written, &fault);

    bool malformed = c->read_bytes < VIRTIO_BLK_HDR_LEN || !c->write_bytes;
    FUZZ_REQUIRE((r == -1) == malformed);
    if (r < 0) {
        FUZZ_REQUIRE(fault == VIRTQ_FAULT_LENGTH || fault == VIRTQ_FAULT_DIRECTION);
        FUZZ_REQUIRE(!memcmp(ram, ram_before, total));
    } else {
        uint8_t hdr[VIRTIO_BLK_HDR_LEN];
        chain_bytes(c, 0, nread, 0, hdr, sizeof(hdr));
        uint32_t type = get_le32(hdr);
        uint64_t sector = get_le64(hdr + 8);
        uint64_t in_len = c->write_bytes - 1, out_len = c->read_bytes - VIRTIO_BLK_HDR_LEN;
        uint64_t len = type == VIRTIO_BLK_T_IN ? in_len : out_len;
        bool in_range = len % VIRTIO_BLK_SECTOR == 0 && sector <= sectors &&
                        len / VIRTIO_BLK_SECTOR <= sectors - sector;
        const struct virtq_seg *last = &c->segs[nseg - 1];
        uint8_t status = last->host[last->len - 1];
        uint8_t want = VIRTIO_BLK_S_OK;
        if (oversized)
            want = VIRTIO_BLK_S_IOERR;
        else if (type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_OUT)
            want = in_range ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR;
        else if (type != VIRTIO_BLK_T_FLUSH && type != VIRTIO_BLK_T_GET_ID)
            want = VIRTIO_BLK_S_UNSUPP;
        FUZZ_REQUIRE(status == want);
        FUZZ_REQUIRE(written >= 1 && written <= c->write_bytes);
        bool read_ok = type == VIRTIO_BLK_T_IN && want == VIRTIO_BLK_S_OK;
        bool id = type == VIRTIO_BLK_T_GET_ID && !oversized;
        uint64_t data_written = read_ok ? in_len : id ? (in_len < 20 ? in_len : 20) : 0;
        FUZZ_REQUIRE(written == data_written + 1);
        uint8_t *got = malloc(in_len + 1);
        chain_bytes(c, nread, nseg - nread, 0, got, in_len);
        if (read_ok && in_len)
            FUZZ_REQUIRE(!memcmp(got, disk + sector * VIRTIO_BLK_SECTOR, in_len));
        if (id)
            FUZZ_REQUIRE(!memcmp(got, b.id, data_written));
        free(got);
        /* The disk: an OUT's sectors hold its data, the rest is as it was. */
        if (type == VIRTIO_BLK_T_OUT && want == VIRTIO_BLK_S_OK && out_len) {
            uint8_t *sent = malloc(out_len + 1);
            chain_bytes(c, 0, nread, VIRTIO_BLK_HDR_LEN, sent, out_len);
            FUZZ_REQUIRE(!memcmp(disk + sector * VIRTIO_BLK_SECTOR, sent, out_len));
            memcpy(before + sector * VIRTIO_BLK_SECTOR, sent, out_len);
            free(sent);
        }
        FUZZ_REQUIRE(!disk_len || !memcmp(disk, before, disk_len));
        /* The readable segments are never written. */
        FUZZ_REQUIRE(!memcmp(ram, ram_before, c->read_bytes));
    }
    free(ram_before);
    free(before);
    free(disk);
    free(c);
    free(ram);
    return 0;
}
