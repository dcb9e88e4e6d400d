# Shared by the bench scripts (sourced, not run, from the project root).

# The benchmarks measure the code users run: a Release build (-O3, as scripts/quickstart.sh
# builds), with debug symbols for perf and callgrind, in a folder of its own. (build/ is what
# scripts/test.sh leaves: RelWithDebInfo, CMake's -O2, where GCC 12 leaves Beast's frame masking
# byte by byte; figures up to 2026-12-02 10:50 UTC were taken from it.)
build=${BUILD_DIR:-build-bench}
pacer=$build/pacer
[ -x "$pacer" ] || BUILD_TYPE=Release scripts/build.sh "$build" -DCMAKE_CXX_FLAGS=-g \
    -DPACER_BUILD_TESTS=OFF -DPACER_BUILD_MICROBENCH=OFF >/dev/null

# start_mock PACER STATS_FILE [MOCK_COMMAND [FLAGS...]]: starts `pacer mock` (or the given mock
# subcommand, e.g. native-mock, with its flags) on a free port in the background and waits for
# its "listening on HOST:PORT" line; sets mock_pid and port. MOCK_WRAPPER, when set, is a
# command line the mock runs under (e.g. valgrind and its options).
start_mock() {
    local pacer=$1 stats=$2 command=${3:-mock} fifo line
    shift $(( $# < 3 ? $# : 3 ))
    fifo=$(mktemp -u)
    mkfifo "$fifo"
    # shellcheck disable=SC2086 # MOCK_WRAPPER is a command line: split into its words
    ${MOCK_WRAPPER:-} "$pacer" "$command" --port 0 --stats-output "$stats" "$@" >"$fifo" &
    mock_pid=$!
    read -r line <"$fifo"
    rm -f "$fifo"
    port=${line##*:}
}

# Host CPU steal (a VM's vCPUs waiting for the hypervisor): figures taken while it was above
# 1 % are host-disturbed, whatever they say about pacer. `steal_mark` prints /proc/stat's
# `cpu` counters (all time, steal); `steal_since MARK` prints the steal since MARK in % of all
# CPU time, with " host-disturbed" after it above 1 % (e.g. `0.12` or `3.40 host-disturbed`).
steal_mark() {
    awk '/^cpu / {print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9; exit}' /proc/stat
}
steal_since() {
    awk -v a="$1" -v b="$(steal_mark)" 'BEGIN {
        split(a, x, " "); split(b, y, " "); t = y[1] - x[1]; p = t > 0 ? 100 * (y[2] - x[2]) / t : 0
        printf "%.2f%s", p, (p > 1 ? " host-disturbed" : "") }'
}

# run_figures OUT TAG: the figures every row of bench/pacing.sh, progress.sh and telemetry.sh
# shows of the run in OUT/TAG (its summary.json) and of its mock (OUT/TAG-mock.json, when
# there), as one line of words:
#   late p99_ms max_ms lag_p99_ms client_cores mock_cores
# late packets, |deviation| p99 and max, the session contexts' loop-lag p99 (the worst part's
# with --processes), the client's CPU in cores (summed over the workers of --processes) and the
# mock's ("-" without its stats). A run that wrote no summary prints `no-summary`.
run_figures() {
    python3 - "$1" "$2" <<'PY'
import json, sys
out, tag = sys.argv[1], sys.argv[2]
try:
    s = json.load(open(f"{out}/{tag}/summary.json"))
except OSError:
    print("no-summary")
    sys.exit(0)
try:
    mock = json.load(open(f"{out}/{tag}-mock.json"))
    mock_cpu = mock.get("process_cpu_s", mock.get("thread_cpu_s", 0))
    mock_cores = f"{mock_cpu / mock['wall_s']:.2f}" if mock.get("wall_s") else "0.00"
except OSError:
    mock_cores = "-"
pc = s["pacing"]
dev = pc["pacing_abs_deviation_s"]
ms = lambda v: "-" if v is None else f"{v * 1e3:.2f}"
lag = pc["loop_lag_s"]
if "parts" in s:  # --processes: pooled over the workers
    cores = sum(p["client_cpu_cores"] for p in s["parts"])
else:
    cores = s["resources"]["client_cpu_cores"]
print(pc["packets"]["late"], ms(dev["p99"]), ms(dev["max"]),
      ms(lag.get("p99", lag.get("worst_part_p99"))), f"{cores:.2f}", mock_cores)
PY
}
