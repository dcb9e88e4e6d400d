-- wrk script for bench/http.sh: every request is the POST a `pacer http` request sends to
-- /v1/completions (streaming, include_usage), so wrk and pacer ask the same thing of the mock.
-- wrk reads the whole SSE answer as one response; its latency is therefore request -> last byte,
-- measured from when wrk *sent* the request (closed loop: the coordinated-omission view).
--   wrk -t1 -c8 -d10s -s bench/http-wrk.lua http://127.0.0.1:PORT/v1/completions
-- OUTPUT_LEN (environment, default 4): max_tokens of each request.
local output_len = tonumber(os.getenv("OUTPUT_LEN") or "4")
local prompt = "the quick brown fox jumps over the lazy dog"

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "text/event-stream"
wrk.body = string.format(
    '{"model":"m","prompt":"%s","max_tokens":%d,"stream":true,' ..
    '"stream_options":{"include_usage":true},"ignore_eos":true}',
    prompt, output_len)

-- One line of figures wrk's summary leaves out, for bench/http.sh to read.
done = function(summary, latency, requests)
    local s = summary.duration / 1e6
    io.write(string.format(
        "wrk-figures requests=%d duration_s=%.3f rps=%.1f errors=%d " ..
        "p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
        summary.requests, s, summary.requests / s,
        summary.errors.connect + summary.errors.read + summary.errors.write +
            summary.errors.status + summary.errors.timeout,
        latency:percentile(50) / 1e3, latency:percentile(99) / 1e3, latency.max / 1e3))
end
