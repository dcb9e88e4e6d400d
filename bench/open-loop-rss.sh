#!/usr/bin/env bash
# Open-loop memory (not a test): SESSIONS short sessions arriving at RATE per second against
# `pacer mock`, sampling the client's RSS and open descriptors every second. Every session ends
# long before the run does, so a finished session that kept its state (socket, timers, buffers)
# until the end would make RSS climb with the sessions served; it must stay flat. Prints RSS
# at 10 % / 50 % / 90 % of the samples, the least-squares slope after the warm-up, the peak and
# the descriptors' range (summed over the run's processes when PROCESSES > 1). `pacer run`
# sizes its descriptor check by the sessions the schedule can have in flight (arrivals within
# one timeout, 61 s here: about 3,100, 9,500 descriptors), so 10,000 sessions fit a limit of 20,000.
#   bench/open-loop-rss.sh                          10,000 sessions at 50/s (~200 s)
#   SESSIONS=6500 bench/open-loop-rss.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
sessions=${SESSIONS:-10000}
rate=${RATE:-50}
processes=${PROCESSES:-1}
out=${OUT:-bench-results/open-loop-rss-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

start_mock "$pacer" "$out/mock.json"

"$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" --rate "$rate" --sessions "$sessions" \
    --processes "$processes" -d 1s --progress never --no-report -o "$out/run" >"$out/run.log" 2>&1 &
run_pid=$!
echo "t_s,rss_kb,fds" >"$out/samples.csv"
t=0
while kill -0 "$run_pid" 2>/dev/null; do
    pids="$run_pid $(pgrep -P "$run_pid" | tr "\n" " " || true)"
    rss=$(for p in $pids; do awk '/VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null; done |
        awk '{s += $1} END {if (NR) print s}' || true)
    fds=$(for p in $pids; do ls "/proc/$p/fd" 2>/dev/null || true; done | wc -l)
    [ -n "$rss" ] && echo "$t,$rss,$fds" >>"$out/samples.csv"
    sleep 1 # a sampling period, not a synchronisation
    t=$((t + 1))
done
status=0
wait "$run_pid" || status=$?
kill -INT "$mock_pid"
wait "$mock_pid" || true

python3 - "$out" "$status" <<'PY'
import csv, json, sys
out, status = sys.argv[1], sys.argv[2]
rows = [tuple(map(float, (r["t_s"], r["rss_kb"], r["fds"]))) for r in csv.DictReader(open(f"{out}/samples.csv"))]
# Arrivals stop at the end; the last 5 % (the teardown and the summary) is not the trend.
steady = rows[len(rows) // 10:len(rows) - len(rows) // 20]
def slope(xs, ys):
    n = len(xs); mx = sum(xs) / n; my = sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0
at = lambda f: rows[min(len(rows) - 1, int(len(rows) * f))][1] / 1024
print(f"exit status {status}, samples {len(rows)}")
print(f"RSS at 10/50/90 %: {at(0.1):.0f} / {at(0.5):.0f} / {at(0.9):.0f} MB, peak {max(r[1] for r in rows) / 1024:.0f} MB")
print(f"RSS slope after warm-up: {slope([r[0] for r in steady], [r[1] for r in steady]) * 60:.1f} kB/min")
print(f"descriptors: min {min(r[2] for r in rows):.0f}, max {max(r[2] for r in rows):.0f}")
try:
    s = json.load(open(f"{out}/run/summary.json"))
    p = s['pacing']
    print(f"sessions complete {p['sessions']['complete']}, incomplete {p['sessions']['incomplete']}, "
          f"late packets {p['packets']['late']} of {p['packets']['sent']}")
except Exception as e:  # a summary-less run still reports its memory
    print(f"no summary: {e}")
PY
echo "results: $out"
