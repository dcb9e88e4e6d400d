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
    -DPACER_WARNINGS_AS_ERRORS="${PACER_WARNINGS_AS_ERRORS:-OFF}" "$@" >/dev/null
cmake --build "$build_dir" --parallel "${JOBS:-$(nproc)}"
