#!/usr/bin/env bash
# Prints the OPENBLAS_CORETYPE that gives eager libtorch OpenBLAS's fast
# kernels on this CPU, for the benchmark's configured-eager baseline only
# (never for tests or CI). OpenBLAS 0.3.21 does not recognise some newer
# CPUs and falls back to generic SSE kernels; the variable overrides its
# detection when the library loads. An already set variable wins.
set -euo pipefail
if [[ -n "${OPENBLAS_CORETYPE:-}" ]]; then
  echo "$OPENBLAS_CORETYPE"
  exit 0
fi
vendor=$(awk -F': ' '/^vendor_id/ {print $2; exit}' /proc/cpuinfo)
family=$(awk -F': ' '/^cpu family/ {print $2; exit}' /proc/cpuinfo)
flags=" $(awk -F': ' '/^flags/ {print $2; exit}' /proc/cpuinfo) "
if [[ "$vendor" == GenuineIntel && "$flags" == *" avx512f "* ]]; then
  echo SkylakeX
elif [[ "$vendor" == AuthenticAMD && "$family" -ge 23 ]]; then
  echo Zen
elif [[ "$flags" == *" avx2 "* ]]; then
  echo Haswell
else
  echo Prescott
fi
