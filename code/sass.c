/* sass.c: the SASS side of the access analysis around the listing parser
 * (sass_text.c) and the dataflow (sass_flow.c): finding and running
 * nvdisasm, cutting kernels out of cubins, the per-(cubin, kernel) cache,
 * and the byte ranges of an access over a launch. See sass.h.
 *
 * nvdisasm runs in raw mode (-b SMxx) on the concatenated .text sections of
 * the kernels asked for: its start-up (~0.2-0.4 s) dwarfs the per-
 * instruction cost (~15 us), so one run serves a whole batch, and raw mode
 * does not make it load the whole cubin (libtorch's are tens of MiB).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "code/bytes.h"
#include "code/elf_image.h"
#include "code/fatbin.h"
#include "code/sass.h"
#include "code/sass_uniq.h"
#include "graph/graph.h"
#include <uthash.h>

extern char **environ;

#define MAX_CODE (256u << 20) /* bytes of SASS in one analysis */
#define MIN_CHUNK (128u << 10) /* below this, another nvdisasm costs more than it saves */

const char *sg_sass_atom_name(sg_sass_atom_t a)
{
    static const char *n[] = {"1",        "tid.x",    "tid.y",    "tid.z",     "ctaid.x",
                              "ctaid.y",  "ctaid.z",  "ntid.x",   "ntid.y",    "ntid.z",
                              "nctaid.x", "nctaid.y", "nctaid.z", "k*ntid.x*nctaid.x", "j"};
    return (unsigned)a < SG_SASS_ATOM_COUNT ? n[a] : "?";
}

const char *sg_sass_status_name(sg_sass_status_t s)
{
    static const char *n[] = {"analysed",  "no_disassembler", "rejected",
                              "no_kernel", "bad_cubin",       "too_complex"};
    return (unsigned)s < SG_SASS_STATUS_COUNT ? n[s] : "?";
}

void sg_sass_kernel_free(sg_sass_kernel_t *k)
{
    if (!k)
        return;
    free(k->name);
    free(k->accesses);
    free(k->params);
    memset(k, 0, sizeof *k);
}

int sg_sass_analyze_text(const char *text, size_t len, const char *name,
                         const sg_sass_target_t *target, sg_sass_kernel_t *out)
{
    if (!out)
        return SG_EINVAL;
    sg_sass_listing_t l;
    char err[160];
    int rc = sg_sass_parse(text, len, &l, err, sizeof err);
    if (rc) {
        memset(out, 0, sizeof *out);
        out->name = name ? strdup(name) : NULL;
        out->status = SG_SASS_REJECTED;
        snprintf(out->reason, sizeof out->reason, "unknown: listing unreadable: %s", err);
        return rc == SG_ENOMEM ? rc : 0;
    }
    uint32_t first = 0, count = l.n_insns;
    const char *nm = name;
    if (l.n_funcs) {
        uint32_t f = 0;
        if (name) {
            while (f < l.n_funcs && strcmp(l.funcs[f].name, name))
                f++;
        }
        if (f == l.n_funcs) {
            memset(out, 0, sizeof *out);
            out->name = name ? strdup(name) : NULL;
            out->status = SG_SASS_NO_KERNEL;
            snprintf(out->reason, sizeof out->reason, "unknown: the listing has no kernel %s",
                     name ? name : "");
            sg_sass_listing_free(&l);
            return 0;
        }
        first = l.funcs[f].first;
        count = l.funcs[f].count;
        nm = l.funcs[f].name;
    }
    uint32_t pc0 = count ? l.insns[first].pc : 0;
    rc = sg_sass_analyze(&l, first, count, pc0, nm, target, out);
    sg_sass_listing_free(&l);
    return rc;
}

/* ---- finding nvdisasm --------------------------------------------------------- */

static bool executable(const char *p)
{
    struct stat st;
    return p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

static bool try_path(char *out, size_t len, const char *dir, const char *file)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s/%s", dir, file) >= (int)sizeof p)
        return false;
    if (!executable(p))
        return false;
    snprintf(out, len, "%s", p);
    return true;
}

static bool try_glob(char *out, size_t len, const char *pattern)
{
    glob_t g;
    bool ok = false;
    if (glob(pattern, 0, NULL, &g) == 0) {
        /* the last match: the highest python / CUDA version */
        for (size_t i = g.gl_pathc; i-- > 0 && !ok;)
            if (executable(g.gl_pathv[i])) {
                snprintf(out, len, "%s", g.gl_pathv[i]);
                ok = true;
            }
    }
    globfree(&g);
    return ok;
}

/* pip's nvidia-cuda-nvdisasm under a python prefix */
static bool try_prefix(char *out, size_t len, const char *prefix)
{
    static const char *sub[] = {
        "lib/python3*/site-packages/nvidia/cu13/bin/nvdisasm",
        "lib/python3*/site-packages/nvidia/cuda_nvdisasm/bin/nvdisasm",
        "lib/python3*/dist-packages/nvidia/cu13/bin/nvdisasm",
        "lib/python3*/dist-packages/nvidia/cuda_nvdisasm/bin/nvdisasm",
        "lib/python3/dist-packages/nvidia/cu13/bin/nvdisasm",
        "local/lib/python3*/dist-packages/nvidia/cu13/bin/nvdisasm",
    };
    char pat[4096];
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        if (snprintf(pat, sizeof pat, "%s/%s", prefix, sub[i]) >= (int)sizeof pat)
            continue;
        if (try_glob(out, len, pat))
            return true;
    }
    return false;
}

static bool search_disassembler(char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (path) {
        char *dup = strdup(path);
        if (dup) {
            bool ok = false;
            for (char *s = NULL, *d = strtok_r(dup, ":", &s); d && !ok; d = strtok_r(NULL, ":", &s))
                ok = *d && try_path(out, len, d, "nvdisasm");
            free(dup);
            if (ok)
                return true;
        }
    }
    static const char *env_dirs[] = {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"};
    for (size_t i = 0; i < sizeof env_dirs / sizeof env_dirs[0]; i++) {
        const char *d = getenv(env_dirs[i]);
        char b[4096];
        if (d && *d && snprintf(b, sizeof b, "%s/bin", d) < (int)sizeof b &&
            try_path(out, len, b, "nvdisasm"))
            return true;
    }
    if (try_path(out, len, "/usr/local/cuda/bin", "nvdisasm") ||
        try_glob(out, len, "/usr/local/cuda-*/bin/nvdisasm"))
        return true;
    /* python prefixes: a venv, the python3s on PATH (their ../), pyenv, ~/.local */
    const char *venv = getenv("VIRTUAL_ENV");
    if (venv && *venv && try_prefix(out, len, venv))
        return true;
    if (path) {
        char *dup = strdup(path);
        if (dup) {
            bool ok = false;
            for (char *s = NULL, *d = strtok_r(dup, ":", &s); d && !ok; d = strtok_r(NULL, ":", &s)) {
                char py[4096], real[4096];
                if (!*d || snprintf(py, sizeof py, "%s/python3", d) >= (int)sizeof py ||
                    !executable(py))
                    continue;
                if (!realpath(py, real))
                    continue;
                char *slash = strrchr(real, '/');
                if (!slash)
                    continue;
                *slash = 0; /* .../bin */
                slash = strrchr(real, '/');
                if (!slash)
                    continue;
                *slash = 0; /* the prefix */
                ok = try_prefix(out, len, real[0] ? real : "/");
            }
            free(dup);
            if (ok)
                return true;
        }
    }
    const char *home = getenv("HOME");
    const char *pyenv = getenv("PYENV_ROOT");
    char b[4096];
    if (pyenv && *pyenv && snprintf(b, sizeof b, "%s/versions/*", pyenv) < (int)sizeof b) {
        char pat[4096];
        if (snprintf(pat, sizeof pat, "%.3900s/lib/python3*/site-packages/nvidia/cu13/bin/nvdisasm",
                     b) < (int)sizeof pat &&
            try_glob(out, len, pat))
            return true;
    }
    if (home && *home) {
        char pat[4096];
        snprintf(pat, sizeof pat,
                 "%s/.pyenv/versions/*/lib/python3*/site-packages/nvidia/cu13/bin/nvdisasm", home);
        if (try_glob(out, len, pat))
            return true;
        snprintf(b, sizeof b, "%s/.local", home);
        if (try_prefix(out, len, b))
            return true;
    }
    return try_prefix(out, len, "/usr") || try_prefix(out, len, "/usr/local");
}

static pthread_mutex_t find_lock = PTHREAD_MUTEX_INITIALIZER;
static bool find_done;
static char find_path[4096];

int sg_sass_find_disassembler(char *path, size_t len)
{
    const char *env = getenv("SGCAP_NVDISASM");
    if (env && *env) {
        if (!executable(env))
            return SG_ENOENT;
        snprintf(path, len, "%s", env);
        return 0;
    }
    pthread_mutex_lock(&find_lock);
    if (!find_done) {
        if (!search_disassembler(find_path, sizeof find_path))
            find_path[0] = 0;
        find_done = true;
    }
    int rc = find_path[0] ? 0 : SG_ENOENT;
    if (rc == 0)
        snprintf(path, len, "%s", find_path);
    pthread_mutex_unlock(&find_lock);
    return rc;
}

/* ---- running it ------------------------------------------------------------------ */

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void first_line(const char *s, size_t n, char *err, size_t errlen)
{
    size_t i = 0;
    while (i < n && (s[i] == '\n' || s[i] == ' '))
        i++;
    size_t e = i;
    while (e < n && s[e] != '\n' && s[e] != 0)
        e++;
    if (err && errlen)
        snprintf(err, errlen, "%.*s", (int)(e - i < 150 ? e - i : 150), s + i);
}

/* One nvdisasm child: its temporary input, pipes and what it printed. */
typedef struct {
    pid_t pid;
    int out, errfd;
    bool out_open, err_open;
    char tmp[4096];
    char *buf;
    size_t len, cap;
    char ebuf[1024];
    size_t elen;
    int rc;
    char err[192];
} job_t;

static void job_init(job_t *j)
{
    memset(j, 0, sizeof *j);
    j->pid = -1;
    j->out = j->errfd = -1;
}

/* Write the code to a temporary file and start `nvdisasm -b SMxx -base B`. */
static int job_start(job_t *j, const char *tool, uint32_t arch, bool arch_specific,
                     const uint8_t *code, size_t n, uint64_t base)
{
    char arg_arch[16], arg_base[32];
    snprintf(arg_arch, sizeof arg_arch, "SM%u%s", arch, arch_specific ? "a" : "");
    snprintf(arg_base, sizeof arg_base, "0x%llx", (unsigned long long)base);
    const char *tmpdir = getenv("TMPDIR");
    snprintf(j->tmp, sizeof j->tmp, "%s/sgcap-sass-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = mkstemp(j->tmp);
    if (fd < 0) {
        j->tmp[0] = 0;
        snprintf(j->err, sizeof j->err, "cannot create a temporary file: %s", strerror(errno));
        return j->rc = SG_EIO;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, code + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            snprintf(j->err, sizeof j->err, "cannot write the temporary file");
            return j->rc = SG_EIO;
        }
        off += (size_t)w;
    }
    close(fd);
    int outp[2], errp[2];
    if (pipe2(outp, O_CLOEXEC))
        return j->rc = SG_EIO;
    if (pipe2(errp, O_CLOEXEC)) {
        close(outp[0]);
        close(outp[1]);
        return j->rc = SG_EIO;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    char *argv[] = {(char *)tool, "-b", arg_arch, "-base", arg_base, j->tmp, NULL};
    int sp = posix_spawn(&j->pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(outp[1]);
    close(errp[1]);
    j->out = outp[0];
    j->errfd = errp[0];
    if (sp != 0) {
        j->pid = -1;
        snprintf(j->err, sizeof j->err, "cannot run %s: %s", tool, strerror(sp));
        return j->rc = SG_EIO;
    }
    j->out_open = j->err_open = true;
    return 0;
}

/* Read every running job's output until all are done, the deadline passes
 * or one prints more than cap. */
static void jobs_wait(job_t *jobs, uint32_t n, uint32_t timeout_ms, size_t cap)
{
    uint64_t deadline = now_ms() + timeout_ms;
    struct pollfd *pf = calloc(2 * (size_t)n, sizeof *pf);
    if (!pf) {
        for (uint32_t i = 0; i < n; i++)
            if (!jobs[i].rc)
                jobs[i].rc = SG_ENOMEM;
        return;
    }
    for (;;) {
        uint32_t np = 0;
        for (uint32_t i = 0; i < n; i++) {
            job_t *j = &jobs[i];
            if (j->rc)
                continue;
            if (j->out_open)
                pf[np++] = (struct pollfd){j->out, POLLIN, 0};
            if (j->err_open)
                pf[np++] = (struct pollfd){j->errfd, POLLIN, 0};
        }
        if (np == 0)
            break;
        uint64_t t = now_ms();
        if (t >= deadline) {
            for (uint32_t i = 0; i < n; i++)
                if (!jobs[i].rc && (jobs[i].out_open || jobs[i].err_open)) {
                    snprintf(jobs[i].err, sizeof jobs[i].err, "nvdisasm timed out after %u ms",
                             timeout_ms);
                    jobs[i].rc = SG_ELIMIT;
                }
            break;
        }
        int pr = poll(pf, np, (int)(deadline - t));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            break;
        for (uint32_t k = 0; k < np; k++) {
            if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            job_t *j = NULL;
            for (uint32_t i = 0; i < n && !j; i++)
                if (!jobs[i].rc && (jobs[i].out == pf[k].fd || jobs[i].errfd == pf[k].fd))
                    j = &jobs[i];
            if (!j)
                continue;
            if (pf[k].fd == j->out) {
                if (j->cap - j->len < 65536) {
                    size_t nc = j->cap ? j->cap * 2 : 1 << 20;
                    char *nb = realloc(j->buf, nc + 1);
                    if (!nb) {
                        j->rc = SG_ENOMEM;
                        continue;
                    }
                    j->buf = nb;
                    j->cap = nc;
                }
                ssize_t r = read(j->out, j->buf + j->len, j->cap - j->len);
                if (r > 0) {
                    j->len += (size_t)r;
                    if (j->len > cap) {
                        snprintf(j->err, sizeof j->err, "nvdisasm printed more than %zu bytes", cap);
                        j->rc = SG_ELIMIT;
                    }
                } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                    j->out_open = false;
                }
            } else {
                char junk[4096];
                ssize_t r = read(j->errfd, junk, sizeof junk);
                if (r > 0) {
                    size_t room = sizeof j->ebuf - 1 - j->elen;
                    size_t c = (size_t)r < room ? (size_t)r : room;
                    memcpy(j->ebuf + j->elen, junk, c);
                    j->elen += c;
                } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
                    j->err_open = false;
                }
            }
        }
    }
    free(pf);
}

/* Reap the child (killed if it failed), remove the input, and hand the
 * text over (NUL-terminated) when it succeeded. */
static int job_finish(job_t *j, char **text, size_t *text_len)
{
    if (j->pid > 0) {
        int status = 0;
        if (j->rc)
            kill(j->pid, SIGKILL);
        while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (j->rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            j->ebuf[j->elen] = 0;
            if (j->elen)
                first_line(j->ebuf, j->elen, j->err, sizeof j->err);
            else
                snprintf(j->err, sizeof j->err, "nvdisasm exited with status %d", status);
            j->rc = SG_EFORMAT;
        }
    }
    if (j->out >= 0)
        close(j->out);
    if (j->errfd >= 0)
        close(j->errfd);
    if (j->tmp[0])
        unlink(j->tmp);
    j->pid = -1;
    j->out = j->errfd = -1;
    j->tmp[0] = 0;
    if (j->rc == 0 && j->len == 0) {
        snprintf(j->err, sizeof j->err, "nvdisasm printed nothing");
        j->rc = SG_EFORMAT;
    }
    if (j->rc) {
        free(j->buf);
        j->buf = NULL;
        return j->rc;
    }
    j->buf[j->len] = 0;
    *text = j->buf;
    *text_len = j->len;
    j->buf = NULL;
    return 0;
}

static int resolve_tool(const sg_sass_options_t *opt, char *tool, size_t len)
{
    if (opt && opt->nvdisasm) {
        if (!executable(opt->nvdisasm))
            return SG_ENOENT;
        snprintf(tool, len, "%s", opt->nvdisasm);
        return 0;
    }
    return sg_sass_find_disassembler(tool, len);
}

int sg_sass_disassemble(const sg_sass_options_t *opt, uint32_t arch, bool arch_specific,
                        const uint8_t *code, size_t n, char **text, size_t *text_len, char *err,
                        size_t errlen)
{
    if (!text || !text_len || (!code && n))
        return SG_EINVAL;
    *text = NULL;
    *text_len = 0;
    if (err && errlen)
        err[0] = 0;
    char tool[4096];
    if (resolve_tool(opt, tool, sizeof tool) != 0)
        return SG_ENOENT;
    job_t j;
    job_init(&j);
    if (job_start(&j, tool, arch, arch_specific, code, n, 0) == 0)
        jobs_wait(&j, 1, opt && opt->timeout_ms ? opt->timeout_ms : 60000,
                  opt && opt->max_output ? opt->max_output : ((size_t)512 << 20));
    int rc = job_finish(&j, text, text_len);
    if (rc && err && errlen)
        snprintf(err, errlen, "%s", j.err);
    return rc;
}

/* ---- cubins ---------------------------------------------------------------------- */

/* EIATTR_PARAM_CBANK (0x0a) in .nv.info.<kernel>: {u32 sym, u16 offset, u16 size};
 * and the thread limits.
 * Entries are {u8 format, u8 attribute, ...}: format 4 has a u16 size and a
 * payload, 1/2/3 a 2-byte value. */
static void read_param_cbank(const uint8_t *cubin, size_t n, const char *name, uint32_t *base,
                             uint32_t *size, uint32_t max_ntid[3])
{
    char sec[4096];
    sg_elf_section_t s;
    if (snprintf(sec, sizeof sec, ".nv.info.%s", name) >= (int)sizeof sec ||
        sg_elf_find_section(cubin, n, sec, &s) != 0 || s.type == 8)
        return;
    const uint8_t *p = cubin + s.offset;
    uint64_t i = 0;
    while (i + 4 <= s.size) {
        uint8_t fmt = p[i], attr = p[i + 1];
        if (fmt == 4) {
            uint16_t len = sg_rd16(p + i + 2);
            if (!sg_in_bounds(i + 4, len, s.size))
                return;
            if (attr == 0x0a && len >= 8) {
                *base = sg_rd16(p + i + 8);
                *size = sg_rd16(p + i + 10);
            }
            /* EIATTR_MAX_THREADS (0x05), EIATTR_REQNTID (0x10): {x, y, z} */
            if ((attr == 0x05 || attr == 0x10) && len >= 12)
                for (int d = 0; d < 3; d++) {
                    uint32_t v = sg_rd32(p + i + 4 + 4 * d);
                    if (v && (!max_ntid[d] || v < max_ntid[d]))
                        max_ntid[d] = v;
                }
            i += 4 + len;
        } else if (fmt >= 1 && fmt <= 3) {
            i += 4;
        } else {
            return;
        }
    }
}

/* Offsets of the function symbols defined in section `shndx` (the kernel's
 * own helpers). */
static bool push_u32(uint32_t **a, uint32_t *n, uint32_t *cap, uint32_t v)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        uint32_t *np = realloc(*a, nc * sizeof *np);
        if (!np)
            return false;
        *a = np;
        *cap = nc;
    }
    (*a)[(*n)++] = v;
    return true;
}

/* The FUNC symbols of section shndx (the kernel and its internal callees):
 * their offsets, and apart those named as CUDA's internal unsigned 64-bit
 * division. */
static int section_functions(const uint8_t *cubin, size_t n, uint32_t shndx, uint32_t **out,
                             uint32_t *count, uint32_t **div, uint32_t *ndiv)
{
    *out = *div = NULL;
    *count = *ndiv = 0;
    sg_elf_section_t st, str;
    if (sg_elf_find_section(cubin, n, ".symtab", &st) != 0 || st.type == 8)
        return 0;
    bool names = sg_elf_find_section(cubin, n, ".strtab", &str) == 0 && str.type != 8;
    static const char div_u64[] = "__cuda_sm20_div_u64";
    uint32_t cap = 0, capd = 0;
    for (uint64_t o = 0; o + 24 <= st.size; o += 24) {
        const uint8_t *sym = cubin + st.offset + o;
        uint8_t info = sym[4];
        uint16_t sh = sg_rd16(sym + 6);
        uint64_t val = sg_rd64(sym + 8);
        if ((info & 0xf) != 2 || sh != shndx || val > UINT32_MAX)
            continue;
        uint32_t nm = sg_rd32(sym);
        bool is_div = false;
        if (names && nm < str.size) {
            const char *s = (const char *)cubin + str.offset + nm;
            size_t left = str.size - nm, len = strnlen(s, left);
            is_div = len < left && len >= sizeof div_u64 - 1 &&
                     !strcmp(s + len - (sizeof div_u64 - 1), div_u64);
        }
        if (!push_u32(out, count, &cap, (uint32_t)val) ||
            (is_div && !push_u32(div, ndiv, &capd, (uint32_t)val))) {
            free(*out);
            free(*div);
            *out = *div = NULL;
            *count = *ndiv = 0;
            return SG_ENOMEM;
        }
    }
    return 0;
}

/* What constant bank 4's relocations say: the offsets that relocate to
 * __assertfail or vprintf (benign calls), and every 64-bit word that holds
 * a module symbol's address, with its name (syms[i] at offs[i]). */
typedef struct {
    uint32_t *benign, n_benign;
    uint32_t *offs, n_syms;
    char **syms;
} bank4_t;

static void bank4_free(bank4_t *b)
{
    for (uint32_t i = 0; i < b->n_syms; i++)
        free(b->syms[i]);
    free(b->syms);
    free(b->offs);
    free(b->benign);
    memset(b, 0, sizeof *b);
}

static int bank4_relocations(const uint8_t *cubin, size_t n, bank4_t *out)
{
    memset(out, 0, sizeof *out);
    sg_elf_section_t rel, sym, str;
    if (sg_elf_find_section(cubin, n, ".rela.nv.constant4", &rel) != 0 ||
        sg_elf_find_section(cubin, n, ".symtab", &sym) != 0 ||
        sg_elf_find_section(cubin, n, ".strtab", &str) != 0 || rel.type == 8 || sym.type == 8 ||
        str.type == 8)
        return 0;
    uint32_t cap = 0, caps = 0;
    for (uint64_t o = 0; o + 24 <= rel.size; o += 24) {
        const uint8_t *r = cubin + rel.offset + o;
        uint64_t where = sg_rd64(r), info = sg_rd64(r + 8), addend = sg_rd64(r + 16);
        uint64_t si = info >> 32;
        if (si * 24 + 24 > sym.size || where > UINT32_MAX)
            continue;
        uint32_t name = sg_rd32(cubin + sym.offset + si * 24);
        if (name >= str.size)
            continue;
        const char *nm = (const char *)cubin + str.offset + name;
        size_t left = str.size - name, len = strnlen(nm, left);
        if (len == left)
            continue; /* not terminated */
        bool benign = !strcmp(nm, "__assertfail") || !strcmp(nm, "vprintf");
        if (benign && !push_u32(&out->benign, &out->n_benign, &cap, (uint32_t)where))
            goto oom;
        /* R_CUDA_64: the word holds the symbol's address (plus the addend) */
        if (benign || (uint32_t)info != 2 || addend || !len)
            continue;
        uint32_t ns = out->n_syms;
        if (!push_u32(&out->offs, &out->n_syms, &caps, (uint32_t)where))
            goto oom;
        char **nn = realloc(out->syms, caps * sizeof *nn);
        if (!nn || !(nn[ns] = strdup(nm))) {
            if (nn)
                out->syms = nn;
            out->n_syms = ns;
            goto oom;
        }
        out->syms = nn;
    }
    return 0;
oom:
    bank4_free(out);
    return SG_ENOMEM;
}

static void set_unknown(sg_sass_kernel_t *k, const char *name, sg_sass_status_t s, const char *why)
{
    sg_sass_kernel_free(k);
    k->name = name ? strdup(name) : NULL;
    k->status = s;
    snprintf(k->reason, sizeof k->reason, "unknown: %.180s", why);
}

typedef struct {
    uint64_t off, size;  /* in the concatenated code */
    uint32_t pbase, psize;
    uint32_t max_ntid[3];
    uint32_t *calls;
    uint32_t ncalls;
    uint32_t *divs;      /* the calls to the 64-bit division */
    uint32_t ndivs;
    uint32_t cubin;      /* index into the group's distinct cubins */
    bool ok;
} kslice_t;

/* A distinct cubin of a group: its bank-4 words that call benign system
 * functions, read once for all its kernels. */
typedef struct {
    const uint8_t *bytes;
    size_t n;
    bank4_t b4;
} gcubin_t;

/* Analyse kernel slice k, instructions [lo, lo + count) of listing l. */
static int analyze_slice(const sg_sass_listing_t *l, uint32_t lo, uint32_t count,
                         const kslice_t *k, const gcubin_t *g, uint32_t arch, const char *name,
                         sg_sass_kernel_t *out)
{
    sg_sass_target_t t = {.arch = arch, .param_base = k->pbase, .param_size = k->psize,
                          .call_targets = k->calls, .n_call_targets = k->ncalls,
                          .div_u64_targets = k->divs, .n_div_u64_targets = k->ndivs,
                          .benign_c4 = g->b4.benign, .n_benign_c4 = g->b4.n_benign,
                          .c4_symbol_offsets = g->b4.offs,
                          .c4_symbol_names = (const char *const *)g->b4.syms,
                          .n_c4_symbols = g->b4.n_syms,
                          .max_ntid = {k->max_ntid[0], k->max_ntid[1], k->max_ntid[2]}};
    int rc = sg_sass_analyze(l, lo, count, (uint32_t)k->off, name, &t, out);
    return rc == SG_EINVAL ? 0 : rc;
}

/* How many nvdisasm runs share `bytes` of code (opt->jobs when given, else
 * the CPUs up to 8, one per MIN_CHUNK at least), at most `most`. */
/* opt->jobs, else the CPUs up to 8: nvdisasm runs and analysis threads. */
static uint32_t side_by_side(const sg_sass_options_t *opt)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return opt && opt->jobs ? opt->jobs : (uint32_t)(cpus > 8 ? 8 : cpus < 1 ? 1 : cpus);
}

static uint32_t job_count(const sg_sass_options_t *opt, uint64_t bytes, uint32_t most)
{
    uint32_t nj = side_by_side(opt);
    uint64_t by_size = (bytes + MIN_CHUNK - 1) / MIN_CHUNK;
    if (!(opt && opt->jobs) && nj > by_size)
        nj = (uint32_t)by_size; /* an explicit count is taken as asked (tests) */
    if (nj > most)
        nj = most;
    return nj < 1 ? 1 : nj;
}

/* Finish job j, started on code[0, n) at -base base (run again as SMXXa
 * when an arch-specific build's instructions need it), and parse what it
 * printed; the text is handed over in *keep when keep is not NULL (and
 * *specific says whether it came from the SMXXa run). 0, SG_ENOMEM, or
 * another code with the reason in why. */
static int finish_listing(job_t *j, const char *tool, uint32_t arch, const uint8_t *code,
                          uint64_t n, uint64_t base, uint32_t timeout, size_t cap,
                          const sg_sass_options_t *opt, sg_sass_listing_t *l, char *why,
                          size_t whylen, char **keep, size_t *keep_len, bool *specific)
{
    char *text = NULL;
    size_t tlen = 0;
    int dr = job_finish(j, &text, &tlen);
    if (specific)
        *specific = false;
    if (dr == SG_EFORMAT && (arch == 90 || arch >= 100)) {
        /* an arch-specific (sm_XXa) build: its instructions need SMXXa */
        job_t r;
        job_init(&r);
        if (opt && opt->stats)
            opt->stats->runs++;
        if (job_start(&r, tool, arch, true, code, n, base) == 0)
            jobs_wait(&r, 1, timeout, cap);
        if (job_finish(&r, &text, &tlen) == 0) {
            dr = 0;
            if (specific)
                *specific = true;
        }
    }
    if (dr == SG_ENOMEM)
        return dr;
    if (dr != 0) {
        snprintf(why, whylen, "nvdisasm rejected the cubin (%s)", j->err[0] ? j->err : "no message");
        return dr;
    }
    char perr[160];
    int pr = sg_sass_parse(text, tlen, l, perr, sizeof perr);
    if (pr && pr != SG_ENOMEM)
        snprintf(why, whylen, "nvdisasm output unreadable (%s)", perr);
    if (keep && pr == 0) {
        *keep = text;
        *keep_len = tlen;
    } else {
        free(text);
    }
    return pr;
}

/* The kernels of a batch, analysed from the distinct instructions by
 * threads side by side: each kernel is independent, and the dataflow (not
 * nvdisasm) is most of the time once the instructions are known. */
typedef struct {
    const sg_sass_uniq_t *u;
    const kslice_t *ks;
    const gcubin_t *cb;
    const sg_sass_request_t *req;
    const uint32_t *idx;
    uint32_t n_idx, arch;
    sg_sass_kernel_t *out;
    atomic_uint next;
    atomic_int rc;
} kwork_t;

static void *analyze_worker(void *arg)
{
    kwork_t *w = arg;
    for (;;) {
        uint32_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->n_idx || atomic_load(&w->rc))
            return NULL;
        if (!w->ks[i].ok)
            continue;
        sg_sass_listing_t kl;
        int rc = sg_sass_uniq_listing(w->u, w->ks[i].off, w->ks[i].size, &kl);
        if (rc == 0) {
            rc = analyze_slice(&kl, 0, kl.n_insns, &w->ks[i], &w->cb[w->ks[i].cubin], w->arch,
                               w->req[w->idx[i]].name, &w->out[w->idx[i]]);
            sg_sass_listing_free(&kl);
        }
        if (rc) {
            int zero = 0;
            atomic_compare_exchange_strong(&w->rc, &zero, rc);
            return NULL;
        }
    }
}

static int analyze_kernels(kwork_t *w, uint32_t threads)
{
    atomic_init(&w->next, 0);
    atomic_init(&w->rc, 0);
    pthread_t t[8];
    uint32_t started = 0;
    for (uint32_t k = 1; k < threads && k <= 8; k++)
        if (pthread_create(&t[started], NULL, analyze_worker, w) == 0)
            started++;
    analyze_worker(w); /* this thread too; with none started it does them all */
    for (uint32_t k = 0; k < started; k++)
        pthread_join(t[k], NULL);
    return atomic_load(&w->rc);
}

/* Every distinct instruction of code disassembled once, side by side (less
 * those the persistent cache, opt->cache_dir, knows), and each kernel
 * analysed from a listing made of them (sass_uniq.h). 0 when every kernel
 * slice was analysed, SG_ENOMEM, or another code with the reason in why when
 * a run failed or did not line up: with SG_EFORMAT the caller disassembles
 * the code as it is, which tells which kernels nvdisasm rejects. */
static int analyze_distinct(const uint8_t *code, uint64_t total, const char *tool, uint32_t arch,
                            const sg_sass_options_t *opt, const sg_sass_request_t *req,
                            const uint32_t *idx, uint32_t n_idx, const kslice_t *ks,
                            const gcubin_t *cb, sg_sass_kernel_t *out, char *why, size_t whylen)
{
    sg_sass_uniq_t u;
    int rc = sg_sass_uniq_build(code, total, &u);
    if (rc)
        return rc;
    sg_sass_icache_t *ic = opt && opt->cache_dir ? sg_sass_icache_open(opt->cache_dir, tool, arch)
                                                 : NULL;
    uint32_t known = ic ? sg_sass_icache_fill(ic, &u) : 0;
    /* the distinct instructions nobody knows yet, as code of their own */
    uint32_t nt = u.n_distinct - known;
    uint32_t *todo = malloc((size_t)(nt ? nt : 1) * sizeof *todo);
    uint8_t *tcode = malloc((size_t)(nt ? nt : 1) * 16);
    job_t *jobs = NULL;
    uint64_t *cs = NULL;
    uint32_t nj = 0;
    if (!todo || !tcode) {
        rc = SG_ENOMEM;
        goto done;
    }
    for (uint32_t d = 0, k = 0; d < u.n_distinct; d++)
        if (!u.have[d]) {
            todo[k] = d;
            memcpy(tcode + (size_t)k * 16, u.code + (size_t)d * 16, 16);
            k++;
        }
    uint64_t tb = (uint64_t)nt * 16;
    if (opt && opt->stats) {
        opt->stats->instructions += u.n;
        opt->stats->disassembled += nt;
        opt->stats->cached += known;
    }
    if (nt) {
        /* twice the whole code's chunk: the distinct instructions are the
         * costly ones, yet another run's start-up (~0.4 s) still buys little */
        nj = job_count(opt, tb / 2, nt);
        jobs = calloc(nj, sizeof *jobs);
        cs = calloc(nj + 1, sizeof *cs);
        if (!jobs || !cs) {
            rc = SG_ENOMEM;
            goto done;
        }
        for (uint32_t c = 0; c <= nj; c++)
            cs[c] = (uint64_t)(nt / nj) * c * 16 + (c == nj ? (uint64_t)(nt % nj) * 16 : 0);
        if (opt && opt->stats)
            opt->stats->runs += nj;
    }
    uint32_t timeout = opt && opt->timeout_ms ? opt->timeout_ms : 60000;
    size_t cap = opt && opt->max_output ? opt->max_output : ((size_t)512 << 20);
    for (uint32_t c = 0; c < nj; c++) {
        job_init(&jobs[c]);
        job_start(&jobs[c], tool, arch, false, tcode + cs[c], cs[c + 1] - cs[c], cs[c]);
    }
    if (nj)
        jobs_wait(jobs, nj, timeout, cap);
    for (uint32_t c = 0; c < nj; c++) {
        sg_sass_listing_t l;
        char w[256];
        char *text = NULL;
        size_t tl = 0;
        bool specific = false;
        int r = finish_listing(&jobs[c], tool, arch, tcode + cs[c], cs[c + 1] - cs[c], cs[c],
                               timeout, cap, opt, &l, w, sizeof w, &text, &tl, &specific);
        if (r == 0) {
            r = sg_sass_uniq_take(&u, &l, cs[c], cs[c + 1] - cs[c], todo, nt);
            sg_sass_listing_free(&l);
            if (r)
                snprintf(w, sizeof w, "nvdisasm's listing does not line up with its input");
            else if (ic && !specific) /* SMXXa's text is not SMXX's to reuse */
                sg_sass_icache_learn(ic, &u, todo, nt, text, tl, cs[c]);
        }
        free(text);
        if (r && !rc) {
            rc = r;
            snprintf(why, whylen, "%s", w);
        }
    }
    if (rc == 0) {
        uint32_t nok = 0;
        for (uint32_t i = 0; i < n_idx; i++)
            nok += ks[i].ok;
        kwork_t kw = {.u = &u, .ks = ks, .cb = cb, .req = req, .idx = idx, .n_idx = n_idx,
                      .arch = arch, .out = out};
        uint32_t threads = side_by_side(opt);
        rc = analyze_kernels(&kw, threads < nok ? threads : nok);
    }
    if (rc == 0 && ic)
        sg_sass_icache_save(ic); /* a cache that cannot be written costs only time */
done:
    sg_sass_icache_free(ic);
    free(jobs);
    free(cs);
    free(todo);
    free(tcode);
    sg_sass_uniq_free(&u);
    return rc;
}

/* Requests idx[0..n) (all of one arch) in one batch: their .text sections
 * concatenated and disassembled by one nvdisasm run (or side-by-side slices
 * of it), the listing parsed once and cut per kernel. */
static int analyze_group(const sg_sass_request_t *req, const uint32_t *idx, uint32_t n_idx,
                         uint32_t arch, const sg_sass_options_t *opt, sg_sass_kernel_t *out)
{
    kslice_t *ks = calloc(n_idx, sizeof *ks);
    gcubin_t *cb = calloc(n_idx, sizeof *cb);
    uint32_t n_cb = 0;
    uint8_t *code = NULL;
    uint64_t total = 0;
    int rc = 0;
    if (!ks || !cb) {
        free(ks);
        free(cb);
        return SG_ENOMEM;
    }
#define R(i) (&req[idx[i]])
#define O(i) (&out[idx[i]])
    for (uint32_t i = 0; i < n_idx; i++) {
        char sec[4096];
        sg_elf_section_t s;
        const sg_sass_request_t *q = R(i);
        if (!q->name || snprintf(sec, sizeof sec, ".text.%s", q->name) >= (int)sizeof sec ||
            sg_elf_find_section(q->cubin, q->n, sec, &s) != 0) {
            set_unknown(O(i), q->name, SG_SASS_NO_KERNEL, "the cubin has no such kernel");
            continue;
        }
        if (s.type == 8 || s.size == 0 || s.size % 16 || s.size > MAX_CODE - total) {
            set_unknown(O(i), q->name, SG_SASS_BAD_CUBIN,
                        s.size > MAX_CODE - total ? "kernel code over the size cap"
                                                  : "kernel section empty or misaligned");
            continue;
        }
        uint32_t c = 0;
        while (c < n_cb && cb[c].bytes != q->cubin)
            c++;
        if (c == n_cb) {
            cb[c].bytes = q->cubin;
            cb[c].n = q->n;
            if ((rc = bank4_relocations(q->cubin, q->n, &cb[c].b4)))
                goto out;
            n_cb++;
        }
        ks[i].cubin = c;
        ks[i].off = total;
        ks[i].size = s.size;
        total += s.size;
        ks[i].pbase = sg_sass_default_param_base(arch);
        read_param_cbank(q->cubin, q->n, q->name, &ks[i].pbase, &ks[i].psize, ks[i].max_ntid);
        if ((rc = section_functions(q->cubin, q->n, s.index, &ks[i].calls, &ks[i].ncalls,
                                    &ks[i].divs, &ks[i].ndivs)))
            goto out;
        ks[i].ok = true;
    }
    if (total == 0)
        goto out;
    code = malloc(total);
    if (!code) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n_idx; i++)
        if (ks[i].ok) {
            char sec[4096];
            sg_elf_section_t s;
            snprintf(sec, sizeof sec, ".text.%s", R(i)->name);
            sg_elf_find_section(R(i)->cubin, R(i)->n, sec, &s);
            memcpy(code + ks[i].off, R(i)->cubin + s.offset, s.size);
        }
    char tool[4096];
    if (resolve_tool(opt, tool, sizeof tool) != 0) {
        for (uint32_t i = 0; i < n_idx; i++)
            if (ks[i].ok)
                set_unknown(O(i), R(i)->name, SG_SASS_NO_DISASSEMBLER,
                            "no disassembler (nvdisasm not found; set SGCAP_NVDISASM)");
        goto out;
    }
    if (!(opt && opt->whole_code)) {
        char why[256] = "";
        int dr = analyze_distinct(code, total, tool, arch, opt, req, idx, n_idx, ks, cb, out, why,
                                  sizeof why);
        if (dr == 0 || dr == SG_ENOMEM) {
            rc = dr;
            goto out;
        }
        for (uint32_t i = 0; i < n_idx; i++)
            if (ks[i].ok) {
                if (dr == SG_EFORMAT)
                    sg_sass_kernel_free(O(i));
                else /* it did not run, timed out or babbled: so would the whole code */
                    set_unknown(O(i), R(i)->name, SG_SASS_REJECTED, why);
            }
        if (dr != SG_EFORMAT)
            goto out;
        /* nvdisasm rejected an instruction or printed what does not line up:
         * the whole code, cut per kernel, says which kernels it rejects */
    }
    /* Split the code into chunks disassembled side by side: nvdisasm is
     * single-threaded and its cost grows with the instructions. */
    uint32_t nok = 0;
    for (uint32_t i = 0; i < n_idx; i++)
        nok += ks[i].ok;
    uint32_t nj = job_count(opt, total, nok);
    job_t *jobs = calloc(nj, sizeof *jobs);
    uint32_t *first = calloc(nj + 1, sizeof *first); /* kernel index where chunk c starts */
    uint64_t *cs = calloc(nj + 1, sizeof *cs);       /* byte offset where chunk c starts */
    if (!jobs || !first || !cs) {
        free(jobs);
        free(first);
        free(cs);
        rc = SG_ENOMEM;
        goto out;
    }
    {
        uint32_t c = 0;
        for (uint32_t i = 0; i < n_idx && c < nj; i++) {
            if (!ks[i].ok)
                continue;
            if (ks[i].off >= total / nj * c || c == 0) {
                if (c == 0 || ks[i].off > cs[c - 1]) {
                    first[c] = i;
                    cs[c] = ks[i].off;
                    c++;
                }
            }
        }
        nj = c ? c : 1;
        first[nj] = n_idx;
        cs[nj] = total;
    }
    uint32_t timeout = opt && opt->timeout_ms ? opt->timeout_ms : 60000;
    size_t cap = opt && opt->max_output ? opt->max_output : ((size_t)512 << 20);
    if (opt && opt->stats) {
        opt->stats->instructions += total / 16;
        opt->stats->disassembled += total / 16;
        opt->stats->runs += nj;
    }
    for (uint32_t c = 0; c < nj; c++) {
        job_init(&jobs[c]);
        job_start(&jobs[c], tool, arch, false, code + cs[c], cs[c + 1] - cs[c], cs[c]);
    }
    jobs_wait(jobs, nj, timeout, cap);
    for (uint32_t c = 0; c < nj && rc == 0; c++) {
        sg_sass_listing_t l;
        char why[256];
        int dr = finish_listing(&jobs[c], tool, arch, code + cs[c], cs[c + 1] - cs[c], cs[c],
                                timeout, cap, opt, &l, why, sizeof why, NULL, NULL, NULL);
        if (dr == SG_ENOMEM) {
            rc = SG_ENOMEM;
            break;
        }
        if (dr != 0) {
            for (uint32_t i = first[c]; i < first[c + 1]; i++)
                if (ks[i].ok)
                    set_unknown(O(i), R(i)->name, SG_SASS_REJECTED, why);
            continue;
        }
        for (uint32_t i = first[c]; i < first[c + 1] && rc == 0; i++) {
            if (!ks[i].ok)
                continue;
            uint32_t lo = 0, hi = l.n_insns;
            while (lo < hi) {
                uint32_t m = (lo + hi) / 2;
                if (l.insns[m].pc < ks[i].off)
                    lo = m + 1;
                else
                    hi = m;
            }
            uint32_t e = lo;
            while (e < l.n_insns && l.insns[e].pc < ks[i].off + ks[i].size)
                e++;
            if (e == lo || l.insns[lo].pc != ks[i].off) {
                set_unknown(O(i), R(i)->name, SG_SASS_REJECTED,
                            "nvdisasm output does not cover the kernel's code");
                continue;
            }
            rc = analyze_slice(&l, lo, e - lo, &ks[i], &cb[ks[i].cubin], arch, R(i)->name, O(i));
        }
        sg_sass_listing_free(&l);
    }
    for (uint32_t c = 0; c < nj; c++)
        if (jobs[c].pid > 0 || jobs[c].tmp[0] || jobs[c].buf) {
            char *t = NULL;
            size_t tl;
            if (job_finish(&jobs[c], &t, &tl) == 0)
                free(t);
        }
    free(jobs);
    free(first);
    free(cs);
out:
#undef R
#undef O
    for (uint32_t i = 0; i < n_idx; i++) {
        free(ks[i].calls);
        free(ks[i].divs);
    }
    for (uint32_t c = 0; c < n_cb; c++)
        bank4_free(&cb[c].b4);
    free(ks);
    free(cb);
    free(code);
    return rc;
}

int sg_sass_analyze_requests(const sg_sass_request_t *req, uint32_t n_req,
                             const sg_sass_options_t *opt, sg_sass_kernel_t *out)
{
    if (!out || (!req && n_req))
        return SG_EINVAL;
    for (uint32_t i = 0; i < n_req; i++)
        memset(&out[i], 0, sizeof out[i]);
    if (n_req == 0)
        return 0;
    /* arch of each request's cubin (0: not a cubin), read once per cubin */
    uint32_t *arch = calloc(n_req, sizeof *arch);
    uint32_t *idx = calloc(n_req, sizeof *idx);
    bool *done = calloc(n_req, sizeof *done);
    int rc = 0;
    if (!arch || !idx || !done) {
        rc = SG_ENOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < n_req; i++) {
        uint32_t j = 0;
        while (j < i && req[j].cubin != req[i].cubin)
            j++;
        if (j < i) {
            arch[i] = arch[j];
        } else if (!req[i].cubin || sg_elf_check(req[i].cubin, req[i].n) != 0 ||
                   sg_elf_cuda_arch(req[i].cubin, req[i].n, &arch[i]) != 0) {
            arch[i] = 0;
        }
        if (arch[i] == 0) {
            set_unknown(&out[i], req[i].name, SG_SASS_BAD_CUBIN, "not a cubin (ELF for CUDA)");
            done[i] = true;
        }
    }
    /* one batch per arch (nvdisasm -b takes one) */
    for (uint32_t i = 0; i < n_req && rc == 0; i++) {
        if (done[i])
            continue;
        uint32_t n = 0;
        for (uint32_t j = i; j < n_req; j++)
            if (!done[j] && arch[j] == arch[i]) {
                idx[n++] = j;
                done[j] = true;
            }
        rc = analyze_group(req, idx, n, arch[i], opt, out);
    }
out:
    free(arch);
    free(idx);
    free(done);
    return rc;
}

/* One request per name, all of one cubin (freed by the caller); NULL when
 * out of memory. */
static sg_sass_request_t *requests_of(const uint8_t *cubin, size_t n, const char *const *names,
                                      uint32_t n_names)
{
    sg_sass_request_t *req = calloc(n_names ? n_names : 1, sizeof *req);
    for (uint32_t i = 0; req && i < n_names; i++)
        req[i] = (sg_sass_request_t){.cubin = cubin, .n = n, .name = names[i]};
    return req;
}

int sg_sass_analyze_cubin(const uint8_t *cubin, size_t n, const char *const *names,
                          uint32_t n_names, const sg_sass_options_t *opt, sg_sass_kernel_t *out)
{
    if (!out || (!names && n_names))
        return SG_EINVAL;
    sg_sass_request_t *req = requests_of(cubin, n, names, n_names);
    if (!req)
        return SG_ENOMEM;
    int rc = sg_sass_analyze_requests(req, n_names, opt, out);
    free(req);
    return rc;
}

int sg_sass_pick_cubin(const sg_fatbin_t *fb, uint32_t device_arch, uint32_t *entry)
{
    if (!fb || !entry)
        return SG_EINVAL;
    uint32_t best = SG_NONE, best_arch = 0;
    for (uint32_t i = 0; i < fb->n_entries; i++) {
        const sg_fatbin_entry_t *e = &fb->entries[i];
        if (e->kind != SG_FATBIN_ENTRY_ELF)
            continue;
        bool special = (e->flags & (SG_FATBIN_FLAG_ARCH_SPECIFIC | SG_FATBIN_FLAG_FAMILY_SPECIFIC)) != 0;
        bool ok = e->arch == device_arch ||
                  (!special && e->arch / 10 == device_arch / 10 && e->arch < device_arch);
        if (!ok)
            continue;
        /* the exact arch first; among equals the plain build */
        if (best == SG_NONE || e->arch > best_arch ||
            (e->arch == best_arch && !special &&
             (fb->entries[best].flags & SG_FATBIN_FLAG_ARCH_SPECIFIC))) {
            best = i;
            best_arch = e->arch;
        }
    }
    if (best == SG_NONE)
        return SG_ENOENT;
    *entry = best;
    return 0;
}

/* ---- the cache -------------------------------------------------------------------- */

typedef struct {
    char key[17 + 1 + 4096];
    sg_sass_kernel_t k;
    UT_hash_handle hh;
} centry_t;

struct sg_sass_cache {
    sg_sass_options_t opt;
    char nvdisasm[4096];
    centry_t *map;
    uint32_t runs, kernels;
};

sg_sass_cache_t *sg_sass_cache_new(const sg_sass_options_t *opt)
{
    sg_sass_cache_t *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (opt) {
        c->opt = *opt;
        if (opt->nvdisasm) {
            snprintf(c->nvdisasm, sizeof c->nvdisasm, "%s", opt->nvdisasm);
            c->opt.nvdisasm = c->nvdisasm;
        }
    }
    return c;
}

void sg_sass_cache_free(sg_sass_cache_t *c)
{
    if (!c)
        return;
    centry_t *e, *t;
    HASH_ITER(hh, c->map, e, t)
    {
        HASH_DEL(c->map, e);
        sg_sass_kernel_free(&e->k);
        free(e);
    }
    free(c);
}

static bool make_key(char *key, size_t len, const char hash[17], const char *name)
{
    return snprintf(key, len, "%s:%s", hash, name) < (int)len;
}

static centry_t *lookup(sg_sass_cache_t *c, const char *key)
{
    centry_t *e = NULL;
    HASH_FIND_STR(c->map, key, e);
    return e;
}

int sg_sass_cache_prefetch_requests(sg_sass_cache_t *c, const sg_sass_request_t *req,
                                    uint32_t n_req)
{
    if (!c || (!req && n_req))
        return SG_EINVAL;
    for (uint32_t i = 0; i < n_req; i++)
        if (!req[i].cubin && req[i].n)
            return SG_EINVAL;
    sg_sass_request_t *todo = calloc(n_req ? n_req : 1, sizeof *todo);
    char(*hash)[17] = calloc(n_req ? n_req : 1, sizeof *hash);
    if (!todo || !hash) {
        free(todo);
        free(hash);
        return SG_ENOMEM;
    }
    uint32_t nt = 0;
    char key[sizeof((centry_t *)0)->key], h[17] = "";
    for (uint32_t i = 0; i < n_req; i++) {
        /* one hash per distinct cubin (libtorch's are tens of MiB) */
        if (i == 0 || req[i].cubin != req[i - 1].cubin || req[i].n != req[i - 1].n)
            sg_code_hash(req[i].cubin, req[i].n, h);
        if (!req[i].name || !make_key(key, sizeof key, h, req[i].name) || lookup(c, key))
            continue;
        bool dup = false;
        for (uint32_t j = 0; j < nt && !dup; j++)
            dup = !strcmp(hash[j], h) && !strcmp(todo[j].name, req[i].name);
        if (!dup) {
            memcpy(hash[nt], h, sizeof h);
            todo[nt++] = req[i];
        }
    }
    int rc = 0;
    if (nt) {
        sg_sass_kernel_t *ks = calloc(nt, sizeof *ks);
        if (!ks) {
            free(todo);
            free(hash);
            return SG_ENOMEM;
        }
        rc = sg_sass_analyze_requests(todo, nt, &c->opt, ks);
        c->runs++;
        for (uint32_t i = 0; i < nt; i++) {
            centry_t *e = rc ? NULL : calloc(1, sizeof *e);
            if (!e) {
                sg_sass_kernel_free(&ks[i]);
                if (!rc)
                    rc = SG_ENOMEM;
                continue;
            }
            make_key(e->key, sizeof e->key, hash[i], todo[i].name);
            e->k = ks[i];
            HASH_ADD_STR(c->map, key, e);
            if (!lookup(c, e->key)) { /* uthash ran out of memory */
                sg_sass_kernel_free(&e->k);
                free(e);
                rc = SG_ENOMEM;
                continue;
            }
            c->kernels++;
        }
        free(ks);
    }
    free(todo);
    free(hash);
    return rc;
}

int sg_sass_cache_prefetch(sg_sass_cache_t *c, const uint8_t *cubin, size_t n,
                           const char *const *names, uint32_t n_names)
{
    if (!c || (!names && n_names) || (!cubin && n))
        return SG_EINVAL;
    sg_sass_request_t *req = requests_of(cubin, n, names, n_names);
    if (!req)
        return SG_ENOMEM;
    int rc = sg_sass_cache_prefetch_requests(c, req, n_names);
    free(req);
    return rc;
}

int sg_sass_cache_get(sg_sass_cache_t *c, const uint8_t *cubin, size_t n, const char *name,
                      const sg_sass_kernel_t **out)
{
    if (!c || !name || !out)
        return SG_EINVAL;
    *out = NULL;
    char hash[17], key[sizeof((centry_t *)0)->key];
    sg_code_hash(cubin, n, hash);
    if (!make_key(key, sizeof key, hash, name))
        return SG_ELIMIT;
    centry_t *e = lookup(c, key);
    if (!e) {
        int rc = sg_sass_cache_prefetch(c, cubin, n, &name, 1);
        if (rc)
            return rc;
        e = lookup(c, key);
        if (!e)
            return SG_ENOMEM;
    }
    *out = &e->k;
    return 0;
}

void sg_sass_cache_stats(const sg_sass_cache_t *c, uint32_t *runs, uint32_t *kernels)
{
    if (runs)
        *runs = c ? c->runs : 0;
    if (kernels)
        *kernels = c ? c->kernels : 0;
}

/* ---- ranges --------------------------------------------------------------------------- */

/* Value range of every atom over a launch (lo[a]..hi[a]). */
typedef struct {
    int64_t lo[SG_SASS_ATOM_COUNT], hi[SG_SASS_ATOM_COUNT];
} box_t;

static void launch_box(box_t *b, const uint32_t grid[3], const uint32_t block[3])
{
    b->lo[SG_SASS_ATOM_NONE] = b->hi[SG_SASS_ATOM_NONE] = 1;
    for (int d = 0; d < 3; d++) {
        b->lo[SG_SASS_TID_X + d] = 0, b->hi[SG_SASS_TID_X + d] = (int64_t)block[d] - 1;
        b->lo[SG_SASS_CTAID_X + d] = 0, b->hi[SG_SASS_CTAID_X + d] = (int64_t)grid[d] - 1;
        b->lo[SG_SASS_NTID_X + d] = b->hi[SG_SASS_NTID_X + d] = block[d];
        b->lo[SG_SASS_NCTAID_X + d] = b->hi[SG_SASS_NCTAID_X + d] = grid[d];
    }
    /* a grid-stride loop's progress: bounded only by the conditions */
    b->lo[SG_SASS_GRID_K] = b->lo[SG_SASS_LOOP_K] = 0;
    b->hi[SG_SASS_GRID_K] = b->hi[SG_SASS_LOOP_K] = INT64_MAX / 4;
}

/* An affine folded over a box: atoms with one value become constants, the
 * rest stay as coef * atom. Fails on a product of two varying atoms. */
typedef struct {
    __int128 k;
    __int128 c[SG_SASS_ATOM_COUNT];
} linear_t;

static bool fold(const sg_sass_affine_t *f, const box_t *bx, linear_t *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < f->n && i < SG_SASS_MAX_TERMS; i++) {
        uint8_t a = f->t[i].a, b = f->t[i].b;
        if (a >= SG_SASS_ATOM_COUNT || b >= SG_SASS_ATOM_COUNT)
            return false;
        bool va = a && bx->lo[a] != bx->hi[a], vb = b && bx->lo[b] != bx->hi[b];
        __int128 c = f->t[i].coef;
        if (va && vb)
            return false;
        if (a && !va)
            c *= bx->lo[a];
        if (b && !vb)
            c *= bx->lo[b];
        if (va)
            out->c[a] += c;
        else if (vb)
            out->c[b] += c;
        else
            out->k += c;
    }
    return true;
}

static void linear_range(const linear_t *l, const box_t *bx, __int128 *mn, __int128 *mx)
{
    *mn = *mx = l->k;
    for (int a = 1; a < SG_SASS_ATOM_COUNT; a++) {
        if (!l->c[a])
            continue;
        __int128 x = l->c[a] * bx->lo[a], y = l->c[a] * bx->hi[a];
        *mn += x < y ? x : y;
        *mx += x < y ? y : x;
    }
}

static int varying(const linear_t *l, int *atom)
{
    int n = 0;
    for (int a = 1; a < SG_SASS_ATOM_COUNT; a++)
        if (l->c[a]) {
            n++;
            *atom = a;
        }
    return n;
}

/* Does the linear form take every integer between its min and max? One
 * atom with coefficient +-1, or tid.x + (tid.x's range)*ctaid.x. */
static bool contiguous(const linear_t *l, const box_t *bx)
{
    int atom = 0, n = varying(l, &atom);
    if (n == 0)
        return true;
    if (n == 1)
        return l->c[atom] == 1 || l->c[atom] == -1;
    __int128 span = (__int128)bx->hi[SG_SASS_TID_X] - bx->lo[SG_SASS_TID_X] + 1;
    return n == 2 && l->c[SG_SASS_TID_X] == 1 && l->c[SG_SASS_CTAID_X] == span;
}

static __int128 floor_div(__int128 a, __int128 b)
{
    __int128 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static __int128 ceil_div(__int128 a, __int128 b)
{
    return -floor_div(-a, b);
}

/* lhs(v) = c*v + k OP B as bounds on v, intersected into [*lo, *hi]. */
static bool bound_atom(__int128 c, __int128 k, uint8_t op, __int128 B, __int128 *lo, __int128 *hi)
{
    /* in terms of c*v: c*v <= M, c*v >= m, or both (EQ) */
    bool up = false, down = false;
    __int128 M = 0, m = 0;
    switch (op) {
    case SG_SASS_LT: up = true, M = B - k - 1; break;
    case SG_SASS_LE: up = true, M = B - k; break;
    case SG_SASS_GT: down = true, m = B - k + 1; break;
    case SG_SASS_GE: down = true, m = B - k; break;
    case SG_SASS_EQ: up = down = true, M = m = B - k; break;
    default: return false;
    }
    if (c < 0) {
        /* c*v <= M  <=>  (-c)*v >= -M */
        bool t = up;
        up = down, down = t;
        __int128 tm = M;
        M = -m, m = -tm;
        c = -c;
    }
    if (up) {
        __int128 v = floor_div(M, c);
        if (v < *hi)
            *hi = v;
    }
    if (down) {
        __int128 v = ceil_div(m, c);
        if (v > *lo)
            *lo = v;
    }
    return true;
}

static bool compare(__int128 x, uint8_t op, __int128 B)
{
    switch (op) {
    case SG_SASS_LT: return x < B;
    case SG_SASS_LE: return x <= B;
    case SG_SASS_GT: return x > B;
    case SG_SASS_GE: return x >= B;
    case SG_SASS_EQ: return x == B;
    default: return x != B;
    }
}

int sg_sass_access_extent(const sg_sass_access_t *a, const uint8_t *params, size_t params_len,
                          const uint32_t grid[3], const uint32_t block[3], sg_sass_extent_t *out)
{
    if (!a || !out || !grid || !block)
        return SG_EINVAL;
    memset(out, 0, sizeof *out);
    if (a->base < 0 || !a->index_known || !params || (uint64_t)a->base + 8 > params_len ||
        a->n_conds > SG_SASS_MAX_CONDS)
        return SG_ENOENT;
    for (int d = 0; d < 3; d++)
        if (!grid[d] || !block[d])
            return 0; /* an empty launch touches nothing */
    __int128 bound[SG_SASS_MAX_CONDS];
    for (uint32_t i = 0; i < a->n_conds; i++) {
        const sg_sass_cond_t *c = &a->conds[i];
        if (c->param < 0) {
            bound[i] = c->rhs_const;
            continue;
        }
        if ((uint64_t)c->param + c->width > params_len)
            return SG_ENOENT; /* the bound is not in the bytes given */
        if (c->width == 8)
            bound[i] = c->uns ? (__int128)sg_rd64(params + c->param)
                              : (__int128)(int64_t)sg_rd64(params + c->param);
        else
            bound[i] = c->uns ? (__int128)sg_rd32(params + c->param)
                              : (__int128)(int32_t)sg_rd32(params + c->param);
    }
    box_t bx;
    launch_box(&bx, grid, block);
    bool used[SG_SASS_MAX_CONDS] = {false};
    /* conditions on no varying index, and on a single one, narrow the box
     * (twice: a cap can make another condition single-atom) */
    for (int round = 0; round < 2; round++)
        for (uint32_t i = 0; i < a->n_conds; i++) {
            linear_t l;
            int atom = 0;
            if (used[i] || !fold(&a->conds[i].lhs, &bx, &l))
                continue;
            int nv = varying(&l, &atom);
            if (nv == 0) {
                if (!compare(l.k, a->conds[i].op, bound[i]))
                    return 0; /* no thread runs it */
                used[i] = true;
            } else if (nv == 1 && atom >= SG_SASS_TID_X && atom <= SG_SASS_CTAID_Z) {
                __int128 lo = bx.lo[atom], hi = bx.hi[atom];
                if (!bound_atom(l.c[atom], l.k, a->conds[i].op, bound[i], &lo, &hi))
                    continue;
                if (hi < lo)
                    return 0;
                bx.lo[atom] = (int64_t)lo;
                bx.hi[atom] = (int64_t)hi;
                used[i] = true;
            }
        }
    linear_t idx;
    if (!fold(&a->index, &bx, &idx))
        return SG_ENOENT;
    /* G: the index's varying part over its gcd-free scale s, which
     * conditions of the form G + k OP B bound */
    __int128 s = 0;
    for (int t = 1; t < SG_SASS_ATOM_COUNT; t++)
        if (idx.c[t]) {
            __int128 v = idx.c[t] < 0 ? -idx.c[t] : idx.c[t];
            while (v) {
                __int128 r = s % v;
                s = v;
                v = r;
            }
        }
    linear_t G = idx;
    G.k = 0;
    __int128 gmin = 0, gmax = 0, imin, imax;
    bool capped = false;
    if (s > 0) {
        for (int t = 1; t < SG_SASS_ATOM_COUNT; t++)
            G.c[t] /= s;
        linear_range(&G, &bx, &gmin, &gmax);
        for (uint32_t i = 0; i < a->n_conds; i++) {
            linear_t l;
            if (used[i] || !fold(&a->conds[i].lhs, &bx, &l))
                continue;
            bool same = true;
            for (int t = 1; t < SG_SASS_ATOM_COUNT; t++)
                same &= l.c[t] == G.c[t];
            __int128 lo = gmin, hi = gmax;
            if (!same || !bound_atom(1, l.k, a->conds[i].op, bound[i], &lo, &hi))
                continue;
            gmin = lo, gmax = hi;
            used[i] = capped = true;
        }
        if (gmax < gmin)
            return 0;
        imin = idx.k + s * gmin;
        imax = idx.k + s * gmax;
    } else {
        imin = imax = idx.k;
    }
    bool exact = a->conditions_exact, dense;
    for (uint32_t i = 0; i < a->n_conds; i++)
        exact &= used[i];
    if (capped)
        exact &= contiguous(&G, &bx);
    /* dense: the index steps through G's contiguous values by s <= width */
    dense = exact && (s == 0 || (contiguous(&G, &bx) && s <= a->width));
    if (a->scaled) {
        /* the index times a stride word */
        if ((uint64_t)a->scale_param + a->scale_width > params_len ||
            (a->scale_width != 4 && a->scale_width != 8))
            return SG_ENOENT;
        __int128 k = a->scale_width == 8 ? (__int128)(int64_t)sg_rd64(params + a->scale_param)
                                         : (__int128)(int32_t)sg_rd32(params + a->scale_param);
        __int128 u = imin * k, v = imax * k;
        imin = u < v ? u : v;
        imax = u < v ? v : u;
        exact = dense = false;
    }
    uint64_t ptr = sg_rd64(params + a->base);
    if (imin < -(__int128)INT64_MAX || imax > (__int128)INT64_MAX)
        return SG_ENOENT;
    out->lo = ptr + (uint64_t)(int64_t)imin;
    out->hi = ptr + (uint64_t)(int64_t)imax + a->width;
    out->exact = exact;
    out->dense = dense;
    return 0;
}

static size_t fmt_affine(const sg_sass_affine_t *f, char *b, size_t len)
{
    size_t o = 0;
    if (f->n == 0)
        return (size_t)snprintf(b, len, "0");
    for (uint32_t i = 0; i < f->n && i < SG_SASS_MAX_TERMS; i++) {
        int64_t c = f->t[i].coef;
        const char *sign = i == 0 ? (c < 0 ? "-" : "") : (c < 0 ? " - " : " + ");
        uint64_t mag = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
        int w;
        if (f->t[i].a == SG_SASS_ATOM_NONE)
            w = snprintf(b + o, o < len ? len - o : 0, "%s%llu", sign, (unsigned long long)mag);
        else if (f->t[i].b == SG_SASS_ATOM_NONE && mag == 1)
            w = snprintf(b + o, o < len ? len - o : 0, "%s%s", sign, sg_sass_atom_name(f->t[i].a));
        else if (f->t[i].b == SG_SASS_ATOM_NONE)
            w = snprintf(b + o, o < len ? len - o : 0, "%s%llu*%s", sign, (unsigned long long)mag,
                         sg_sass_atom_name(f->t[i].a));
        else if (mag == 1)
            w = snprintf(b + o, o < len ? len - o : 0, "%s%s*%s", sign,
                         sg_sass_atom_name(f->t[i].a), sg_sass_atom_name(f->t[i].b));
        else
            w = snprintf(b + o, o < len ? len - o : 0, "%s%llu*%s*%s", sign,
                         (unsigned long long)mag, sg_sass_atom_name(f->t[i].a),
                         sg_sass_atom_name(f->t[i].b));
        if (w > 0)
            o += (size_t)w;
    }
    return o;
}

void sg_sass_access_format(const sg_sass_access_t *a, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    buf[0] = 0;
    if (!a)
        return;
    static const char *kinds[] = {"?", "load", "store", "?", "atomic"};
    size_t o = (size_t)snprintf(buf, len, "0x%04x %s %s %uB", a->pc, a->op,
                                a->kind <= 4 ? kinds[a->kind] : "?", a->width);
    char idx[256];
    if (a->base >= 0 || a->symbol[0]) {
        if (a->base >= 0)
            o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, " P[0x%x]",
                                  (unsigned)a->base);
        else
            o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, " &%s",
                                  a->symbol);
        if (a->index_known) {
            fmt_affine(&a->index, idx, sizeof idx);
            char scale[32] = "";
            if (a->scaled)
                snprintf(scale, sizeof scale, "P[0x%x]%s*", (unsigned)a->scale_param,
                         a->scale_width == 8 ? ".64" : "");
            o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, " + %s(%s)%s",
                                  scale, idx, a->index_32bit ? " [32-bit index]" : "");
            static const char *ops[] = {"<", "<=", ">", ">=", "==", "!="};
            for (uint32_t i = 0; i < a->n_conds && i < SG_SASS_MAX_CONDS; i++) {
                const sg_sass_cond_t *c = &a->conds[i];
                fmt_affine(&c->lhs, idx, sizeof idx);
                char rhs[48];
                if (c->param >= 0)
                    snprintf(rhs, sizeof rhs, "P[0x%x]%s%s", (unsigned)c->param,
                             c->width == 8 ? ".64" : "", c->uns ? " (unsigned)" : "");
                else
                    snprintf(rhs, sizeof rhs, "%lld%s", (long long)c->rhs_const,
                             c->uns ? " (unsigned)" : "");
                o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0,
                                      "%s %s %s %s", i ? " and" : " if", idx,
                                      c->op < 6 ? ops[c->op] : "?", rhs);
            }
            if (!a->conditions_exact)
                o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0,
                                      " [and conditions not known]");
        }
    }
    if (a->reason[0])
        snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, " %s%s",
                 a->base >= 0 || a->symbol[0] ? "; " : "unknown: ", a->reason);
}
