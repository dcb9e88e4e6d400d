#!/usr/bin/env bash
# README quick start, command 1: build pacer and run 256 paced sessions against the built-in
# mock, printing the summary table. Extra arguments go to `pacer run` (e.g. --url, -c, -d).
set -euo pipefail
cd "$(dirname "$0")/.."
# Warnings are errors in CI (scripts/test.sh); a user's optimised build only reports them.
BUILD_TYPE=Release PACER_WARNINGS_AS_ERRORS=OFF \
    scripts/build.sh build-release -DPACER_BUILD_TESTS=OFF -DPACER_BUILD_MICROBENCH=OFF
exec build-release/pacer run --concurrency 256 --duration 20s "$@"
