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
. bench/lib.sh # sets pacer (building it when needed) and start_mock
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
        python3 - "$out" "$tag" "$(steal_since "$steal")" <<'PY'
import json, sys
out, tag, steal = sys.argv[1], sys.argv[2], sys.argv[3]
mock = json.load(open(f"{out}/{tag}-mock.json"))
mock_cores = mock["process_cpu_s"] / mock["wall_s"] if mock.get("wall_s") else 0
try:
    s = json.load(open(f"{out}/{tag}/summary.json"))
except OSError:
    print(f"{tag}: no summary (see {out}/{tag}.log)")
    sys.exit(0)
pc = s["pacing"]
dev = pc["pacing_abs_deviation_s"]
ms = lambda v: "-" if v is None else f"{v * 1e3:.2f}"
mode, k = tag.split("-")
print(f"{mode:<8} {k:<6} {pc['packets']['late']:<8} {ms(dev['p99']):<10} {ms(dev['max']):<10} "
      f"{ms(pc['loop_lag_s']['p99']):<11} {s['resources']['client_cpu_cores']:<12.2f} "
      f"{mock_cores:<10.2f} {steal}")
PY
        find "$out/$tag" -name trace.jsonl -delete
    done
done
echo "results: $out"
