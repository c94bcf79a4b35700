# cmake/nvdisasm.cmake: where nvdisasm is (SASS listings of captured cubins).
# Optional: sgcap builds and works without it. scripts/setup.sh installs a
# pinned copy from PyPI (scripts/requirements-tools.txt) and links it as
# .tools/bin/nvdisasm, which is looked at first, then the toolkit's bin/ and
# PATH. Code that wants it uses the cache variable SGCAP_NVDISASM (the full
# path, or ...-NOTFOUND), e.g. as a compile definition of its own target;
# -DSGCAP_NVDISASM=PATH picks another one.
find_program(SGCAP_NVDISASM nvdisasm
  HINTS ${PROJECT_SOURCE_DIR}/.tools/bin ${CUDAToolkit_BIN_DIR}
  DOC "nvdisasm for SASS listings (optional)")
if(SGCAP_NVDISASM)
  message(STATUS "sgcap: nvdisasm: ${SGCAP_NVDISASM}")
else()
  message(STATUS "sgcap: nvdisasm not found (optional; scripts/setup.sh installs it into .tools/bin)")
endif()
