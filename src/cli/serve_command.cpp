// `pacer serve`: concurrency sweeps with the serving metrics of docs/protocol.md §4-5, level
// validity (did the client keep its schedule?) and a capacity search against SLOs. This file
// declares the options, in groups; serve_plan.cpp checks them into a job and runs it in module
// `sweep` (sweep::execute_serve).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/serve_plan.hpp>
#include <pacer/metrics/slo.hpp>

#include <CLI/CLI.hpp>

#include <memory>

namespace pacer::cli {

namespace {

// The server, how the client reaches it, and what is sampled beside it.
void add_target_options(CLI::App& sub, serve_settings& s) {
    sub.add_option("--url", s.url,
                   "Server, e.g. ws://127.0.0.1:8097/v1/realtime. Default: the built-in native "
                   "mock of --profile, in this process (a try-out: it shares the client's "
                   "cores; run `pacer native-mock` or a real server to measure). wss:// for "
                   "TLS (docs/tls.md)");
    add_client_options(sub, s.client);
    add_omni_options(sub, s.omni);
    // --server-metrics scrapes Prometheus, as run's; the server's JSON stats are --server-stats.
    add_telemetry_options(sub, s.telemetry, s.metrics_listen, true);
}

// --warm-until-stable and its rule.
void add_warm_options(CLI::App& sub, serve_settings& s) {
    const char* warm = "Thermal equilibrium (docs/telemetry.md)";
    sub.add_flag("--warm-until-stable", s.warm_until_stable,
                 "Before the first level, run warm-ups of --warmup-level back to back until "
                 "every GPU's power and temperature are steady over --stable-window (or "
                 "--stable-max-wait has passed); summary.json's warm_until_stable says how long "
                 "it took. Needs --gpu-telemetry")
        ->group(warm);
    const auto given = [&s](const auto&) { s.stable_rule_given = true; };
    sub.add_option("--stable-power-pct", s.stable_power_pct,
                   "Steady: (max - min) power over the window within this % of its mean")
        ->check(number_in(0, 100))
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    sub.add_option("--stable-temperature-c", s.stable_temperature_c,
                   "Steady: max - min temperature over the window within this many °C")
        ->check(number_in(0, 100))
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    sub.add_option("--stable-window", s.stable_window, "The window the rule is judged over")
        ->capture_default_str()
        ->each(given)
        ->group(warm);
    sub.add_option("--stable-max-wait", s.stable_max_wait,
                   "The longest wait: then the levels run anyway (said in the table and "
                   "summary.json)")
        ->capture_default_str()
        ->each(given)
        ->group(warm);
}

// What every session streams and how it talks: the input, the profile, the protocol, the
// scenario.
void add_input_options(CLI::App& sub, serve_settings& s) {
    auto* duration_opt =
        sub.add_option("-d,--duration", s.duration,
                       "Silent input per session when no --audio (at most 24h: silence is "
                       "generated per packet, never held)")
            ->capture_default_str();
    sub.add_option("--audio", s.audio,
                   "Input WAV files (any rate, channels and PCM/float encoding: mixed down to "
                   "mono and converted with libsamplerate to 16 kHz and the protocol's rate; "
                   "config.input_conversion records it); session i streams file i mod N; not "
                   "with -d (the files' lengths are the inputs')")
        ->expected(1, -1)
        ->excludes(duration_opt);
    sub.add_option("--profile", s.profile,
                   "Server profile: nemotron (VoiceChat, 80 ms units, 22.05 kHz, continuous, "
                   "output audio) or minicpmo (1000 ms units, 24 kHz, replies per question, "
                   "output audio and text). The sessions negotiate it; the levels record it")
        ->capture_default_str();
    sub.add_option("--protocol", s.protocol,
                   "Wire protocol: native (sglang-omni), openai-realtime, vllm-realtime or "
                   "vllm-omni (docs/protocols.md). A realtime session is ready for the level's "
                   "start gate once its session.update is acknowledged (session.updated; "
                   "vllm-realtime, which answers nothing: once the update and the starting "
                   "commit are sent); its level is judged by the client's timing and the "
                   "protocol's own checks (the native oracle does not apply); without --url the "
                   "built-in native mock speaks it")
        ->capture_default_str();
    sub.add_option("--turns", s.turns,
                   "Turn handling: server-vad (the server finds the turns) or manual (commit at "
                   "each turn's end); vllm-omni also model (the model decides, no commit)")
        ->capture_default_str();
    add_scenario_option(sub, s.scenario, s.voice, "every session of every level (warm-ups too)",
                        "a turn of `input` streams the session's --audio file. Each run's and "
                        "level's aggregate gets per-turn figures (`turns`), each run's folder a "
                        "turns.jsonl, and --slo may judge turn-v2v-p95, turn-ttfa-p95 "
                        "and interrupt-latency-p95");
    sub.add_option("--model", s.model,
                   "vllm-realtime: the served model, named in session.update (required); "
                   "openai-realtime: added to --url's query as model=");
}

// The levels and the runs of each: warm-ups, settle pauses, the server's stats, repeats.
void add_level_options(CLI::App& sub, serve_settings& s) {
    auto* levels_opt = sub.add_option("--concurrencies", s.concurrencies, "Levels, e.g. 1,2,4,8")
                           ->capture_default_str();
    sub.add_option("-c,--concurrency", s.concurrency,
                   "A single level (instead of the list; not with --concurrencies)")
        ->check(whole_number(1, session::max_sessions))
        ->excludes(levels_opt);
    sub.add_option("--warmup-runs", s.warmup_runs,
                   "Warm-up runs before the levels (real time, no stagger), kept under "
                   "warmup-<i>/, printed, and never part of the levels or the capacity search")
        ->check(whole_number(0, 1000))
        ->capture_default_str();
    sub.add_option("--warmup-level", s.warmup_level,
                   "Sessions in each warm-up run, so that the server has seen that batch size "
                   "before any level is judged. Default: the first level the plan runs "
                   "(--start-level with --find-capacity). One session streams the first input "
                   "only; more stream the inputs round-robin like a level")
        ->check(whole_number(1, session::max_sessions));
    sub.add_option("--settle", s.settle,
                   "Idle time before every run but the first (warm-ups, levels, repeats, "
                   "confirmations, verifications), after every session of the run before has "
                   "closed: a real server drains its queues. Default: 5s with --find-capacity, "
                   "0s otherwise");
    sub.add_option("--server-stats", s.server_stats,
                   "The server's own JSON stats, http://HOST:PORT/PATH[#POINTER] (e.g. `pacer "
                   "native-mock`'s http://127.0.0.1:8097/stats): read with ?reset=1 before "
                   "each run and again after it; each run's summary.json records it "
                   "(server_stats) beside the client's unit lag (server_view), and the table "
                   "prints both. #POINTER: the pending work --recovery stats waits to be 0 "
                   "(default /pending_units)");
    sub.add_option("--repeats", s.repeats,
                   "Run every level this many times (repeat-<r>/c<level>/); a level is valid "
                   "only if all its runs are")
        ->check(whole_number(1, 1000))
        ->capture_default_str();
}

// Each session's pacing and limits, the output, and what decides a level's validity.
void add_session_options(CLI::App& sub, serve_settings& s) {
    sub.add_option("--stagger-ms", s.stagger_ms,
                   "Session i of C starts stagger x i/C after the common start (0: one grid). "
                   "The default is 0, where run's is 80: a level measures the server with every "
                   "session on one grid from its start gate, the worst burst and the same at "
                   "every level (as the reference harness); run spreads its sessions' grids over "
                   "one 80 ms packet period")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub.add_option("--pacing", s.pacing,
                   "realtime (the 80 ms grid) or lockstep (per-unit profiles: wait for each "
                   "unit's sglang.unit.done before sending the next unit; measures time per "
                   "unit)")
        ->capture_default_str();
    sub.add_option("--startup-reserve-ms", s.startup_reserve_ms,
                   "Playback buffer before the simulated player starts (underrun metric)")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub.add_option("--timeout", s.timeout,
                   "Per-session deadline: admission, negotiation, exchange and close, e.g. 90s "
                   "or 2m30s. Default: the longest input + 60 s; a timeout not longer than an "
                   "input is refused");
    sub.add_option("-o,--output", s.output,
                   "Result folder; must not exist. Default: pacer-results/serve-<UTC time>")
        ->check(non_empty_path());
    sub.add_option("-t,--threads", s.threads, "Session contexts (one thread each)")
        ->check(whole_number(1, max_threads))
        ->capture_default_str();
    sub.add_flag("--drop-traces", s.drop_traces,
                 "Delete each level's trace.jsonl files once its metrics and summary.json are "
                 "written (receipts and summaries stay; `pacer replay` then has nothing to "
                 "check). A long sweep then needs room for one level's traces, not all");
    sub.add_option("--loop-lag-limit-ms", s.loop_lag_limit_ms,
                   "Validity: the session contexts' loop-lag p99 must not exceed this")
        ->check(number_in(0, max_ms, true))
        ->capture_default_str();
    sub.add_option("--send-lateness-limit-ms", s.send_lateness_limit_ms,
                   "Validity: every admitted session's send-lateness p99 must not exceed this")
        ->check(number_in(0, max_ms, true))
        ->capture_default_str();
}

// --find-capacity and the search's settings.
void add_capacity_options(CLI::App& sub, serve_settings& s) {
    sub.add_flag("--find-capacity", s.find_capacity,
                 "Search levels (doubling from --start-level, then bisection, at most x--growth "
                 "above the last good level) for the highest valid level that meets every "
                 "--slo, waiting for the server's recovery before each run (--recovery); "
                 "reports the capacity, each level's evidence and how the server held up")
        ->group("Capacity search");
    sub.add_option("--slo", s.slo, metrics::slo_help())->group("Capacity search");
    sub.add_option("--start-level", s.start_level, "First level of the search")
        ->check(whole_number(1, session::max_sessions))
        ->capture_default_str()
        ->group("Capacity search");
    sub.add_option("--max-level", s.max_level, "Highest level the search may try")
        ->check(whole_number(1, session::max_sessions))
        ->capture_default_str()
        ->group("Capacity search");
    sub.add_option("--resolution", s.resolution,
                   "Stop bisecting when first-bad - last-good <= max(1, this x last-good)")
        ->check(number_in(0, 1))
        ->capture_default_str()
        ->group("Capacity search");
    sub.add_option("--confirm", s.confirm,
                   "Extra tries of a level that misses its SLOs or whose client timing is not "
                   "valid, each after --settle; the level fails only if every try fails "
                   "(default 1; a level whose client was not valid gets at least one more). "
                   "The first run of a new batch size, or right after an overload, can fail "
                   "once on a healthy server")
        ->check(whole_number(0, 100))
        ->group("Capacity search");
    sub.add_option("--verify-repeats", s.verify_repeats,
                   "At the end, run the capacity level and the first failing level this many "
                   "times each (default 2; 0: no verification). A capacity level that misses "
                   "in any of them counts as failing and the search goes on below it; a first "
                   "failing level that meets in all of them counts as good and the search goes "
                   "on above it; summary.json says whether the boundary held")
        ->check(whole_number(0, 100))
        ->group("Capacity search");
    sub.add_option("--growth", s.growth,
                   "After the first miss, never probe above the last good level by more than "
                   "this factor (default 1.25; 2: doubling and bisection)")
        ->group("Capacity search");
    sub.add_option("--recovery", s.recovery,
                   "Before each run but the first, wait for the server to recover: canary (a "
                   "1-session canary back near its baseline), stats (--server-stats at 0), "
                   "canary,stats or none. Default: canary with --find-capacity, else none")
        ->group("Capacity search");
    sub.add_option("--recovery-max", s.recovery_max, "The longest recovery wait before a run")
        ->capture_default_str()
        ->group("Capacity search");
}

} // namespace

command add_serve_command(CLI::App& app) {
    auto s = std::make_shared<serve_settings>();
    auto* sub = app.add_subcommand(
        "serve",
        "Concurrency sweep against a realtime speech server (docs/protocol.md §4-5). Levels run "
        "one "
        "after another; in each, every session negotiates first, then all stream from one "
        "common start 0.2 s after the last is ready. Writes c<level>/session-NNN/{trace.jsonl,"
        "input-send-receipts.json}, c<level>/summary.json, summary.json and report.html (unless "
        "--no-report), and prints a table (with a live progress line on stderr: --progress). "
        "A level is valid when the client kept its schedule: loop-lag p99 and every admitted "
        "session's send-lateness p99 within their limits, and at least one admission.\n"
        "A plan whose traces (about 125 kB/s a session; 145 with openai-realtime, 50 with "
        "vllm-realtime) the output folder's disk cannot hold is "
        "refused before it starts; --drop-traces keeps only one level's traces at a time.\n"
        "Exit status: 0 every level valid and every session succeeded; 1 pacer itself failed; "
        "2 bad input; 3 some level not valid (the client fell behind: it measured the client); "
        "4 the server failed or rejected sessions, or could not be reached (each level prints "
        "its most frequent error; with --find-capacity, only when the server could not be "
        "reached); 130 interrupted. When several apply, the first of 130, 3, 1, 4 wins.");
    add_target_options(*sub, *s);
    add_warm_options(*sub, *s);
    add_input_options(*sub, *s);
    add_level_options(*sub, *s);
    add_session_options(*sub, *s);
    add_capacity_options(*sub, *s);
    add_progress_option(*sub, s->progress,
                        "the level, elapsed and ETA, sessions active/done/failed, packets sent and "
                        "late, loop lag max and errors so far",
                        "each level's end");
    add_end_output_options(*sub, s->no_report, s->export_format);
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return serve(*s); }};
}

} // namespace pacer::cli
