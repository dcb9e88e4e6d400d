#!/usr/bin/env bash
# What the client's CPU goes to (a benchmark, not a test): `pacer mock` in its own process,
# then `pacer run` against it under `perf stat`, once per trace mode (`--trace full|receipts|
# none`) and per build folder. Figures that load on the host barely moves: the client's
# CPU-seconds (user + system, every thread) and syscalls per packet sent (all of them, and the
# main kinds), trace bytes written per packet; and the CPU of the session contexts and of the
# trace writer thread, in cores (from the summary); and the mock's CPU in cores and in
# millicores per session (its process CPU-seconds over its wall time, from the mock's stats
# file: it shares the machine with the client). Pacing figures are printed too, but on a busy
# machine they say more about the machine than about pacer.
#
#   bench/cpu.sh                                          256 sessions x 10 s, full/receipts/none
#   BUILDS="build build-uring" MODES=none bench/cpu.sh    the same binary built with PACER_IO_URING=ON
#   SESSIONS=1024 DURATION=30s bench/cpu.sh               issue 14's target size
#   EXTRA="--stagger-ms 0" LABEL=aligned bench/cpu.sh     more `pacer run` options; LABEL names the rows
#   SESSIONS=1024 DURATION=30s MODES=none bench/cpu.sh    the mock's cost at issue 14's size
#
# Needs `perf` with access to the syscall tracepoints (root, or kernel.perf_event_paranoid
# <= -1). steal_%: host CPU steal during the run (bench/lib.sh); above 1 % the row is
# host-disturbed. The last column gives the mock's syscalls per packet by kind (perf attached
# to the mock process for the client's run).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
sessions=${SESSIONS:-256}
duration=${DURATION:-10s}
modes=${MODES:-"full receipts none"}
builds=${BUILDS:-$build}
out=${OUT:-bench-results/cpu-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
events=raw_syscalls:sys_enter
kinds="write writev sendmsg sendto read readv recvmsg recvfrom epoll_wait io_uring_enter timerfd_settime futex"
for k in $kinds; do events+=",syscalls:sys_enter_$k"; done

printf '%-14s %-9s %-8s %-9s %-9s %-11s %-10s %-10s %-10s %-11s %-9s %-11s %-10s %s | %s\n' build trace packets late cpu_s mcores_ses ctx_cores writer_cor mock_cores mock_mc_ses sys_pkt trace_B_pkt steal_% syscalls_per_packet_by_kind mock_syscalls_per_packet_by_kind
for b in $builds; do
    for mode in $modes; do
        tag="$(basename "$b")${LABEL:+-$LABEL}-$mode"
        start_mock "$pacer" "$out/$tag-mock.json"
        steal=$(steal_mark)
        perf stat -x, -o "$out/$tag-mock.perf" -e "$events" -p "$mock_pid" &
        mock_perf=$!
        perf stat -x, -o "$out/$tag.perf" -e "$events,task-clock" -- \
            "$b/pacer" run --url "ws://127.0.0.1:$port/v1/realtime" -c "$sessions" -d "$duration" \
            --trace "$mode" ${EXTRA:-} --progress never --no-report -o "$out/$tag" >"$out/$tag.log" 2>&1 || true
        stolen=$(steal_since "$steal")
        kill -INT "$mock_perf"
        wait "$mock_perf" || true
        kill -INT "$mock_pid"
        wait "$mock_pid" || true
        python3 - "$out" "$tag" "$(basename "$b")${LABEL:+-$LABEL}" "$mode" "$sessions" "$stolen" <<'PY'
import json, sys
out, tag, build, mode, sessions, steal = sys.argv[1:7]
def perf_counts(path):
    counts, cpu_ms = {}, 0.0
    try:
        lines = open(path).readlines()
    except OSError:
        return counts, cpu_ms
    for line in lines:
        f = line.strip().split(",")
        if len(f) < 3 or not f[0].replace(".", "").isdigit():
            continue
        if f[2] == "task-clock":
            cpu_ms = float(f[0])
        else:
            name = f[2].split(":")
            counts["all" if name[0] == "raw_syscalls" else name[-1].replace("sys_enter_", "")] = int(f[0])
    return counts, cpu_ms
counts, cpu_ms = perf_counts(f"{out}/{tag}.perf")
mock_counts, _ = perf_counts(f"{out}/{tag}-mock.perf")
try:
    s = json.load(open(f"{out}/{tag}/summary.json"))
except OSError:
    print(f"{tag}: no summary (see {out}/{tag}.log)")
    sys.exit(0)
pc = s["pacing"]
packets = pc["packets"]["sent"] or 1
wall = s["resources"].get("wall_s") or 0
cpu_s = cpu_ms / 1e3
# millicores per session: the process's CPU-seconds (perf's task-clock: every thread, from
# exec to exit) / (sessions x the run's wall time)
mcores = 1e3 * cpu_s / (int(sessions) * wall) if wall else 0
# the mock's cores: its process CPU (thread CPU for an older stats file) over its wall time
try:
    mock = json.load(open(f"{out}/{tag}-mock.json"))
except (OSError, ValueError):
    mock = {}
mock_cpu = mock.get("process_cpu_s", mock.get("thread_cpu_s", 0)) or 0
mock_cores = mock_cpu / mock["wall_s"] if mock.get("wall_s") else 0
mock_mcores = 1e3 * mock_cores / int(sessions)
def by(counts):
    return " ".join(f"{k}={v / packets:.2f}" for k, v in counts.items() if k != "all" and v)
by_kind = by(counts)
mock_by_kind = f"all={mock_counts.get('all', 0) / packets:.2f} " + by(mock_counts)
print(f"{build:<14} {mode:<9} {pc['packets']['sent']:<8} {pc['packets']['late']:<9} "
      f"{cpu_s:<9.3f} {mcores:<11.3f} {sum(s['resources']['session_context_cpu_cores']):<10.3f} "
      f"{s['resources']['writer_cpu_cores']:<10.3f} {mock_cores:<10.3f} {mock_mcores:<11.4f} "
      f"{counts.get('all', 0) / packets:<9.2f} "
      f"{s['trace']['bytes'] / packets:<11.0f} {steal:<10} {by_kind} | {mock_by_kind}")
PY
        rm -rf "$out/$tag"/session-*/trace.jsonl
    done
done
echo "results: $out"
