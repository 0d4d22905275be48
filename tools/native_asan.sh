#!/usr/bin/env bash
# Runs the op database and the native-kernel tests against a debug build of tinytorch._C compiled with
# AddressSanitizer (-O1 -g -fsanitize=address): an out-of-bounds read or write in a kernel aborts the run with a
# report. The build happens in a temporary copy of the tree, so the installed extension is left alone.
#
#     bash tools/native_asan.sh [pytest args...]      (default: tests/test_ops.py tests/test_native_*.py)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z | xargs -0 -I{} cp --parents {} "$tmp"/
cd "$tmp"
TINYTORCH_NATIVE_DEBUG=1 python setup.py -q build_ext --inplace >/dev/null
# libstdc++ preloaded beside ASan so its __cxa_throw interceptor finds the real one (other extensions throw C++
# exceptions, e.g. pyopencl when no platform exists)
asan="$(${CXX:-g++} -print-file-name=libasan.so) $(${CXX:-g++} -print-file-name=libstdc++.so)"
# CPython's allocator trips the leak checker at exit; only memory errors matter here. The OpenCL platform is hidden
# (OCL_ICD_VENDORS): the cpu kernels are the subject.
if [ $# -eq 0 ]; then set -- tests/test_ops.py $(ls tests/test_native_*.py); fi
LD_PRELOAD="$asan" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:log_path="$tmp/asan" OCL_ICD_VENDORS="$tmp/no-icd" \
  PYTHONPATH="$tmp" python -m pytest -q -p no:warnings -x "$@" || { cat "$tmp"/asan.* 2>/dev/null; exit 1; }
