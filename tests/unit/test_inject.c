/* Tests of libsgcap's interception mechanics that need no GPU.
 *
 * Every test runs a probe program (tests/inject/) in a child process, with
 * and without LD_PRELOAD=libsgcap.so, against a fake libcuda.so.1 that
 * records which exported function was really called. They check symbol
 * identification (exact exported names, legacy vs _ptsz, old vs new ABI),
 * pass-through of unknown names, dlsym handle semantics, the trace, the
 * reentrancy guard and relaxed capture mode, SGCAP_MODE=off, fork, threads,
 * programs linked with -lcuda/-lnvrtc, and programs without any driver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIN SGCAP_BINARY_DIR
#define SHIM BIN "/lib/libsgcap.so"
#define DIR BIN "/tests/inject"
#define FAKE DIR "/fake"

typedef struct run {
    int exit_code;
    char out[16384];
    char err[16384];
    char log[262144];
} run_t;

static void slurp(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs argv with the environment changes in env ("NAME=value" sets,
 * "NAME" unsets; NULL-terminated). SGCAP_* and LD_* start unset. */
static void run_prog(run_t *r, const char *const *argv, const char *const *env)
{
    char out[] = "/tmp/sgcap_test_out_XXXXXX";
    char err[] = "/tmp/sgcap_test_err_XXXXXX";
    char log[] = "/tmp/sgcap_test_log_XXXXXX";
    int fo = mkstemp(out), fe = mkstemp(err), fl = mkstemp(log);
    assert_true(fo >= 0 && fe >= 0 && fl >= 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static const char *const clear[] = {
            "LD_PRELOAD", "LD_LIBRARY_PATH", "SGCAP_MODE",   "SGCAP_LOG",
            "SGCAP_DIR",  "SGCAP_LOG_FILE",  "FAKE_REENTER", "CUDA_INJECTION64_PATH",
            NULL};
        for (int i = 0; clear[i]; i++)
            unsetenv(clear[i]);
        for (int i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq == NULL) {
                unsetenv(env[i]);
            } else {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
                if (strcmp(eq + 1, "@LOG") == 0)
                    setenv(name, log, 1);
                else
                    setenv(name, eq + 1, 1);
            }
        }
        dup2(fo, 1);
        dup2(fe, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    slurp(out, r->out, sizeof r->out);
    slurp(err, r->err, sizeof r->err);
    slurp(log, r->log, sizeof r->log);
    close(fo);
    close(fe);
    close(fl);
    unlink(out);
    unlink(err);
    unlink(log);
}

static void expect_line(const char *text, const char *line)
{
    if (strstr(text, line) == NULL) {
        print_error("expected to find \"%s\" in:\n%s\n", line, text);
        fail();
    }
}

static void expect_no(const char *text, const char *needle)
{
    if (strstr(text, needle) != NULL) {
        print_error("did not expect \"%s\" in:\n%s\n", needle, text);
        fail();
    }
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static const char *const PROBE_LOOKUP[] = {DIR "/inject_probe", "lookup", NULL};
static const char *const PROBE_CAPTURE[] = {DIR "/inject_probe", "capture", NULL};

static void test_lookup_through_shim(void **state)
{
    static run_t r;
    const char *env[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, NULL};
    run_prog(&r, PROBE_LOOKUP, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "gpa=sgcap\n");
    expect_line(r.out, "dlsym_repeat_same=1\n");
    expect_line(r.out, "null_status_ok=1\n");
    expect_line(r.out, "legacy=sgcap ptsz=sgcap distinct=1\n");
    expect_line(r.out, "legacy_reaches=cuLaunchKernel\n");
    expect_line(r.out, "ptsz_reaches=cuLaunchKernel_ptsz\n");
    expect_line(r.out, "alloc_v1=sgcap reaches=cuMemAlloc ptr=0x1000\n");
    expect_line(r.out, "alloc_v2=sgcap reaches=cuMemAlloc_v2 ptr=0x7f0000001000\n");
    expect_line(r.out, "unknown_unchanged=1\n");
    expect_line(r.out, "internal_unchanged=1\n");
    expect_line(r.out, "missing: result=0 pfn_null=1 not_found=1\n");
    expect_line(r.out, "gpa_self=sgcap same_as_dlsym=1\n");
    expect_line(r.out, "gpa_v1=sgcap\n");
    expect_line(r.out, "dlsym_handle=sgcap\n");
    expect_line(r.out, "dlsym_handle_reaches=cuLaunchKernel\n");
    expect_line(r.out, "dlsym_repeat_handle_same=1\n");
    expect_line(r.out, "dlsym_other=cuda\n");
    expect_line(r.out, "rtld_next_puts=1\n");
    expect_line(r.out, "rtld_default_missing=1\n");
    /* info level: the start-up line, and the one problem: cuInternalThing's
     * pointer is not an exported symbol, so it cannot be identified. */
    assert_int_equal(count_of(r.err, "sgcap["), 2);
    expect_line(r.err, "active in");
    expect_line(r.err, "is not an exported symbol: passed through unobserved");
}

static void test_lookup_without_shim(void **state)
{
    static run_t r;
    const char *env[] = {"LD_LIBRARY_PATH=" FAKE, NULL};
    run_prog(&r, PROBE_LOOKUP, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "gpa=cuda\n");
    expect_line(r.out, "legacy=cuda ptsz=cuda distinct=1\n");
    expect_line(r.out, "ptsz_reaches=cuLaunchKernel_ptsz\n");
    assert_string_equal(r.err, "");
}

/* SGCAP_MODE=off (and an unknown mode) is pure pass-through: the program's
 * output is byte for byte what it is without the shim. */
static void test_mode_off_is_pass_through(void **state)
{
    static run_t plain, off, bogus;
    const char *env_plain[] = {"LD_LIBRARY_PATH=" FAKE, NULL};
    const char *env_off[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_MODE=off", NULL};
    const char *env_bogus[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_MODE=fast",
                               NULL};
    run_prog(&plain, PROBE_LOOKUP, env_plain);
    run_prog(&off, PROBE_LOOKUP, env_off);
    run_prog(&bogus, PROBE_LOOKUP, env_bogus);
    assert_int_equal(off.exit_code, plain.exit_code);
    assert_string_equal(off.out, plain.out);
    assert_string_equal(off.err, "");
    assert_int_equal(bogus.exit_code, plain.exit_code);
    assert_string_equal(bogus.out, plain.out);
    expect_line(bogus.err, "SGCAP_MODE=fast not understood");
}

static void test_capture_trace(void **state)
{
    static run_t r;
    const char *env[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_LOG=trace",
                         "SGCAP_LOG_FILE=@LOG", NULL};
    run_prog(&r, PROBE_CAPTURE, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "fork_join_ok=1 graph=0x6001\n");
    expect_line(r.out, "ptsz_capture_ok=1 graph=0x6002\n");
    expect_line(r.out, "eager_ok=1\n");
    /* The shim's own capture queries ran in relaxed mode (2) and the
     * program's mode (global, 0) was restored afterwards. */
    expect_line(r.out, "query_mode_seen=2\n");
    expect_line(r.out, "mode_after=0\n");
    /* Everything went to the log file, nothing to stdout or stderr. */
    expect_no(r.out, "sgcap");
    expect_no(r.err, "trace");
    const char *t = r.log;
    expect_line(t, "trace fn=cuGetProcAddress_v2 symbol=cuLaunchKernel version=12000 flags=0x2 -> "
                   "cuLaunchKernel_ptsz wrapped result=0");
    expect_line(t, "trace fn=cuStreamBeginCapture_v2 stream=0x1000 capture=active id=1 result=0 "
                   "op=begin mode=0");
    expect_line(t, "trace fn=cuEventRecord stream=0x1000 capture=active id=1 result=0 event=0xe1");
    expect_line(t, "trace fn=cuStreamWaitEvent stream=0x2000 capture=none result=0 event=0xe1");
    expect_line(t, "trace fn=cuLaunchKernel stream=0x1000 capture=active id=1 result=0 func=(nil) "
                   "grid=1,1,1 block=32,1,1 smem=0");
    expect_line(t, "trace fn=cuStreamEndCapture stream=0x1000 capture=none result=0 op=end "
                   "graph=0x6001");
    expect_line(t, "trace fn=cuStreamBeginCapture_v2_ptsz stream=0x2(per-thread) capture=active "
                   "id=2 result=0 op=begin mode=1");
    expect_line(t, "trace fn=cuLaunchKernel_ptsz stream=0x2(per-thread) capture=active id=2 "
                   "result=0 func=(nil) grid=3,1,1");
    expect_line(t, "trace fn=cuStreamEndCapture_ptsz stream=0x2(per-thread) capture=none result=0");
    expect_line(t, "trace fn=cuLaunchKernel stream=0x1(legacy) capture=none result=0 func=(nil) "
                   "grid=4,1,1");
}

/* Without tracing, calls outside any capture take the fast path: no lines. */
static void test_info_level_is_quiet(void **state)
{
    static run_t r;
    const char *env[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_LOG_FILE=@LOG", NULL};
    run_prog(&r, PROBE_CAPTURE, env);
    assert_int_equal(r.exit_code, 0);
    expect_no(r.log, "trace");
    assert_int_equal(count_of(r.log, "sgcap["), 1);
    assert_string_equal(r.err, "");
}

/* A CUDA call that reaches a wrapper while the shim is making its own call
 * (here: the fake driver calls the exported cuEventRecord from inside the
 * capture-status query the trace makes) goes straight to the driver. */
static void test_reentrant_call_goes_straight_through(void **state)
{
    static run_t r;
    const char *env[] = {"LD_PRELOAD=" SHIM,    "LD_LIBRARY_PATH=" FAKE, "SGCAP_LOG=trace",
                         "SGCAP_LOG_FILE=@LOG", "FAKE_REENTER=1",        NULL};
    run_prog(&r, PROBE_CAPTURE, env);
    assert_int_equal(r.exit_code, 0);
    int reentered = 0, records = 0;
    const char *p = strstr(r.out, "records_in_driver=");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "records_in_driver=%d reentered=%d", &records, &reentered), 2);
    assert_true(reentered > 0);
    assert_int_equal(records, 2 + reentered); /* the program's two, plus the inner ones */
    expect_no(r.log, "event=0x99");
    assert_int_equal(count_of(r.log, "fn=cuEventRecord "), 2);
}

static void test_threads(void **state)
{
    static run_t r;
    const char *argv[] = {DIR "/inject_probe", "threads", NULL};
    const char *env[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, NULL};
    run_prog(&r, argv, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "launches=80000,80000\n");
}

static void test_fork_leaves_working_child(void **state)
{
    static run_t r;
    const char *argv[] = {DIR "/inject_probe", "fork", NULL};
    const char *env[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_LOG=trace",
                         "SGCAP_LOG_FILE=@LOG", NULL};
    run_prog(&r, argv, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "fork_child_exit=0\n");
    /* Both processes traced, each with its own pid. */
    assert_true(count_of(r.log, "fn=cuLaunchKernel ") >= 2);
}

/* Names in directory d (not . and ..), at most n, into names; how many. */
static int list_dir(const char *d, char names[][256], int n)
{
    struct dirent **list = NULL;
    int m = scandir(d, &list, NULL, alphasort), k = 0; /* (DIR is a macro here) */
    assert_true(m >= 0);
    for (int i = 0; i < m; i++) {
        if (strcmp(list[i]->d_name, ".") && strcmp(list[i]->d_name, "..") && k < n)
            snprintf(names[k++], 256, "%s", list[i]->d_name);
        free(list[i]);
    }
    free(list);
    return k;
}

/* SGCAP_LOG_FILE opens on the first line logged (issue 16): a process tree
 * in which nobody touches CUDA leaves no file; "%p" is the pid of the
 * process that writes, so a fork child writes a file of its own. */
static void test_log_file_opened_lazily(void **state)
{
    static run_t r;
    char d[] = "/tmp/sgcap_test_logs_XXXXXX", env_file[512], names[8][256];
    char path[1024], text[4096], pid_tag[320];
    assert_non_null(mkdtemp(d));
    snprintf(env_file, sizeof env_file, "SGCAP_LOG_FILE=%s/log.%%p", d);
    /* a shell running two programs, none of them using CUDA */
    const char *sh[] = {"/bin/sh", "-c", "/bin/true; /bin/echo quiet", NULL};
    const char *env[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, env_file, NULL};
    run_prog(&r, sh, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "quiet\n");
    assert_int_equal(list_dir(d, names, 8), 0);
    /* a program that does: one file, named by its pid, with its lines */
    run_prog(&r, PROBE_LOOKUP, env);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(list_dir(d, names, 8), 1);
    assert_int_equal(strncmp(names[0], "log.", 4), 0);

    snprintf(path, sizeof path, "%s/%.250s", d, names[0]);
    slurp(path, text, sizeof text);
    expect_line(text, "active in");

    snprintf(pid_tag, sizeof pid_tag, "sgcap[%.250s]: ", names[0] + 4);
    expect_line(text, pid_tag);
    assert_string_equal(r.err, "");
    unlink(path);
    /* a parent and its fork child, both tracing: two files, each its own */
    const char *fork_argv[] = {DIR "/inject_probe", "fork", NULL};
    const char *env_trace[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_LOG=trace",
                               env_file, NULL};
    run_prog(&r, fork_argv, env_trace);
    assert_int_equal(r.exit_code, 0);
    int n = list_dir(d, names, 8);
    assert_int_equal(n, 2);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%.250s", d, names[i]);
        slurp(path, text, sizeof text);
        snprintf(pid_tag, sizeof pid_tag, "sgcap[%.250s]: ", names[i] + 4);
        expect_line(text, pid_tag);
        expect_line(text, "fn=cuLaunchKernel ");
        unlink(path);
    }
    /* a file that cannot be opened: said on stderr, lines go there */
    const char *env_bad[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE,
                             "SGCAP_LOG_FILE=/nonexistent-dir/log.%p", NULL};
    run_prog(&r, PROBE_LOOKUP, env_bad);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.err, "SGCAP_LOG_FILE /nonexistent-dir/log.");
    expect_line(r.err, "logging to stderr");
    expect_line(r.err, "active in");
    rmdir(d);
}

/* Programs linked with -lcuda / -lnvrtc bind to libsgcap's definitions,
 * including NVRTC's versioned references. */
static void test_direct_driver_calls(void **state)
{
    static run_t r, plain;
    const char *argv[] = {DIR "/inject_probe_direct", NULL};
    const char *env[] = {"LD_PRELOAD=" SHIM, "SGCAP_LOG=trace", "SGCAP_LOG_FILE=@LOG", NULL};
    run_prog(&r, argv, env);
    assert_int_equal(r.exit_code, 0);
    expect_line(r.out, "begin=0\n");
    expect_line(r.out, "launch=0 reaches=cuLaunchKernel\n");
    expect_line(r.out, "end=0 reaches=cuStreamEndCapture\n");
    expect_line(r.out, "alloc=0 reaches=cuMemAlloc_v2\n");
    expect_line(r.out, "nvrtc_create=0 reaches=nvrtcCreateProgram\n");
    expect_line(r.out, "nvrtc_compile=0 reaches=nvrtcCompileProgram\n");
    expect_line(r.out, "bound_launch=sgcap bound_nvrtc=sgcap\n");
    expect_line(r.log, "trace fn=cuStreamBeginCapture_v2 stream=0x3000 capture=active id=1");
    expect_line(r.log, "trace fn=cuLaunchKernel stream=0x3000 capture=active id=1 result=0");
    expect_line(r.log, "trace fn=cuMemAlloc_v2 result=0 ptr=0x7f0000001000 size=64");
    expect_line(r.log, "trace fn=nvrtcCreateProgram result=0 prog=0x4242 name=k.cu");
    expect_line(r.log, "trace fn=nvrtcCompileProgram result=0 prog=0x4242 options=0");

    const char *env_plain[] = {NULL};
    run_prog(&plain, argv, env_plain);
    assert_int_equal(plain.exit_code, 0);
    expect_line(plain.out, "bound_launch=cuda bound_nvrtc=nvrtc\n");
}

/* No libcuda at all: the program behaves exactly as without sgcap. */
static void test_no_driver(void **state)
{
    static run_t plain, shim;
    const char *env_plain[] = {NULL};
    const char *env_shim[] = {"LD_PRELOAD=" SHIM, "SGCAP_LOG=trace", NULL};
    run_prog(&plain, PROBE_LOOKUP, env_plain);
    run_prog(&shim, PROBE_LOOKUP, env_shim);
    assert_int_equal(plain.exit_code, 3);
    assert_int_equal(shim.exit_code, plain.exit_code);
    assert_string_equal(shim.out, plain.out);
    assert_string_equal(shim.err, "");
}

/* A real CUDA runtime program (static and shared cudart) on this GPU-less
 * machine: same output and exit code with and without the shim. */
static void check_cuda_program(const char *path)
{
    static run_t plain, shim;
    if (access(path, X_OK) != 0) skip();
    const char *argv[] = {path, NULL};
    const char *env_plain[] = {NULL};
    const char *env_shim[] = {"LD_PRELOAD=" SHIM, NULL};
    run_prog(&plain, argv, env_plain);
    run_prog(&shim, argv, env_shim);
    assert_int_equal(shim.exit_code, plain.exit_code);
    assert_string_equal(shim.out, plain.out);
    assert_string_equal(shim.err, plain.err);
}

static void test_cuda_program_static_cudart(void **state)
{
    check_cuda_program(DIR "/inject_cuda_hello_static");
}

static void test_cuda_program_shared_cudart(void **state)
{
    check_cuda_program(DIR "/inject_cuda_hello_shared");
}

/* The real static cudart against the fake driver: it finds the driver with
 * dlopen + dlsym("cuGetProcAddress_v2") and fetches each entry point in both
 * flavours (4000/default and 7000/per-thread for cuLaunchKernel); every one
 * we wrap comes back wrapped, and the program's output does not change. */
static void test_static_cudart_lookups(void **state)
{
    static run_t plain, shim;
    const char *path = DIR "/inject_cuda_hello_static";
    if (access(path, X_OK) != 0) skip();
    const char *argv[] = {path, NULL};
    const char *env_plain[] = {"LD_LIBRARY_PATH=" FAKE, NULL};
    const char *env_shim[] = {"LD_PRELOAD=" SHIM, "LD_LIBRARY_PATH=" FAKE, "SGCAP_LOG=trace",
                              "SGCAP_LOG_FILE=@LOG", NULL};
    run_prog(&plain, argv, env_plain);
    run_prog(&shim, argv, env_shim);
    assert_int_equal(shim.exit_code, plain.exit_code);
    assert_string_equal(shim.out, plain.out);
    const char *t = shim.log;
    expect_line(t, "symbol=cuGetProcAddress version=12000 flags=0 -> cuGetProcAddress_v2 wrapped");
    expect_line(t, "symbol=cuLaunchKernel version=4000 flags=0 -> cuLaunchKernel wrapped");
    expect_line(t, "symbol=cuLaunchKernel version=7000 flags=0x2 -> cuLaunchKernel_ptsz wrapped");
    expect_line(t, "symbol=cuStreamBeginCapture version=10010 flags=0x2 -> "
                   "cuStreamBeginCapture_v2_ptsz wrapped");
    expect_line(t, "symbol=cuMemAlloc version=3020 flags=0 -> cuMemAlloc_v2 wrapped");
}

/* CUDA_INJECTION64_PATH: the driver dlopens the library and calls
 * InitializeInjection, which must exist, be visible and return 1. */
static void test_initialize_injection(void **state)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        void *h = dlopen(SHIM, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) _exit(10);
        int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
        if (init == NULL) _exit(11);
        _exit(init() == 1 ? 0 : 12);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_through_shim),
        cmocka_unit_test(test_lookup_without_shim),
        cmocka_unit_test(test_mode_off_is_pass_through),
        cmocka_unit_test(test_capture_trace),
        cmocka_unit_test(test_info_level_is_quiet),
        cmocka_unit_test(test_reentrant_call_goes_straight_through),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fork_leaves_working_child),
        cmocka_unit_test(test_log_file_opened_lazily),
        cmocka_unit_test(test_direct_driver_calls),
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_cuda_program_static_cudart),
        cmocka_unit_test(test_cuda_program_shared_cudart),
        cmocka_unit_test(test_static_cudart_lookups),
        cmocka_unit_test(test_initialize_injection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
