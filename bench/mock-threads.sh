#!/usr/bin/env bash
# The mock's CPU per session at 1 and 2 threads (a benchmark, not a test): `pacer mock
# --threads N` (or `pacer native-mock`, MOCK=native-mock) in its own process, `pacer run`
# against it, one row per thread count. The mock's figures come from its stats file: its
# process CPU-seconds (user + system, every thread, from getrusage at exit), per session (ms)
# and per second of audio streamed (millicores a streaming session), its cores over its wall
# time, the CPU of each of its threads, and how many sessions each thread served. The client's late packets are printed too; on a busy machine they say
# more about the machine than about the mock.
#
#   bench/mock-threads.sh                                   256 sessions x 20 s, 1 and 2 threads
#   SESSIONS=512 THREADS="1 2 4" bench/mock-threads.sh
#   MOCK=native-mock MOCK_FLAGS="--unit-latency-ms 10" bench/mock-threads.sh
#   BUILD_DIR=build bench/mock-threads.sh                   an existing (RelWithDebInfo) build
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
sessions=${SESSIONS:-256}
duration=${DURATION:-20s}
threads_list=${THREADS:-"1 2"}
mock=${MOCK:-mock}
out=${OUT:-bench-results/mock-threads-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

printf '%-12s %-8s %-9s %-8s %-10s %-13s %-13s %-10s %-24s %-16s %s\n' mock threads sessions late \
    mock_cpu_s cpu_ms_per_ses mc_per_ses mock_cores cpu_s_per_thread sessions_per_thr steal_%
i=0
for n in $threads_list; do
    i=$((i + 1))
    tag="$mock-t$n-$i"
    # shellcheck disable=SC2086 # MOCK_FLAGS is a list of flags
    start_mock "$pacer" "$out/$tag-mock.json" "$mock" --threads "$n" ${MOCK_FLAGS:-}
    steal=$(steal_mark)
    "$pacer" run --url "ws://127.0.0.1:$port/v1/realtime" -c "$sessions" -d "$duration" \
        --trace none --progress never --no-report ${EXTRA:-} -o "$out/$tag" >"$out/$tag.log" 2>&1 || true
    stolen=$(steal_since "$steal")
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    python3 - "$out" "$tag" "$mock" "$n" "$sessions" "$stolen" <<'PY'
import json, sys
out, tag, mock, n, sessions, steal = sys.argv[1:7]
m = json.load(open(f"{out}/{tag}-mock.json"))
try:
    packets = json.load(open(f"{out}/{tag}/summary.json"))["pacing"]["packets"]
    late, audio_s = packets["late"], packets["sent"] * 0.08  # 80 ms packets, every session
except (OSError, KeyError, TypeError):
    late, audio_s = "?", 0
cpu, wall = m["process_cpu_s"], m["wall_s"]
cores = cpu / wall if wall > 0 else 0
per_thread = m.get("thread_cpu_s_per_thread", [m.get("thread_cpu_s", 0)])
# CPU per session: the mock's CPU-seconds (start to exit) over the sessions, in ms; and over
# the seconds of audio streamed (sessions x duration), in millicores: what one streaming
# session costs the mock, whatever the wall time around the run.
print(f"{mock:<12} {n:<8} {sessions:<9} {str(late):<8} {cpu:<10.2f} "
      f"{1000 * cpu / int(sessions):<13.2f} {1000 * cpu / audio_s if audio_s else 0:<13.3f} "
      f"{cores:<10.3f} {'/'.join(f'{c:.2f}' for c in per_thread):<24} "
      f"{'/'.join(str(x) for x in m['sessions_per_thread']):<16} {steal}")
PY
done
echo "results in $out"
