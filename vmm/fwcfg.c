#include "vmm/fwcfg.h"

#define KEY_SIGNATURE 0x00
#define KEY_RAM_SIZE  0x03
#define KEY_NB_CPUS   0x05

void fwcfg_init(struct fwcfg *f, uint64_t ram_size, uint16_t ncpus)
{
    f->key = 0;
    f->offset = 0;
    f->ram_size = ram_size;
    f->ncpus = ncpus;
}

void fwcfg_select(struct fwcfg *f, uint16_t key)
{
    f->key = key;
    f->offset = 0;
}

uint8_t fwcfg_read(struct fwcfg *f)
{
    uint32_t i = f->offset++;
    switch (f->key) {
    case KEY_SIGNATURE:
        return i < 4 ? (uint8_t) "QEMU"[i] : 0;
    case KEY_RAM_SIZE:
        return i < 8 ? (uint8_t)(f->ram_size >> (8 * i)) : 0;
    case KEY_NB_CPUS:
        return i < 2 ? (uint8_t)(f->ncpus >> (8 * i)) : 0;
    default:
        return 0;
    }
}
