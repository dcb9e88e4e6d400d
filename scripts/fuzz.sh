#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang in build-fuzz, then runs each one for a
# bounded time on a working copy of its seed corpus. Exits 1 if any target finds a crash.
#   scripts/fuzz.sh                        # every target, 30 s each
#   FUZZ_SECONDS=300 FUZZ_TARGETS="server_event wav" scripts/fuzz.sh
# Environment: FUZZ_SECONDS (default 30), FUZZ_TARGETS (default all), JOBS (build parallelism and
# targets fuzzed at once, default nproc), BUILD_DIR (default build-fuzz). New inputs go to $BUILD_DIR/fuzz-corpus/<target>
# (kept between runs; delete it to start from the seeds), crashes to
# $BUILD_DIR/fuzz-artifacts/<target>/, logs to $BUILD_DIR/fuzz-logs/. fuzz/corpus is only read.
# See docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
"$(pwd)/scripts/deps.sh" clang libclang-rt-14-dev

if ! command -v clang++ >/dev/null 2>&1 ||
   [ ! -f "$(clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)" ]; then
    echo "pacer: fuzzing needs clang and libFuzzer; run: sudo apt-get install clang libclang-rt-14-dev" >&2
    exit 1
fi

build_dir=${BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-30}
targets=${FUZZ_TARGETS:-"server_event wav duration schedule_json ws_url base64 replay_session sse exposition"}

# The whole of pacer_core gets coverage instrumentation and sanitizers from CMAKE_CXX_FLAGS;
# the fuzz targets add libFuzzer's main (fuzz/CMakeLists.txt). -fno-sanitize=function: clang 14
# cannot compile Asio coroutines with it (llvm/llvm-project#49689). -O1 keeps the build short.
launcher=() # ccache, when installed: as in scripts/build.sh
if command -v ccache >/dev/null 2>&1; then
    export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPACER_BUILD_FUZZERS=ON -DPACER_BUILD_TESTS=OFF -DPACER_BUILD_MICROBENCH=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -gline-tables-only' \
    -DCMAKE_CXX_FLAGS='-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function -fno-omit-frame-pointer' \
    >/dev/null
cmake --build "$build_dir" --parallel "${JOBS:-$(nproc)}" --target pacer_fuzzers

# UBSan findings in pacer_core (built with recoverable checks) must stop the run too.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1}

mkdir -p "$build_dir/fuzz-logs"
for t in $targets; do
    [ -x "$build_dir/fuzz/fuzz_$t" ] || { echo "pacer: no fuzz target '$t' ($build_dir/fuzz/fuzz_$t)" >&2; exit 2; }
done

# One target: runs it for $seconds, then writes its line of the table to fuzz-logs/<t>.result
# and its exit status to fuzz-logs/<t>.status.
fuzz_one() {
    local t=$1
    local exe="$build_dir/fuzz/fuzz_$t" work="$build_dir/fuzz-corpus/$t"
    local artifacts="$build_dir/fuzz-artifacts/$t" log="$build_dir/fuzz-logs/$t.log"
    local result="$build_dir/fuzz-logs/$t.result"
    mkdir -p "$work" "$artifacts"
    cp -r "fuzz/corpus/$t/." "$work/"
    local status=0
    "$exe" "$work" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
    local runs rate cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d" " -f2 || true)
    if [ "$status" -eq 0 ]; then
        printf '%-14s ok     %10s runs %8s exec/s  cov %s  corpus %s files\n' "$t" "${runs:-?}" \
            "${rate:-?}" "${cov:-?}" "$(find "$work" -type f | wc -l)" >"$result"
    else
        { printf '%-14s CRASH  %10s runs %8s exec/s  (exit %s, log %s)\n' "$t" "${runs:-?}" \
            "${rate:-?}" "$status" "$log"
          grep -aE '^(==[0-9]+==ERROR|SUMMARY|fuzz_|artifact_prefix|Test unit written)' "$log" |
            head -8 | sed 's/^/    /'; } >"$result"
    fi
    echo "$status" >"$build_dir/fuzz-logs/$t.status"
}

# Each target runs on one core: JOBS (default nproc) of them at a time, so the fuzzing step takes
# about (targets / JOBS) x FUZZ_SECONDS.
parallel=${JOBS:-$(nproc)}
for t in $targets; do
    fuzz_one "$t" &
    while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
done
wait
failed=()
for t in $targets; do
    cat "$build_dir/fuzz-logs/$t.result"
    [ "$(cat "$build_dir/fuzz-logs/$t.status")" -eq 0 ] || failed+=("$t")
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "pacer: fuzz targets crashed: ${failed[*]} (reproduce: $build_dir/fuzz/fuzz_<target> <artifact>)" >&2
    exit 1
fi
