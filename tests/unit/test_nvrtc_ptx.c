/* test_nvrtc_ptx.c: recompiling captured NVRTC source to PTX: the option
 * rewrite, and a real compile through the toolkit's libnvrtc. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "code/fatbin.h"
#include "code/nvrtc_ptx.h"
#include "graph/graph.h"

static void join(char **argv, int argc, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i) strncat(buf, "|", n - strlen(buf) - 1);
        strncat(buf, argv[i], n - strlen(buf) - 1);
    }
}

static void test_options(void **state)
{
    (void)state;
    char buf[512];
    int argc = -1;
    char **argv = sg_nvrtc_ptx_options("-arch=sm_90 -std=c++17 -DX=1", 90, &argc);
    assert_non_null(argv);
    join(argv, argc, buf, sizeof buf);
    assert_string_equal(buf, "--gpu-architecture=compute_90|-std=c++17|-DX=1");
    assert_null(argv[argc]);
    free(argv);

    /* separate-value form, link-time options dropped, only one arch kept */
    argv = sg_nvrtc_ptx_options("--gpu-architecture sm_80 -dlto -arch=sm_90 --use_fast_math", 90,
                                &argc);
    join(argv, argc, buf, sizeof buf);
    assert_string_equal(buf, "--gpu-architecture=compute_90|--use_fast_math");
    free(argv);

    /* none given: one added */
    argv = sg_nvrtc_ptx_options(NULL, 75, &argc);
    join(argv, argc, buf, sizeof buf);
    assert_string_equal(buf, "--gpu-architecture=compute_75");
    free(argv);
    argv = sg_nvrtc_ptx_options("", 90, &argc);
    assert_int_equal(argc, 1);
    free(argv);
}

static void test_compile(void **state)
{
    (void)state;
    static const char src[] = "extern \"C\" __global__ void sg_twice(float *y, const float *x)\n"
                              "{ y[threadIdx.x] = 2.0f * x[threadIdx.x]; }\n";
    char *ptx = NULL, err[200];
    size_t len = 0;
    int rc = sg_nvrtc_compile_ptx(src, sizeof src - 1, "twice.cu", "-arch=sm_90 -std=c++17", 90,
                                  &ptx, &len, err, sizeof err);
    assert_int_equal(rc, SG_OK);
    assert_non_null(ptx);
    assert_int_equal(len, strlen(ptx));
    assert_true(sg_ptx_has_entry(ptx, len, "sg_twice"));
    uint32_t arch = 0;
    char sfx = 'x';
    assert_int_equal(sg_ptx_target(ptx, len, &arch, &sfx), SG_OK);
    assert_int_equal(arch, 90);
    assert_int_equal(sfx, 0);
    free(ptx);

    /* a compile error comes back with the log's first line */
    static const char bad[] = "__global__ void k() { undefined_thing(); }";
    rc = sg_nvrtc_compile_ptx(bad, sizeof bad - 1, NULL, NULL, 90, &ptx, &len, err, sizeof err);
    assert_int_equal(rc, SG_EFORMAT);
    assert_null(ptx);
    assert_non_null(strstr(err, "NVRTC"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_compile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
