#include <pacer/core/bad_input.hpp>
#include <pacer/metrics/llm.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace pacer::metrics {

namespace json = boost::json;

namespace {

double ms(duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

json::value seconds_since(const std::optional<time_point>& t, time_point start) {
    if (!t)
        return nullptr;
    return to_seconds(*t - start);
}

std::optional<double> tpot_ms(const llm_request& r) {
    if (!r.completed || !r.first_token || r.output_tokens() < 2)
        return std::nullopt;
    return ms(*r.completed - *r.first_token) / static_cast<double>(r.output_tokens() - 1);
}

// mean, std and the percentiles of one latency in ms; each null when no request has it (a run
// whose every request failed measured nothing, and 0 would read as a latency).
void add_stats(json::object& out, std::string_view name, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const auto put = [&](std::string_view stat, std::optional<double> x) {
        out[fmt::format("{}_{}_ms", stat, name)] = x ? json::value(*x) : json::value(nullptr);
    };
    if (v.empty()) {
        for (const char* stat : {"mean", "median", "std", "p90", "p95", "p99"})
            put(stat, std::nullopt);
        return;
    }
    double mean = 0, var = 0;
    for (double x : v)
        mean += x;
    mean /= static_cast<double>(v.size());
    for (double x : v)
        var += (x - mean) * (x - mean);
    var /= static_cast<double>(v.size());
    put("mean", mean);
    put("median", percentile(v, 50));
    put("std", std::sqrt(var));
    put("p90", percentile(v, 90));
    put("p95", percentile(v, 95));
    put("p99", percentile(v, 99));
}

} // namespace

goodput_slo parse_goodput(std::string_view text) {
    goodput_slo slo;
    const auto bad = [&](std::string_view why) {
        return bad_input(fmt::format(
            "--goodput '{}' {} (expected e.g. ttft:500,tpot:50,e2el:2000, in ms)", text, why));
    };
    if (text.empty())
        throw bad("is empty");
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const auto comma = std::min(text.find(',', pos), text.size());
        const std::string_view item = text.substr(pos, comma - pos);
        const auto colon = item.find(':');
        if (colon == std::string_view::npos)
            throw bad(fmt::format("has '{}' without a ':'", item));
        const std::string_view key = item.substr(0, colon), value = item.substr(colon + 1);
        double v = 0;
        const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (value.empty() || ec != std::errc{} || p != value.data() + value.size() ||
            !std::isfinite(v) || v <= 0)
            throw bad(fmt::format("has '{}': the value must be a number of ms > 0", item));
        std::optional<double>* slot = key == "ttft"   ? &slo.ttft_ms
                                      : key == "tpot" ? &slo.tpot_ms
                                      : key == "e2el" ? &slo.e2el_ms
                                                      : nullptr;
        if (!slot)
            throw bad(fmt::format("names '{}': use ttft, tpot or e2el", key));
        if (*slot)
            throw bad(fmt::format("gives {} twice", key));
        *slot = v;
        pos = comma + 1;
    }
    return slo;
}

bool meets(const llm_request& r, const goodput_slo& slo) {
    if (!r.ok())
        return false;
    if (slo.ttft_ms && (!r.first_token || ms(*r.first_token - r.scheduled) > *slo.ttft_ms))
        return false;
    if (slo.tpot_ms)
        if (const auto t = tpot_ms(r); t && *t > *slo.tpot_ms)
            return false;
    if (slo.e2el_ms && ms(*r.completed - r.scheduled) > *slo.e2el_ms)
        return false;
    return true;
}

double percentile(std::span<const double> sorted, double p) {
    if (sorted.empty())
        return 0;
    const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(rank));
    const auto hi = std::min(lo + 1, sorted.size() - 1);
    const double frac = rank - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

json::object llm_request_json(const llm_request& r, time_point start) {
    json::object o;
    o["index"] = r.index;
    o["scheduled_s"] = to_seconds(r.scheduled - start);
    o["dispatched_s"] = seconds_since(r.dispatched, start);
    o["first_byte_s"] = seconds_since(r.first_byte, start);
    o["first_token_s"] = seconds_since(r.first_token, start);
    o["connect_ms"] = r.connect_s ? json::value(*r.connect_s * 1e3) : json::value(nullptr);
    o["tls_handshake_ms"] =
        r.tls_handshake_s ? json::value(*r.tls_handshake_s * 1e3) : json::value(nullptr);
    o["completed_s"] = seconds_since(r.completed, start);
    o["dropped"] = r.dropped;
    o["status"] = r.status;
    o["error"] = r.error.empty() ? json::value(nullptr) : json::value(r.error);
    o["error_message"] = r.error_message;
    o["input_len"] = r.input_len;
    o["output_len"] = r.output_len;
    o["output_tokens"] = r.output_tokens();
    o["chunks"] = r.token_times.size();
    o["usage_prompt_tokens"] =
        r.usage_prompt_tokens ? json::value(*r.usage_prompt_tokens) : json::value(nullptr);
    o["usage_completion_tokens"] =
        r.usage_completion_tokens ? json::value(*r.usage_completion_tokens) : json::value(nullptr);
    const auto opt_ms = [](std::optional<time_point> to, std::optional<time_point> from) {
        return to && from ? json::value(ms(*to - *from)) : json::value(nullptr);
    };
    o["ttft_ms"] = opt_ms(r.first_token, r.scheduled);
    o["ttft_uncorrected_ms"] = opt_ms(r.first_token, r.dispatched);
    o["e2el_ms"] = opt_ms(r.completed, r.scheduled);
    o["e2el_uncorrected_ms"] = opt_ms(r.completed, r.dispatched);
    const auto t = tpot_ms(r);
    o["tpot_ms"] = t ? json::value(*t) : json::value(nullptr);
    json::array tokens;
    tokens.reserve(r.token_times.size());
    for (const auto& tt : r.token_times)
        tokens.push_back(to_seconds(tt - start));
    o["token_times_s"] = std::move(tokens);
    return o;
}

json::object llm_summary(std::span<const llm_request> requests, time_point start,
                         const goodput_slo& slo) {
    std::size_t completed = 0, failed = 0, dropped = 0, good = 0;
    std::uint64_t input_tokens = 0, output_tokens = 0;
    std::optional<time_point> last;
    std::vector<double> ttft, ttft_u, tpot, itl, e2el, e2el_u;
    json::object errors;
    for (auto kind : llm_error_kinds)
        errors[kind] = 0;
    for (const auto& r : requests) {
        if (r.dropped)
            ++dropped;
        if (r.completed)
            last = last ? std::max(*last, *r.completed) : *r.completed;
        if (!r.error.empty()) {
            ++failed;
            auto& c = errors[r.error];
            c = c.is_null() ? 1 : c.to_number<std::uint64_t>() + 1;
            continue;
        }
        if (!r.ok())
            continue;
        ++completed;
        input_tokens += r.usage_prompt_tokens.value_or(r.input_len);
        output_tokens += r.output_tokens();
        if (meets(r, slo))
            ++good;
        if (r.first_token) {
            ttft.push_back(ms(*r.first_token - r.scheduled));
            if (r.dispatched)
                ttft_u.push_back(ms(*r.first_token - *r.dispatched));
        }
        e2el.push_back(ms(*r.completed - r.scheduled));
        if (r.dispatched)
            e2el_u.push_back(ms(*r.completed - *r.dispatched));
        if (const auto t = tpot_ms(r))
            tpot.push_back(*t);
        for (std::size_t i = 1; i < r.token_times.size(); ++i)
            itl.push_back(ms(r.token_times[i] - r.token_times[i - 1]));
    }
    const double duration_s = last ? to_seconds(*last - start) : 0.0;
    const auto per_s = [&](double n) { return duration_s > 0 ? n / duration_s : 0.0; };

    json::object out;
    out["duration"] = duration_s;
    out["scheduled"] = requests.size();
    out["completed"] = completed;
    out["failed"] = failed;
    out["dropped"] = dropped;
    out["errors"] = std::move(errors);
    out["total_input_tokens"] = input_tokens;
    out["total_output_tokens"] = output_tokens;
    out["request_throughput"] = per_s(static_cast<double>(completed));
    out["output_throughput"] = per_s(static_cast<double>(output_tokens));
    out["total_token_throughput"] = per_s(static_cast<double>(input_tokens + output_tokens));
    if (!slo.empty()) {
        out["request_goodput"] = per_s(static_cast<double>(good));
        out["goodput_requests"] = good;
        json::object s;
        s["ttft_ms"] = slo.ttft_ms ? json::value(*slo.ttft_ms) : json::value(nullptr);
        s["tpot_ms"] = slo.tpot_ms ? json::value(*slo.tpot_ms) : json::value(nullptr);
        s["e2el_ms"] = slo.e2el_ms ? json::value(*slo.e2el_ms) : json::value(nullptr);
        out["goodput_slo"] = std::move(s);
    }
    add_stats(out, "ttft", std::move(ttft));
    add_stats(out, "tpot", tpot);
    add_stats(out, "itl", itl);
    add_stats(out, "e2el", std::move(e2el));
    json::object u;
    add_stats(u, "ttft", std::move(ttft_u));
    add_stats(u, "tpot", std::move(tpot));
    add_stats(u, "itl", std::move(itl));
    add_stats(u, "e2el", std::move(e2el_u));
    out["uncorrected"] = std::move(u);
    return out;
}

} // namespace pacer::metrics
