/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The DSDT of every VM (vmm/load/acpi_tables.c). Hardware-reduced ACPI has no
 * legacy PIC and no ISA IRQ mapping, so the UART is found, with its
 * interrupt, only as a device described here.
 */
DefinitionBlock ("dsdt.aml", "DSDT", 2, "POLLUX", "POLLUXVM", 1)
{
    /* S5 (soft off): SLP_TYP 5 written to the FADT's SLEEP_CONTROL register. */
    Name (_S5, Package (0x04) { 0x05, 0x05, Zero, Zero })

    Scope (_SB)
    {
        Device (COM1)
        {
            Name (_HID, EisaId ("PNP0501"))
            Name (_UID, One)
            Name (_CRS, ResourceTemplate ()
            {
                IO (Decode16, 0x03F8, 0x03F8, 0x01, 0x08)
                Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 4 }
            })
        }
    }
}
