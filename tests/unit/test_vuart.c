/* SPDX-License-Identifier: GPL-2.0-only */
/* The guest COM1: register behaviour and line output with escaping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "vmm/dev/vuart.h"

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

/*
 * The console buffer's room for ktryprintf's calls (kprintf's count: a line
 * end takes two bytes, CR LF); a call that does not fit prints nothing.
 */
static size_t room;

bool ktryprintf(const char *fmt, ...)
{
    char text[VUART_PRINT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof(text)); /* no call is over VUART_PRINT_MAX */
    size_t len = (size_t)n;
    for (int i = 0; i < n; i++)
        len += text[i] == '\n';
    if (len > room)
        return false;
    room -= len;
    printed_len +=
        (size_t)snprintf(printed + printed_len, sizeof(printed) - printed_len, "%s", text);
    return true;
}

static struct vuart u;

static int setup(void **state)
{
    (void)state;
    room = SIZE_MAX;
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

static void test_tabs_pass_through(void **state)
{
    (void)state;
    write_str("a\tb\n");
    assert_string_equal(printed, "[vm1] a\tb\n");
}

static void test_a_guest_json_line_stays_whole(void **state)
{
    (void)state;
    /* A guest's @bench line of 600 bytes (a Linux guest's sockperf summary is about 400). */
    char line[602];
    memset(line, 'j', 600);
    line[600] = '\n';
    line[601] = 0;
    write_str(line);
    assert_int_equal(strlen(printed), strlen("[vm1] \n") + 600);
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

static void test_an_escape_is_never_cut(void **state)
{
    (void)state;
    /* One byte short of the line, then a byte that takes four printed: it starts the next. */
    for (int i = 0; i < VUART_LINE_MAX - 1; i++)
        vuart_write(&u, 0, 'x');
    vuart_write(&u, 0, 0x1b);
    vuart_write(&u, 0, '\n');
    assert_int_equal(strlen(printed),
                     2 * strlen("[vm1] \n") + (VUART_LINE_MAX - 1) + strlen("\\x1b"));
    assert_non_null(strstr(printed, "x\n[vm1] \\x1b\n"));
}

static void test_interactive_output_goes_out_raw_as_it_comes(void **state)
{
    (void)state;
    write_str("half a line");
    vuart_set_interactive(&u, true);
    /* What was buffered goes out first, whole and escaped as before. */
    assert_string_equal(printed, "[vm1] half a line\n");
    printed_len = 0;
    write_str("/ # ");
    assert_string_equal(printed, "[vm1] / # "); /* the prompt, before its line ends */
    write_str("\x1b[6n");
    assert_string_equal(printed, "[vm1] / # \x1b[6n"); /* the shell's query reaches the terminal */
    write_str("ls\r\nbin\n");
    assert_string_equal(printed, "[vm1] / # \x1b[6nls\n[vm1] bin\n");
}

static void test_interactive_lines_still_carry_the_prefix(void **state)
{
    (void)state;
    vuart_set_interactive(&u, true);
    write_str("@shutdown {\"status\":0}\n");
    assert_string_equal(printed, "[vm1] @shutdown {\"status\":0}\n");
}

static void test_leaving_interactive_ends_the_raw_line(void **state)
{
    (void)state;
    vuart_set_interactive(&u, true);
    write_str("/ # ");
    vuart_set_interactive(&u, false);
    write_str("\x1b[2J\n");
    assert_string_equal(printed, "[vm1] / # \n[vm1] \\x1b[2J\n");
}

static void test_registers(void **state)
{
    (void)state;
    assert_int_equal(vuart_read(&u, 5).value & 0x60, 0x60); /* LSR: transmitter always ready */
    assert_int_equal(vuart_read(&u, 2).value, 0x01);        /* IIR: no interrupt */
    vuart_write(&u, 3, 0x83);                               /* DLAB */
    vuart_write(&u, 0, 0x0c);
    vuart_write(&u, 1, 0x00);
    assert_int_equal(vuart_read(&u, 0).value, 0x0c);
    assert_int_equal(printed_len, 0); /* divisor writes are not output */
    vuart_write(&u, 3, 0x03);
    assert_int_equal(vuart_read(&u, 3).value, 0x03);
    vuart_write(&u, 7, 0x5a);
    assert_int_equal(vuart_read(&u, 7).value, 0x5a);
    vuart_write(&u, 1, 0xff);
    assert_int_equal(vuart_read(&u, 1).value, 0x0f);
    assert_int_equal(vuart_read(&u, 0).value, 0); /* no input */
}

static void test_input_fifo(void **state)
{
    (void)state;
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0); /* LSR.DR: nothing received */
    vuart_input(&u, 'h');
    vuart_input(&u, 'i');
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0x01);
    assert_int_equal(vuart_read(&u, 0).value, 'h');
    assert_int_equal(vuart_read(&u, 0).value, 'i');
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0);
    assert_int_equal(vuart_read(&u, 0).value, 0);
    for (int i = 0; i < VUART_RX_MAX + 4; i++) /* a full FIFO drops what comes */
        vuart_input(&u, (char)('a' + i));
    for (int i = 0; i < VUART_RX_MAX; i++)
        assert_int_equal(vuart_read(&u, 0).value, 'a' + i);
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0);
}

static void test_puts_and_empty_lines(void **state)
{
    (void)state;
    vuart_puts(&u, "one\n\ntwo\n", 9);
    assert_string_equal(printed, "[vm1] one\n[vm1] \n[vm1] two\n");
}

static void test_cr_ends_a_line_once(void **state)
{
    (void)state;
    vuart_puts(&u, "a\r\nb\rc\n\r\nd\n", 12);
    assert_string_equal(printed, "[vm1] a\n[vm1] b\n[vm1] c\n[vm1] \n[vm1] d\n");
}

/*
 * A byte whose line does not fit the console is not taken: the UART is as
 * it was, and the same write, once there is room, prints the line whole.
 */
static void test_a_full_console_takes_no_byte(void **state)
{
    (void)state;
    write_str("ab\r");
    printed_len = 0;
    printed[0] = 0;
    room = strlen("[vm1] cd\r\n") - 1;
    assert_true(vuart_write(&u, 0, '\n')); /* LF after CR: the line ended already, nothing out */
    assert_true(vuart_write(&u, 0, 'c'));
    assert_true(vuart_write(&u, 0, 'd'));
    struct vuart before;
    memcpy(&before, &u, sizeof(u));
    assert_false(vuart_write(&u, 0, '\n'));
    assert_int_equal(u.full_waits, before.full_waits + 1);
    before.full_waits = u.full_waits;
    assert_memory_equal(&before, &u, sizeof(u));
    assert_string_equal(printed, "");
    room++;
    assert_true(vuart_write(&u, 0, '\n'));
    assert_string_equal(printed, "[vm1] cd\n");
    assert_int_equal(room, 0);
    /* An empty line is a line too; a byte that only grows the line needs no room. */
    assert_false(vuart_write(&u, 0, '\n'));
    assert_true(vuart_write(&u, 0, 'e'));
}

/* A line at VUART_LINE_MAX: the next byte first prints it, so waits with the rest. */
static void test_a_full_line_waits_for_room(void **state)
{
    (void)state;
    for (int i = 0; i < VUART_LINE_MAX; i++)
        assert_true(vuart_write(&u, 0, 'x'));
    room = VUART_LINE_MAX;
    assert_false(vuart_write(&u, 0, 'y'));
    assert_int_equal(u.len, VUART_LINE_MAX);
    room = SIZE_MAX;
    assert_true(vuart_write(&u, 0, 'y'));
    assert_int_equal(strlen(printed), strlen("[vm1] \n") + VUART_LINE_MAX);
    assert_int_equal(u.len, 1);
}

/* HC_PUTS's bytes: taken up to the first that does not fit; the rest later, nothing lost. */
static void test_puts_takes_what_fits(void **state)
{
    (void)state;
    const char *s = "one\ntwo\nthree\n";
    room = strlen("[vm1] one\r\n[vm1] two\r\n") + 3;
    uint64_t taken = vuart_puts(&u, s, strlen(s));
    assert_int_equal(taken, strlen("one\ntwo\nthree"));
    assert_int_equal(u.full_waits, 1);
    room = SIZE_MAX;
    assert_int_equal(vuart_puts(&u, s + taken, strlen(s) - taken), strlen(s) - taken);
    assert_string_equal(printed, "[vm1] one\n[vm1] two\n[vm1] three\n");
}

/* While interactive, a byte that does not fit leaves the line where it was (its prefix to come). */
static void test_interactive_byte_waits_for_room(void **state)
{
    (void)state;
    vuart_set_interactive(&u, true);
    room = 0;
    assert_false(vuart_write(&u, 0, '$'));
    assert_false(u.mid_line);
    room = SIZE_MAX;
    assert_true(vuart_write(&u, 0, '$'));
    assert_string_equal(printed, "[vm1] $");
}

/* IIR: identification by priority, FIFO bits, and what acknowledges each source. */
static void test_interrupt_identification(void **state)
{
    (void)state;
    assert_int_equal(vuart_read(&u, 2).value, 0x01);
    vuart_write(&u, 2, 0x07); /* FIFOs on, both cleared */
    assert_int_equal(vuart_read(&u, 2).value, 0xc1);
    vuart_write(&u, 4, 0x08); /* OUT2: the interrupt reaches the I/O APIC */
    vuart_write(&u, 1, 0x02); /* THRE interrupt: THR is empty, so it is pending at once */
    assert_true(vuart_irq(&u));
    assert_int_equal(vuart_read(&u, 2).value, 0xc2);
    /* Reading IIR acknowledged it. */
    assert_int_equal(vuart_read(&u, 2).value, 0xc1);
    assert_false(vuart_irq(&u));
    vuart_write(&u, 0, 'x'); /* sent at once: THR empty again */
    assert_true(vuart_irq(&u));
    /* Received data outranks THRE; reading RBR empties it. */
    vuart_write(&u, 1, 0x03);
    vuart_input(&u, 'k');
    assert_int_equal(vuart_read(&u, 5).value & 0x61, 0x61);
    assert_int_equal(vuart_read(&u, 2).value, 0xc4);
    assert_int_equal(vuart_read(&u, 0).value, 'k');
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0);
    assert_int_equal(vuart_read(&u, 2).value, 0xc2);
    assert_int_equal(vuart_read(&u, 2).value, 0xc1);
    /* Without OUT2 nothing leaves the chip, though IIR still reports it. */
    vuart_write(&u, 4, 0x00);
    vuart_input(&u, 'z');
    assert_false(vuart_irq(&u));
    assert_int_equal(vuart_read(&u, 2).value, 0xc4);
    /* Line status: an overrun, reported first and cleared by reading LSR. */
    vuart_write(&u, 1, 0x07);
    for (int i = 0; i < VUART_RX_MAX + 1; i++)
        vuart_input(&u, 'o');
    assert_int_equal(vuart_read(&u, 2).value, 0xc6);
    assert_int_equal(vuart_read(&u, 5).value & 0x03, 0x03);
    assert_int_equal(vuart_read(&u, 2).value, 0xc4);
    vuart_write(&u, 2, 0x03); /* clear the receive FIFO */
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0);
}

/* Loopback, as the 8250 driver's probe checks it. */
static void test_loopback(void **state)
{
    (void)state;
    assert_int_equal(vuart_read(&u, 6).value & 0xf0, 0xb0); /* a ready terminal */
    vuart_write(&u, 4, 0x10 | 0x0a);                        /* loopback, RTS, OUT2 */
    assert_int_equal(vuart_read(&u, 6).value & 0xf0, 0x90); /* DCD (OUT2) and CTS (RTS) */
    vuart_write(&u, 4, 0x10 | 0x05);                        /* loopback, DTR, OUT1 */
    assert_int_equal(vuart_read(&u, 6).value, 0x60 | 0x0b); /* DSR, RI; deltas CTS, DSR, DCD */
    assert_int_equal(vuart_read(&u, 6).value, 0x60);        /* deltas clear on read */
    vuart_write(&u, 0, 'L');                                /* comes back, is not printed */
    vuart_input(&u, 'X');                                   /* the line is cut off */
    assert_int_equal(vuart_read(&u, 0).value, 'L');
    assert_int_equal(vuart_read(&u, 5).value & 0x01, 0);
    vuart_write(&u, 4, 0x00);
    vuart_flush(&u);
    assert_string_equal(printed, "");
}

/*
 * vm_uart_read drives the UART's interrupt pin only after a read with a
 * side effect: every read that reports none must leave every field as it
 * was, and every read that reports one must have changed something. Checked
 * on each register in the states a pseudo-random series of writes and
 * input reaches.
 */
static void test_reads_report_their_side_effects(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    unsigned effects[8] = {0};
    for (int step = 0; step < 4000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned pick = (seed >> 16) % 10, value = (seed >> 8) & 0xff;
        printed_len = 0;
        if (step % 500 == 0) { /* now and then, more than the FIFO holds: an overrun */
            for (int i = 0; i <= VUART_RX_MAX; i++)
                vuart_input(&u, (char)i);
        } else if (pick < 3) {
            vuart_input(&u, (char)value);
        } else if (pick < 5) {
            vuart_write(&u, 0, (uint8_t)value);
        } else {
            vuart_write(&u, (uint16_t)(1 + value % 7), (uint8_t)(seed >> 24));
        }
        for (uint16_t offset = 0; offset < 8; offset++) {
            struct vuart before;
            memcpy(&before, &u, sizeof(u));
            struct vuart_read r = vuart_read(&u, offset);
            bool changed = memcmp(&before, &u, sizeof(u)) != 0;
            assert_int_equal(r.side_effect, changed);
            effects[offset] += r.side_effect;
            memcpy(&u, &before, sizeof(u));
        }
    }
    /* Each register that can change on a read did, at least once. */
    assert_true(effects[0] && effects[2] && effects[5] && effects[6]);
    assert_false(effects[1] || effects[3] || effects[4] || effects[7]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_lines_are_prefixed, setup),
        cmocka_unit_test_setup(test_guest_cannot_forge_events, setup),
        cmocka_unit_test_setup(test_tabs_pass_through, setup),
        cmocka_unit_test_setup(test_a_guest_json_line_stays_whole, setup),
        cmocka_unit_test_setup(test_long_lines_are_split, setup),
        cmocka_unit_test_setup(test_a_full_console_takes_no_byte, setup),
        cmocka_unit_test_setup(test_a_full_line_waits_for_room, setup),
        cmocka_unit_test_setup(test_puts_takes_what_fits, setup),
        cmocka_unit_test_setup(test_interactive_byte_waits_for_room, setup),
        cmocka_unit_test_setup(test_an_escape_is_never_cut, setup),
        cmocka_unit_test_setup(test_interactive_output_goes_out_raw_as_it_comes, setup),
        cmocka_unit_test_setup(test_interactive_lines_still_carry_the_prefix, setup),
        cmocka_unit_test_setup(test_leaving_interactive_ends_the_raw_line, setup),
        cmocka_unit_test_setup(test_registers, setup),
        cmocka_unit_test_setup(test_puts_and_empty_lines, setup),
        cmocka_unit_test_setup(test_cr_ends_a_line_once, setup),
        cmocka_unit_test_setup(test_interrupt_identification, setup),
        cmocka_unit_test_setup(test_loopback, setup),
        cmocka_unit_test_setup(test_input_fifo, setup),
        cmocka_unit_test_setup(test_reads_report_their_side_effects, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
