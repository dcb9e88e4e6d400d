#!/usr/bin/env bash
# The screenshots of docs/report.md: makes one small result folder of each kind (a closed-loop
# run, an open-loop run, a --processes run, a serve sweep against the native mock, a comparison
# of a run with one whose session context was stalled on purpose, a recording of a small
# synthetic dataset when espeak-ng is installed, and a pacer http run against pacer llm-mock),
# then photographs
# a part of each report.html in headless Chromium (Debian: apt-get install chromium) into
# docs/img/report-<kind>.png. Not part of the tests; the figures differ from run to run.
#   scripts/report-screenshots.sh            (the folders are kept under $OUT, default a temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh # sets pacer (building it when needed) and start_mock
chromium=$(command -v chromium || command -v chromium-browser) ||
    { echo "pacer: chromium is not installed" >&2; exit 1; }
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
img=docs/img
mkdir -p "$img"

"$pacer" run -c 16 -d 5s -o "$out/run" >/dev/null || true
"$pacer" run -c 16 -d 5s --inject-stall-ms 150 --no-report -o "$out/stalled" >/dev/null || true
"$pacer" report "$out/run" "$out/stalled" -o "$out/comparison.html" >/dev/null
"$pacer" report "$out/stalled" >/dev/null
"$pacer" run --rate 4 --sessions 16 --max-concurrency 6 -d 3s -o "$out/open" >/dev/null || true
"$pacer" run --processes 2 -c 8 -d 4s -o "$out/merged" >/dev/null || true
# Each session's reply slows down with the sessions open: the SLO finds a capacity.
start_mock "$pacer" "$out/mock-stats.json" native-mock --per-session-cost-ms 40
"$pacer" serve --url "ws://127.0.0.1:$port/v1/realtime" --find-capacity --max-level 16 -d 2s \
    --slo unit-miss-rate=0.05 -o "$out/sweep" >/dev/null || true
kill -INT "$mock_pid"
wait "$mock_pid" || true
# An http run whose cap of 8 binds now and then (20 ms to the first token, 5 ms a token).
start_mock "$pacer" "$out/llm-stats.json" llm-mock --ttft-ms 20 --itl-ms 5 --batch-cost-ms 0.5
"$pacer" http --base-url "http://127.0.0.1:$port" --model m --rate 40 --requests 200 --output-len 16 \
    --max-concurrency 8 --goodput ttft:50,e2el:100 -o "$out/http" >/dev/null || true
kill -INT "$mock_pid"
wait "$mock_pid" || true
# A conversation against the native mock's openai-realtime mode (server VAD: 500 ms of silence
# ends a turn): espeak-ng speech followed by 0.7 s of silence, as docs/scenarios.md advises; a
# run with a barge-in, and a sweep of three-turn conversations with a turn SLO.
if command -v espeak-ng >/dev/null; then
    espeak-ng -w "$out/speech-raw.wav" "Which trains leave for Lyon after six tonight?"
    python3 - "$out/speech-raw.wav" "$out/speech.wav" <<'PY'
import sys, wave
src = wave.open(sys.argv[1])
p = src.getparams()
pcm = src.readframes(p.nframes)
dst = wave.open(sys.argv[2], "wb")
dst.setparams(p)
dst.writeframes(pcm + b"\0" * (int(0.7 * p.framerate) * p.sampwidth * p.nchannels))
dst.close()
PY
    start_mock "$pacer" "$out/rt-stats.json" native-mock --protocol openai-realtime
    "$pacer" run --protocol openai-realtime --url "ws://127.0.0.1:$port/v1/realtime" -c 4 \
        --audio "$out/speech.wav" --scenario barge-in -o "$out/talk" >/dev/null || true
    "$pacer" serve --protocol openai-realtime --url "ws://127.0.0.1:$port/v1/realtime" \
        --concurrencies 1,2,4,8 --audio "$out/speech.wav" --scenario multi-turn \
        --slo turn-ttfa-p95=1s -o "$out/talks" >/dev/null || true
    kill -INT "$mock_pid"
    wait "$mock_pid" || true
fi
if command -v espeak-ng >/dev/null; then
    "$pacer" dataset synth --subsets 2 --per-subset 2 --min-s 3 --max-s 5 --seed 1 \
        -o "$out/dataset" >/dev/null
    "$pacer" record --dataset "$out/dataset" -c 4 -o "$out/recording" >/dev/null || true
fi

# shot KIND PAGE SECTION HEIGHT: the page from SECTION down, 1000 px wide, HEIGHT px high.
shot() {
    local kind=$1 page=$2 section=$3 height=$4
    local frame="$out/frame-$kind.html"
    printf '<!DOCTYPE html><html><body style="margin:0;overflow:hidden"><iframe src="%s#%s" style="border:0;width:1000px;height:%spx"></iframe></body></html>\n' \
        "file://$page" "$section" "$height" >"$frame"
    "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
        --user-data-dir="$out/profile-$kind" --window-size=1000,"$height" \
        --screenshot="$img/report-$kind.png" "file://$frame" >/dev/null 2>&1
    echo "$img/report-$kind.png"
}
shot run "$out/run/report.html" deviation 1300
shot merged "$out/merged/report.html" heat 430
shot open-loop "$out/open/report.html" arrivals 1300
shot serve "$out/sweep/report.html" levels 1300
shot comparison "$out/comparison.html" deviation 1250
shot loop-lag "$out/stalled/report.html" loop-lag-over-time 540
shot http "$out/http/report.html" arrivals 1500
if [ -f "$out/talk/report.html" ]; then
    shot conversation "$out/talk/report.html" conversation 1000
    shot serve-conversation "$out/talks/report.html" conversation 1100
fi
if [ -f "$out/recording/report.html" ]; then
    shot recording "$out/recording/report.html" statuses 900
fi
echo "folders: $out"
