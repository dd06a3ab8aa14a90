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
# A program that links only ktune::ktune and sets spdlog's level sees the library's debug
# messages (deployment.md): both use the one compiled spdlog and its logger.
mkdir -p "$build/consumer-test/logging"
cat > "$build/consumer-test/logging/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(ktune_logging LANGUAGES CXX)
find_package(ktune REQUIRED)
add_executable(logging logging.cpp)
target_compile_features(logging PRIVATE cxx_std_20)
target_link_libraries(logging PRIVATE ktune::ktune)
CMAKE
cat > "$build/consumer-test/logging/logging.cpp" <<'CPP'
#include <spdlog/spdlog.h>

#include "ktune/dispatch.h"

int main(int, char** argv) {
  spdlog::set_level(spdlog::level::debug);
  ktune::Dispatcher dispatcher(argv[1]);
  (void)dispatcher.select("copy", ktune::Problem::from_key("copy|N=1024|dtype=f32"),
                          ktune::Device::h200());
}
CPP
cmake -S "$build/consumer-test/logging" -B "$build/consumer-test/logging/build" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$build/consumer-test/logging/build" >/dev/null
out=$("$build/consumer-test/logging/build/logging" \
      "$src/benchmarks/results/2026-11-30-h200/demo-h200.jsonl" 2>&1)
echo "$out" | grep -q "dispatch: copy" ||
  { echo "spdlog::set_level in a program did not reach the library's logger: $out"; exit 1; }
echo "built $n example(s) against the installed package in $prefix"
