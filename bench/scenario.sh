#!/usr/bin/env bash
# The conversation benchmark (not a test; docs/scenarios.md, docs/performance.md): `pacer
# native-mock` in its own process, `pacer run --scenario` against it with full traces on, N
# sessions each playing a 3-turn conversation whose second and third turns barge in on the
# assistant, once per protocol. One row per run: late packets, client CPU, the per-turn
# voice-to-voice latency (first audio from the end of the user's voice, p50/p95 over every turn
# with voice: give speech with AUDIO), the time to first audio from the end of the user's turn
# (p50/p95 over every turn) and the interruption latency (p50/p95 over the interrupted turns).
#
#   bench/scenario.sh                                 256 sessions, native and openai-realtime
#   SESSIONS=16 bench/scenario.sh                     a small try
#   PROTOCOLS=openai-realtime SESSIONS=1024 bench/scenario.sh
#   SCENARIO=barge-in bench/scenario.sh               the built-in (2 turns) instead
#   TURN=1s PAUSE=1s INTERRUPT_AFTER=0.3s bench/scenario.sh
#   AUDIO=speech.wav bench/scenario.sh                each turn speaks that WAV (voice-to-voice)
#
# The scenario (written to $out/scenario.json unless SCENARIO names another): 3 turns of the
# run's input (TURN of silence per turn, 2s by default: the mock answers silence too), each of
# the first two followed by a PAUSE (1s) of silence packets, the next turn barging in
# INTERRUPT_AFTER (0.5s) after the assistant's first audio for the turn. openai-realtime runs
# with TURNS (manual by default: the client commits each turn and cancels and truncates the
# reply it interrupts; server-vad would need speech, not silence, to hear the turns). The
# native protocol defines no interruption: its interruption latency is how long the mock's
# audio goes on after the barge-in.
#
# steal_%: host CPU steal during the run (bench/lib.sh); above 1 % the row is host-disturbed.
# Traces are written in full during the run (part of what is measured), then deleted unless
# KEEP_TRACES=1. BUILD_DIR picks the pacer build (bench/lib.sh: build-bench, Release).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed), start_mock and run_figures
sessions=${SESSIONS:-256}
protocols=${PROTOCOLS:-"native openai-realtime"}
turn=${TURN:-2s}
out=${OUT:-bench-results/scenario-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
scenario=${SCENARIO:-}
if [ -z "$scenario" ]; then
    scenario=$out/scenario.json
    pause=${PAUSE:-1s} interrupt=${INTERRUPT_AFTER:-0.5s}
    cat >"$scenario" <<EOF
{"turns": [
  {"audio": "input", "pause": "$pause", "interrupt_after": "$interrupt"},
  {"audio": "input", "pause": "$pause", "interrupt_after": "$interrupt"},
  {"audio": "input"}]}
EOF
fi

echo "scenario $scenario, $sessions sessions, ${AUDIO:-$turn of silence} per turn"
printf '%-16s %-8s %-8s %-10s %-12s %-10s %-16s %-16s %-16s %-12s %s\n' protocol sessions \
    late lag_p99_ms client_cores mock_cores v2v_p50/p95_ms ttfa_p50/p95_ms interrupt_p50/p95 \
    answered/int steal_%
for protocol in $protocols; do
    case $protocol in
    native) protocol_flags=() ;;
    openai-realtime) protocol_flags=(--protocol "$protocol" --turns "${TURNS:-manual}") ;;
    *) echo "bench/scenario.sh: PROTOCOLS=$protocol: use native or openai-realtime" >&2; exit 2 ;;
    esac
    tag=$protocol
    for ((n = 2; ; ++n)); do [ -e "$out/$tag-mock.json" ] || break; tag="$protocol-$n"; done
    start_mock "$pacer" "$out/$tag-mock.json" native-mock --protocol "$protocol"
    steal=$(steal_mark)
    input_flags=(-d "$turn")
    [ -z "${AUDIO:-}" ] || input_flags=(--audio "$AUDIO")
    "$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" "${protocol_flags[@]}" \
        -c "$sessions" "${input_flags[@]}" --scenario "$scenario" --keep-traces --no-report ${EXTRA:-} \
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
turns = s["turns"]["all"]
ms = lambda f, q: "-" if not f or f.get(q) is None else f"{f[q] * 1e3:.0f}"
pair = lambda key: f"{ms(turns[key], 'p50')}/{ms(turns[key], 'p95')}"
pc = s["pacing"]["sessions"]
print(f"{tag:<16} {sessions:<8} {late:<8} {lag:<10} {cores:<12} {mock_cores:<10} "
      f"{pair('ttfa_from_voice_end_s'):<16} {pair('ttfa_from_speech_end_s'):<16} {pair('interrupt_latency_s'):<16} "
      f"{str(turns['answered']) + '/' + str(turns['interrupted']):<12} {steal}"
      + ("" if pc["complete"] == pc["requested"]
         else f"  ({pc['requested'] - pc['complete']} incomplete)"))
PY
    if [ "${KEEP_TRACES:-0}" != 1 ]; then
        find "$out/$tag" -name trace.jsonl -delete
    fi
done
echo "results: $out"
