#!/usr/bin/env bash
# Capacity-search benchmark (not a test): `pacer serve --find-capacity` against a
# `pacer native-mock` that behaves like the GPU server of the field report: one shared compute
# worker (each 80 ms unit costs SERVICE_MS of it, FIFO across sessions, so the backlog of an
# overload outlives its sessions) and a cold start (the first run of a new, larger batch size
# pays COLD_START_MS a unit for COLD_START_S seconds). The knee is the largest C with
# C x SERVICE_MS + UNIT_LATENCY_MS < 80 ms: 38 with the defaults (38 x 2 + 2 = 78).
# Two searches from the same start level: the classic one (no confirmation, no verification:
# it answers "first level - 1") and the default one (confirmation, settle, verification).
#   bench/capacity.sh
#   START=16 DURATION=10s bench/capacity.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
duration=${DURATION:-8s}
start=${START:-8}
service_ms=${SERVICE_MS:-2}
latency_ms=${UNIT_LATENCY_MS:-2}
cold_ms=${COLD_START_MS:-100}
cold_s=${COLD_START_S:-3}
settle=${SETTLE:-5s}
slo=${SLO:-unit-miss-rate=0.01,underrun-ratio=0.02,ttfa-p95=1.5s}
out=${OUT:-bench-results/capacity-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

search() { # NAME, then pacer serve's own flags
    local name=$1 began=$SECONDS status=0
    shift
    # A fresh mock for each search: its first level is cold, as after a server start.
    start_mock "$pacer" "$out/$name-mock.json" native-mock --service-ms "$service_ms" \
        --unit-latency-ms "$latency_ms" --cold-start-ms "$cold_ms" --cold-start-s "$cold_s"
    "$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" -d "$duration" --find-capacity \
        --slo "$slo" --start-level "$start" --max-level 256 --settle "$settle" \
        --server-stats "http://127.0.0.1:$port/stats" -o "$out/$name" --progress never "$@" \
        >"$out/$name.log" 2>&1 || status=$?
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    grep -E '^(search|capacity|verified|cost) ' "$out/$name.log" || true
    echo "$name: exit status $status, $((SECONDS - began)) s of wall time"
}

# The tail unit: a prompt server misses no unit at any input length (TAIL_SESSIONS per level).
tail_check() {
    start_mock "$pacer" "$out/tail-mock.json" native-mock --unit-latency-ms 5
    local d
    for d in 3s 8s 10s; do
        "$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" -d "$d" -c "${TAIL_SESSIONS:-8}" \
            -o "$out/tail-$d" --progress never --no-report >"$out/tail-$d.log" 2>&1 || true
        python3 - "$out/tail-$d/summary.json" "$d" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
u = s["levels"][0]["aggregate"]["units"]
t = u["tail_unit_lag_s"]
refs = sorted({x["units"]["tail_unit_reference"] for x in s["runs"][0]["sessions"]})
print(f"tail {sys.argv[2]}: unit miss rate {u['unit_miss_rate']} ({u['missed_units']} of "
      f"{u['expected_units']}), tail unit lag p50 {t['p50'] * 1e3:.1f} ms max {t['max'] * 1e3:.1f} ms "
      f"(reference {', '.join(refs)}), unit lag max {u['unit_lag_s']['max'] * 1e3:.1f} ms")
PY
    done
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
}

[ "${TAIL:-1}" = 0 ] || tail_check
search classic --confirm 0 --verify-repeats 0
search confirmed
