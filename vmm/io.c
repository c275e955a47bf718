#include "vmm/io.h"

#include "vmm/acpi_tables.h"
#include "vmm/vm_devices.h"

#define KBC_COMMAND         0x64
#define KBC_PULSE_RESET     0xfe
#define RESET_CONTROL_RESET 0x04 /* 0xCF9 bit 2: reset now (0x06 warm, 0x0E cold) */
#define PCI_CONFIG_ADDRESS  0xcf8
#define PCI_CONFIG_DATA     0xcfc

/*
 * The platform's power controls (docs/linux.md): the FADT's SLEEP_CONTROL
 * register entering S5 powers off; the ACPI reset register (0xCF9), the
 * keyboard controller's reset pulse and the PCI reset control all reset.
 */
static bool power_write(struct vm *vm, uint16_t port, unsigned size, uint32_t value)
{
    if (size != 1 || !vm->pc_platform)
        return false;
    if (port == ACPI_SLEEP_CONTROL_PORT) {
        if ((value & ACPI_SLP_EN) && ACPI_SLP_TYP(value) == ACPI_S5_SLP_TYP)
            vm_request_stop(vm, 0, "poweroff");
        return true;
    }
    if (port == ACPI_SLEEP_STATUS_PORT)
        return true; /* write-one-to-clear bits, none ever set */
    if ((port == ACPI_RESET_PORT && (value & RESET_CONTROL_RESET)) ||
        (port == KBC_COMMAND && value == KBC_PULSE_RESET)) {
        vm_request_stop(vm, VM_REBOOT_CODE, "reboot");
        return true;
    }
    return port == ACPI_RESET_PORT;
}

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

uint32_t io_read_other(struct vm *vm, uint16_t port, unsigned size)
{
    if (port == FWCFG_PORT_DATA && size == 1)
        return fwcfg_read(&vm->fwcfg);
    int pic = pic_index(port);
    if (pic >= 0 && size == 1)
        return (port & 1) ? vm->pic_imr[pic] : 0;
    if (vm->pc_platform) {
        if (port == PCI_CONFIG_ADDRESS && size == 4)
            return vm->pci_config_address;
        /* No PCI device answers: configuration data reads all ones. */
        if (port >= PCI_CONFIG_DATA && port < PCI_CONFIG_DATA + 4)
            return 0xffffffffu;
        if (port == ACPI_SLEEP_STATUS_PORT && size == 1)
            return 0;
    }
    vm->unhandled_io_reads++;
    return 0xffffffffu;
}

void io_write(struct vm *vm, uint16_t port, unsigned size, uint32_t value)
{
    if (port >= VUART_BASE && port < VUART_BASE + VUART_PORTS && size == 1) {
        vm_uart_write(vm, port - VUART_BASE, (uint8_t)value);
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
    if (power_write(vm, port, size, value))
        return;
    if (vm->pc_platform && port == PCI_CONFIG_ADDRESS && size == 4) {
        vm->pci_config_address = value;
        return;
    }
    if (vm->pc_platform && port >= PCI_CONFIG_DATA && port < PCI_CONFIG_DATA + 4)
        return;
    vm->unhandled_io_writes++;
}
