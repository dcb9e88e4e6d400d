#!/usr/bin/env bash
# Recorder benchmark (not a test): `pacer record` of a synthetic dataset against
# `pacer native-mock` in its own process, 2 x C variants per run (C at once: two batches), with
# bursts of 1 and 25 units, and the table of docs/recording.md: unqualified runs, sessions with
# a violation, late packets, |deviation| p99 and max, loop lag max, recorder and worker cores,
# and the host's steal time during the runs (from /proc/stat).
#   bench/record.sh
#   LEVELS=24,32,64,128 MAX=256 BURSTS=1,25 REPEATS=3 MIN_S=20 MAX_S=30 bench/record.sh
#   LEVELS=2 BURSTS=1 MIN_S=2 MAX_S=3 bench/record.sh        (a smoke run)
# MAX adds a row at that concurrency (the highest this machine holds); MAX=auto doubles from the
# largest level while a run stays qualified (up to MAX_CAP, default 1024) and reports each try.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
levels=${LEVELS:-24,32,64,128}
max=${MAX:-}
max_cap=${MAX_CAP:-1024}
bursts=${BURSTS:-1,25}
repeats=${REPEATS:-1}
min_s=${MIN_S:-20}
max_s=${MAX_S:-30}
out=${OUT:-bench-results/record-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"

# cpu_ticks: "steal total" of the host's aggregate CPU line.
cpu_ticks() {
    awk '/^cpu /{t=0; for(i=2;i<=9;i++) t+=$i; print $9, t; exit}' /proc/stat
}

# dataset C: a synthetic dataset of 2 x C variants (4 subsets x C/4 samples x 2 variants),
# made once per size; prints its folder.
dataset() {
    local k=$(( ($1 + 3) / 4 )) dir
    dir=$out/dataset-k$k
    if [ ! -d "$dir" ]; then
        "$pacer" dataset synth --subsets 4 --per-subset "$k" --min-s "$min_s" --max-s "$max_s" \
            --seed 1 -o "$dir" >/dev/null
    fi
    echo "$dir"
}

# run BURST C I: one recording at concurrency C against a fresh native-mock; appends its folder,
# the host's steal and total CPU ticks and the load average to $out/runs.txt; returns 1 when
# the client fell behind (exit 3).
run() {
    local burst=$1 c=$2 i=$3 data name s0 s1 st=0
    data=$(dataset "$c")
    name=c$c-burst$burst-run$i
    start_mock "$pacer" "$out/$name-mock.json" native-mock --burst-units "$burst"
    s0=$(cpu_ticks)
    "$pacer" record --url "ws://127.0.0.1:$port/v1/realtime" --dataset "$data" \
        --per-subset $(( (c + 3) / 4 )) --concurrency "$c" --no-report -o "$out/$name" \
        >"$out/$name.log" 2>&1 || st=$?
    s1=$(cpu_ticks)
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
    [ "$st" = 0 ] || [ "$st" = 3 ] || [ "$st" = 4 ] ||
        echo "note: $name exited $st (see $out/$name.log)" >&2
    echo "$c $burst $out/$name $(( ${s1% *} - ${s0% *} )) $(( ${s1#* } - ${s0#* } ))" \
        "$(cut -d' ' -f1-3 /proc/loadavg) exit=$st" >>"$out/runs.txt"
    [ "$st" != 3 ]
}

# row BURST C: the row of every run at (C, BURST) in runs.txt.
row() {
    awk -v c="$2" -v b="$1" '$1 == c && $2 == b {s += $4; t += $5}
        END {printf "%.1f", t ? 100 * s / t : 0}' "$out/runs.txt" >"$out/.steal"
    # shellcheck disable=SC2046
    python3 bench/record_row.py "c$2 burst$1" "$(cat "$out/.steal")" \
        $(awk -v c="$2" -v b="$1" '$1 == c && $2 == b {print $3}' "$out/runs.txt")
}

: >"$out/runs.txt"
# The runs are interleaved (repeat, then level, then burst) so that a change of the host's load
# during the benchmark spreads over every setting instead of falling on one.
for (( i = 1; i <= repeats; i++ )); do
    for c in ${levels//,/ }; do
        for burst in ${bursts//,/ }; do
            run "$burst" "$c" "$i" || true
        done
    done
done
python3 bench/record_row.py --header setting
for burst in ${bursts//,/ }; do
    for c in ${levels//,/ }; do
        row "$burst" "$c"
    done
done
# The highest concurrency this machine holds: MAX, or (MAX=auto) doubling from the largest level
# while every run of a level stays qualified.
largest=$(tr ',' '\n' <<<"$levels" | sort -n | tail -1)
for burst in ${bursts//,/ }; do
    if [ "$max" = auto ]; then
        c=$(( largest * 2 ))
        while [ "$c" -le "$max_cap" ]; do
            held=1
            for (( i = 1; i <= repeats; i++ )); do
                run "$burst" "$c" "$i" || held=0
            done
            row "$burst" "$c"
            [ "$held" = 1 ] || break
            c=$(( c * 2 ))
        done
    elif [ -n "$max" ]; then
        for (( i = 1; i <= repeats; i++ )); do
            run "$burst" "$max" "$i" || true
        done
        row "$burst" "$max"
    fi
done
rm -f "$out/.steal"
echo "runs (with the load average at each run's end) in $out/runs.txt"
