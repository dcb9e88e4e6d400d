#include <pacer/core/awaitable.hpp>
#include <pacer/http/progress.hpp>
#include <pacer/telemetry/exposition.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace pacer::http {

namespace {

constexpr auto relaxed = std::memory_order_relaxed;

std::size_t kind_slot(std::string_view kind) {
    const auto& kinds = metrics::llm_error_kinds;
    const auto it = std::find(std::begin(kinds), std::end(kinds), kind);
    return static_cast<std::size_t>(it - std::begin(kinds)); // the last slot: "other"
}

std::string_view kind_name(std::size_t slot) {
    return slot < std::size(metrics::llm_error_kinds) ? metrics::llm_error_kinds[slot] : "other";
}

} // namespace

void http_live::ended(const metrics::llm_request& r, time_point scheduled) {
    if (!r.ok()) {
        failed[kind_slot(r.error)].fetch_add(1, relaxed);
        return;
    }
    if (r.first_token)
        ttft_ns.record(
            std::chrono::duration_cast<std::chrono::nanoseconds>(*r.first_token - scheduled)
                .count());
    done.fetch_add(1, relaxed);
}

pacer::awaitable<void> observe_request(pacer::awaitable<void> request,
                                       const metrics::llm_request& r, time_point scheduled,
                                       http_live* live) {
    try {
        co_await std::move(request);
    } catch (...) {
        if (live)
            live->threw();
        throw;
    }
    if (live)
        live->ended(r, scheduled);
}

std::uint64_t http_progress_snapshot::failed_total() const {
    std::uint64_t n = 0;
    for (auto f : failed)
        n += f;
    return n;
}

std::uint64_t http_progress_snapshot::in_flight() const {
    const std::uint64_t ended = done + failed_total();
    return dispatched > ended ? dispatched - ended : 0;
}

http_progress_snapshot take_http_snapshot(const session::open_loop_live& dispatch,
                                          const http_live& requests,
                                          std::span<const std::chrono::nanoseconds> offsets,
                                          std::size_t max_concurrency, time_point now) {
    http_progress_snapshot s;
    s.total = offsets.size();
    s.max_concurrency = max_concurrency;
    // Ends before dispatches: a request counted as ended is then always counted as dispatched.
    s.done = requests.done.load(relaxed);
    for (std::size_t k = 0; k < s.failed.size(); ++k)
        s.failed[k] = requests.failed[k].load(relaxed);
    s.dispatched = dispatch.dispatched.load(relaxed);
    s.dropped = dispatch.dropped.load(relaxed);
    s.delayed = dispatch.delayed.load(relaxed);
    if (const auto start_ns = dispatch.start_ns.load(relaxed); start_ns != 0) {
        const auto since =
            std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()) -
            std::chrono::nanoseconds(start_ns);
        s.due = static_cast<std::uint64_t>(std::upper_bound(offsets.begin(), offsets.end(), since) -
                                           offsets.begin());
    }
    if (const auto lag = dispatch.dispatch_lag_ns.quantile(0.99))
        s.dispatch_lag_p99_s = static_cast<double>(*lag) / 1e9;
    if (const auto ttft = requests.ttft_ns.quantile(0.50))
        s.ttft_p50_s = static_cast<double>(*ttft) / 1e9;
    return s;
}

std::string format_http_progress(const http_progress_snapshot& s, const console::progress_view& v,
                                 bool terminal, std::size_t width) {
    std::string eta;
    if (v.expected_s && *v.expected_s > v.elapsed_s)
        eta =
            fmt::format(" (ETA {})", console::short_duration(*v.expected_s - v.elapsed_s + 0.999));
    std::string kinds;
    for (std::size_t k = 0; k < s.failed.size(); ++k)
        if (s.failed[k] > 0)
            kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", kind_name(k), s.failed[k]);
    std::string text = fmt::format(
        "progress {}{}{}  requests {}/{} due, {} dispatched, {} in flight, {} done, {} failed{}",
        v.label.empty() ? "" : v.label + "  ", console::short_duration(v.elapsed_s), eta, s.due,
        s.total, s.dispatched, s.in_flight(), s.done, s.failed_total(),
        kinds.empty() ? "" : " (" + kinds + ")");
    const auto ms = [](std::optional<double> x) {
        return x ? fmt::format("{:.3g} ms", *x * 1e3) : std::string("–");
    };
    text += fmt::format("  dispatch lag p99 {}  TTFT p50 {}", ms(s.dispatch_lag_p99_s),
                        ms(s.ttft_p50_s));
    if (s.max_concurrency > 0) {
        // Due but neither dispatched nor dropped: held by the cap (or not yet reached).
        const std::uint64_t gone = s.dispatched + s.dropped;
        const std::uint64_t held = s.due > gone ? s.due - gone : 0;
        text += fmt::format("  cap {}/{}", s.in_flight(), s.max_concurrency);
        if (held > 0 || s.delayed > 0 || s.dropped > 0)
            text += fmt::format(" binding: {} held, {} delayed, {} dropped", held, s.delayed,
                                s.dropped);
    }
    if (terminal && width > 1 && text.size() > width - 1)
        text.resize(width - 1);
    return terminal ? "\r\033[K" + text : text + "\n";
}

std::string http_metrics_text(const http_progress_snapshot& s, double offered_rate) {
    using telemetry::metric_family;
    using telemetry::metric_type;
    const auto one = [](const char* name, const char* help, metric_type type, double v) {
        return metric_family{name, help, type, {{{}, v}}};
    };
    const auto n = [](std::uint64_t v) { return static_cast<double>(v); };
    metric_family failed{"pacer_http_requests_failed_total",
                         "Requests that ended with an error, "
                         "by kind",
                         metric_type::counter,
                         {}};
    for (std::size_t k = 0; k < s.failed.size(); ++k)
        failed.series.push_back({{{"kind", std::string(kind_name(k))}}, n(s.failed[k])});
    std::vector<metric_family> f{
        one("pacer_http_requests_scheduled", "Arrivals of the schedule", metric_type::gauge,
            n(s.total)),
        one("pacer_http_requests_due", "Arrivals whose scheduled time has passed",
            metric_type::gauge, n(s.due)),
        one("pacer_http_requests_dispatched_total", "Requests sent", metric_type::counter,
            n(s.dispatched)),
        one("pacer_http_requests_dropped_total", "Arrivals dropped by the concurrency cap",
            metric_type::counter, n(s.dropped)),
        one("pacer_http_requests_delayed_total", "Arrivals the concurrency cap held back",
            metric_type::counter, n(s.delayed)),
        one("pacer_http_requests_done_total", "Requests that ended without error",
            metric_type::counter, n(s.done)),
        std::move(failed),
        one("pacer_http_requests_in_flight", "Requests sent and not yet ended", metric_type::gauge,
            n(s.in_flight())),
        one("pacer_http_offered_rate",
            "Requests per second the schedule offers (the probe's, "
            "in a capacity search)",
            metric_type::gauge, offered_rate),
    };
    if (s.max_concurrency > 0)
        f.push_back(one("pacer_http_max_concurrency", "--max-concurrency", metric_type::gauge,
                        n(s.max_concurrency)));
    if (s.dispatch_lag_p99_s)
        f.push_back(one("pacer_http_dispatch_lag_p99_seconds",
                        "Send time minus scheduled time, 99th percentile so far",
                        metric_type::gauge, *s.dispatch_lag_p99_s));
    if (s.ttft_p50_s)
        f.push_back(one("pacer_http_ttft_p50_seconds",
                        "First token minus scheduled time, median so far", metric_type::gauge,
                        *s.ttft_p50_s));
    return telemetry::format_exposition(f);
}

http_progress_reporter::http_progress_reporter(console::progress_mode mode, std::FILE* out)
    : lines_(mode, out) {
    lines_.set_line([this](const console::progress_view& v, bool terminal, std::size_t width) {
        return format_http_progress(snapshot(clock::now()), v, terminal, width);
    });
}

http_progress_snapshot http_progress_reporter::snapshot(time_point now) {
    std::lock_guard lock(mutex_);
    return take_http_snapshot(state_->dispatch, state_->requests, offsets_, max_concurrency_, now);
}

void http_progress_reporter::begin(std::string label,
                                   std::span<const std::chrono::nanoseconds> offsets,
                                   std::size_t max_concurrency, std::optional<double> expected_s) {
    {
        std::lock_guard lock(mutex_);
        state_ = std::make_unique<state>();
        offsets_ = offsets;
        max_concurrency_ = max_concurrency;
    }
    lines_.begin(std::move(label), expected_s);
}

} // namespace pacer::http
