#!/usr/bin/env bash
# Installs the Debian packages the build needs (OpenBLAS replaces the slow
# reference BLAS that libtorch-dev links by default), only when one is missing, so
# `make demo` and `make test` work on a fresh Debian 12 machine as root.
# libdnnl-dev: the dnnl executor's headers (libtorch already loads libdnnl2).
# graphviz draws the compile report's graphs; chromium opens the report in
# its browser test (docs/report.md). The Python module thunder_cpp builds
# against Debian's python3-torch (the same libtorch) with pybind11. libgloo-dev has
# the Gloo headers that c10d's ProcessGroupGloo.hpp needs (thunder::distributed).
set -euo pipefail
pkgs=(cmake ninja-build g++ ccache libtorch-dev libgtest-dev libgmock-dev libbenchmark-dev
      libfmt-dev llvm-14-tools libgoogle-perftools-dev libopenblas0-pthread libdnnl-dev
      graphviz chromium python3-dev python3-torch python3-pytest pybind11-dev libgloo-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
