#!/usr/bin/env bash
# The pacing benchmark (not a test): `pacer mock` in its own process, `pacer run` against it
# with full traces on, at several layouts P x S (`--processes P` workers of S sessions each,
# sharing one start deadline and pooled into one summary) and durations. One row per run.
#
#   bench/pacing.sh                         all layouts x 30s and 90s
#   LAYOUTS="1x1024" DURATIONS="90s" bench/pacing.sh
#   LAYOUTS="1x1024 1x1024" DURATIONS="30s" bench/pacing.sh   a layout twice: two rows
#   TLS=1 LAYOUTS="1x1024" DURATIONS="30s" bench/pacing.sh   the same over wss:// (docs/tls.md)
#   PROTOCOL=openai-realtime LAYOUTS="1x1024" DURATIONS="30s" bench/pacing.sh
#   PROTOCOL=vllm-realtime TLS=1 LAYOUTS="1x1024" DURATIONS="30s" bench/pacing.sh
#   EXTRA="--stagger-slots 8" LAYOUTS="1x2048" DURATIONS="30s" bench/pacing.sh   more run options
#
# PROTOCOL=native (default) runs against `pacer mock`; openai-realtime and vllm-realtime
# (docs/protocols.md) against `pacer native-mock --protocol PROTOCOL`, which speaks them (the
# probe mock does not). TURNS (openai-realtime: manual by default, so a session ends at its
# response.done instead of after server-vad's 3 s quiet period) and MODEL (vllm-realtime,
# default pacer-bench) are passed on. Every row names its protocol and TLS setting.
#
# TLS=1: the mock serves wss:// with a throwaway self-signed pair (made with the `openssl`
# tool) and the client trusts it with --ca-file; rows get a `tls_ms` column (TLS handshake
# p50/p99 over the sessions).
#
# steal_%: host CPU steal during the run (bench/lib.sh); above 1 % the row is host-disturbed.
#
# THREAD_COUNTS=1 (needs `perf` and the right to attach to the client): per thread of the client
# (the session contexts, the writer), page faults, mprotect calls (malloc heap growth), futex
# calls and context switches over the run, into $out/$tag-threads.txt and under the row. They
# are counts, so they say what blocked the session thread even on a loaded host.
#
# Traces are written in full during the run (that is part of what is measured), then deleted
# to save disk (1,024 sessions x 90 s is ~10 GB) unless KEEP_TRACES=1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed), start_mock and run_figures
layouts=${LAYOUTS:-"1x256 1x1024 1x2048 4x256 2x1024"}
durations=${DURATIONS:-"30s 90s"}
out=${OUT:-bench-results/pacing-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
tls=${TLS:-0}
protocol=${PROTOCOL:-native}
mock_command=mock protocol_flags=() mock_protocol=()
case $protocol in
native) ;;
openai-realtime)
    mock_command=native-mock mock_protocol=(--protocol "$protocol")
    protocol_flags=(--protocol "$protocol" --turns "${TURNS:-manual}") ;;
vllm-realtime)
    mock_command=native-mock mock_protocol=(--protocol "$protocol")
    protocol_flags=(--protocol "$protocol" --model "${MODEL:-pacer-bench}") ;;
*) echo "bench/pacing.sh: PROTOCOL=$protocol: use native, openai-realtime or vllm-realtime" >&2; exit 2 ;;
esac
mock_tls=() client_tls=() scheme=ws
if [ "$tls" = 1 ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
        -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$out/key.pem" -out "$out/cert.pem" 2>/dev/null
    mock_tls=(--tls-cert "$out/cert.pem" --tls-key "$out/key.pem")
    client_tls=(--ca-file "$out/cert.pem")
    scheme=wss
fi

echo "protocol $protocol, $([ "$tls" = 1 ] && echo "wss:// (TLS)" || echo "ws://")"
printf '%-8s %-6s %-12s %-8s %-10s %-10s %-10s %-11s %-11s %-10s %-10s %s\n' layout dur unqualified late p99_ms max_ms lag_p99_ms client_cores mock_cores rss_MB trace_MB_s steal_%
# --keep-traces only where there are traces to keep (--trace full, the default)
case " ${EXTRA:-} " in *" --trace receipts "*|*" --trace none "*|*" --trace=receipts "*|*" --trace=none "*) keep= ;; *) keep=--keep-traces ;; esac
for layout in $layouts; do
    procs=${layout%x*}
    sessions=${layout#*x}
    for dur in $durations; do
        tag="$layout-$dur"
        # a layout listed twice (LAYOUTS="1x1024 1x1024") gets -2, -3...: nothing is overwritten
        for ((n = 2; ; ++n)); do [ -e "$out/$tag-mock.json" ] || break; tag="$layout-$dur-$n"; done
        start_mock "$pacer" "$out/$tag-mock.json" "$mock_command" "${mock_protocol[@]}" "${mock_tls[@]}"
        steal=$(steal_mark)
        "$pacer" run --url "$scheme://127.0.0.1:$port/v1/realtime" "${client_tls[@]}" "${protocol_flags[@]}" \
            --processes "$procs" -c "$sessions" ${EXTRA:-} \
            -d "$dur" --timeout "$(( ${dur%s} + 60 ))s" $keep -o "$out/$tag" >"$out/$tag.log" 2>&1 &
        client_pid=$!
        if [ "${THREAD_COUNTS:-0}" = 1 ]; then
            # Per thread of the client: page faults, mprotect calls (malloc heap growth), futex
            # calls (lock waits and wake-ups), context switches: counts, valid on a loaded host.
            perf stat --per-thread -p "$client_pid" -o "$out/$tag-threads.txt" \
                -e page-faults,syscalls:sys_enter_mprotect,syscalls:sys_enter_futex,context-switches \
                2>/dev/null &
            perf_pid=$!
        fi
        wait "$client_pid" || true
        if [ "${THREAD_COUNTS:-0}" = 1 ]; then
            kill -INT "$perf_pid" 2>/dev/null || true
            wait "$perf_pid" || true
            # (threads started after perf attached are counted under the process's name)
            grep -E '^ *pacer-' "$out/$tag-threads.txt" | awk '{print "  " $1, $2, $3}' || true
        fi
        kill -INT "$mock_pid"
        wait "$mock_pid" || true
        steal=$(steal_since "$steal")
        read -r late p99 max lag cores mock_cores < <(run_figures "$out" "$tag")
        if [ "$late" = no-summary ]; then
            echo "$tag: no summary (see $out/$tag.log)"
        else
            python3 - "$out" "$tag" "$procs" "$steal" "$late" "$p99" "$max" "$lag" "$cores" \
                "$mock_cores" <<'PY'
import json, sys
out, tag, procs, steal = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
late, p99, max_ms, lag, cores, mock_cores = sys.argv[5:11]  # bench/lib.sh run_figures
s = json.load(open(f"{out}/{tag}/summary.json"))
pc = s["pacing"]
if procs > 1:  # the largest worker's RSS, the workers' traces summed
    rss = max(p["peak_rss_bytes"] for p in s["parts"]) / 1e6
    trace = sum(json.load(open(f"{out}/{tag}/worker-{k}/summary.json"))["trace"]["bytes_per_s"]
                for k in range(procs)) / 1e6
else:
    rss = s["resources"]["peak_rss_bytes"] / 1e6
    trace = s["trace"]["bytes_per_s"] / 1e6
tls_ms = ""
hs = s.get("transport", {}).get("handshake_s", {}).get("tls")
if hs and hs.get("n"):
    tls_ms = f"  tls_ms p50 {hs['p50'] * 1e3:.1f} p99 {hs['p99'] * 1e3:.1f}"
print(f"{tag.split('-')[0]:<8} {tag.split('-')[1]:<6} {0 if s['pacing_qualified'] else 1:<12} "
      f"{late:<8} {p99:<10} {max_ms:<10} {lag:<10} "
      f"{cores:<11} {mock_cores:<11} {rss:<10.0f} {trace:<10.1f} {steal}{tls_ms}"
      + ("" if pc["sessions"]["complete"] == pc["sessions"]["requested"]
         else f"  ({pc['sessions']['requested'] - pc['sessions']['complete']} incomplete)"))
PY
        fi
        if [ "${KEEP_TRACES:-0}" != 1 ]; then
            find "$out/$tag" -name trace.jsonl -delete
        fi
    done
done
echo "results: $out"
