#!/usr/bin/env bash
# setup_check.sh WORK_DIR: scripts/setup.sh installs exactly what is
# missing and survives an offline PyPI, checked with stand-ins for dpkg,
# apt-get and python3 on PATH (nothing is installed for real):
#   1. with one Debian package missing it runs apt-get update and an install
#      of that package only;
#   2. with everything present it runs no apt-get;
#   3. when the PyPI tools cannot be installed it warns and still succeeds;
#   4. with a (fake) pip that installs nvdisasm it links .tools/bin/nvdisasm
#      and, run again, installs nothing.
set -euo pipefail
work=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work"
mkdir -p "$work/repo/scripts" "$work/bin"
cp "$src/scripts/setup.sh" "$src/scripts/requirements-tools.txt" "$work/repo/scripts/"
fail() { echo "FAIL: $*"; exit 1; }

cat >"$work/bin/dpkg" <<'EOS'
#!/bin/sh
# dpkg -s PKG: every package is present except those in $FAKE_MISSING
for m in $FAKE_MISSING; do [ "$2" = "$m" ] && exit 1; done
exit 0
EOS
cat >"$work/bin/apt-get" <<'EOS'
#!/bin/sh
echo "apt-get $*" >>"$FAKE_LOG"
EOS
cat >"$work/bin/python3" <<'EOS'
#!/bin/sh
# python3 -m venv DIR: a venv whose pip "installs" nvdisasm when FAKE_PIP=ok
echo "python3 $*" >>"$FAKE_LOG"
[ "$FAKE_PIP" = ok ] || exit 1
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin" "$3/lib/site/nvidia/cu13/bin"
  printf '#!/bin/sh\necho "nvdisasm: NVIDIA (R) CUDA disassembler"\necho "Cuda compilation tools, release 13.2, V13.2.78"\n' \
    >"$3/lib/site/nvidia/cu13/bin/nvdisasm"
  chmod +x "$3/lib/site/nvidia/cu13/bin/nvdisasm"
  printf '#!/bin/sh\necho "pip $*" >>"$FAKE_LOG"\n' >"$3/bin/python"
  chmod +x "$3/bin/python"
fi
EOS
chmod +x "$work/bin/"*
export PATH="$work/bin:$PATH" FAKE_LOG="$work/log"
run() { : >"$FAKE_LOG"; "$work/repo/scripts/setup.sh" >"$work/out" 2>&1 || { cat "$work/out"; fail "setup exited $?"; }; }

FAKE_MISSING="uthash-dev" FAKE_PIP=no run
grep -q "^apt-get update" "$FAKE_LOG" || fail "1: no apt-get update"
grep "^apt-get .*install" "$FAKE_LOG" | grep -q " uthash-dev$" || fail "1: uthash-dev not installed"
[ "$(grep -c "install" "$FAKE_LOG")" = 1 ] && ! grep "install" "$FAKE_LOG" | grep -q "cmake" ||
  fail "1: more than the missing package installed: $(cat "$FAKE_LOG")"
grep -q "warning: could not install the PyPI tools" "$work/out" || fail "3: no warning when offline"

FAKE_MISSING="" FAKE_PIP=ok run
! grep -q "^apt-get" "$FAKE_LOG" || fail "2: apt-get ran with every package present"
grep -q "^pip -m pip install .*-r .*requirements-tools.txt" "$FAKE_LOG" || fail "4: pip not asked for the pinned tools"
[ -x "$work/repo/.tools/bin/nvdisasm" ] || fail "4: .tools/bin/nvdisasm not linked"
case $(readlink "$work/repo/.tools/bin/nvdisasm") in /*) fail "4: the link is absolute" ;; esac
grep -q "nvdisasm 13.2.78 at .tools/bin/nvdisasm" "$work/out" || fail "4: version not reported"
FAKE_MISSING="" FAKE_PIP=ok run
! grep -q "python3\|pip" "$FAKE_LOG" || fail "4: tools reinstalled although present"
echo "setup: ok (installs only what is missing; offline PyPI is a warning; tools linked once)"
