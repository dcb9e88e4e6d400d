#!/usr/bin/env bash
# What telemetry costs the client (a benchmark, not a test): `pacer mock` in its own process,
# then `pacer run` against it without telemetry and with `--gpu-telemetry nvml` read from the
# tests' fake NVML (tests/fakes/fake_nvml.cpp: 2 GPUs, every field; a real NVML call costs
# more, tens of µs, and the figure here is the sampling thread's own share), alternating,
# REPEATS times each. One row per run: late packets, |deviation| p99 and max, loop-lag p99,
# client CPU in cores, the sampling thread's CPU seconds and its samples, host CPU steal.
#
#   bench/telemetry.sh                               1,024 sessions x 30 s, 100 ms, once each
#   SESSIONS=256 DURATION=10s INTERVAL=10ms REPEATS=2 bench/telemetry.sh
# Needs the test build's fake NVML: cmake --build build --target pacer_fake_nvml
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed), start_mock and run_figures
sessions=${SESSIONS:-1024}
duration=${DURATION:-30s}
repeats=${REPEATS:-1}
interval=${INTERVAL:-100ms}
fake=${FAKE_NVML:-build/tests/libpacer_fake_nvml.so} # the test build's
[ -f "$fake" ] || { echo "bench/telemetry.sh: no fake NVML at $fake (build pacer_fake_nvml)" >&2; exit 2; }
out=${OUT:-bench-results/telemetry-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
cat >"$out/nvml-script" <<'SCRIPT'
devices 2
energy_mj 0 linear 1000000 300000
energy_mj 1 linear 2000000 250000
power_mw 0 const 300000
power_mw 1 const 250000
util_gpu 0 const 90
util_gpu 1 const 80
mem_used 0 const 60000000000
mem_used 1 const 50000000000
sm_clock 0 const 1980
sm_clock 1 const 1980
temperature 0 const 65
temperature 1 const 63
SCRIPT
export PACER_FAKE_NVML_SCRIPT="$out/nvml-script"

printf '%-6s %-4s %-6s %-9s %-9s %-11s %-12s %-13s %-8s %s\n' mode run late p99_ms max_ms \
    lag_p99_ms client_cores sampler_cpu_s samples steal_%
for k in $(seq 1 "$repeats"); do
    for mode in off nvml; do
        tag="$mode-$k"
        start_mock "$pacer" "$out/$tag-mock.json"
        steal=$(steal_mark)
        extra=()
        if [ "$mode" = nvml ]; then
            extra=(--gpu-telemetry nvml --nvml-library "$fake" --telemetry-interval "$interval"
                   --idle-baseline 0)
        fi
        "$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" -c "$sessions" -d "$duration" \
            --no-report --progress never "${extra[@]}" -o "$out/$tag" >"$out/$tag.log" 2>&1 || true
        kill -INT "$mock_pid"
        wait "$mock_pid" || true
        steal=$(steal_since "$steal")
        read -r late p99 max lag cores _ < <(run_figures "$out" "$tag")
        if [ "$late" = no-summary ]; then
            echo "$tag: no summary (see $out/$tag.log)"
        else
            # The sampling thread's own CPU and its samples (none without telemetry).
            read -r sampler samples < <(python3 -c '
import json, sys
t = json.load(open(sys.argv[1])).get("telemetry", {})
cpu = t.get("sampler_cpu_s", 0)
print(f"{cpu:.4f}", t.get("samples", 0))' "$out/$tag/summary.json")
            printf '%-6s %-4s %-6s %-9s %-9s %-11s %-12s %-13s %-8s %s\n' "$mode" "$k" "$late" \
                "$p99" "$max" "$lag" "$cores" "$sampler" "$samples" "$steal"
        fi
        find "$out/$tag" -name trace.jsonl -delete
    done
done
echo "results: $out"
