#!/usr/bin/env bash
# Serving benchmark (not a test): a `pacer serve` sweep against `pacer native-mock` with its
# capacity model (unit lag = L + P x (open sessions - 1), docs/native-mock.md), then the
# capacity search against SLOs. The knee is where the lag passes one 80 ms unit:
# 20 + 0.2 x (C - 1) > 80 past C = 301 with the defaults.
#   bench/serve.sh
#   LEVELS=1,8,64 DURATION=5s SEARCH=0 bench/serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
levels=${LEVELS:-1,2,4,8,16,32,64,128,256,512,1024}
duration=${DURATION:-10s}
latency_ms=${UNIT_LATENCY_MS:-20}
cost_ms=${PER_SESSION_COST_MS:-0.2}
slo=${SLO:-unit-miss-rate=0.01,underrun-ratio=0.02,ttfa-p95=1.5s}
stagger_ms=${STAGGER_MS:-0} # 0: every session on one grid (S-W); 80: spread over the period
out=${OUT:-bench-results/serve-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

run_against_mock() { # NAME, then pacer serve's own flags
    local name=$1
    shift
    start_mock "$pacer" "$out/$name-mock.json" native-mock \
        --unit-latency-ms "$latency_ms" --per-session-cost-ms "$cost_ms"
    local status=0
    "$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" -d "$duration" --stagger-ms "$stagger_ms" \
        -o "$out/$name" "$@" \
        >"$out/$name.log" 2>&1 || status=$?
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    cat "$out/$name.log"
    echo "$name: pacer serve exit status $status (0: every level valid, 3: some level not valid)"
}

run_against_mock sweep --concurrencies "$levels"
[ "${SEARCH:-1}" = 0 ] || run_against_mock capacity --find-capacity --slo "$slo"
