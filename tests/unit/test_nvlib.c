/* test_nvlib.c: the loader for NVIDIA's libraries (code/nvlib.h): the
 * search order, and the NVRTC and nvJitLink tables used for real: CUDA C++
 * compiled to PTX by NVRTC, linked to an sm_90 cubin by nvJitLink, and the
 * cubin read back with the ELF reader. The toolkit these tests build with
 * has both libraries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "code/elf_image.h"
#include "code/nvlib.h"
#include "graph/graph.h"

#define MAXC 16

static size_t list(sg_nvlib_t lib, const char *exe, const char *home, const char *path,
                   char **out)
{
    memset(out, 0, MAXC * sizeof *out);
    return sg_nvlib_candidates(lib, exe, home, path, out, MAXC);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n && i < MAXC; i++)
        free(v[i]);
}

static void test_order(void **state)
{
    (void)state;
    char *v[MAXC];
    size_t n = list(SG_NVLIB_NVRTC, "/opt/sg/bin", "/ch", NULL, v);
    assert_int_equal(n, 5);
    assert_string_equal(v[0], "/opt/sg/bin/../lib/libnvrtc.so.13");
    assert_string_equal(v[1], "libnvrtc.so.13");
    assert_string_equal(v[2], "/opt/sg/bin/libnvrtc.so.13");
    assert_string_equal(v[3], "/ch/lib64/libnvrtc.so.13");
    assert_string_equal(v[4], "/usr/local/cuda/lib64/libnvrtc.so.13");
    free_list(v, n);

    /* CUPTI also under extras/; CUDA_HOME naming the default is listed once */
    n = list(SG_NVLIB_CUPTI, NULL, "/usr/local/cuda", "/cp", v);
    assert_int_equal(n, 5);
    assert_string_equal(v[0], "libcupti.so.13");
    assert_string_equal(v[1], "/usr/local/cuda/lib64/libcupti.so.13");
    assert_string_equal(v[2], "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
    assert_string_equal(v[3], "/cp/lib64/libcupti.so.13");
    assert_string_equal(v[4], "/cp/extras/CUPTI/lib64/libcupti.so.13");
    free_list(v, n);

    /* the driver only by soname: never the toolkit's stubs */
    n = list(SG_NVLIB_CUDA, "/opt/sg/bin", "/ch", "/cp", v);
    assert_int_equal(n, 1);
    assert_string_equal(v[0], "libcuda.so.1");
    free_list(v, n);

    /* a short array still gets the full count */
    char *two[2] = {NULL, NULL};
    n = sg_nvlib_candidates(SG_NVLIB_NVJITLINK, "/e", "", "", two, 2);
    assert_int_equal(n, 4);
    assert_string_equal(two[0], "/e/../lib/libnvJitLink.so.13");
    assert_string_equal(two[1], "libnvJitLink.so.13");
    free(two[0]);
    free(two[1]);
    assert_int_equal(sg_nvlib_candidates(SG_NVLIB_COUNT, NULL, NULL, NULL, v, MAXC), 0);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(sg_nvlib_name(SG_NVLIB_NVRTC), "NVRTC");
    assert_string_equal(sg_nvlib_name(SG_NVLIB_NVJITLINK), "nvJitLink");
    assert_string_equal(sg_nvlib_name(SG_NVLIB_CUPTI), "CUPTI");
    char err[64] = "";
    assert_null(sg_nvlib_handle(SG_NVLIB_COUNT, err, sizeof err));
    assert_true(err[0] != '\0');
}

/* No driver here (the CPU machines): a message that names what was tried.
 * With a driver the handle loads, and asking again gives the same one. */
static void test_driver(void **state)
{
    (void)state;
    char err[1024] = "";
    void *h = sg_nvlib_handle(SG_NVLIB_CUDA, err, sizeof err);
    if (h) {
        assert_ptr_equal(sg_nvlib_handle(SG_NVLIB_CUDA, NULL, 0), h);
    } else {
        assert_non_null(strstr(err, "libcuda.so.1"));
        assert_non_null(strstr(err, "driver"));
        char again[1024] = "";
        assert_null(sg_nvlib_handle(SG_NVLIB_CUDA, again, sizeof again));
        assert_string_equal(again, err);
    }
}

static const char kernel_src[] =
    "extern \"C\" __global__ void sg_axpy(float a, const float *x, float *y, int n)\n"
    "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n";

static void test_nvrtc_then_nvjitlink(void **state)
{
    (void)state;
    char err[1024] = "";
    const sg_nvrtc_api_t *rtc = sg_nvlib_nvrtc(err, sizeof err);
    if (!rtc) fail_msg("NVRTC: %s", err);
    assert_ptr_equal(sg_nvlib_nvrtc(NULL, 0), rtc);
    int major = 0, minor = 0;
    assert_int_equal(rtc->nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
    assert_int_equal(major, 13);

    nvrtcProgram prog = NULL;
    assert_int_equal(rtc->nvrtcCreateProgram(&prog, kernel_src, "axpy.cu", 0, NULL, NULL),
                     NVRTC_SUCCESS);
    const char *opts[] = {"--gpu-architecture=compute_90"};
    assert_int_equal(rtc->nvrtcCompileProgram(prog, 1, opts), NVRTC_SUCCESS);
    size_t ptx_size = 0;
    assert_int_equal(rtc->nvrtcGetPTXSize(prog, &ptx_size), NVRTC_SUCCESS);
    assert_true(ptx_size > 100);
    char *ptx = malloc(ptx_size);
    assert_non_null(ptx);
    assert_int_equal(rtc->nvrtcGetPTX(prog, ptx), NVRTC_SUCCESS);
    assert_non_null(strstr(ptx, ".entry sg_axpy"));
    assert_int_equal(rtc->nvrtcDestroyProgram(&prog), NVRTC_SUCCESS);

    const sg_nvjitlink_api_t *jl = sg_nvlib_nvjitlink(err, sizeof err);
    if (!jl) fail_msg("nvJitLink: %s", err);
    unsigned jmajor = 0, jminor = 0;
    assert_int_equal(jl->nvJitLinkVersion(&jmajor, &jminor), NVJITLINK_SUCCESS);
    assert_int_equal(jmajor, 13);
    nvJitLinkHandle link = NULL;
    const char *lopts[] = {"-arch=sm_90"};
    assert_int_equal(jl->nvJitLinkCreate(&link, 1, lopts), NVJITLINK_SUCCESS);
    assert_int_equal(jl->nvJitLinkAddData(link, NVJITLINK_INPUT_PTX, ptx, ptx_size, "axpy.ptx"),
                     NVJITLINK_SUCCESS);
    assert_int_equal(jl->nvJitLinkComplete(link), NVJITLINK_SUCCESS);
    size_t cubin_size = 0;
    assert_int_equal(jl->nvJitLinkGetLinkedCubinSize(link, &cubin_size), NVJITLINK_SUCCESS);
    void *cubin = malloc(cubin_size);
    assert_non_null(cubin);
    assert_int_equal(jl->nvJitLinkGetLinkedCubin(link, cubin), NVJITLINK_SUCCESS);
    uint32_t arch = 0;
    assert_int_equal(sg_elf_cuda_arch(cubin, cubin_size, &arch), SG_OK);
    assert_int_equal(arch, 90);
    sg_name_list_t names = {0};
    assert_int_equal(sg_elf_list_kernels(cubin, cubin_size, &names), SG_OK);
    assert_true(sg_name_list_contains(&names, "sg_axpy"));
    sg_name_list_free(&names);
    assert_int_equal(jl->nvJitLinkDestroy(&link), NVJITLINK_SUCCESS);

    /* a link error comes back through the error log */
    assert_int_equal(jl->nvJitLinkCreate(&link, 1, lopts), NVJITLINK_SUCCESS);
    static const char bad[] = ".version 9.0\n.target sm_90\n.address_size 64\nnot ptx\n";
    nvJitLinkResult lr = jl->nvJitLinkAddData(link, NVJITLINK_INPUT_PTX, bad, sizeof bad, "bad");
    if (lr == NVJITLINK_SUCCESS) lr = jl->nvJitLinkComplete(link);
    assert_int_not_equal(lr, NVJITLINK_SUCCESS);
    size_t log_size = 0;
    assert_int_equal(jl->nvJitLinkGetErrorLogSize(link, &log_size), NVJITLINK_SUCCESS);
    assert_true(log_size > 1);
    jl->nvJitLinkDestroy(&link);
    free(cubin);
    free(ptx);
}

static void test_cupti(void **state)
{
    (void)state;
    char err[1024] = "";
    const sg_cupti_api_t *cupti = sg_nvlib_cupti(err, sizeof err);
    if (!cupti) fail_msg("CUPTI: %s", err);
    const char *s = NULL;
    assert_int_equal(cupti->cuptiGetResultString(CUPTI_ERROR_INVALID_PARAMETER, &s),
                     CUPTI_SUCCESS);
    assert_non_null(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_driver),
        cmocka_unit_test(test_nvrtc_then_nvjitlink),
        cmocka_unit_test(test_cupti),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
