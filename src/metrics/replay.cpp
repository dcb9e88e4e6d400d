// `pacer replay` executed (see replay.hpp): each session's trace and receipts read back,
// checked and measured; report.json and the printed lines.

#include <pacer/core/bad_input.hpp>
#include <pacer/metrics/oracle.hpp>
#include <pacer/metrics/replay.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/core.h>

namespace pacer::metrics {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

// The whole file, or bad_input naming it (missing or unreadable input is bad input).
std::string read_file(const fs::path& path) {
    if (auto text = runtime::read_input_file_if_exists(path))
        return std::move(*text);
    throw bad_input(fmt::format("cannot read {}: no such file", path.string()));
}

// The reference export checks of docs/protocol.md §3.2 between the receipts and the traced appends.
std::vector<std::string> receipt_errors(const std::vector<trace_line>& trace,
                                        const trace::send_receipts& receipts) {
    std::vector<std::string> errors;
    std::vector<const trace_line*> appends;
    for (const auto& l : trace) {
        const auto* t = l.event.if_contains("type");
        if (l.direction == "send" && t && t->is_string() &&
            t->get_string() == "input_audio_buffer.append")
            appends.push_back(&l);
    }
    if (appends.size() != receipts.appends.size()) {
        errors.push_back(fmt::format("receipts list {} appends, the trace {}",
                                     receipts.appends.size(), appends.size()));
        return errors;
    }
    double previous_completion = 0;
    for (std::size_t i = 0; i < appends.size(); ++i) {
        const auto& r = receipts.appends[i];
        const auto* id = appends[i]->event.if_contains("event_id");
        if (!id || !id->is_string() || id->get_string() != r.id())
            errors.push_back(fmt::format("receipt {}: event_id differs from the trace", i));
        if (r.seq != i)
            errors.push_back(fmt::format("receipt {}: seq is {}", i, r.seq));
        if (r.start_s != appends[i]->time_s)
            errors.push_back(fmt::format("receipt {}: start_s differs from the trace time", i));
        if (r.completed_s < r.start_s || (i > 0 && r.completed_s < previous_completion))
            errors.push_back(
                fmt::format("receipt {}: completed_s is before its start or decreases", i));
        previous_completion = r.completed_s;
    }
    return errors;
}

json::array strings(const std::vector<std::string>& v) {
    json::array a;
    for (const auto& s : v)
        a.emplace_back(s);
    return a;
}

struct case_outcome {
    json::object json;
    session_metrics serving;
    std::string status;
};

case_outcome replay_session(const fs::path& dir, const std::string& id,
                            const protocol::profile& profile, const session_params& context) {
    const fs::path trace_path = dir / "trace.jsonl";
    const fs::path receipts_path = dir / "input-send-receipts.json";
    const std::string trace_text = read_file(trace_path);
    const std::string receipts_text = read_file(receipts_path);
    trace::send_receipts receipts;
    try {
        receipts = trace::parse_receipts(receipts_text, trace::receipt_rules::any_client);
    } catch (const std::runtime_error& e) {
        throw bad_input(fmt::format("cannot read {}: {}", receipts_path.string(), e.what()));
    }
    auto parsed = parse_trace(trace_text);
    std::vector<std::string> errors = parsed.errors;
    for (auto& e : receipt_errors(parsed.lines, receipts))
        errors.push_back(std::move(e));
    const auto pacing = pacing_deviation(parsed.lines);
    if (pacing.error)
        errors.push_back(*pacing.error);

    const auto oracle = evaluate_trace(parsed.lines, profile);
    case_outcome out;
    out.serving = compute_session_metrics(parsed.lines, receipts, profile, context);
    out.status = errors.empty() ? oracle.verdict : "fail";

    json::object c;
    c["id"] = id;
    c["directory"] = dir.string();
    c["status"] = out.status;
    c["violations"] = strings(oracle.violations);
    c["errors"] = strings(errors);
    c["coverage"] = json::object{{"input_output_overlap", oracle.input_output_overlap}};
    c["metrics"] = oracle.metrics_json();
    json::object timing;
    timing["appends"] = pacing.deviations_s.size();
    timing["max_abs_deviation_s"] = pacing.max_abs_deviation_s;
    timing["within_tolerance"] = pacing.within_tolerance;
    timing["pacing_tolerance_s"] = pacing_tolerance_s;
    c["input_timing"] = std::move(timing);
    c["serving"] = out.serving.to_json();
    if (!profile.continuous)
        c["units"] = compute_unit_metrics(parsed.lines, receipts, profile, context).to_json();
    out.json = std::move(c);
    return out;
}

// The cases' counts, and each case's line.
struct replay_tally {
    std::size_t passed = 0, failed = 0, not_exercised = 0;
    std::vector<std::pair<std::string, std::string>> rows;
};

json::object report_json(const replay_job& job, json::array cases,
                         const std::vector<session_metrics>& serving, const replay_tally& t) {
    json::object report;
    report["schema_version"] = 1;
    report["command"] = "replay";
    report["profile"] = job.profile->name;
    report["profile_source"] = job.profile_source;
    report["source"] = job.source.string();
    const auto& input_duration = job.context.input_duration_s;
    report["config"] = {
        {"startup_reserve_s", job.context.startup_reserve_s},
        {"input_duration_s", input_duration ? json::value(*input_duration) : json::value(nullptr)},
        {"late_send_threshold_s", late_send_threshold_s},
        {"pacing_tolerance_s", pacing_tolerance_s},
        {"max_admission_attempts", max_admission_attempts}};
    report["cases"] = std::move(cases);
    report["aggregate"] = aggregate_sessions(serving);
    report["summary"] = {{"selected", job.sessions.size()},
                         {"passed", t.passed},
                         {"failed", t.failed},
                         {"not_exercised", t.not_exercised}};
    return report;
}

} // namespace

int execute_replay(const replay_job& job) {
    json::array cases;
    std::vector<session_metrics> serving;
    replay_tally t;
    for (const auto& [id, path] : job.sessions) {
        auto c = replay_session(path, id, *job.profile, job.context);
        t.passed += c.status == "pass";
        t.failed += c.status == "fail";
        t.not_exercised += c.status == "not_exercised";
        t.rows.emplace_back(id, fmt::format("{:<14} {:>3} violations", c.status,
                                            c.json["violations"].as_array().size()));
        serving.push_back(std::move(c.serving));
        cases.emplace_back(std::move(c.json));
    }
    const auto report = report_json(job, std::move(cases), serving, t);
    runtime::write_new_file(job.output, json::serialize(report) + "\n");

    fmt::print("profile {} ({})\n", job.profile->name, job.profile_origin);
    for (const auto& [id, row] : t.rows)
        fmt::print("{:<12} {}\n", id, row);
    fmt::print("{} of {} cases passed ({} failed, {} not exercised); report: {}\n", t.passed,
               job.sessions.size(), t.failed, t.not_exercised, job.output.string());
    return t.passed == job.sessions.size() ? runtime::exit_ok : runtime::exit_failed;
}

} // namespace pacer::metrics
