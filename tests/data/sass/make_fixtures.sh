#!/bin/sh
# make_fixtures.sh: regenerate the SASS fixtures beside this script.
#   tests/data/sass/make_fixtures.sh BUILD_DIR
# Needs nvcc (CUDA 13) and nvdisasm ($SGCAP_NVDISASM or on PATH or the pip
# package nvidia-cuda-nvdisasm), and BUILD_DIR/bin/sass_dump for the facts.
# Review the diff of expected_*.txt by eye before committing: those files are
# what the tests hold the analysis to.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: make_fixtures.sh BUILD_DIR}
nvcc=${NVCC:-nvcc}
dis=${SGCAP_NVDISASM:-$(command -v nvdisasm || true)}
if [ -z "$dis" ]; then
    dis=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13/bin/nvdisasm"))')
fi
for a in 75 80 86 89 90 100 120; do
    "$nvcc" -cubin -arch=sm_$a -o "$here/kernels_sm$a.cubin" "$here/kernels.cu"
done
# the ELF-mode listing the parser test reads without nvdisasm
"$dis" -c "$here/kernels_sm90.cubin" > "$here/kernels_sm90.sass"
"$dis" -c "$here/kernels_sm80.cubin" > "$here/kernels_sm80.sass"
for a in 75 80 86 89 90 100 120; do
    SGCAP_NVDISASM="$dis" "$build/bin/sass_dump" "$here/kernels_sm$a.cubin" > "$here/expected_sm$a.txt"
done
"$build/bin/sass_dump" --text 90 "$here/kernels_sm90.sass" > "$here/expected_text_sm90.txt"
"$build/bin/sass_dump" --text 80 "$here/kernels_sm80.sass" > "$here/expected_text_sm80.txt"
# PyTorch's tail loop as selects (test_sass_select reads the listing)
"$nvcc" -cubin -arch=sm_90 -o "$here/tail_sm90.cubin" "$here/tail.cu"
"$dis" -c "$here/tail_sm90.cubin" > "$here/tail_sm90.sass"
# CuPy's loops (cupy_sm90.cubin comes from ../ptx/nvrtc_cupy.py, with its
# PTX): the cubin's facts, and the loop kernels' sections as a listing for
# the tests that run without nvdisasm
SGCAP_NVDISASM="$dis" "$build/bin/sass_dump" "$here/cupy_sm90.cubin" > "$here/expected_cupy_sm90.txt"
"$dis" -c "$here/cupy_sm90.cubin" | awk -v keep=" cupy_axpb cupy_add32 cupy14_square cupy14_add loop_block_step loop_loaded_bound " '
/^\/\/-+ /{ name = $2; sub(/^\.text\./, "", name); on = index(keep, " " name " ") > 0 }
on' > "$here/cupy_sm90.sass"
"$build/bin/sass_dump" --text 90 "$here/cupy_sm90.sass" > "$here/expected_text_cupy_sm90.txt"
echo "fixtures written to $here"
