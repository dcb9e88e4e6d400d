#!/usr/bin/env bash
# Replay verdicts of the native mock's fault modes (not a test; the end-to-end tests assert
# them): for each mode, one faulty session and one healthy one (`--fault-sessions 0`) streamed
# by `pacer serve` at level 2, then `pacer replay` of the level; prints each session's verdict
# and its first violation or error.
#   bench/replay-faults.sh
#   MODES="server_error timeout" bench/replay-faults.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
modes=${MODES:-none server_error delayed_fatal nonfatal_error timeout malformed_json nonfinite disconnect linger close_without_update}
out=${OUT:-bench-results/replay-faults-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

for mode in $modes; do
    start_mock "$pacer" "$out/$mode-mock.json" native-mock --fault "$mode" --fault-sessions 0
    "$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" -c 2 -d 2s --timeout 5s \
        -o "$out/$mode" >"$out/$mode.log" 2>&1 || true
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    "$pacer" replay "$out/$mode/c2" >"$out/$mode-replay.log" 2>&1 || true
    python3 - "$mode" "$out/$mode/c2/report.json" <<'PY'
import json, sys
mode, report = sys.argv[1], json.load(open(sys.argv[2]))
cases = report.get("cases", [])
for c in cases:
    why = (c.get("violations") or [""])[0]
    print(f"{mode:22} {c.get('id', '?'):14} {c['status']:14} {why[:110]}")
PY
done
