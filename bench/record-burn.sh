#!/usr/bin/env bash
# Why post-processing runs in a pool of worker processes (a benchmark, not a test): the same
# small recording twice against `pacer native-mock` in its own process, with a
# --postprocess-command that burns a CPU for BURN_S seconds per variant: once with
# `--postprocess pool` (the command runs in the nice-10 workers) and once with
# `--postprocess inline` (the recorder runs it on the session's thread and waits, as the
# reference harness post-processed in its event loop). Prints, for each, late packets,
# |deviation| p99 and max, and the client loop lag max (bench/record_row.py's columns).
#   bench/record-burn.sh
#   C=16 VARIANTS=32 MIN_S=10 MAX_S=20 BURN_S=1.5 REPEATS=1 bench/record-burn.sh
#   C=2 VARIANTS=4 MIN_S=2 MAX_S=3 BURN_S=0.3 bench/record-burn.sh     (a smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
c=${C:-16}
variants=${VARIANTS:-32}
min_s=${MIN_S:-10}
max_s=${MAX_S:-20}
burn_s=${BURN_S:-1.5}
burst=${BURST:-1}
repeats=${REPEATS:-1}
out=${OUT:-bench-results/record-burn-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
# Busy for BURN_S seconds of wall time on one CPU (the shell spins until `timeout` stops it).
burn="timeout $burn_s sh -c 'while :; do :; done'; true"

cpu_ticks() {
    awk '/^cpu /{t=0; for(i=2;i<=9;i++) t+=$i; print $9, t; exit}' /proc/stat
}

# 4 subsets x K samples x 2 variants >= VARIANTS.
k=$(( (variants + 7) / 8 ))
"$pacer" dataset synth --subsets 4 --per-subset "$k" --min-s "$min_s" --max-s "$max_s" --seed 1 \
    -o "$out/dataset" >/dev/null
echo "C=$c, $(( k * 8 )) variants of ${min_s}-${max_s} s, a ${burn_s} s CPU burn per variant," \
    "native-mock --burst-units $burst"
python3 bench/record_row.py --header postprocess
for mode in pool inline; do
    dirs=()
    steal=0 total=0
    for (( i = 1; i <= repeats; i++ )); do
        name=$mode-run$i
        start_mock "$pacer" "$out/$name-mock.json" native-mock --burst-units "$burst"
        s0=$(cpu_ticks)
        st=0
        "$pacer" record --url "ws://127.0.0.1:$port/v1/realtime" --dataset "$out/dataset" \
            --concurrency "$c" --postprocess "$mode" --postprocess-command "$burn" --no-report \
            -o "$out/$name" >"$out/$name.log" 2>&1 || st=$?
        s1=$(cpu_ticks)
        kill -INT "$mock_pid"
        wait "$mock_pid" || true
        steal=$(( steal + ${s1% *} - ${s0% *} ))
        total=$(( total + ${s1#* } - ${s0#* } ))
        [ "$st" = 0 ] || [ "$st" = 3 ] || echo "note: $name exited $st (see $out/$name.log)" >&2
        dirs+=("$out/$name")
    done
    python3 bench/record_row.py "$mode" \
        "$(awk -v s="$steal" -v t="$total" 'BEGIN{printf "%.1f", t ? 100*s/t : 0}')" "${dirs[@]}"
done
echo "runs in $out"
