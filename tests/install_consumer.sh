#!/usr/bin/env bash
# Proves the installed package works for an outside project: installs the build tree into a
# scratch prefix, then configures and builds examples/ on its own with find_package(ktune), and
# checks that no program built so links the GPU driver.
# Usage: install_consumer.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1; src=$2
prefix=$build/consumer-test/prefix
rm -rf "$build/consumer-test"
cmake --install "$build" --prefix "$prefix" >/dev/null
# --no-as-needed: the linker keeps every library it is given, so a driver library reaching the
# link line through ktune::ktune's dependencies would show as a NEEDED entry below.
cmake -S "$src/examples" -B "$build/consumer-test/build" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXE_LINKER_FLAGS="-Wl,--no-as-needed" >/dev/null
cmake --build "$build/consumer-test/build" -j "${KTUNE_JOBS:-2}" >/dev/null
n=$(find "$build/consumer-test/build" -maxdepth 1 -type f -name 'example_*' -perm -u+x | wc -l)
if [ "$n" -lt 1 ]; then echo "no example program was built against the installed ktune"; exit 1; fi
for program in "$build/consumer-test/build"/example_*; do
  if readelf -d "$program" | grep -q 'NEEDED.*libcuda\.so'; then
    echo "$program needs libcuda.so (the driver must never be linked: no GPU machine could start it)"
    exit 1
  fi
done
test -f "$prefix/lib/cmake/ktune/ktuneConfig.cmake"
test -x "$prefix/bin/ktune"
# The prefix differs from the one the build was configured with: the installed ktune and a
# program built against the package must still find $prefix/libexec/ktune-worker (their compile
# helpers; no GPU needed), without KTUNE_WORKER.
unset KTUNE_WORKER
for run in "$prefix/bin/ktune compile --template copy --samples 0 --compile-processes 1 -j 1" \
           "$build/consumer-test/build/example_compile_for_h200"; do
  out=$(cd / && $run 2>&1) || { echo "$run failed: $out"; exit 1; }
  if echo "$out" | grep -q "no compile helper"; then
    echo "$run did not find $prefix/libexec/ktune-worker: $out"
    exit 1
  fi
done
out=$(cd / && "$build/consumer-test/build/example_compile_for_h200" 2>&1)
echo "$out" | grep -q "compiled in a helper process" ||
  { echo "example_compile_for_h200 compiled without its helper: $out"; exit 1; }
echo "built $n example(s) against the installed package in $prefix"
