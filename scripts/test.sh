#!/usr/bin/env bash
# README quick start, command 2: build everything and run the whole test suite.
#   scripts/test.sh            normal build (build/)
#   SANITIZE=address scripts/test.sh   ASan+UBSan build (build-asan/)
#   SANITIZE=thread  scripts/test.sh   TSan build (build-tsan/)
# The plain build also opens every kind of report.html in headless Chromium (ctest label
# `browser`): it installs Debian's `chromium` with the build packages (BROWSER=0 does not; without
# chromium those tests report themselves skipped). Likewise it runs the official OpenAI Node SDK
# against the mock (ctest label `conformance`): scripts/node-deps.sh installs Debian's nodejs and
# npm when missing and the pinned npm packages into build/conformance/ (without node those tests
# report themselves skipped). The sanitizer builds leave both labels out: the page and the
# SDK's side are the same, and CI runs this script three times.
set -euo pipefail
cd "$(dirname "$0")/.."
skip_labels=()
case "${SANITIZE:-}" in
    "") dir=build; extra=()
        if [ "${BROWSER:-1}" != 0 ]; then "$(pwd)/scripts/deps.sh" chromium; fi ;;
    # Sanitizer builds: -O1 without debug info compiles fast on 2 cores and still runs quickly.
    address) dir=build-asan; BUILD_TYPE=Sanitize; skip_labels=(--label-exclude 'browser|conformance')
        extra=(-DPACER_SANITIZE=address -DPACER_BUILD_MICROBENCH=OFF -DCMAKE_CXX_FLAGS_SANITIZE=-O1) ;;
    thread) dir=build-tsan; BUILD_TYPE=Sanitize; skip_labels=(--label-exclude 'browser|conformance')
        extra=(-DPACER_SANITIZE=thread -DPACER_BUILD_MICROBENCH=OFF -DCMAKE_CXX_FLAGS_SANITIZE=-O1) ;;
    *) echo "pacer: SANITIZE must be address or thread" >&2; exit 2 ;;
esac
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} PACER_WARNINGS_AS_ERRORS=ON scripts/build.sh "$dir" "${extra[@]}"
if [ -z "${SANITIZE:-}" ]; then scripts/node-deps.sh "$dir"; fi
cd "$dir"
ctest "${skip_labels[@]}" --output-on-failure --parallel "${JOBS:-$(nproc)}" --timeout 300
