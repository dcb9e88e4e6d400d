#!/usr/bin/env bash
# Overload-and-recovery benchmark (not a test; docs/serving.md, "Overload and recovery"):
# `pacer serve` against a `pacer native-mock` that stays degraded after an overload. A unit
# leaves UNIT_LATENCY_MS + PER_SESSION_MS x (sessions - 1) after its input: with the defaults
# 5 + 10 x (C - 1), so a fresh server keeps 8 sessions (75 ms < 80 ms) and 9 overload it (85 ms);
# after an overload every unit costs PENALTY_MS (40) more for RECOVERY_S seconds, so a degraded
# server keeps 4 (75 ms) and misses at 5. The client-timing limits are LIMIT_MS (200 ms): the
# figures in docs/serving.md were taken on a 2-core machine shared with other builds.
# On one mock process, in order: a sweep of a fresh server, the capacity search, the same sweep
# after it. Twice: with --recovery none (the search as it was) and with the default canary.
#   bench/recovery.sh
#   RECOVERY_S=60 DURATION=8s bench/recovery.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
duration=${DURATION:-5s}
latency_ms=${UNIT_LATENCY_MS:-5}
per_session_ms=${PER_SESSION_MS:-10}
penalty_ms=${PENALTY_MS:-40}
recovery_s=${RECOVERY_S:-20}
levels=${LEVELS:-2,4,6}
limit_ms=${LIMIT_MS:-200}
start=${START:-2}
slo=${SLO:-unit-miss-rate=0.05,underrun-ratio=0.02,ttfa-p95=1.5s}
out=${OUT:-bench-results/recovery-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

sweep() { # NAME
    "$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" -d "$duration" --concurrencies "$levels" \
        --slo "$slo" -o "$out/$1" --progress never --no-report --loop-lag-limit-ms "$limit_ms" \
        --send-lateness-limit-ms "$limit_ms" >"$out/$1.log" 2>&1 || true
    python3 - "$out/$1/summary.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
cells = []
for l in s["levels"]:
    u = l["aggregate"]["units"]
    cells.append(f"{l['concurrency']} {'met' if l['slo']['met'] else 'MISSED'} "
                 f"(unit miss {u['unit_miss_rate']:.3f}, lag p50 {u['unit_lag_s']['p50'] * 1e3:.0f} ms)")
print(f"{sys.argv[2]}: " + "; ".join(cells))
PY
}

round() { # NAME, then the search's own flags
    local name=$1 began=$SECONDS
    shift
    start_mock "$pacer" "$out/$name-mock.json" native-mock --unit-latency-ms "$latency_ms" \
        --per-session-cost-ms "$per_session_ms" --overload-penalty-ms "$penalty_ms" \
        --recovery-s "$recovery_s"
    sweep "$name-fresh-sweep"
    "$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" -d "$duration" --find-capacity \
        --slo "$slo" --start-level "$start" --max-level 64 -o "$out/$name-search" \
        --progress never --no-report --loop-lag-limit-ms "$limit_ms" \
        --send-lateness-limit-ms "$limit_ms" "$@" >"$out/$name-search.log" 2>&1 || true
    grep -E '^(search|capacity|verified|recovery|overloads|cost) ' "$out/$name-search.log" || true
    sweep "$name-sweep-after"
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    echo "$name: $((SECONDS - began)) s of wall time"
}

round before --recovery none
round after
