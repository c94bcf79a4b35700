#!/usr/bin/env bash
# check_linkage.sh LIBSGCAP LIST_EXPORTS: libsgcap.so links only what may be
# loaded into any program (docs/ARCHITECTURE.md, "In the app"):
#  1. NEEDED (readelf -d) and ldd: only glibc (libc, libm, libdl, libpthread)
#     and the dynamic loader: no libstdc++, libgcc_s, jansson, zstd, lz4,
#     xxhash;
#  2. every undefined dynamic symbol is glibc's (versioned @GLIBC_) or one
#     of the toolchain's weak start-up hooks: nothing an app's own library
#     could provide instead (zstd's trace hooks, a static library's symbols);
#  3. the defined dynamic symbols are exactly LIST_EXPORTS' list (the entry
#     points of inject/hooks.def, dlsym, InitializeInjection), and each one
#     matches a pattern of inject/libsgcap.map;
#  4. offline code is not linked in: no bundle parser, JSON reader, C++
#     demangler or code report (full symbol table; the shim is not
#     stripped). The NVIDIA library loader (code/nvlib.c) is in it for the
#     optimizer's fusion, which dlopens NVRTC and nvJitLink at run time
#     (never linked: 1 and 2 hold) and must look their functions up with
#     glibc's dlsym, not the shim's exported one: the optimizer sets that
#     with sg_nvlib_use_dlsym, so the loader comes with it or not at all.
set -u
lib=$1 list=$2
map=$(dirname "$0")/../../inject/libsgcap.map
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
[ -f "$lib" ] || { echo "FAIL: $lib not found"; exit 1; }

allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
bad=$(echo "$needed" | grep -Ev "$allowed" || true)
[ -z "$bad" ] && ok "NEEDED: $(echo $needed)" || fail "NEEDED has $(echo $bad)"

# ldd lists what the loader actually maps (NEEDED of NEEDED too).
if lddout=$(ldd "$lib" 2>&1); then
  bad=$(echo "$lddout" | awk '{print $1}' | sed 's|.*/||' | grep -Ev "$allowed" | grep -v '^linux-vdso' || true)
  [ -z "$bad" ] && ok "ldd: only glibc and the loader" || fail "ldd lists $(echo $bad)"
else
  fail "ldd failed: $lddout"
fi

undef=$(nm -D --undefined-only "$lib" | awk '{print $NF}' |
        grep -Ev '@GLIBC_|^(__gmon_start__|_ITM_deregisterTMCloneTable|_ITM_registerTMCloneTable)$' || true)
[ -z "$undef" ] && ok "undefined symbols: glibc's only" || fail "undefined and not glibc's: $(echo $undef)"

want=$(mktemp) got=$(mktemp)
trap 'rm -f "$want" "$got"' EXIT
"$list" | sort -u >"$want"
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$got"
extra=$(comm -13 "$want" "$got") missing=$(comm -23 "$want" "$got")
[ -z "$extra" ] && ok "exports: nothing beyond hooks.def's $(wc -l <"$want") entry points" ||
  fail "exported but not an entry point: $(echo $extra)"
[ -z "$missing" ] && ok "exports: every entry point of hooks.def" ||
  fail "entry points not exported: $(echo $missing)"
# The map's global patterns (cu*, nvrtc*, dlsym, ...), as shell globs.
patterns=$(sed -n '/global:/,/local:/p' "$map" | grep -Ev 'global:|local:' | tr -d ' ;' | grep -v '^$')
while read -r sym; do
  matched=0
  for p in $patterns; do
    # shellcheck disable=SC2254
    case $sym in $p) matched=1 ;; esac
  done
  [ $matched = 1 ] || fail "export $sym is not in inject/libsgcap.map"
done <"$got"

offline='sg_bundle_parse|sg_bundle_read\b|json_load|json_unpack|__cxa_demangle|sg_kernel_short_name|sg_code_report'
syms=$(nm "$lib" | awk '{print $NF}')
found=$(echo "$syms" | grep -E "$offline" | sort -u || true)
[ -z "$found" ] && ok "no offline code (bundle parser, demangler, code report)" ||
  fail "offline code linked in: $(echo $found)"
if echo "$syms" | grep -q '^sg_nvlib_handle$'; then
  echo "$syms" | grep -q '^sg_nvlib_use_dlsym$' && echo "$syms" | grep -q '^sg_inject_real_dlsym$' &&
    ok "NVIDIA loader: with its real-dlsym switch" ||
    fail "the NVIDIA loader is linked in without sg_nvlib_use_dlsym/sg_inject_real_dlsym"
fi

[ $fails = 0 ] && echo "check_linkage: all passed" || echo "check_linkage: $fails failed"
[ $fails = 0 ]
