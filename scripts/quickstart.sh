#!/usr/bin/env bash
# README quick start, command 1: build pacer and run 256 paced sessions against the built-in
# mock, printing the summary table. Extra arguments go to `pacer run` (e.g. --url, -c, -d).
# It builds in build/ exactly as scripts/test.sh (command 2) configures it (RelWithDebInfo,
# warnings as errors, the tests configured) but only the `pacer` target: command 2 then reuses
# every object built here and compiles only the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_TYPE=RelWithDebInfo PACER_WARNINGS_AS_ERRORS=ON BUILD_TARGETS=pacer scripts/build.sh build
exec build/pacer run --concurrency 256 --duration 20s "$@"
