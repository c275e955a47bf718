/* SPDX-License-Identifier: GPL-2.0-only */
#include "vmm/vmconfig.h"

#include <stdarg.h>
#include <stdbool.h>

#include "lib/options.h"
#include "lib/format.h"
#include "lib/string.h"
#include "abi/virtio.h"

#define MEM_MIN   (1ull << 20)
#define MEM_ALIGN 0x1000ull
#define PIN_CPUS  64

static void fail(char *err, size_t errlen, struct token word, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Every reason quotes the offending word, so the user can find it in a long line. */
static void fail(char *err, size_t errlen, struct token word, const char *fmt, ...)
{
    va_list ap;
    int used;

    if (err && errlen) {
        used = snprintf(err, errlen, "module option '%.*s': ", (int)word.len, word.s);
        if ((size_t)used < errlen) {
            va_start(ap, fmt);
            vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
            va_end(ap);
        }
    }
}

/* One parse: the configuration being filled and where its first error goes. */
struct vmparse {
    struct vmconfig *out;
    char *err;
    size_t errlen;
    struct token pin_word; /* the last pin= word, for the count check at the end */
    struct token mem_word; /* the last mem= word, for the virtio window check at the end */
};

static void report(struct token word, const char *reason, void *ctx)
{
    struct vmparse *vp = ctx;
    fail(vp->err, vp->errlen, word, "%s", reason);
}

static void copy_token(char *dst, struct token t)
{
    memcpy(dst, t.s, t.len);
    dst[t.len] = '\0';
}

static bool name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

/* A VM's or a switch's name: it appears in messages, file names and JSON. */
static bool name_ok(struct token val)
{
    for (size_t i = 0; i < val.len; i++) {
        if (!name_char(val.s[i]))
            return false;
    }
    return true;
}

static const char *set_name(struct token word, struct token val, void *ctx)
{
    struct vmparse *vp = ctx;
    (void)word;
    if (val.len > VM_NAME_MAX)
        return option_reason("name longer than %u characters", VM_NAME_MAX);
    if (!name_ok(val))
        return "name may hold only A-Z, a-z, 0-9, '_', '.' and '-'";
    copy_token(vp->out->name, val);
    return NULL;
}

/* path= and initrd=: ctx is the field. */
static const char *set_path(struct token word, struct token val, void *ctx)
{
    (void)word;
    if (val.len > VM_PATH_MAX)
        return option_reason("path longer than %u characters", VM_PATH_MAX);
    copy_token(ctx, val);
    return NULL;
}

/* net=: a switch's name, as a VM's (it appears in messages and @stats). */
static const char *set_net(struct token word, struct token val, void *ctx)
{
    struct vmparse *vp = ctx;
    (void)word;
    if (!val.len || val.len > VM_NET_NAME_MAX)
        return option_reason("a switch name of 1 to %u characters", VM_NET_NAME_MAX);
    if (!name_ok(val))
        return "a switch name may hold only A-Z, a-z, 0-9, '_', '.' and '-'";
    copy_token(vp->out->net, val);
    return NULL;
}

static const char *set_mem(struct token word, struct token val, void *ctx)
{
    struct vmparse *vp = ctx;
    uint64_t n;
    (void)word;
    if (!parse_size(val, &n))
        return "not a size";
    if (n < MEM_MIN)
        return "below the 1 MiB minimum";
    if (n % MEM_ALIGN)
        return "not a multiple of 4 KiB";
    if (n >= VM_MEM_LIMIT)
        return option_reason("must be below 0x%llx", (unsigned long long)VM_MEM_LIMIT);
    vp->out->mem = n;
    vp->mem_word = word;
    return NULL;
}

static const char *set_unbacked(struct token word, struct token val, void *ctx)
{
    struct vmparse *vp = ctx;
    (void)word;
    if (token_eq(val, "stop"))
        vp->out->unbacked = UNBACKED_STOP;
    else if (token_eq(val, "ignore"))
        vp->out->unbacked = UNBACKED_IGNORE;
    else
        return "expected stop or ignore";
    vp->out->unbacked_given = true;
    return NULL;
}

static const char *set_legacy_pic(struct token word, struct token val, void *ctx)
{
    struct vmparse *vp = ctx;
    (void)word;
    if (!parse_bool(val, &vp->out->legacy_pic))
        return OPTION_BOOL_REASON;
    vp->out->legacy_pic_given = true;
    return NULL;
}

/* Replaces any earlier pin list; the count against vcpus is checked once all words are read. */
static const char *set_pins(struct token word, struct token val, void *ctx)
{
    struct vmparse *vp = ctx;
    struct vmconfig *cfg = vp->out;
    struct token item = {val.s, 0};
    const char *end = val.s + val.len;
    uint64_t cpu;

    cfg->npins = 0;
    for (const char *p = val.s; p <= end; p++) {
        if (p < end && *p != ',') {
            item.len++;
            continue;
        }
        if (!parse_u64(item, &cpu))
            return "not a comma-separated list of CPU numbers";
        if (cpu >= PIN_CPUS)
            return option_reason("CPU %llu is not below %u", (unsigned long long)cpu, PIN_CPUS);
        /* vcpus never exceeds VM_MAX_VCPUS, so a longer list is always too long. */
        if (cfg->npins == VM_MAX_VCPUS)
            return option_reason("more than %u pins", VM_MAX_VCPUS);
        cfg->pins[cfg->npins++] = (unsigned)cpu;
        item.s = p + 1;
        item.len = 0;
    }
    vp->pin_word = word;
    return NULL;
}

void vmconfig_default_name(unsigned index, char name[VM_NAME_MAX + 1])
{
    snprintf(name, VM_NAME_MAX + 1, "vm%u", index);
}

int vmconfig_parse(const char *cmdline, unsigned index, unsigned max_vcpus, struct vmconfig *out,
                   char *err, size_t errlen)
{
    unsigned vcpu_limit = max_vcpus < VM_MAX_VCPUS ? max_vcpus : VM_MAX_VCPUS;
    struct vmparse vp = {out, err, errlen, {NULL, 0}, {NULL, 0}};

    memset(out, 0, sizeof(*out));
    vmconfig_default_name(index, out->name);
    out->vcpus = 1;
    out->mem = VM_MEM_DEFAULT;
    out->policy = vm_policy_hv;
    out->policy.pv = 0; /* the VM's own pv= replaces the hypervisor's, never adds to it */
    out->unbacked = UNBACKED_STOP;
    out->legacy_pic = true;
    out->ioapic = true;

    struct option_custom name = {set_name, &vp}, path = {set_path, out->path},
                         initrd = {set_path, out->initrd}, mem = {set_mem, &vp},
                         unbacked = {set_unbacked, &vp}, pin = {set_pins, &vp},
                         net = {set_net, &vp}, disk = {set_path, out->disk},
                         legacy_pic = {set_legacy_pic, &vp};
    const struct option opts[] = {
        {"name", OPT_CUSTOM, &name, 0, 0, NULL, "the VM's name"},
        {"path", OPT_CUSTOM, &path, 0, 0, NULL, "the module's path, for messages"},
        {"vcpus", OPT_COUNT, &out->vcpus, 1, vcpu_limit, NULL, "vCPUs"},
        {"mem", OPT_CUSTOM, &mem, 0, 0, NULL, "guest memory, a size"},
        {"timeout_ms", OPT_NUMBER, &out->timeout_ms, 0, UINT64_MAX, NULL, "stop after N ms"},
        {"unbacked", OPT_CUSTOM, &unbacked, 0, 0, NULL, "stop or ignore"},
        {"pin", OPT_CUSTOM, &pin, 0, 0, NULL, "CPUs to pin the vCPUs to"},
        {"args", OPT_REST, out->args, 0, VM_ARGS_MAX, NULL, "the rest of the line"},
        {"initrd", OPT_CUSTOM, &initrd, 0, 0, NULL, "the next module's path"},
        {"net", OPT_CUSTOM, &net, 0, 0, NULL, "the switch to join (virtio-net)"},
        {"disk", OPT_CUSTOM, &disk, 0, 0, NULL, "the disk module's path (virtio-blk)"},
        {"legacy_pic", OPT_CUSTOM, &legacy_pic, 0, 0, NULL, "the 8254 PIT and 8259 PICs"},
        {"ioapic", OPT_BOOL, &out->ioapic, 0, 0, NULL, "the I/O APIC"},
    };
    enum { OWN = sizeof(opts) / sizeof(opts[0]) };
    struct option all[OWN + VM_POLICY_OPTIONS];
    memcpy(all, opts, sizeof(opts));
    size_t n = OWN + vm_policy_options(&out->policy, all + OWN);
    const struct option_parser parser = {all, n, "unknown key", true};
    if (options_parse_with(&parser, cmdline, report, &vp))
        return -1;

    if (!out->policy.pv)
        out->policy.pv = vm_policy_hv.pv;
    if (vmconfig_virtio_slots(out) && out->mem > VIRTIO_MMIO_BASE) {
        fail(err, errlen, vp.mem_word,
             "a VM with net= or disk= keeps its memory at or below 0x%llx, "
             "where its virtio devices are",
             (unsigned long long)VIRTIO_MMIO_BASE);
        return -1;
    }
    if (out->npins > out->vcpus) {
        fail(err, errlen, vp.pin_word, "%u pins but vcpus=%u", out->npins, out->vcpus);
        return -1;
    }
    return 0;
}

int vmconfig_unique_name(char name[VM_NAME_MAX + 1], unsigned index, vmconfig_name_taken taken,
                         void *ctx, char *err, size_t errlen)
{
    if (!taken(name, ctx))
        return 0;
    char candidate[VM_NAME_MAX + 16];
    int len = snprintf(candidate, sizeof(candidate), "%s-%u", name, index);
    if (len > VM_NAME_MAX) {
        snprintf(err, errlen,
                 "name '%s' is taken, and with the suffix '-%u' it would be longer than %u "
                 "characters: give the VM a name= of its own",
                 name, index, VM_NAME_MAX);
        return -1;
    }
    if (taken(candidate, ctx)) {
        snprintf(err, errlen, "name '%s' is taken, and so is '%s': give the VM a name= of its own",
                 name, candidate);
        return -1;
    }
    memcpy(name, candidate, (size_t)len + 1);
    return 0;
}

unsigned vmconfig_virtio_slots(const struct vmconfig *cfg)
{
    return (cfg->net[0] ? 1u << VIRTIO_SLOT_NET : 0) | (cfg->disk[0] ? 1u << VIRTIO_SLOT_BLK : 0);
}
