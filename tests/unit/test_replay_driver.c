/* test_replay_driver.c: replay driven through a driver table its caller
 * fills and a context its caller owns, as the in-app optimizer will use it
 * (replay/driver.h, sg_replay_gpu_open). The table comes from the pretend
 * libcuda of tests/gpu/replay (kernels run on the CPU), opened here by
 * path, with counting wrappers around the calls that matter: every launch
 * must go through the table (replay looks nothing up by itself), and a
 * caller's context must never be retained, released or made current. A
 * bundle from replay_fake_bundle is replayed and validated bit for bit. */
#include <dlfcn.h>
#include <ftw.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "replay/driver.h"
#include "replay/replay.h"

#include "graph/bundle.h"

extern char **environ;

static sg_replay_driver_t fake; /* the pretend driver's own entries */
static struct {
    int retain, release, set_current, launch;
} calls;

static CUresult count_retain(CUcontext *c, CUdevice d)
{
    calls.retain++;
    return fake.cuDevicePrimaryCtxRetain(c, d);
}

static CUresult count_release(CUdevice d)
{
    calls.release++;
    return fake.cuDevicePrimaryCtxRelease(d);
}

static CUresult count_set_current(CUcontext c)
{
    calls.set_current++;
    return fake.cuCtxSetCurrent(c);
}

static CUresult count_launch(CUgraphExec e, CUstream s)
{
    calls.launch++;
    return fake.cuGraphLaunch(e, s);
}

static char bundle[512];
static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    void *h = dlopen(SGCAP_BINARY_DIR "/tests/replay-fake/libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "test_replay_driver: %s\n", dlerror());
        return -1;
    }
    __typeof__(&cuGetProcAddress) get =
        (__typeof__(&cuGetProcAddress))dlsym(h, "cuGetProcAddress_v2");
    if (!get) return -1;
    CUdriverProcAddressQueryResult status;
#define SG_FILL(name, abi)                                                                          \
    if (get(#name, (void **)&fake.name, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) !=     \
            CUDA_SUCCESS ||                                                                        \
        !fake.name) {                                                                              \
        fprintf(stderr, "test_replay_driver: the fake driver lacks %s\n", #name);                  \
        return -1;                                                                                 \
    }
    SG_REPLAY_DRIVER_FUNCS(SG_FILL)
#undef SG_FILL

    snprintf(tmpdir, sizeof tmpdir, "/tmp/sgcap-test-replay-driver-XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(bundle, sizeof bundle, "%s/fake.sgraph", tmpdir);
    char prog[] = SGCAP_BINARY_DIR "/bin/replay_fake_bundle";
    char *argv[] = {prog, bundle, NULL};
    pid_t pid;
    int st = 0;
    if (posix_spawn(&pid, prog, NULL, NULL, argv, environ) != 0 || waitpid(pid, &st, 0) < 0 ||
        !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    if (tmpdir[0]) nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static sg_replay_driver_t counted(void)
{
    sg_replay_driver_t t = fake;
    t.cuDevicePrimaryCtxRetain = count_retain;
    t.cuDevicePrimaryCtxRelease = count_release;
    t.cuCtxSetCurrent = count_set_current;
    t.cuGraphLaunch = count_launch;
    return t;
}

/* Open, restore, run, validate (every buffer must match), bench; every
 * launch goes through the table. */
static void replay_once(const sg_replay_gpu_t *gpu)
{
    char err[1024] = "";
    sg_graph_t *g = NULL;
    sg_diag_t diag;
    memset(&diag, 0, sizeof diag);
    assert_int_equal(sg_bundle_read(bundle, &g, &diag), SG_OK);
    assert_int_equal(sg_replay_device_check(g, gpu, false, NULL, err, sizeof err), SG_OK);
    sg_replay_options_t opt = {0};
    sg_replay_t *r = NULL;
    int rc = sg_replay_open(bundle, g, gpu, &opt, &r, err, sizeof err);
    if (rc) fail_msg("sg_replay_open: %s", err);
    assert_int_equal(sg_replay_restore(r, err, sizeof err), SG_OK);
    int before = calls.launch;
    assert_int_equal(sg_replay_run(r, err, sizeof err), SG_OK);
    assert_int_equal(calls.launch, before + 1);
    sg_buffer_check_t *checks = NULL;
    uint32_t n = 0;
    sg_compare_options_t cmp = {0};
    assert_int_equal(sg_replay_validate(r, &cmp, &checks, &n, err, sizeof err), SG_OK);
    assert_int_equal(n, g->n_buffers);
    uint32_t matched = 0;
    for (uint32_t i = 0; i < n; i++)
        if (checks[i].status == SG_CHECK_MATCH) matched++;
    assert_int_equal(matched, n);
    assert_true(n > 0);
    free(checks);
    /* after validation: launching again changes the buffers */
    double median = 0;
    assert_int_equal(sg_replay_bench(r, 5, 2, &median, NULL, err, sizeof err), SG_OK);
    assert_true(calls.launch >= before + 1 + 5);
    sg_replay_close(r);
    sg_graph_destroy(g);
}

/* The in-app shape: the caller's context, used as it is. */
static void test_caller_context(void **state)
{
    (void)state;
    sg_replay_driver_t t = counted();
    memset(&calls, 0, sizeof calls);
    char err[1024] = "";
    sg_replay_gpu_t *gpu = NULL;
    CUcontext app_ctx = (CUcontext)(uintptr_t)0x1000;
    assert_int_equal(sg_replay_gpu_open(&t, 0, app_ctx, &gpu, err, sizeof err), SG_OK);
    replay_once(gpu);
    sg_replay_gpu_close(gpu);
    assert_int_equal(calls.retain, 0);
    assert_int_equal(calls.release, 0);
    assert_int_equal(calls.set_current, 0);
}

/* A process of its own: the primary context, retained once, released at
 * close, current while in use. */
static void test_primary_context(void **state)
{
    (void)state;
    sg_replay_driver_t t = counted();
    memset(&calls, 0, sizeof calls);
    char err[1024] = "";
    sg_replay_gpu_t *gpu = NULL;
    assert_int_equal(sg_replay_gpu_open(&t, 0, NULL, &gpu, err, sizeof err), SG_OK);
    assert_int_equal(calls.retain, 1);
    assert_int_equal(calls.set_current, 1);
    replay_once(gpu);
    assert_int_equal(calls.release, 0);
    sg_replay_gpu_close(gpu);
    assert_int_equal(calls.retain, 1);
    assert_int_equal(calls.release, 1);
}

static void test_errors(void **state)
{
    (void)state;
    sg_replay_driver_t t = counted();
    char err[256] = "";
    sg_replay_gpu_t *gpu = (sg_replay_gpu_t *)&err; /* must be reset */
    assert_int_equal(sg_replay_gpu_open(&t, 7, NULL, &gpu, err, sizeof err), SG_ECUDA);
    assert_null(gpu);
    assert_non_null(strstr(err, "there is no GPU 7"));
    assert_int_equal(sg_replay_gpu_open(NULL, 0, NULL, &gpu, err, sizeof err), SG_EINVAL);
    sg_replay_t *r = NULL;
    assert_int_equal(sg_replay_open(bundle, NULL, NULL, NULL, &r, err, sizeof err), SG_EINVAL);
    assert_null(r);
    sg_replay_gpu_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caller_context),
        cmocka_unit_test(test_primary_context),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
