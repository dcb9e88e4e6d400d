#!/usr/bin/env bash
# HTTP client benchmark (not a test): how fast one `pacer http` keeps an open-loop schedule,
# and what a closed-loop tool (wrk) reports against the same server. `pacer llm-mock` runs as
# its own process with zero token delays, so the client is the bottleneck. For each rate in
# RATES: offered and achieved request rate, dispatch lag p50/p99/max, the client's and the
# mock's CPU in cores (user + system over the run's wall time), the verdict, and the host's CPU steal over the run (from
# /proc/stat; high steal means the figures measure the hypervisor). The sweep stops at the
# first rate whose schedule was not kept.
#
# Then, at CO_RATE requests/s against a mock that stalls PAUSE_MS out of every PAUSE_EVERY_MS
# (a server pausing like a garbage collector) with a TTFT of CO_TTFT_MS, `pacer http` and
# `wrk -t1 -cC` side by side, C = CO_RATE x TTFT (Little's law: about the same offered rate when
# the server does not stall; wrk has no rate of its own, it is a closed loop): wrk measures each request from when it was sent, so the requests
# a stall kept it from sending are never measured (coordinated omission); pacer's latency is
# anchored to the schedule and shows the stall to every request it delayed.
#   bench/http.sh
#   RATES=2000,5000 DURATION=5s bench/http.sh
#   RATES=200 DURATION=1s CO_RATE=200 bench/http.sh      # a smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
command -v wrk >/dev/null || scripts/deps.sh wrk # optional bench dependency (Debian: wrk)
rates=${RATES:-2000,5000,10000,20000,30000}
duration=${DURATION:-10s}
output_len=${OUTPUT_LEN:-4}
co_rate=${CO_RATE:-2000}
co_ttft_ms=${CO_TTFT_MS:-4}
# Little's law: C connections each busy ~TTFT per request offer about CO_RATE requests/s.
co_connections=${CO_CONNECTIONS:-$(( co_rate * co_ttft_ms / 1000 > 0 ? co_rate * co_ttft_ms / 1000 : 1 ))}
pause_ms=${PAUSE_MS:-100}
pause_every_ms=${PAUSE_EVERY_MS:-1000}
# Sockets in flight at most (the descriptor budget: pacer sizes it from --timeout and this cap);
# against the zero-delay mock a few dozen are in flight, so the cap does not bind (the summary's
# open_loop.cap.binding would say so).
max_in_flight=${MAX_IN_FLIGHT:-8192}
out=${OUT:-bench-results/http-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

# CPU jiffies (user + system) of the mock process so far.
mock_jiffies() {
    awk '{ print $14 + $15 }' "/proc/$mock_pid/stat"
}

# The host's cpu line of /proc/stat: total and steal jiffies.
cpu_jiffies() {
    awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $9 }' /proc/stat
}

# run_pacer NAME RATE: one `pacer http` run at RATE against the mock on $port; prints one row.
run_pacer() {
    local name=$1 rate=$2 status=0 before after times mock_before mock_after
    before=$(cpu_jiffies)
    mock_before=$(mock_jiffies)
    # bash's `time` gives the child's user and system CPU and the wall time.
    times=$( { TIMEFORMAT='%U %S %R'; time "$pacer" http --base-url "http://127.0.0.1:$port" \
        --model m --arrival constant --rate "$rate" --duration "$duration" \
        --output-len "$output_len" --ignore-eos --timeout 2s --max-concurrency "$max_in_flight" \
        -o "$out/$name" \
        >"$out/$name.log" 2>&1 || status=$?; } 2>&1 )
    after=$(cpu_jiffies)
    mock_after=$(mock_jiffies)
    python3 - "$out/$name/summary.json" "$rate" "$status" "$times" "$before" "$after" \
        "$(( mock_after - mock_before ))" "$(getconf CLK_TCK)" <<'PY'
import json, sys
summary, rate, status, times, before, after, mock_jiffies, tck = sys.argv[1:]
s = json.load(open(summary))
user, system, wall = map(float, times.split())
t0, st0 = map(int, before.split())
t1, st1 = map(int, after.split())
lag = s["open_loop"]["dispatch_lag_s"]
ms = lambda v: "-" if v is None else f"{v * 1e3:.3f}"
steal = 100.0 * (st1 - st0) / max(1, t1 - t0)
achieved = s["open_loop"]["requests"]["dispatched"] / max(s["duration"], 1e-9)
print(f"| {float(rate):g} | {achieved:.0f} | {s['completed']} | {ms(lag['p50'])} | {ms(lag['p99'])} "
      f"| {ms(lag['max'])} | {(user + system) / wall:.2f} "
      f"| {int(mock_jiffies) / int(tck) / wall:.2f} | {steal:.1f} % "
      f"| {'yes' if s['schedule_kept'] else 'NO'} | {status} |")
print(f"kept={1 if s['schedule_kept'] else 0}", file=sys.stderr)
PY
}

echo "## pacer http against pacer llm-mock (zero token delays, $output_len tokens), $duration per rate"
echo
echo "| offered req/s | achieved req/s | completed | lag p50 ms | lag p99 ms | lag max ms | client cores | mock cores | host steal | schedule kept | exit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
start_mock "$pacer" "$out/sweep-mock.json" llm-mock --ttft-ms 0 --itl-ms 0
for rate in ${rates//,/ }; do
    row=$(run_pacer "rate-$rate" "$rate" 2>"$out/rate-$rate.verdict")
    echo "$row"
    grep -q kept=1 "$out/rate-$rate.verdict" || { echo; echo "(schedule not kept at $rate/s: the sweep stops)"; break; }
done
kill -INT "$mock_pid"
wait "$mock_pid" || true

echo
echo "## coordinated omission: $co_rate req/s, TTFT $co_ttft_ms ms, the mock stalls $pause_ms ms every $pause_every_ms ms"
echo
start_mock "$pacer" "$out/co-mock.json" llm-mock --ttft-ms "$co_ttft_ms" --itl-ms 0 \
    --pause-ms "$pause_ms" --pause-every-ms "$pause_every_ms"
run_pacer co-pacer "$co_rate" >"$out/co-pacer.row" 2>/dev/null || true
python3 - "$out/co-pacer/summary.json" <<'PY' >"$out/co-pacer.figures"
import json, sys
s = json.load(open(sys.argv[1]))
ol = s["open_loop"]
f = lambda v: "-" if v is None else f"{v * 1e3:.3f}"
lat, unc = ol["latency_s"], ol["uncorrected_latency_s"]
print(f"| pacer http (open loop, from the schedule) | {s['request_throughput']:.0f} | {f(lat['p50'])} | {f(lat['p99'])} | {f(lat['max'])} |")
print(f"| pacer http, uncorrected (from dispatch) | {s['request_throughput']:.0f} | {f(unc['p50'])} | {f(unc['p99'])} | {f(unc['max'])} |")
PY
OUTPUT_LEN=$output_len wrk -t1 -c"$co_connections" -d"$duration" --latency \
    -s bench/http-wrk.lua "http://127.0.0.1:$port/v1/completions" >"$out/co-wrk.log" 2>&1 || true
kill -INT "$mock_pid"
wait "$mock_pid" || true
echo "| tool | achieved req/s | latency p50 ms | p99 ms | max ms |"
echo "|---|---|---|---|---|"
cat "$out/co-pacer.figures"
python3 - "$out/co-wrk.log" "$co_connections" <<'PY'
import re, sys
line = next((l for l in open(sys.argv[1]) if l.startswith("wrk-figures")), None)
if line is None:
    print(f"| wrk -t1 -c{sys.argv[2]} (closed loop) | wrk failed: see co-wrk.log | | | |")
else:
    f = dict(kv.split("=") for kv in line.split()[1:])
    print(f"| wrk -t1 -c{sys.argv[2]} (closed loop, from its own send) | {float(f['rps']):.0f} | {float(f['p50_ms']):.3f} | {float(f['p99_ms']):.3f} | {float(f['max_ms']):.3f} |")
PY
echo
echo "wrk offers what its $co_connections connection(s) allow (closed loop), not $co_rate/s: a stall"
echo "holds at most $co_connections of its requests, so it hides in its percentiles; pacer's"
echo "schedule kept arriving through each stall and every delayed request counts it."
echo "results: $out"
