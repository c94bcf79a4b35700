#!/usr/bin/env bash
# Installs everything sgcap needs to build and test on Debian 12 with the
# CUDA 13 toolkit already present (nvcc on PATH or in /usr/local/cuda).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
      uthash-dev libcmocka-dev libjansson-dev libxxhash-dev libzstd-dev
      liblz4-dev graphviz python3)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "sgcap setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "sgcap setup: the CUDA 13 toolkit (nvcc) was not found; install it first" >&2
  exit 1
fi
echo "sgcap setup: all dependencies present"
