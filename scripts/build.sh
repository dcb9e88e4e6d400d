#!/usr/bin/env bash
# Configures (once) and builds pacer with CMake + Ninja.
#   scripts/build.sh [BUILD_DIR] [extra cmake -D options...]
# BUILD_TYPE (default Release) and PACER_WARNINGS_AS_ERRORS (default OFF; CI turns it ON) come from the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(pwd)/scripts/deps.sh"
build_dir=${1:-build}
shift || true
# ccache, when installed, makes rebuilds in another clone or build folder cheap: paths are
# hashed relative to the source tree, so every clone of this repository shares one cache.
launcher=()
if command -v ccache >/dev/null 2>&1; then
    # The test executables precompile <gtest/gtest.h>: ccache caches their objects only with
    # these sloppiness settings (its manual, "Precompiled headers").
    export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -G Ninja "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DPACER_WARNINGS_AS_ERRORS="${PACER_WARNINGS_AS_ERRORS:-OFF}" \
    -DPACER_UNITY_BUILD="${PACER_UNITY_BUILD:-ON}" "$@" >/dev/null
# BUILD_TARGETS (default: everything) names the targets to build, e.g. "pacer".
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
# Before a long build, say what it will take: the compile and link steps whose output is not
# there yet (`ninja -n` cannot tell: the glob check would re-run CMake), and the time such steps
# took on a fresh clone with no ccache hit on 2 cores, about 4.5 s each (2026-12-08, unity build:
# 50 steps of the pacer target in 2.7 minutes; README.md).
jobs=${JOBS:-$(nproc)}
steps=$(ninja -C "$build_dir" -t commands ${BUILD_TARGETS:-} 2>/dev/null |
    grep -oE ' (-o|qc) [^ ]*' | (cd "$build_dir" && while read -r _ out; do
        [ -e "$out" ] || echo; done) | wc -l)
if [ "${steps:-0}" -gt 20 ]; then
    minutes=$(( (steps * 45 * 2 / jobs + 599) / 600 ))
    echo "pacer: building ${BUILD_TARGETS:-everything} in $build_dir: $steps steps, up to about" \
        "$minutes min with $jobs jobs (less for what ccache already holds)" >&2
fi
cmake --build "$build_dir" "${targets[@]}" --parallel "$jobs"
