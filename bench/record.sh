#!/usr/bin/env bash
# Recorder benchmark (not a test): `pacer record` of a synthetic dataset against
# `pacer native-mock` in its own process, 2 x C variants per run (C at once), with bursts of 1
# and 25 units, and the table of docs/recording.md: unqualified runs, sessions with a violation,
# late packets, deviation p99 and max, recorder and worker cores.
#   bench/record.sh
#   LEVELS=24,32 BURSTS=1 MIN_S=5 MAX_S=10 bench/record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
levels=${LEVELS:-24,32,64,128}
bursts=${BURSTS:-1,25}
min_s=${MIN_S:-20}
max_s=${MAX_S:-60}
out=${OUT:-bench-results/record-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

largest=$(tr ',' '\n' <<<"$levels" | sort -n | tail -1)
# 4 subsets x K samples x 2 variants = 2 x C variants when K = C / 4 (rounded up).
"$pacer" dataset synth --subsets 4 --per-subset $(( (largest + 3) / 4 )) --min-s "$min_s" \
    --max-s "$max_s" --seed 1 -o "$out/dataset" >/dev/null

printf '%6s %5s %11s %9s %6s %8s %8s %9s %9s\n' C burst unqualified violating late \
    "p99 ms" "max ms" "rec cores" "wrk cores"
for burst in ${bursts//,/ }; do
    for c in ${levels//,/ }; do
        name=c$c-burst$burst
        start_mock "$pacer" "$out/$name-mock.json" native-mock --burst-units "$burst"
        status=0
        "$pacer" record --url "ws://127.0.0.1:$port/v1/realtime" --dataset "$out/dataset" \
            --per-subset $(( (c + 3) / 4 )) --concurrency "$c" -o "$out/$name" \
            >"$out/$name.log" 2>&1 || status=$?
        kill -INT "$mock_pid"
        wait "$mock_pid" || true
        python3 - "$out/$name/run.json" "$c" "$burst" "$status" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
load, pacing, cpu = r["load"], r["load"]["pacing"], r["load"]["cpu"]
violating = sum(1 for s in r["samples"] for v in s["variants"].values()
                if v.get("violations") or v["status"] != "pass")
p99 = pacing["deviation_s"]["p99"]
print(f'{sys.argv[2]:>6} {sys.argv[3]:>5} {0 if pacing["pacing_qualified"] else 1:>11} '
      f'{violating:>9} {pacing["late_packets"]:>6} {(p99 or 0) * 1e3:>8.1f} '
      f'{pacing["max_abs_deviation_s"] * 1e3:>8.1f} {cpu["recorder_cores"]:>9.2f} '
      f'{cpu["worker_cores"]:>9.2f}   (exit {sys.argv[4]})')
PY
    done
done
