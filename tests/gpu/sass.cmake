# tests/gpu/sass.cmake: the SASS access analysis on PyTorch's own kernels
# (tests/gpu/sass_torch.sh; docs/SASS.md). Needs torch (cu130) and an
# nvdisasm, which the GPU machine has; no GPU itself. Label "gpu".
add_test(NAME gpu.sass.torch
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/sass_torch.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_BINARY_DIR}/sass-torch)
set_tests_properties(gpu.sass.torch PROPERTIES LABELS "gpu" TIMEOUT 900)
