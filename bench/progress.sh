#!/usr/bin/env bash
# What the live progress line costs the pacing (a benchmark, not a test): `pacer mock` in its
# own process, then `pacer run` against it with `--progress never` and with `--progress always`
# on a pseudo-terminal (`script`, so the line is the terminal one, redrawn 4 times a second),
# alternating, REPEATS times each. One row per run: late packets, |deviation| p99 and max,
# loop-lag p99, client and mock CPU in cores, host CPU steal (bench/lib.sh).
#
#   bench/progress.sh                          1,024 sessions x 30 s, once each
#   SESSIONS=256 DURATION=10s REPEATS=2 bench/progress.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed), start_mock and run_figures
sessions=${SESSIONS:-1024}
duration=${DURATION:-30s}
repeats=${REPEATS:-1}
out=${OUT:-bench-results/progress-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

printf '%-8s %-6s %-8s %-10s %-10s %-11s %-12s %-10s %s\n' progress run late p99_ms max_ms lag_p99_ms client_cores mock_cores steal_%
for k in $(seq 1 "$repeats"); do
    for mode in never always; do
        tag="$mode-$k"
        start_mock "$pacer" "$out/$tag-mock.json"
        steal=$(steal_mark)
        cmd=("$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" -c "$sessions" -d "$duration"
             --no-report --progress "$mode" -o "$out/$tag")
        if [ "$mode" = always ]; then # stderr a terminal: the in-place line, 4 times a second
            script -q -e -c "$(printf '%q ' "${cmd[@]}")" /dev/null >"$out/$tag.log" 2>&1 || true
        else
            "${cmd[@]}" >"$out/$tag.log" 2>&1 || true
        fi
        kill -INT "$mock_pid"
        wait "$mock_pid" || true
        steal=$(steal_since "$steal")
        read -r late p99 max lag cores mock_cores < <(run_figures "$out" "$tag")
        if [ "$late" = no-summary ]; then
            echo "$tag: no summary (see $out/$tag.log)"
        else
            printf '%-8s %-6s %-8s %-10s %-10s %-11s %-12s %-10s %s\n' "$mode" "$k" "$late" "$p99" \
                "$max" "$lag" "$cores" "$mock_cores" "$steal"
        fi
        find "$out/$tag" -name trace.jsonl -delete
    done
done
echo "results: $out"
