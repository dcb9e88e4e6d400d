#!/usr/bin/env bash
# The real-GPU check of issue 31 (docs/telemetry.md): NVML's energy counter against its power
# integrated over time, on a GPU kept busy by a PyTorch matrix-multiply loop while
# `pacer serve --gpu-telemetry nvml:GPU` runs a short sweep against `pacer native-mock`.
# It prints what it measured (both energies over the same span of samples and their
# difference in percent) and claims nothing it did not measure. Not a test: it needs a GPU.
#
#   bench/gpu-energy.sh                          GPU 0, 8 sessions x 20 s, 100 ms samples
#   bench/gpu-energy.sh --gpu 1 --duration 60s --concurrencies 8,16 --interval 50ms
#   bench/gpu-energy.sh --size 4096 --warm 20s --out bench-results/gpu-energy-h200
#
# Options: --gpu INDEX (0), --duration D (20s: each level's -d), --concurrencies LIST (8),
# --interval D (100ms: --telemetry-interval), --warm D (10s: the load runs this long before
# pacer starts), --size N (8192: the square fp16 matrices multiplied), --tolerance PCT (5: the
# difference it calls "within"), --out DIR (new; default bench-results/gpu-energy-<UTC time>),
# --compare DIR (no load, no run: only the comparison, of a pacer serve folder sampled before).
# Environment: PACER (a pacer binary; default: bench/lib.sh's Release build), PYTHON (python3).
# Exit status: 0 measured; 1 a step failed or there was nothing to compare (no energy counter);
# 2 bad arguments, or what the check needs is missing here (NVML, the GPU, PyTorch with CUDA).
set -euo pipefail
here=$PWD # --out and --compare are relative to where it was started
cd "$(dirname "$0")/.."
me=bench/gpu-energy.sh
refuse() { echo "$me: $*" >&2; exit 2; }
duration_ok() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?(ms|s|m)$ ]]; }

# compare FOLDER SOURCE: prints the counter's and the integrated power's energy of SOURCE over
# the sweep's window of FOLDER (a pacer serve result), and their difference.
# Both energies over the same span: from the first to the last sample of the GPU inside the
# sweep's window. The counter: the difference of its readings (mJ). The power: trapezoids over
# the same samples. NVML's power is an average over the driver's own window (about 1 s), so
# the two differ at the span's edges by up to that window's worth of a power change.
compare() {
    "$python" - "$1" "$2" "$tolerance" <<'PY'
import json, sys
folder, source, tolerance = sys.argv[1], sys.argv[2], float(sys.argv[3])
window = json.load(open(f"{folder}/summary.json")).get("telemetry", {}).get("window", {})
t0, t1 = window.get("start_s"), window.get("end_s")
rows = []
for line in open(f"{folder}/telemetry.jsonl"):
    s = json.loads(line)
    if s.get("source") != source or "error" in s:
        continue
    if t0 is not None and not (t0 <= s["monotonic_s"] <= t1):
        continue
    rows.append(s)
if len(rows) < 2:
    sys.exit(f"bench/gpu-energy.sh: {len(rows)} sample(s) of {source} in the window: nothing to compare")
span = rows[-1]["monotonic_s"] - rows[0]["monotonic_s"]
with_counter = [r for r in rows if "energy_mj" in r]
with_power = [r for r in rows if r.get("power_w") is not None]
print(f"samples    {len(rows)} of {source} over {span:.3f} s (the sweep's window "
      f"{t0} .. {t1}, pacer's clock)")
if len(with_counter) != len(rows):
    sys.exit(f"bench/gpu-energy.sh: {len(rows) - len(with_counter)} sample(s) without the energy "
             "counter (a GPU older than Volta has none): nothing to compare")
if len(with_power) != len(rows):
    sys.exit(f"bench/gpu-energy.sh: {len(rows) - len(with_power)} sample(s) without power: "
             "nothing to compare")
counter_j = 0.0
for a, b in zip(rows, rows[1:]):
    d = b["energy_mj"] - a["energy_mj"]
    if d < 0:
        sys.exit(f"bench/gpu-energy.sh: the counter went back at {b['monotonic_s']} (a reset or "
                 "wrap): not compared")
    counter_j += d / 1e3
power_j = sum((a["power_w"] + b["power_w"]) / 2 * (b["monotonic_s"] - a["monotonic_s"])
              for a, b in zip(rows, rows[1:]))
diff = 100 * (power_j - counter_j) / counter_j if counter_j > 0 else float("nan")
print(f"counter    {counter_j:.3f} J  (mean {counter_j / span:.2f} W)")
print(f"power      {power_j:.3f} J  (mean {power_j / span:.2f} W, trapezoids of power_w)")
print(f"difference {diff:+.3f} % of the counter's figure "
      f"({'within' if abs(diff) <= tolerance else 'NOT within'} {tolerance:g} %)")
peak = max(r["power_w"] for r in rows)
util = sorted(r["utilization_pct"] for r in rows if r.get("utilization_pct") is not None)
print(f"peak power {peak:.1f} W; utilisation p50 "
      + (f"{util[len(util) // 2]:g} %" if util else "not read"))
PY
}

gpu=0 duration=20s concurrencies=8 interval=100ms warm=10s size=8192 tolerance=5 out='' only=''
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --gpu | --duration | --concurrencies | --interval | --warm | --size | --tolerance | --out | \
        --compare)
        [ $# -ge 2 ] || refuse "$1 needs a value"
        case $1 in
        --gpu) gpu=$2 ;;
        --duration) duration=$2 ;;
        --concurrencies) concurrencies=$2 ;;
        --interval) interval=$2 ;;
        --warm) warm=$2 ;;
        --size) size=$2 ;;
        --tolerance) tolerance=$2 ;;
        --out) out=$2; [[ $out == /* ]] || out=$here/$out ;;
        --compare) only=$2; [[ $only == /* ]] || only=$here/$only ;;
        esac
        shift 2 ;;
    *) refuse "unknown argument '$1' (see --help)" ;;
    esac
done
[[ $gpu =~ ^[0-9]+$ ]] || refuse "--gpu '$gpu' is not a GPU index"
duration_ok "$duration" || refuse "--duration '$duration' is not a duration such as 20s"
duration_ok "$interval" || refuse "--interval '$interval' is not a duration such as 100ms"
duration_ok "$warm" || refuse "--warm '$warm' is not a duration such as 10s"
[[ $concurrencies =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
    refuse "--concurrencies '$concurrencies' is not a list such as 8,16"
[[ $size =~ ^[1-9][0-9]*$ ]] || refuse "--size '$size' is not a positive integer"
[[ $tolerance =~ ^[0-9]+(\.[0-9]+)?$ ]] || refuse "--tolerance '$tolerance' is not a percentage"
python=${PYTHON:-python3}
if [ -n "$only" ]; then # the comparison alone, of a folder sampled before
    if [ ! -f "$only/telemetry.jsonl" ] || [ ! -f "$only/summary.json" ]; then
        refuse "--compare $only has no telemetry.jsonl and summary.json of a pacer serve"
    fi
    command -v "$python" >/dev/null || refuse "no $python"
    compare "$only" "nvml:$gpu"
    exit
fi
out=${out:-bench-results/gpu-energy-$(date -u +%Y%m%dT%H%M%SZ)}
[ ! -e "$out" ] || refuse "--out $out exists (the results go to a new folder)"
command -v "$python" >/dev/null || refuse "no $python (it reads NVML's presence and runs the load)"

# What the check needs, before anything is built or started: NVML and the GPU, then PyTorch.
"$python" - "$gpu" <<'PY' || exit 2
import ctypes, sys
gpu = int(sys.argv[1])
try:
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
except OSError as e:
    sys.exit(f"bench/gpu-energy.sh: no NVML here, nothing measured: {e}")
if nvml.nvmlInit_v2() != 0:
    sys.exit("bench/gpu-energy.sh: NVML does not initialise (no driver?), nothing measured")
count = ctypes.c_uint(0)
nvml.nvmlDeviceGetCount_v2(ctypes.byref(count))
if gpu >= count.value:
    sys.exit(f"bench/gpu-energy.sh: there is no GPU {gpu}: NVML sees {count.value}")
PY
"$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    refuse "PyTorch with CUDA is not importable by $python: no GPU-bound load to run, nothing measured"

if [ -n "${PACER:-}" ]; then
    BUILD_DIR=$(dirname "$PACER")
    export BUILD_DIR
fi
# shellcheck source=bench/lib.sh
. bench/lib.sh # sets pacer (building it when needed) and start_mock (mock_pid, port)
mkdir -p "$out"
load_pid='' mock_pid=''
cleanup() {
    [ -z "$load_pid" ] || kill "$load_pid" 2>/dev/null || true
    [ -z "$mock_pid" ] || kill -INT "$mock_pid" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT

# The GPU-bound load: fp16 matrix multiplies back to back on the GPU, until killed. It says
# "ready" once the first product is done (the CUDA context and kernels are up).
"$python" - "$gpu" "$size" >"$out/load.log" 2>&1 <<'PY' &
import sys, torch
gpu, n = int(sys.argv[1]), int(sys.argv[2])
device = torch.device(f"cuda:{gpu}")
a = torch.randn(n, n, device=device, dtype=torch.float16)
b = torch.randn(n, n, device=device, dtype=torch.float16)
torch.matmul(a, b)
torch.cuda.synchronize(device)
print("ready", flush=True)
while True:
    for _ in range(16):
        c = torch.matmul(a, b)
    torch.cuda.synchronize(device)
PY
load_pid=$!
for _ in $(seq 1 600); do # at most 60 s for the context to come up
    grep -q '^ready' "$out/load.log" 2>/dev/null && break
    kill -0 "$load_pid" 2>/dev/null || { echo "$me: the load ended:" >&2; cat "$out/load.log" >&2; exit 1; }
    sleep 0.1
done
grep -q '^ready' "$out/load.log" || { echo "$me: the load never said ready ($out/load.log)" >&2; exit 1; }
echo "load: ${size}x${size} fp16 matmul loop on GPU $gpu (pid $load_pid); warming for $warm"
sleep "$(awk -v d="$warm" 'BEGIN { v = d + 0; if (d ~ /ms$/) v /= 1000; else if (d ~ /m$/) v *= 60; print v }')"

start_mock "$pacer" "$out/mock.json" native-mock
echo "pacer serve: levels $concurrencies x $duration, --gpu-telemetry nvml:$gpu every $interval"
"$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" --concurrencies "$concurrencies" \
    -d "$duration" --gpu-telemetry "nvml:$gpu" --telemetry-interval "$interval" \
    --idle-baseline 0 --progress never --no-report -o "$out/serve" >"$out/serve.log" 2>&1 ||
    echo "$me: pacer serve exited $? (its log: $out/serve.log); comparing what it sampled"
kill -INT "$mock_pid" 2>/dev/null || true
kill "$load_pid" 2>/dev/null || true
[ -f "$out/serve/telemetry.jsonl" ] || { echo "$me: no $out/serve/telemetry.jsonl" >&2; exit 1; }

compare "$out/serve" "nvml:$gpu"
echo "results: $out (summary.json, telemetry.jsonl, serve.log, load.log)"
