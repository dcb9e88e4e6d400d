// `pacer export` of a `pacer http` folder: one row per request (every arrival of the schedule,
// dropped ones too) and one per token arrival; of a capacity search: one row per probe.
// Column names carry their unit (`_s` seconds from the schedule's origin, `_ms` milliseconds).

#include <pacer/report/tables.hpp>

#include <fmt/format.h>

#include "html_parts.hpp"

namespace pacer::report::detail {

namespace json = boost::json;

namespace {

cell opt(std::optional<double> v) {
    return v ? cell(*v) : cell();
}

cell opt(std::optional<std::uint64_t> v) {
    return v ? cell(static_cast<std::int64_t>(*v)) : cell();
}

cell count(std::uint64_t v) {
    return cell(static_cast<std::int64_t>(v));
}

table requests_table(const result_folder& f) {
    table t;
    t.name = "requests";
    t.columns = {"request",
                 "scheduled_s",
                 "dispatched_s",
                 "first_byte_s",
                 "first_token_s",
                 "completed_s",
                 "dispatch_lag_ms",
                 "ttft_ms",
                 "ttft_uncorrected_ms",
                 "tpot_ms",
                 "e2el_ms",
                 "e2el_uncorrected_ms",
                 "dropped",
                 "status",
                 "error",
                 "error_message",
                 "input_tokens_asked",
                 "output_tokens_asked",
                 "output_tokens",
                 "chunks",
                 "usage_prompt_tokens",
                 "usage_completion_tokens"};
    for (const auto& r : f.requests) {
        std::vector<cell> c;
        c.push_back(count(r.index));
        c.push_back(r.scheduled_s);
        c.push_back(opt(r.dispatched_s));
        c.push_back(opt(r.first_byte_s));
        c.push_back(opt(r.first_token_s));
        c.push_back(opt(r.completed_s));
        c.push_back(r.dispatched_s ? cell((*r.dispatched_s - r.scheduled_s) * 1e3) : cell());
        c.push_back(opt(r.ttft_ms));
        c.push_back(opt(r.ttft_uncorrected_ms));
        c.push_back(opt(r.tpot_ms));
        c.push_back(opt(r.e2el_ms));
        c.push_back(opt(r.e2el_uncorrected_ms));
        c.push_back(r.dropped);
        c.push_back(r.status ? count(r.status) : cell());
        c.push_back(r.error.empty() ? cell() : cell(r.error));
        c.push_back(r.error_message.empty() ? cell() : cell(r.error_message));
        c.push_back(count(r.input_len));
        c.push_back(count(r.output_len));
        c.push_back(count(r.output_tokens));
        c.push_back(count(r.chunks));
        c.push_back(opt(r.usage_prompt_tokens));
        c.push_back(opt(r.usage_completion_tokens));
        t.rows.push_back(std::move(c));
    }
    return t;
}

table tokens_table(const result_folder& f) {
    table t;
    t.name = "tokens";
    t.columns = {"request", "token", "arrival_s", "itl_ms"};
    for (const auto& r : f.requests)
        for (std::size_t k = 0; k < r.token_times_s.size(); ++k)
            t.rows.push_back(
                {count(r.index), count(k), r.token_times_s[k],
                 k ? cell((r.token_times_s[k] - r.token_times_s[k - 1]) * 1e3) : cell()});
    return t;
}

table probes_table(const result_folder& f) {
    table t;
    t.name = "probes";
    t.columns = {"probe",  "rate_per_s",  "passed",      "schedule_kept", "goodput_fraction",
                 "failed", "p99_ttft_ms", "p99_e2el_ms", "p99_tpot_ms",   "folder"};
    const auto* probes = f.summary.if_contains("probes");
    if (!probes || !probes->is_array())
        return t;
    std::size_t i = 0;
    for (const auto& pv : probes->as_array()) {
        const auto* p = pv.if_object();
        ++i;
        if (!p)
            continue;
        const auto num = [](const json::object& o, const char* k) {
            const auto* v = o.if_contains(k);
            return v && v->is_number() ? std::optional<double>(v->to_number<double>())
                                       : std::nullopt;
        };
        const auto flag = [&](const char* k) {
            const auto* v = p->if_contains(k);
            return v && v->is_bool() ? cell(v->as_bool()) : cell();
        };
        const auto* folder = p->if_contains("folder");
        const std::string name =
            folder && folder->is_string() ? std::string(folder->as_string()) : "";
        const json::object* ps = nullptr;
        for (const auto& part : f.parts)
            if (part.dir.filename() == name)
                ps = &part.summary;
        std::vector<cell> c;
        c.push_back(count(i));
        c.push_back(opt(num(*p, "rate")));
        c.push_back(flag("passed"));
        c.push_back(flag("schedule_kept"));
        c.push_back(opt(num(*p, "goodput_fraction")));
        const auto failed = num(*p, "failed");
        c.push_back(failed ? count(static_cast<std::uint64_t>(*failed)) : cell());
        for (const char* k : {"p99_ttft_ms", "p99_e2el_ms", "p99_tpot_ms"})
            c.push_back(ps ? opt(num(*ps, k)) : cell());
        c.push_back(name);
        t.rows.push_back(std::move(c));
    }
    return t;
}

} // namespace

std::vector<table> build_http_tables(const result_folder& f) {
    if (f.kind == folder_kind::http_capacity)
        return {probes_table(f)};
    return {requests_table(f), tokens_table(f)};
}

} // namespace pacer::report::detail
