/* test_comm.c: unit tests of graph/comm.c, the one rule that tells NCCL and
 * NVSHMEM kernels from the others: real kernel names of NCCL 2.18 to 2.28
 * (and, when a libnccl.so.2 is at hand, every kernel its fatbin holds), names
 * that only look alike, and the comm-stream classification. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/fatbin.h"
#include "graph/comm.h"
#include "graph/graph.h"
#include "replay/replay.h"

/* Kernel names as cuFuncGetName returns them. */
static const char *const nccl_names[] = {
    /* NCCL 2.28.9 (libnccl.so.2 of the CUDA 13 toolkit here, sm_90 cubin) */
    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
    "_Z21ncclDevKernel_Generic24ncclDevKernelArgsStorageILm4096EE",
    "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE",
    "_Z47ncclSymkDevKernel_AllReduce_RSxLD_AGxST_sum_f3221ncclSymkDevWorkArgs4K",
    "_Z30ncclSymkDevKernel_AllGather_LL21ncclSymkDevWorkArgs4K",
    /* NCCL 2.27: symmetric kernels had another prefix and argument type */
    "_Z42ncclSymDevKernel_AllReduce_AGxLL_R_sum_f3214ncclSymDevArgs",
    /* NCCL 2.18 and older */
    "_Z38ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevCommmP8ncclWork",
    /* a user kernel of NCCL 2.28's device API: it talks to peers too */
    "_Z11myAllReduce11ncclDevCommP17ncclWindow_vidmemm",
    /* an extern "C" name */
    "ncclDevKernel_SendRecv",
};

static const char *const other_names[] = {
    /* NCCL's one-rank reduction: local work on one GPU, replayable */
    "__nv_static_32__b4148644_10_onerank_cu_fdf47990__ZN43_GLOBAL__N__b4148644_10_onerank_cu_"
    "fdf4799013oneRankReduceI13FuncPreMulSumIfEEEvPvS3_mmb",
    "_Z6k_axpbPfPKfffm",
    "_Z12myncclhelperPf", /* the letters, not an identifier of NCCL's */
    "triton_poi_fused_add_0",
    "",
};

static void test_names(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof nccl_names / sizeof *nccl_names; i++) {
        if (sg_kernel_comm_library(nccl_names[i]) != SG_COMM_NCCL)
            fail_msg("%s is not told as NCCL's", nccl_names[i]);
        assert_true(sg_replay_kernel_needs_process(nccl_names[i]));
    }
    for (size_t i = 0; i < sizeof other_names / sizeof *other_names; i++) {
        if (sg_kernel_comm_library(other_names[i]) != SG_COMM_NONE)
            fail_msg("%s is told as a communication kernel", other_names[i]);
        assert_false(sg_replay_kernel_needs_process(other_names[i]));
    }
    assert_int_equal(sg_kernel_comm_library(NULL), SG_COMM_NONE);
    assert_int_equal(sg_kernel_comm_library("_Z21nvshmemi_proxy_kernelv"), SG_COMM_NVSHMEM);
    assert_int_equal(sg_kernel_comm_library("nvshmemx_barrier_all_on_stream_kernel"),
                     SG_COMM_NVSHMEM);
    assert_string_equal(sg_comm_library_name(SG_COMM_NCCL), "NCCL");
    assert_string_equal(sg_comm_library_name(SG_COMM_NVSHMEM), "NVSHMEM");
    assert_string_equal(sg_comm_library_name(SG_COMM_NONE), "");
}

/* Every kernel of a real libnccl.so.2 (SGCAP_TEST_NCCL_LIB, else the CUDA
 * toolkit's): those named nccl... are NCCL's, the one-rank reductions are
 * not, and nothing else is there. Skipped where no library is found. */
static void test_real_library(void **state)
{
    (void)state;
    const char *candidates[] = {getenv("SGCAP_TEST_NCCL_LIB"), "/usr/local/cuda/lib64/libnccl.so.2",
                                "/usr/local/cuda/lib/libnccl.so.2",
                                "/usr/lib/x86_64-linux-gnu/libnccl.so.2"};
    const char *path = NULL;
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates && !path; i++)
        if (candidates[i] && *candidates[i] && access(candidates[i], R_OK) == 0)
            path = candidates[i];
    if (!path) {
        print_message("no libnccl.so.2 here: skipped\n");
        skip();
    }
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    const uint8_t *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    assert_true(p != MAP_FAILED);
    sg_elf_section_t sec;
    assert_int_equal(sg_elf_find_section(p, (size_t)st.st_size, ".nv_fatbin", &sec), SG_OK);
    sg_fatbin_t fb;
    char err[256];
    if (sg_fatbin_parse(p + sec.offset, sec.size, 0, &fb, err, sizeof err))
        fail_msg("%s: %s", path, err);
    uint32_t nccl = 0, onerank = 0, cubins = 0;
    for (uint32_t i = 0; i < fb.n_entries; i++) {
        if (fb.entries[i].kind != SG_FATBIN_ENTRY_ELF) continue;
        uint8_t *img = NULL;
        size_t len = 0;
        if (sg_fatbin_extract(&fb, i, 0, &img, &len) != SG_OK) continue;
        sg_name_list_t names = {0};
        if (sg_elf_list_kernels(img, len, &names) == SG_OK) {
            cubins++;
            for (uint32_t k = 0; k < names.n; k++) {
                const char *name = names.names[k];
                sg_comm_library_t lib = sg_kernel_comm_library(name);
                if (strstr(name, "oneRankReduce")) {
                    if (lib != SG_COMM_NONE) fail_msg("%s: %s told as NCCL's", path, name);
                    onerank++;
                } else if (lib == SG_COMM_NCCL) {
                    nccl++;
                } else {
                    fail_msg("%s: kernel %s is not told as NCCL's", path, name);
                }
            }
        }
        sg_name_list_free(&names);
        free(img);
    }
    print_message("%s: %u cubins, %u NCCL kernels, %u one-rank reductions\n", path, cubins, nccl,
                  onerank);
    assert_true(cubins > 0);
    assert_true(nccl > 0);
    sg_fatbin_free(&fb);
    munmap((void *)p, (size_t)st.st_size);
}

/* A stream is "comm" when every kernel on it (bodies too) is a
 * communication kernel; copies and events do not count either way. */
static void test_comm_streams(void **state)
{
    (void)state;
    sg_graph_t *g = sg_graph_create();
    uint32_t s[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(sg_graph_add_stream(g, NULL, 0, &s[i]), SG_OK);
    sg_node_id_t n;
    /* s0 compute, s1 comm (two NCCL kernels and a copy), s2 mixed, s3 no kernel */
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s[0], 0, &n), SG_OK);
    sg_node_set_kernel_name(g, n, "_Z6k_axpbPfPKfffm");
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s[1], 1, &n), SG_OK);
    sg_node_set_kernel_name(g, n, nccl_names[0]);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_MEMCPY, s[1], 2, &n), SG_OK);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s[2], 3, &n), SG_OK);
    sg_node_set_kernel_name(g, n, nccl_names[1]);
    assert_int_equal(sg_graph_add_node(g, SG_NODE_KERNEL, s[2], 4, &n), SG_OK);
    sg_node_set_kernel_name(g, n, "_Z6k_axpbPfPKfffm");
    assert_int_equal(sg_graph_add_node(g, SG_NODE_MEMSET, s[3], 5, &n), SG_OK);
    /* a child graph whose body holds another NCCL kernel on s1 */
    assert_int_equal(sg_graph_add_node(g, SG_NODE_CHILD_GRAPH, s[1], 6, &n), SG_OK);
    sg_graph_t *body = NULL;
    assert_int_equal(sg_node_make_child_body(g, n, &body), SG_OK);
    sg_node_id_t b;
    assert_int_equal(sg_graph_add_node(body, SG_NODE_KERNEL, s[1], 7, &b), SG_OK);
    sg_node_set_kernel_name(body, b, nccl_names[3]);
    sg_comm_library_t out[4];
    assert_int_equal(sg_graph_comm_streams(g, out), 1);
    assert_int_equal(out[0], SG_COMM_NONE);
    assert_int_equal(out[1], SG_COMM_NCCL);
    assert_int_equal(out[2], SG_COMM_NONE);
    assert_int_equal(out[3], SG_COMM_NONE);
    /* a compute kernel in the body makes s1 a mixed stream */
    assert_int_equal(sg_graph_add_node(body, SG_NODE_KERNEL, s[1], 8, &b), SG_OK);
    sg_node_set_kernel_name(body, b, "_Z6k_axpbPfPKfffm");
    assert_int_equal(sg_graph_comm_streams(g, out), 0);
    assert_int_equal(out[1], SG_COMM_NONE);
    sg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_real_library),
        cmocka_unit_test(test_comm_streams),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
