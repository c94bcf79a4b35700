/* The program the libsgcap CPU tests run under LD_PRELOAD: it reaches the
 * (fake) driver the way static cudart does (dlopen + dlsym of
 * cuGetProcAddress_v2, then every entry point through it) and prints what it
 * observes as key=value lines on stdout. Scenario in argv[1]. */
#define _GNU_SOURCE 1
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t,
                             CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);

static void *h;
static gpa_v2_t gpa;
static const char *(*last)(void);
static int (*count)(const char *);

/* Which object an address lies in: sgcap, cuda, or other. */
static const char *where(void *p)
{
    Dl_info i;
    if (p == NULL) return "null";
    if (!dladdr(p, &i) || i.dli_fname == NULL) return "unknown";
    if (strstr(i.dli_fname, "libsgcap")) return "sgcap";
    if (strstr(i.dli_fname, "libcuda")) return "cuda";
    return "other";
}

static void *get(const char *sym, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = -1;
    CUresult r = gpa(sym, &p, version, flags, &st);
    if (r != CUDA_SUCCESS) printf("gpa_error=%s:%d\n", sym, r);
    return p;
}

static int open_driver(void)
{
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("driver=none\n");
        return 0;
    }
    gpa = (gpa_v2_t)dlsym(h, "cuGetProcAddress_v2");
    last = (const char *(*)(void))dlsym(h, "fake_last");
    count = (int (*)(const char *))dlsym(h, "fake_count");
    return gpa != NULL && last != NULL;
}

static int scenario_lookup(void)
{
    printf("gpa=%s\n", where((void *)gpa));
    void *again = dlsym(h, "cuGetProcAddress_v2");
    printf("dlsym_repeat_same=%d\n", again == (void *)gpa && again != NULL);

    launch_t legacy = (launch_t)get("cuLaunchKernel", 4000, CU_GET_PROC_ADDRESS_DEFAULT);
    void *pt = NULL;
    CUresult r = gpa("cuLaunchKernel", &pt, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                     NULL); /* NULL symbolStatus */
    launch_t ptsz = (launch_t)pt;
    printf("null_status_ok=%d\n", r == CUDA_SUCCESS && pt != NULL);
    printf("legacy=%s ptsz=%s distinct=%d\n", where((void *)legacy), where(pt),
           (void *)legacy != pt);
    legacy(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    printf("legacy_reaches=%s\n", last());
    ptsz(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    printf("ptsz_reaches=%s\n", last());

    CUresult (*alloc1)(CUdeviceptr_v1 *, unsigned int) =
        (CUresult(*)(CUdeviceptr_v1 *, unsigned int))get("cuMemAlloc", 2000, 0);
    CUresult (*alloc2)(CUdeviceptr *, size_t) =
        (CUresult(*)(CUdeviceptr *, size_t))get("cuMemAlloc", 3020, 0);
    CUdeviceptr_v1 d1 = 0;
    CUdeviceptr d2 = 0;
    alloc1(&d1, 16);
    printf("alloc_v1=%s reaches=%s ptr=%#x\n", where((void *)alloc1), last(), d1);
    alloc2(&d2, 16);
    printf("alloc_v2=%s reaches=%s ptr=%#llx\n", where((void *)alloc2), last(),
           (unsigned long long)d2);

    void *(*self)(const char *) = (void *(*)(const char *))dlsym(h, "fake_self_addr");
    void *unknown = get("cuDeviceGet", 2000, 0);
    printf("unknown_unchanged=%d\n", unknown == self("cuDeviceGet"));
    void *internal = get("cuInternalThing", 2000, 0);
    printf("internal_unchanged=%d\n", internal == self("internal"));
    void *none = (void *)0x1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    r = gpa("cuNoSuchFunction", &none, 12000, 0, &st);
    printf("missing: result=%d pfn_null=%d not_found=%d\n", r, none == NULL,
           st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    void *gpa_self = get("cuGetProcAddress", 12000, 0);
    printf("gpa_self=%s same_as_dlsym=%d\n", where(gpa_self), gpa_self == (void *)gpa);
    void *gpa_old = get("cuGetProcAddress", 11030, 0);
    printf("gpa_v1=%s\n", where(gpa_old));

    void *direct = dlsym(h, "cuLaunchKernel");
    printf("dlsym_handle=%s\n", where(direct));
    ((launch_t)direct)(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    printf("dlsym_handle_reaches=%s\n", last());
    printf("dlsym_repeat_handle_same=%d\n", dlsym(h, "cuLaunchKernel") == direct);
    printf("dlsym_other=%s\n", where(dlsym(h, "fake_last")));
    printf("rtld_next_puts=%d\n", dlsym(RTLD_NEXT, "puts") != NULL);
    printf("rtld_default_missing=%d\n", dlsym(RTLD_DEFAULT, "sg_no_such_symbol") == NULL);
    return 0;
}

static CUresult (*begin_pt)(CUstream, CUstreamCaptureMode);
static CUresult (*begin_legacy)(CUstream, CUstreamCaptureMode);
static CUresult (*end_pt)(CUstream, CUgraph *);
static CUresult (*end_legacy)(CUstream, CUgraph *);
static CUresult (*record)(CUevent, CUstream);
static CUresult (*waitev)(CUstream, CUevent, unsigned);
static CUresult (*exchange)(CUstreamCaptureMode *);
static launch_t launch_pt, launch_legacy;

static void get_capture_api(void)
{
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    begin_pt = (CUresult(*)(CUstream, CUstreamCaptureMode))get("cuStreamBeginCapture", 12000, PT);
    begin_legacy =
        (CUresult(*)(CUstream, CUstreamCaptureMode))get("cuStreamBeginCapture", 12000, 0);
    end_pt = (CUresult(*)(CUstream, CUgraph *))get("cuStreamEndCapture", 12000, PT);
    end_legacy = (CUresult(*)(CUstream, CUgraph *))get("cuStreamEndCapture", 12000, 0);
    record = (CUresult(*)(CUevent, CUstream))get("cuEventRecord", 12000, 0);
    waitev = (CUresult(*)(CUstream, CUevent, unsigned))get("cuStreamWaitEvent", 12000, 0);
    exchange =
        (CUresult(*)(CUstreamCaptureMode *))get("cuThreadExchangeStreamCaptureMode", 12000, 0);
    launch_pt = (launch_t)get("cuLaunchKernel", 12000, PT);
    launch_legacy = (launch_t)get("cuLaunchKernel", 12000, 0);
}

/* Fork/join on two streams plus a per-thread default stream capture. */
static int scenario_capture(void)
{
    get_capture_api();
    CUstream s1 = (CUstream)0x1000, s2 = (CUstream)0x2000;
    CUevent fork_ev = (CUevent)0xe1, join_ev = (CUevent)0xe2;
    CUgraph g = NULL;
    int ok = 1;
    ok &= begin_legacy(s1, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS;
    ok &= record(fork_ev, s1) == CUDA_SUCCESS;
    ok &= waitev(s2, fork_ev, 0) == CUDA_SUCCESS;
    ok &= launch_legacy(NULL, 1, 1, 1, 32, 1, 1, 0, s1, NULL, NULL) == CUDA_SUCCESS;
    ok &= launch_legacy(NULL, 2, 1, 1, 32, 1, 1, 0, s2, NULL, NULL) == CUDA_SUCCESS;
    ok &= record(join_ev, s2) == CUDA_SUCCESS;
    ok &= waitev(s1, join_ev, 0) == CUDA_SUCCESS;
    ok &= end_legacy(s1, &g) == CUDA_SUCCESS;
    printf("fork_join_ok=%d graph=%p\n", ok, (void *)g);
    ok &= begin_pt(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS;
    ok &= launch_pt(NULL, 3, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS;
    ok &= end_pt(NULL, &g) == CUDA_SUCCESS;
    printf("ptsz_capture_ok=%d graph=%p\n", ok, (void *)g);
    ok &= launch_legacy(NULL, 4, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS;
    printf("eager_ok=%d\n", ok);

    int (*query_mode)(void) = (int (*)(void))dlsym(h, "fake_query_mode_seen");
    int (*reentered)(void) = (int (*)(void))dlsym(h, "fake_reentered_count");
    printf("query_mode_seen=%d\n", query_mode());
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    exchange(&m);
    printf("mode_after=%d\n", (int)m);
    printf("records_in_driver=%d reentered=%d\n", count("cuEventRecord"), reentered());
    return ok ? 0 : 1;
}

static void *thread_main(void *arg)
{
    launch_t l = (launch_t)get("cuLaunchKernel", 12000,
                               (intptr_t)arg % 2 ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                                 : CU_GET_PROC_ADDRESS_DEFAULT);
    for (int i = 0; i < 20000; i++)
        l(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    return NULL;
}

static int scenario_threads(void)
{
    pthread_t t[8];
    for (intptr_t i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    printf("launches=%d,%d\n", count("cuLaunchKernel"), count("cuLaunchKernel_ptsz"));
    return 0;
}

static int scenario_fork(void)
{
    launch_t l = (launch_t)get("cuLaunchKernel", 12000, 0);
    l(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        launch_t l2 = (launch_t)get("cuLaunchKernel", 4000, 0);
        CUresult r = l2(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
        _exit(r == CUDA_SUCCESS && l2 == l ? 0 : 1);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    printf("fork_child_exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "lookup";
    if (!open_driver()) return 3;
    if (strcmp(what, "lookup") == 0) return scenario_lookup();
    if (strcmp(what, "capture") == 0) return scenario_capture();
    if (strcmp(what, "threads") == 0) return scenario_threads();
    if (strcmp(what, "fork") == 0) return scenario_fork();
    printf("unknown scenario %s\n", what);
    return 2;
}
