// `pacer serve` run (serve_plan.hpp): the `--dry-run` plan, or the built-in mock without
// `--url`, the output folder, the progress line and `--metrics-listen` beside the table, and
// sweep::execute_serve.

#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/mock_process.hpp>
#include <pacer/cli/serve_plan.hpp>
#include <pacer/console/progress.hpp>
#include <pacer/report/end_report.hpp>
#include <pacer/run/live_metrics.hpp>
#include <pacer/runtime/command_line.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/output_dir.hpp>
#include <pacer/sweep/serve_table.hpp>
#include <pacer/telemetry/metrics_listener.hpp>
#include <pacer/telemetry/settings.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

bool use_color() {
    const char* term = std::getenv("TERM");
    return ::isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR") && term &&
           std::string_view(term) != "dumb";
}

// The table with the live progress line (one phase per level) and `--metrics-listen` (bound
// by open_telemetry), which serves the running level's totals and its concurrency on a thread
// of its own: from before the idle baseline, then the last run's totals until scraped.
class serve_printer final : public sweep::table_printer {
public:
    serve_printer(console::progress_reporter& progress, telemetry::metrics_listener* listener)
        : table_printer(use_color()), progress_(progress), listener_(listener) {
        if (!listener_)
            return;
        served_.emplace(listener_, [this] { return page(); });
        fmt::print(stderr, "pacer: serving the live counters at {} (--metrics-listen)\n",
                   listener_->url());
        std::fflush(stderr);
    }

    void sweep_ended() override {
        if (listener_)
            listener_->serve_final(page());
    }
    session::live_counters* level_starting(const std::string& label, double expected_s) override {
        // The label names the run's concurrency: "warmup c4", "level c8 (repeat 2)".
        if (const auto c = label.find(" c"); c != std::string::npos)
            level_.store(std::strtoull(label.c_str() + c + 2, nullptr, 10),
                         std::memory_order_relaxed);
        if (progress_.on()) {
            progress_.begin(label, expected_s);
            return &progress_.counters();
        }
        if (!listener_)
            return nullptr;
        listened_.reset(); // each run's totals, as the progress line's
        return &listened_;
    }
    void level_ended() override { progress_.end(); }
    void settling(double seconds) override {
        if (progress_.on()) // between phases: no progress line is on screen
            fmt::print(stderr, "settle: {:g} s idle before the next run (--settle)\n", seconds);
    }

private:
    std::string page() const {
        const auto l = level_.load(std::memory_order_relaxed);
        return run::live_metrics_text(progress_.on() ? progress_.counters() : listened_,
                                      l ? std::optional<std::size_t>(l) : std::nullopt);
    }

    console::progress_reporter& progress_;
    telemetry::metrics_listener* listener_;
    session::live_counters listened_; // --metrics-listen without a progress line
    std::atomic<std::size_t> level_{0};
    std::optional<telemetry::served_page> served_; // last: it goes first, before what it reads
};

// Without --url: the native mock of this profile, in this process on a thread of its own (it
// shares the client's cores; a real server, or `pacer native-mock` as its own process, is what
// a measurement wants). The endpoint and the recorded URL become the mock's.
std::unique_ptr<local_mock> start_mock(const serve_settings& s, sweep::sweep_options& w) {
    auto mock = built_in_native_mock(w.profile, w.realtime);
    w.endpoint = transport::parse_ws_url(mock->url());
    run::model_in_url(w.endpoint, w.realtime, s.model);
    run::apply_client_settings(s.client, w.endpoint);
    w.url = mock->url() + " (built-in native mock)";
    return mock;
}

} // namespace

int serve(const serve_settings& s) {
    sweep::direct_wire direct;
    auto job = check_serve(s, direct);
    auto& w = job.sweep;
    // NVML loaded, --metrics-listen bound: a missing library or a busy port is exit 2 here,
    // before any file or header.
    auto telemetry = telemetry::open_telemetry(s.telemetry, s.metrics_listen, s.dry_run);
    if (s.dry_run) {
        sweep::print_plan(job, sweep::serve_descriptors(job), telemetry.plan);
        return runtime::exit_ok;
    }
    sweep::take_wire_inputs(w, std::move(direct)); // the sessions share them
    const auto mock = s.url.empty() ? start_mock(s, w) : nullptr;
    runtime::create_output_dir(job.out);
    w.telemetry = telemetry.recorder;
    job.command_line = runtime::recorded_command_line({"--header"}); // as `run`, `http` record it
    console::progress_reporter progress(
        *console::resolve_progress(s.progress, ::isatty(STDERR_FILENO) == 1));
    serve_printer printer(progress, telemetry.listener.get());
    job.observer = &printer;
    if (mock)
        job.stop_server = [&mock] { return mock->stop(); };
    job.transport_json = run::transport_json;
    job.transport_line = run::transport_line;
    job.report = [](const fs::path& dir) { return report::write_end_report(dir); };
    job.tables = report::write_end_tables;
    const auto verdict = sweep::execute_serve(job);
    telemetry::finish_listening(telemetry.listener.get()); // a watcher scrapes the final totals
    return runtime::exit_status(verdict);
}

} // namespace pacer::cli
