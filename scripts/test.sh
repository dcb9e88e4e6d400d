#!/usr/bin/env bash
# README quick start, command 2: build everything and run the whole test suite.
#   scripts/test.sh            normal build (build/: the quick start's, whose objects it reuses)
#   SANITIZE=address scripts/test.sh   ASan+UBSan build (build-asan/)
#   SANITIZE=thread  scripts/test.sh   TSan build (build-tsan/)
# The plain build also opens every kind of report.html in headless Chromium (ctest label
# `browser`): it installs Debian's `chromium` with the build packages (BROWSER=0 does not; without
# chromium those tests report themselves skipped). Likewise it runs the official OpenAI Node SDK
# against the mock (ctest label `conformance`): scripts/node-deps.sh installs Debian's nodejs and
# npm when missing and the pinned npm packages into build/conformance/ (without node those tests
# report themselves skipped). The sanitizer builds leave both layers out: the page and the
# SDK's side are the same, and CI runs this script three times; the TSan build also leaves out the
# unit tests, which run on one thread (tests of shared state from many threads are async tests).
# Under a sanitizer the end-to-end tests whose subject is a decision (the capacity search's answer,
# its recovery waits) or a document's commands are left out too: they run minutes of the same code
# the plain build's run of them covers, at whatever speed the sanitizer allows.
set -euo pipefail
cd "$(dirname "$0")/.."
# Open MPI's mpirun (Debian's openmpi-bin) for every build: ScaleE2E.MpirunLaunchesThreeShards
# runs the multi-host path under a real launcher (as root with --allow-run-as-root, and
# --oversubscribe on a 2-core machine).
test_packages=(openmpi-bin)
case "${SANITIZE:-}" in
    "") dir=build; extra=()
        if [ "${BROWSER:-1}" != 0 ]; then test_packages+=(chromium); fi ;;
    # Sanitizer builds: -O1 without debug info compiles fast on 2 cores and still runs quickly.
    # Each builds only the test layers where its sanitizer can find something: ASan+UBSan all
    # but browser and conformance, TSan the layers with threads (the unit tests have none).
    address) dir=build-asan; BUILD_TYPE=Sanitize
        extra=(-DPACER_SANITIZE=address -DPACER_BUILD_MICROBENCH=OFF -DCMAKE_CXX_FLAGS_SANITIZE=-O1
               "-DPACER_TEST_LAYERS=unit;async;integration") ;;
    thread) dir=build-tsan; BUILD_TYPE=Sanitize
        extra=(-DPACER_SANITIZE=thread -DPACER_BUILD_MICROBENCH=OFF -DCMAKE_CXX_FLAGS_SANITIZE=-O1
               "-DPACER_TEST_LAYERS=async;integration") ;;
    *) echo "pacer: SANITIZE must be address or thread" >&2; exit 2 ;;
esac
"$(pwd)/scripts/deps.sh" "${test_packages[@]}"
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} PACER_WARNINGS_AS_ERRORS=ON scripts/build.sh "$dir" "${extra[@]}"
if [ -z "${SANITIZE:-}" ]; then scripts/node-deps.sh "$dir"; fi
cd "$dir"
skip=()
if [ -n "${SANITIZE:-}" ]; then
    skip=(-E '^(RecoveryE2E|CapacityE2E)[.]|^ServeE2E[.]FindCapacity|^Docs/DocCommandsOf[.]')
fi
ctest --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 300 "${skip[@]}"
