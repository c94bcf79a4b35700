#!/usr/bin/env bash
# Installs what sgcap needs to build and test on Debian 12 with the CUDA 13
# toolkit already present (nvcc on PATH or in /usr/local/cuda):
#   1. the Debian packages below (apt; only the missing ones; sudo when not
#      root);
#   2. the pinned PyPI tools of scripts/requirements-tools.txt (nvdisasm, for
#      SASS listings) in a project-local virtual environment, .tools/venv,
#      with each tool linked as .tools/bin/NAME: that is where sgcap's build
#      looks for them (CMake variable SGCAP_NVDISASM). They are optional: when
#      PyPI cannot be reached this says so and goes on, and sgcap builds and
#      works without them. SGCAP_NO_PIP=1 skips this step.
# scripts/demo.sh and scripts/test.sh run this first; running it again
# installs only what is missing and says what it found.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

pkgs=(build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
      uthash-dev libcmocka-dev libjansson-dev libxxhash-dev libzstd-dev
      liblz4-dev graphviz python3 python3-venv)
if command -v dpkg >/dev/null 2>&1; then
  missing=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null 2>&1 || {
        echo "sgcap setup: missing Debian packages: ${missing[*]}; run as root or install sudo" >&2
        exit 1
      }
      sudo_cmd=(sudo)
    fi
    echo "sgcap setup: installing Debian packages: ${missing[*]}"
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
      "${missing[@]}"
  else
    echo "sgcap setup: Debian packages present (${#pkgs[@]} checked)"
  fi
else
  echo "sgcap setup: no dpkg here (not Debian): install the equivalents of ${pkgs[*]} yourself" >&2
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "sgcap setup: the CUDA 13 toolkit (nvcc) was not found; install it first" >&2
  exit 1
fi

# PyPI tools, pinned. The stamp is the requirements file as last installed:
# a changed pin reinstalls.
req="$root/scripts/requirements-tools.txt"
tools="$root/.tools"
stamp="$tools/installed-requirements.txt"
if [ "${SGCAP_NO_PIP:-0}" = 1 ]; then
  echo "sgcap setup: PyPI tools skipped (SGCAP_NO_PIP=1)"
elif cmp -s "$req" "$stamp" && [ -x "$tools/bin/nvdisasm" ]; then
  echo "sgcap setup: PyPI tools present (.tools/bin/nvdisasm)"
else
  echo "sgcap setup: installing $(grep -v '^#' "$req" | tr '\n' ' ')into .tools/venv"
  mkdir -p "$tools/bin"
  if python3 -m venv "$tools/venv" &&
     "$tools/venv/bin/python" -m pip install -q --disable-pip-version-check --timeout 30 \
       --retries 2 -r "$req"; then
    found=$(find "$tools/venv" -type f -name nvdisasm -path '*/bin/*' | head -n 1)
    if [ -n "$found" ]; then
      ln -sfn "../${found#"$tools"/}" "$tools/bin/nvdisasm" # relative: the tree may move
      cp "$req" "$stamp"
      echo "sgcap setup: nvdisasm $("$tools/bin/nvdisasm" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p') at .tools/bin/nvdisasm"
    else
      echo "sgcap setup: warning: the package installed no nvdisasm; SASS listings stay unavailable" >&2
    fi
  else
    echo "sgcap setup: warning: could not install the PyPI tools (no network?); sgcap works without them, SASS listings stay unavailable" >&2
  fi
fi
echo "sgcap setup: done"
