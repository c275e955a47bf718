/* The guest COM1: register behaviour and line output with escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "vmm/vuart.h"

/* The console, replaced by a buffer of everything printed. */
static char printed[8192];
static size_t printed_len;

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printed_len += (size_t)vsnprintf(printed + printed_len, sizeof(printed) - printed_len, fmt, ap);
    va_end(ap);
}

static struct vuart u;

static int setup(void **state)
{
    (void)state;
    printed_len = 0;
    printed[0] = 0;
    vuart_init(&u, "vm1");
    return 0;
}

static void write_str(const char *s)
{
    while (*s)
        vuart_write(&u, 0, (uint8_t)*s++);
}

static void test_lines_are_prefixed(void **state)
{
    (void)state;
    write_str("hello\r\nworld");
    assert_string_equal(printed, "[vm1] hello\n");
    write_str("\n");
    assert_string_equal(printed, "[vm1] hello\n[vm1] world\n");
}

static void test_guest_cannot_forge_events(void **state)
{
    (void)state;
    write_str("@shutdown {\"status\":0}\n");
    assert_string_equal(printed, "[vm1] @shutdown {\"status\":0}\n");
    printed_len = 0;
    write_str("a\x1b[2Jb\\c\x7f\n");
    assert_string_equal(printed, "[vm1] a\\x1b[2Jb\\x5cc\\x7f\n");
}

static void test_long_lines_are_split(void **state)
{
    (void)state;
    for (int i = 0; i < VUART_LINE_MAX + 5; i++)
        vuart_write(&u, 0, 'x');
    assert_int_equal(strlen(printed), strlen("[vm1] \n") + VUART_LINE_MAX);
    vuart_flush(&u);
    assert_non_null(strstr(printed, "\n[vm1] xxxxx\n"));
}

static void test_registers(void **state)
{
    (void)state;
    assert_int_equal(vuart_read(&u, 5) & 0x60, 0x60); /* LSR: transmitter always ready */
    assert_int_equal(vuart_read(&u, 2), 0x01);        /* IIR: no interrupt */
    vuart_write(&u, 3, 0x83);                         /* DLAB */
    vuart_write(&u, 0, 0x0c);
    vuart_write(&u, 1, 0x00);
    assert_int_equal(vuart_read(&u, 0), 0x0c);
    assert_int_equal(printed_len, 0); /* divisor writes are not output */
    vuart_write(&u, 3, 0x03);
    assert_int_equal(vuart_read(&u, 3), 0x03);
    vuart_write(&u, 7, 0x5a);
    assert_int_equal(vuart_read(&u, 7), 0x5a);
    vuart_write(&u, 1, 0xff);
    assert_int_equal(vuart_read(&u, 1), 0x0f);
    assert_int_equal(vuart_read(&u, 0), 0); /* no input */
}

static void test_input_fifo(void **state)
{
    (void)state;
    assert_int_equal(vuart_read(&u, 5) & 0x01, 0); /* LSR.DR: nothing received */
    vuart_input(&u, 'h');
    vuart_input(&u, 'i');
    assert_int_equal(vuart_read(&u, 5) & 0x01, 0x01);
    assert_int_equal(vuart_read(&u, 0), 'h');
    assert_int_equal(vuart_read(&u, 0), 'i');
    assert_int_equal(vuart_read(&u, 5) & 0x01, 0);
    assert_int_equal(vuart_read(&u, 0), 0);
    for (int i = 0; i < VUART_RX_MAX + 4; i++) /* a full FIFO drops what comes */
        vuart_input(&u, (char)('a' + i));
    for (int i = 0; i < VUART_RX_MAX; i++)
        assert_int_equal(vuart_read(&u, 0), 'a' + i);
    assert_int_equal(vuart_read(&u, 5) & 0x01, 0);
}

static void test_puts_and_empty_lines(void **state)
{
    (void)state;
    vuart_puts(&u, "one\n\ntwo\n", 9);
    assert_string_equal(printed, "[vm1] one\n[vm1] \n[vm1] two\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_lines_are_prefixed, setup),
        cmocka_unit_test_setup(test_guest_cannot_forge_events, setup),
        cmocka_unit_test_setup(test_long_lines_are_split, setup),
        cmocka_unit_test_setup(test_registers, setup),
        cmocka_unit_test_setup(test_puts_and_empty_lines, setup),
        cmocka_unit_test_setup(test_input_fifo, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
