#!/usr/bin/env bash
# User-space instructions a packet costs the client and the mock (a benchmark, not a test),
# counted by Valgrind's callgrind: unlike CPU time on a shared VM, the count barely moves from
# one run to the next, so a change of a few per cent in pacer's own code shows in one run.
#
# For each build folder: `pacer run` under callgrind against a native `pacer mock`, then
# `pacer mock` under callgrind against a native `pacer run`, each at two durations. The
# difference between the two runs, divided by the difference in packets sent, is what one more
# packet costs (start-up and the end of the run cancel out). Everything under Valgrind runs
# ~50x slower, so the session count stays small (default 32: the one context thread still keeps
# the 80 ms grid).
#
#   bench/instructions.sh                               build/, 32 sessions, 5 s and 25 s
#   BUILDS="/tmp/before build" bench/instructions.sh    two builds side by side
#   EXTRA="--trace none" bench/instructions.sh          more `pacer run` options
#
# What it does not see: the kernel (system calls, loopback TCP, page cache), and time: a `rep
# movsb` or `rep stosb` (glibc's memcpy/memset for large sizes) counts one instruction per
# iteration, so copies weigh more here than in a CPU profile. Use it to compare builds, and
# `perf record` (docs/performance.md) to see where the time goes. Needs valgrind
# (`apt-get install valgrind`).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
command -v valgrind >/dev/null || { echo "bench/instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
sessions=${SESSIONS:-32}
short=${SHORT:-5s}
long=${LONG:-25s}
builds=${BUILDS:-$build}
out=${OUT:-bench-results/instructions-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

# callgrind_run TAG WHICH(client|mock) BUILD DURATION: one run, WHICH under callgrind; prints
# "instructions packets_sent late".
callgrind_run() {
    local tag=$1 which=$2 b=$3 d=$4
    local cg="valgrind --tool=callgrind --callgrind-out-file=$out/$tag.callgrind --log-file=$out/$tag.valgrind"
    local client=$pacer
    if [ "$which" = client ]; then
        client="$cg $b/pacer"
        start_mock "$pacer" "$out/$tag-mock.json"
    else
        MOCK_WRAPPER=$cg start_mock "$b/pacer" "$out/$tag-mock.json"
    fi
    # shellcheck disable=SC2086 # $client may be valgrind's command line
    $client run --url "ws://127.0.0.1:$port/v1/realtime" -c "$sessions" -d "$d" \
        ${EXTRA:-} --progress never --no-report -o "$out/$tag" >"$out/$tag.log" 2>&1 || true
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    python3 - "$out/$tag.callgrind" "$out/$tag/summary.json" <<'PY'
import json, sys
ir = sum(int(l.split()[1]) for l in open(sys.argv[1]) if l.startswith("totals:"))
p = json.load(open(sys.argv[2]))["pacing"]["packets"]
print(ir, p["sent"], p["late"])
PY
}

printf '%-24s %-7s %10s %12s %14s %8s\n' build side packets late instr_per_pkt steal_%
for b in $builds; do
    name=$(basename "$b")
    for which in client mock; do
        steal=$(steal_mark)
        read -r ir1 n1 late1 < <(callgrind_run "$name-$which-short" "$which" "$b" "$short")
        read -r ir2 n2 late2 < <(callgrind_run "$name-$which-long" "$which" "$b" "$long")
        per=$(( (ir2 - ir1) / (n2 - n1) ))
        printf '%-24s %-7s %10s %12s %14s %8s\n' "$name" "$which" "$n1/$n2" "$late1/$late2" "$per" "$(steal_since "$steal")"
    done
done
