#!/usr/bin/env bash
# Soak (not a test): SESSIONS sessions for DURATION against `pacer mock`, sampling the client's
# RSS and open descriptors every second. After a warm-up (the first 10 % of the samples) both
# must stay flat: the script prints their least-squares slope (kB/min, descriptors/min) and the
# run's late packets.
#   bench/soak.sh                          1,024 sessions x 10 minutes
#   SESSIONS=256 DURATION=120s bench/soak.sh
#   EXTRA=--no-report bench/soak.sh        extra `pacer run` flags
# It also prints the whole process's peak RSS (GNU time), end of the run included, beside the
# peak sampled while the sessions ran: the end must not need more memory than the run.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
[ -x /usr/bin/time ] || scripts/deps.sh time # GNU time: optional bench dependency (Debian: time)
sessions=${SESSIONS:-1024}
duration=${DURATION:-600s}
out=${OUT:-bench-results/soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

start_mock "$pacer" "$out/mock.json"
steal=$(steal_mark)

# Under GNU time for the whole process's peak RSS, end of the run included (the summary,
# samples.json and report.html after the sessions): it must stay that of the steady state.
/usr/bin/time -f '%M' -o "$out/max_rss_kb" \
    "$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" -c "$sessions" -d "$duration" \
    --timeout "$(( ${duration%s} + 60 ))s" -o "$out/run" ${EXTRA:-} >"$out/run.log" 2>&1 &
time_pid=$!
run_pid=
while [ -z "$run_pid" ] && kill -0 "$time_pid" 2>/dev/null; do
    run_pid=$(pgrep -P "$time_pid" || true) # pacer, the child of this very `time`
    [ -n "$run_pid" ] || sleep 0.01
done
# Each sample also takes the time and the host's cumulative CPU and steal ticks (`steal_mark`),
# so that a stall of the sessions can be matched to the host's. The time is bash's own
# $EPOCHREALTIME (no Python started each second on the machine under test), turned into
# CLOCK_MONOTONIC, the receipts' clock, by one offset taken here.
clock_offset=$(python3 -c 'import time; print(time.monotonic() - time.time())')
echo "t_s,rss_kb,fds,realtime_s,all_ticks,steal_ticks" >"$out/samples.csv"
t=0
while kill -0 "$run_pid" 2>/dev/null; do
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$run_pid/status" 2>/dev/null || echo "")
    fds=$(ls "/proc/$run_pid/fd" 2>/dev/null | wc -l)
    now=$EPOCHREALTIME
    ticks=$(steal_mark)
    [ -n "$rss" ] && echo "$t,$rss,$fds,$now,${ticks/ /,}" >>"$out/samples.csv"
    sleep 1 # a sampling period, not a synchronisation
    t=$((t + 1))
done
wait "$time_pid" || true
echo "host CPU steal %: $(steal_since "$steal")"
kill -INT "$mock_pid"
wait "$mock_pid" || true

python3 - "$out" "$clock_offset" <<'PY'
import csv, json, sys
out = sys.argv[1]
clock_offset = float(sys.argv[2]) # CLOCK_MONOTONIC minus the real time
rows = [tuple(map(float, (r["t_s"], r["rss_kb"], r["fds"]))) for r in csv.DictReader(open(f"{out}/samples.csv"))]
# Steady state: after the warm-up (the first 10 %), and before the sessions end (descriptors
# falling below 90 % of their peak is the teardown, not a trend).
peak_fds = max(r[2] for r in rows)
last = max(i for i, r in enumerate(rows) if r[2] >= 0.9 * peak_fds)
steady_peak = max(r[1] for r in rows[:last + 1]) # while the sessions ran
rows = rows[len(rows) // 10:last + 1]
def slope(xs, ys):
    n = len(xs); mx = sum(xs) / n; my = sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0
t = [r[0] for r in rows]
print(f"samples after warm-up: {len(rows)}")
print(f"RSS slope: {slope(t, [r[1] for r in rows]) * 60:.1f} kB/min "
      f"(min {min(r[1] for r in rows):.0f} kB, max {max(r[1] for r in rows):.0f} kB)")
try:
    whole = float(open(f"{out}/max_rss_kb").read().split()[-1])
    end = "within the steady state" if whole <= 1.05 * steady_peak else "ABOVE the steady state"
    print(f"peak RSS: {whole / 1e3:.0f} MB over the whole process (end of run included), "
          f"{steady_peak / 1e3:.0f} MB sampled during the sessions: {end}")
except (OSError, ValueError, IndexError):
    print("peak RSS of the whole process: unknown (GNU time wrote nothing)")
print(f"descriptor slope: {slope(t, [r[2] for r in rows]) * 60:.2f} per min "
      f"(min {min(r[2] for r in rows):.0f}, max {max(r[2] for r in rows):.0f})")
# Late packets by second of the run (from the receipts), beside the host's steal that second.
import glob
late_at = {}
for path in glob.glob(f"{out}/run/session-*/input-send-receipts.json"):
    for a in json.load(open(path))["appends"]:
        if abs(a["start_s"] - a["scheduled_s"]) > 0.08:
            late_at[int(a["scheduled_s"])] = late_at.get(int(a["scheduled_s"]), 0) + 1
raw = [r for r in csv.DictReader(open(f"{out}/samples.csv"))]
steal_at = {}
for a, b in zip(raw, raw[1:]):
    d_all = float(b["all_ticks"]) - float(a["all_ticks"])
    if d_all > 0:
        steal_at[int(float(b["realtime_s"]) + clock_offset)] = 100 * (float(b["steal_ticks"]) - float(a["steal_ticks"])) / d_all
t0 = int(float(raw[0]["realtime_s"]) + clock_offset) if raw else 0 # the run's start, within a second
worst = sorted(late_at.items(), key=lambda kv: -kv[1])[:8]
if worst:
    print("seconds with late packets (second of the run: late packets, host steal % that second or the next):")
    print("  " + ", ".join(f"{s - t0:d}: {n} ({max(steal_at.get(s, 0), steal_at.get(s + 1, 0)):.1f} %)" for s, n in worst))
over = sum(1 for v in steal_at.values() if v > 5)
print(f"seconds with host steal over 5 %: {over} of {len(steal_at)}")
s = json.load(open(f"{out}/run/summary.json"))
p = s['pacing']
print(f"late packets: {p['packets']['late']} of {p['packets']['sent']}, qualified: {s['pacing_qualified']}, "
      f"|deviation| p99 {p['pacing_abs_deviation_s']['p99'] * 1e3:.2f} ms, max {p['pacing_abs_deviation_s']['max'] * 1e3:.2f} ms, "
      f"client {s['resources']['client_cpu_cores']:.2f} cores, peak RSS {s['resources']['peak_rss_bytes'] / 1e6:.0f} MB")
PY
echo "results: $out"
