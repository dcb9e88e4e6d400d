#!/usr/bin/env bash
# The vllm-omni benchmark (not a test; docs/protocols.md "vllm-omni", docs/performance.md):
# `pacer native-mock --protocol P` in its own process, `pacer run --protocol P` against it with
# full traces on, N sessions each playing `--scenario multi-turn` with manual turns (the input,
# TURN of silence, three times with pauses of 0.6-1.0 s: 9.5 s by default, about 30 s a
# session, three replies), once for vllm-omni (200 ms appends, the listener acknowledging
# playback) and once for openai-realtime beside it (80 ms appends). One row per
# protocol: late packets, the loop-lag p99, the client's CPU (cores, and ms of CPU a session
# spends per second of its run), the mock's CPU and, for vllm-omni, the playback-ack round trip
# (`playback.ack` -> `playback.acknowledged`, p50/p99 over every ack, summary.json
# server.omni).
#
#   bench/omni.sh                                 256 sessions x ~30 s, both protocols
#   SESSIONS=16 TURN=2s bench/omni.sh             a small try
#   PROTOCOLS=vllm-omni EXTRA="--chunk-ms 80" bench/omni.sh
#
# steal_%: host CPU steal during the run (bench/lib.sh); above 1 % the row is host-disturbed.
# Traces are written in full during the run, then deleted unless KEEP_TRACES=1. BUILD_DIR picks
# the pacer build (bench/lib.sh: build-bench, Release).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed), start_mock and run_figures
sessions=${SESSIONS:-256}
turn=${TURN:-9.5s}
protocols=${PROTOCOLS:-"vllm-omni openai-realtime"}
out=${OUT:-bench-results/omni-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
printf '%-16s %-8s %-8s %-10s %-12s %-14s %-10s %-18s %s\n' protocol sessions late \
    lag_p99_ms client_cores cpu_ms/session_s mock_cores ack_rtt_p50/p99_ms steal_%
for protocol in $protocols; do
    case $protocol in
    vllm-omni | openai-realtime) protocol_flags=(--protocol "$protocol" --turns manual) ;;
    *) echo "bench/omni.sh: PROTOCOLS=$protocol: use vllm-omni or openai-realtime" >&2; exit 2 ;;
    esac
    tag=$protocol
    for ((n = 2; ; ++n)); do [ -e "$out/$tag-mock.json" ] || break; tag="$protocol-$n"; done
    start_mock "$pacer" "$out/$tag-mock.json" native-mock --protocol "$protocol"
    steal=$(steal_mark)
    # shellcheck disable=SC2086 # EXTRA is a list of options
    "$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" "${protocol_flags[@]}" \
        -c "$sessions" -d "$turn" --scenario multi-turn --keep-traces --no-report ${EXTRA:-} \
        -o "$out/$tag" >"$out/$tag.log" 2>&1 || true
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    steal=$(steal_since "$steal")
    read -r late _p99 _max lag cores mock_cores < <(run_figures "$out" "$tag")
    if [ "$late" = no-summary ]; then
        echo "$tag: no summary (see $out/$tag.log)"
        continue
    fi
    python3 - "$out" "$tag" "$sessions" "$late" "$lag" "$cores" "$mock_cores" "$steal" <<'PY'
import json, sys
out, tag, sessions, late, lag, cores, mock_cores, steal = sys.argv[1:9]
s = json.load(open(f"{out}/{tag}/summary.json"))
per_session = 1e3 * float(cores) / int(sessions)
rtt = s.get("server", {}).get("omni", {}).get("ack_round_trip_s", {})
ms = lambda q: "-" if rtt.get(q) is None else f"{rtt[q] * 1e3:.2f}"
pc = s["pacing"]["sessions"]
print(f"{tag:<16} {sessions:<8} {late:<8} {lag:<10} {cores:<12} {per_session:<14.2f} "
      f"{mock_cores:<10} {ms('p50') + '/' + ms('p99'):<18} {steal}"
      + ("" if pc["complete"] == pc["requested"]
         else f"  ({pc['requested'] - pc['complete']} incomplete)"))
PY
    if [ "${KEEP_TRACES:-0}" != 1 ]; then
        find "$out/$tag" -name trace.jsonl -delete
    fi
done
echo "results: $out"
