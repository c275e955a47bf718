#include "vmm/io.h"

static const char shutdown_string[] = "Shutdown";

static void shutdown_port_write(struct vm *vm, uint8_t c)
{
    /* Match "Shutdown" byte by byte, restarting on a mismatch. */
    if (c != shutdown_string[vm->shutdown_port_match])
        vm->shutdown_port_match = c == shutdown_string[0];
    else if (++vm->shutdown_port_match == sizeof(shutdown_string) - 1)
        vm_request_stop(vm, 0, "shutdown-port");
}

#define PIC_MASTER 0x20
#define PIC_SLAVE  0xa0

/* The PICs' data ports hold the interrupt masks; the command ports read 0. */
static int pic_index(uint16_t port)
{
    if (port == PIC_MASTER || port == PIC_MASTER + 1)
        return 0;
    if (port == PIC_SLAVE || port == PIC_SLAVE + 1)
        return 1;
    return -1;
}

uint32_t io_read(struct vm *vm, uint16_t port, unsigned size)
{
    if (port >= VUART_BASE && port < VUART_BASE + VUART_PORTS && size == 1)
        return vuart_read(&vm->uart, port - VUART_BASE);
    if (port == FWCFG_PORT_DATA && size == 1)
        return fwcfg_read(&vm->fwcfg);
    int pic = pic_index(port);
    if (pic >= 0 && size == 1)
        return (port & 1) ? vm->pic_imr[pic] : 0;
    vm->unhandled_io_reads++;
    return 0xffffffffu;
}

void io_write(struct vm *vm, uint16_t port, unsigned size, uint32_t value)
{
    if (port >= VUART_BASE && port < VUART_BASE + VUART_PORTS && size == 1) {
        vuart_write(&vm->uart, port - VUART_BASE, (uint8_t)value);
        return;
    }
    if (port == DEBUG_EXIT_PORT) {
        vm_request_stop(vm, value, "debug-exit");
        return;
    }
    if (port == SHUTDOWN_PORT && size == 1) {
        shutdown_port_write(vm, (uint8_t)value);
        return;
    }
    if (port == FWCFG_PORT_SELECTOR && size == 2) {
        fwcfg_select(&vm->fwcfg, (uint16_t)value);
        return;
    }
    int pic = pic_index(port);
    if (pic >= 0 && size == 1) {
        if (port & 1)
            vm->pic_imr[pic] = (uint8_t)value;
        return;
    }
    vm->unhandled_io_writes++;
}
