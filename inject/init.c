/* Start-up, configuration, logging, guards and fork handling of libsgcap.
 *
 * Nothing here calls CUDA at start-up, exits, aborts or writes to stdout. The
 * constructor only reads the environment and finds the real dlsym; the same
 * initialisation runs lazily from whichever entry point comes first, since
 * other libraries' constructors may call dlsym before ours runs. */
#include "inject/internal.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

atomic_int sg_watch_hot;
atomic_int sg_watch_cold;
atomic_int sg_active_captures_count;
__thread int sg_tls_depth __attribute__((tls_model("initial-exec")));
int sg_inject_pid;

static sg_inject_config_t sg_config = {.mode = SG_MODE_CAPTURE, .log = SG_LOG_INFO};
static int sg_log_fd = 2;
/* SGCAP_LOG_FILE is opened by the first line logged, not at start-up: a
 * process of the tree that never touches CUDA logs nothing and gets no
 * file. "%p" is expanded then, with the pid of the process writing, and a
 * fork child opens its own file. */
enum { SG_LOG_STDERR, SG_LOG_UNOPENED, SG_LOG_OPENING, SG_LOG_OPEN };
static atomic_int sg_log_state = SG_LOG_STDERR;
static char sg_log_template[PATH_MAX];
static atomic_int sg_init_state; /* 0 not started, 1 running, 2 done */
static pthread_t sg_init_thread;
static atomic_int sg_announced;

void sg_table_init(void) SG_HIDDEN;

/* ---- the log file ---- */

/* SGCAP_LOG_FILE with "%p" replaced by our pid. */
static void sg_log_path(char *path, size_t size)
{
    size_t o = 0;
    for (const char *s = sg_log_template; *s != '\0' && o + 24 < size; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            o += (size_t)snprintf(path + o, size - o, "%d", (int)getpid());
            s++;
        } else {
            path[o++] = *s;
        }
    }
    path[o] = '\0';
}

/* Open the log file if it is configured and not open yet; one thread opens
 * it, the others wait the moment that takes. */
static void sg_log_open(void)
{
    int expected = SG_LOG_UNOPENED;
    if (!atomic_compare_exchange_strong(&sg_log_state, &expected, SG_LOG_OPENING)) {
        while (atomic_load(&sg_log_state) == SG_LOG_OPENING)
            sched_yield();
        return;
    }
    char path[PATH_MAX];
    sg_log_path(path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644), err = errno;
    sg_log_fd = fd >= 0 ? fd : 2;
    atomic_store(&sg_log_state, fd >= 0 ? SG_LOG_OPEN : SG_LOG_STDERR);
    if (fd < 0)
        sg_inject_log(SG_LOG_INFO, "SGCAP_LOG_FILE %.100s: %s; logging to stderr", path,
                      strerror(err));
}

/* ---- configuration ---- */
static void sg_config_read(void)
{
    const char *mode = getenv("SGCAP_MODE");
    const char *log = getenv("SGCAP_LOG");
    const char *dir = getenv("SGCAP_DIR");
    const char *file = getenv("SGCAP_LOG_FILE");
    char problem[256] = "";

    if (log == NULL || log[0] == '\0' || strcmp(log, "info") == 0)
        sg_config.log = SG_LOG_INFO;
    else if (strcmp(log, "off") == 0 || strcmp(log, "0") == 0)
        sg_config.log = SG_LOG_OFF;
    else if (strcmp(log, "trace") == 0)
        sg_config.log = SG_LOG_TRACE;
    else
        snprintf(problem, sizeof problem, "SGCAP_LOG=%.40s not understood (off|info|trace): info",
                 log);

    if (mode == NULL || mode[0] == '\0' || strcmp(mode, "capture") == 0)
        sg_config.mode = SG_MODE_CAPTURE;
    else if (strcmp(mode, "off") == 0)
        sg_config.mode = SG_MODE_OFF;
    else if (strcmp(mode, "optimize") == 0)
        sg_config.mode = SG_MODE_OPTIMIZE;
    else {
        /* An unknown mode must not change what the program does. */
        sg_config.mode = SG_MODE_OFF;
        snprintf(problem, sizeof problem,
                 "SGCAP_MODE=%.40s not understood (off|capture|optimize): off", mode);
    }

    snprintf(sg_config.dir, sizeof sg_config.dir, "%s",
             dir != NULL && dir[0] != '\0' ? dir : "./sgcap-out");

    sg_config.log_file[0] = '\0';
    if (file != NULL && file[0] != '\0' && sg_config.log != SG_LOG_OFF) {
        snprintf(sg_log_template, sizeof sg_log_template, "%s", file);
        sg_log_path(sg_config.log_file, sizeof sg_config.log_file);
        atomic_store(&sg_log_state, SG_LOG_UNOPENED);
    }
    if (problem[0] != '\0') sg_inject_log(SG_LOG_INFO, "%s", problem);
}

const sg_inject_config_t *sg_inject_config(void)
{
    sg_inject_init();
    return &sg_config;
}

int sg_inject_substituting(void)
{
    return sg_config.mode != SG_MODE_OFF;
}

/* ---- logging ---- */
void sg_inject_log(sg_log_level_t level, const char *fmt, ...)
{
    if (level == SG_LOG_OFF || sg_config.log < level) return;
    char line[1024];
    int n = snprintf(line, sizeof line, "sgcap[%d]: ", sg_inject_pid ? sg_inject_pid : getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    int saved_errno = errno; /* the program must never see our errno */
    int log_state = atomic_load(&sg_log_state);
    if (log_state == SG_LOG_UNOPENED || log_state == SG_LOG_OPENING) sg_log_open();
    for (size_t off = 0; off < len;) {
        ssize_t w = write(sg_log_fd, line + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    errno = saved_errno;
}

/* Log lines are single write(2)s and the shim holds no lock across a call
 * into the program or the driver, so only per-process state needs resetting. */
static void sg_atfork_child(void)
{
    sg_inject_pid = (int)getpid();
    /* Stream captures do not survive fork; the child starts with none. */
    atomic_store(&sg_active_captures_count, 0);
    sg_tls_depth = 0;
    sg_inject_observers_reset_after_fork();
    /* "%p": the child's lines go to a file of its own pid (and a file
     * another thread was opening at the fork is opened again here) */
    int log_state = atomic_load(&sg_log_state);
    if (log_state == SG_LOG_OPENING ||
        (log_state == SG_LOG_OPEN && strstr(sg_log_template, "%p") != NULL)) {
        if (log_state == SG_LOG_OPEN) close(sg_log_fd);
        sg_log_fd = 2;
        atomic_store(&sg_log_state, SG_LOG_UNOPENED);
    }
}

void sg_inject_announce(void)
{
    if (atomic_exchange(&sg_announced, 1) != 0) return;
    static const char *const modes[] = {"off", "capture", "optimize"};
    char exe[256] = "?";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    sg_inject_log(SG_LOG_INFO, "sgcap %s active in %s (mode=%s, dir=%s)", SGCAP_VERSION, exe,
                  modes[sg_config.mode], sg_config.dir);
}

/* ---- initialisation ---- */
void sg_inject_init(void)
{
    int state = atomic_load_explicit(&sg_init_state, memory_order_acquire);
    if (SG_LIKELY(state == 2)) return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&sg_init_state, &expected, 1)) {
        /* Re-entered from inside our own initialisation: go on without. */
        if (pthread_equal(sg_init_thread, pthread_self())) return;
        while (atomic_load_explicit(&sg_init_state, memory_order_acquire) != 2)
            sched_yield();
        return;
    }
    sg_init_thread = pthread_self();
    sg_inject_pid = (int)getpid();
    sg_inject_resolve_real_dlsym();
    sg_table_init();
    sg_config_read();
    pthread_atfork(NULL, NULL, sg_atfork_child);
    if (sg_real_dlsym_fn == NULL)
        sg_inject_log(SG_LOG_INFO, "real dlsym not found: CUDA lookups are not intercepted");
    sg_inject_update_watch();
    atomic_store_explicit(&sg_init_state, 2, memory_order_release);
    /* After init is marked done, so the modules may use everything here. */
    if (sg_config.mode != SG_MODE_OFF) {
        for (const sg_inject_module_t *const *m = sg_inject_modules; *m != NULL; m++) {
            sg_inject_enter_own_call();
            int rc = (*m)->start();
            sg_inject_leave_own_call();
            if (rc != 0)
                sg_inject_log(SG_LOG_INFO, "%s module failed to start (%d): tracing only",
                              (*m)->name, rc);
        }
        sg_inject_update_watch();
    }
}

__attribute__((constructor)) static void sg_inject_constructor(void)
{
    sg_inject_init();
}

/* CUDA_INJECTION64_PATH=libsgcap.so: the driver loads us during cuInit and
 * calls this. With LD_PRELOAD as well, the wrappers are already in place.
 * Alone, the program already holds the real entry points, so the driver is
 * observed through CUPTI callbacks instead (cupti.c: capture works; nothing
 * can be substituted, NVRTC is not seen). */
SG_EXPORT int InitializeInjection(void)
{
    sg_inject_init();
    void *global_dlsym = sg_real_dlsym_fn ? sg_real_dlsym_fn(RTLD_DEFAULT, "dlsym") : NULL;
    extern char sg_dlsym_entry[] SG_HIDDEN; /* our dlsym (dlsym.c) */
    int preloaded = global_dlsym == (void *)sg_dlsym_entry;
    if (preloaded) {
        sg_inject_log(SG_LOG_INFO,
                      "loaded through CUDA_INJECTION64_PATH (also preloaded: interception active)");
        return 1;
    }
    char why[4200];
    if (sg_inject_config()->mode == SG_MODE_OFF) return 1;
    if (sg_cupti_attach(why, sizeof why) == 0)
        sg_inject_log(SG_LOG_INFO,
                      "loaded through CUDA_INJECTION64_PATH alone: observing the driver through %s "
                      "(capture works; arguments cannot be changed, NVRTC is not seen: "
                      "LD_PRELOAD=libsgcap.so does both)",
                      why);
    else
        sg_inject_log(SG_LOG_INFO,
                      "loaded through CUDA_INJECTION64_PATH alone: nothing is intercepted (%s); "
                      "use LD_PRELOAD=libsgcap.so",
                      why);
    return 1;
}

/* ---- guards ---- */
void sg_inject_enter_own_call(void)
{
    sg_tls_depth++;
}

void sg_inject_leave_own_call(void)
{
    if (sg_tls_depth > 0) sg_tls_depth--;
}

int sg_inject_in_own_call(void)
{
    return sg_tls_depth > 0;
}

void sg_inject_relaxed_begin(sg_relaxed_t *state)
{
    sg_tls_depth++;
    state->exchanged = 0;
    state->saved = CU_STREAM_CAPTURE_MODE_RELAXED;
    __typeof__(&cuThreadExchangeStreamCaptureMode) exchange =
        SG_REAL(cuThreadExchangeStreamCaptureMode);
    if (exchange != NULL && exchange(&state->saved) == CUDA_SUCCESS) state->exchanged = 1;
}

void sg_inject_relaxed_end(sg_relaxed_t *state)
{
    if (state->exchanged) {
        __typeof__(&cuThreadExchangeStreamCaptureMode) exchange =
            SG_REAL(cuThreadExchangeStreamCaptureMode);
        if (exchange != NULL) exchange(&state->saved);
        state->exchanged = 0;
    }
    if (sg_tls_depth > 0) sg_tls_depth--;
}

CUresult sg_inject_capture_status(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t cid = 0;
    CUresult r = CUDA_ERROR_NOT_FOUND;
    sg_relaxed_t relaxed;
    sg_inject_relaxed_begin(&relaxed);
    __typeof__(&cuStreamGetCaptureInfo_v3) v3 = SG_REAL(cuStreamGetCaptureInfo_v3);
    __typeof__(&cuStreamGetCaptureInfo_v2) v2 = v3 ? NULL : SG_REAL(cuStreamGetCaptureInfo_v2);
    __typeof__(&cuStreamGetCaptureInfo) v1 = (v3 || v2) ? NULL : SG_REAL(cuStreamGetCaptureInfo);
    if (v3 != NULL)
        r = v3(stream, &st, &cid, NULL, NULL, NULL, NULL);
    else if (v2 != NULL)
        r = v2(stream, &st, &cid, NULL, NULL, NULL);
    else if (v1 != NULL)
        r = v1(stream, &st, &cid);
    sg_inject_relaxed_end(&relaxed);
    if (status) *status = st;
    if (id) *id = cid;
    return r;
}
