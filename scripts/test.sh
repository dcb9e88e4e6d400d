#!/usr/bin/env bash
# README quick start, command 2: build everything and run the whole test suite.
#   scripts/test.sh            normal build (build/)
#   SANITIZE=address scripts/test.sh   ASan+UBSan build (build-asan/)
#   SANITIZE=thread  scripts/test.sh   TSan build (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${SANITIZE:-}" in
    "") dir=build; extra=() ;;
    # Sanitizer builds: -O1 without debug info compiles fast on 2 cores and still runs quickly.
    address) dir=build-asan; BUILD_TYPE=Sanitize
        extra=(-DPACER_SANITIZE=address -DPACER_BUILD_MICROBENCH=OFF -DCMAKE_CXX_FLAGS_SANITIZE=-O1) ;;
    thread) dir=build-tsan; BUILD_TYPE=Sanitize
        extra=(-DPACER_SANITIZE=thread -DPACER_BUILD_MICROBENCH=OFF -DCMAKE_CXX_FLAGS_SANITIZE=-O1) ;;
    *) echo "pacer: SANITIZE must be address or thread" >&2; exit 2 ;;
esac
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} PACER_WARNINGS_AS_ERRORS=ON scripts/build.sh "$dir" "${extra[@]}"
cd "$dir"
ctest --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 300
