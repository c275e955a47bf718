/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The command-line parsers: the hypervisor's options (lib/options.c, with
 * an option of every type) and a module's VM options (vmm/vmconfig.c), both
 * on the input as one NUL-terminated line. Each bad option is reported once
 * with a word that lies inside the line; a parsed VM configuration keeps
 * vmconfig.h's contract.
 */
#include "tests/fuzz/fuzz.h"

#include "lib/options.h"
#include "vmm/vmconfig.h"

#define MAX_VCPUS 8

static const char *line_start, *line_end;
static unsigned reports;

static void report(struct token word, const char *reason, void *ctx)
{
    (void)ctx;
    FUZZ_REQUIRE(word.s >= line_start && word.s + word.len <= line_end && word.len > 0);
    FUZZ_REQUIRE(reason && reason[0] && strlen(reason) < 200);
    reports++;
}

static void check_vmconfig(const struct vmconfig *c)
{
    FUZZ_REQUIRE(c->vcpus >= 1 && c->vcpus <= MAX_VCPUS);
    FUZZ_REQUIRE(c->mem >= (1u << 20) && c->mem < VM_MEM_LIMIT && c->mem % 4096 == 0);
    FUZZ_REQUIRE(c->npins <= c->vcpus);
    for (unsigned i = 0; i < c->npins; i++)
        FUZZ_REQUIRE(c->pins[i] < 64);
    FUZZ_REQUIRE(strlen(c->name) <= VM_NAME_MAX && strlen(c->path) <= VM_PATH_MAX);
    FUZZ_REQUIRE(strlen(c->args) <= VM_ARGS_MAX);
    FUZZ_REQUIRE(c->unbacked == UNBACKED_STOP || c->unbacked == UNBACKED_IGNORE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = fuzz_string(data, size);
    line_start = line;
    line_end = line + strlen(line);

    static const char *const colours[] = {"red", "green", "blue", NULL};
    uint64_t number = 7, size_opt = 0;
    bool flag = false;
    unsigned colour = 0;
    const struct option opts[] = {
        {"number", OPT_UINT, &number, 1, 1000, NULL, ""},
        {"size", OPT_UINT, &size_opt, 0, UINT64_MAX, NULL, ""},
        {"flag", OPT_BOOL, &flag, 0, 0, NULL, ""},
        {"colour", OPT_ENUM, &colour, 0, 0, colours, ""},
    };
    reports = 0;
    unsigned bad = options_parse(line, opts, sizeof(opts) / sizeof(opts[0]), report, NULL);
    FUZZ_REQUIRE(bad == reports);
    FUZZ_REQUIRE(number >= 1 && number <= 1000 && colour < 3);

    struct vmconfig cfg;
    char err[192];
    if (vmconfig_parse(line, 3, MAX_VCPUS, &cfg, err, sizeof(err)) == 0)
        check_vmconfig(&cfg);
    else
        FUZZ_REQUIRE(strncmp(err, "module option '", 15) == 0 && !strchr(err, '\n'));
    free(line);
    return 0;
}
