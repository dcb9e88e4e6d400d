#include <pacer/core/stats.hpp>
#include <pacer/schedule/open_loop.hpp>

#include <boost/json/array.hpp>

#include <map>
#include <utility>

namespace pacer::schedule {

namespace json = boost::json;

template class basic_dispatcher<time_point>;

std::string_view to_string(cap_policy policy) noexcept {
    return policy == cap_policy::drop ? "drop" : "queue";
}

std::optional<cap_policy> parse_cap_policy(std::string_view name) noexcept {
    if (name == "queue")
        return cap_policy::queue;
    if (name == "drop")
        return cap_policy::drop;
    return std::nullopt;
}

open_loop_result make_open_loop_result(dispatcher& d) {
    open_loop_result r;
    r.start = d.start();
    r.max_concurrency = d.max_concurrency();
    r.policy = d.policy();
    r.peak_in_flight = d.peak_in_flight();
    r.interrupted = d.stopped();
    r.records = d.take_records();
    return r;
}

namespace {

double seconds(duration d) {
    return to_seconds(d);
}

} // namespace

bool schedule_kept(std::optional<double> lag_p99_s, std::optional<double> lag_max_s,
                   const schedule_thresholds& t) {
    const bool p99_ok = !lag_p99_s || *lag_p99_s <= seconds(t.dispatch_lag_p99);
    const bool max_ok = !lag_max_s || *lag_max_s <= seconds(t.dispatch_lag_max);
    return p99_ok && max_ok;
}

json::object open_loop_summary(const open_loop_result& result,
                               const schedule_thresholds& thresholds) {
    std::size_t dispatched = 0, completed = 0, failed = 0, dropped = 0, delayed = 0;
    std::size_t deadline_missed = 0;
    std::vector<double> latency, uncorrected, lag, delay;
    for (const auto& r : result.records) {
        if (r.dropped)
            ++dropped;
        if (auto l = r.dispatch_lag()) {
            ++dispatched;
            lag.push_back(seconds(*l));
            if (*l > thresholds.dispatch_lag_max)
                ++deadline_missed;
        }
        if (r.cap_delay > duration::zero()) {
            ++delayed;
            delay.push_back(seconds(r.cap_delay));
        }
        if (r.completed) {
            ++completed;
            if (r.failed) {
                ++failed;
            } else {
                latency.push_back(seconds(*r.latency()));
                uncorrected.push_back(seconds(*r.uncorrected_latency()));
            }
        }
    }
    const std::size_t scheduled = result.records.size();

    json::object out;
    out["requests"] = {
        {"scheduled", scheduled}, {"dispatched", dispatched},
        {"completed", completed}, {"failed", failed},
        {"dropped", dropped},     {"not_dispatched", scheduled - dispatched - dropped}};
    out["latency_s"] = to_json(summarize(latency, protocol_fractions));
    out["uncorrected_latency_s"] = to_json(summarize(uncorrected, protocol_fractions));

    const distribution lag_d = summarize(lag, pacing_fractions);
    out["dispatch_lag_s"] = to_json(lag_d);
    out["deadline_missed"] = deadline_missed;
    out["schedule_kept"] = schedule_kept(lag_d.at(0.99), lag_d.max, thresholds);
    out["schedule_kept_thresholds_s"] = {
        {"dispatch_lag_p99", seconds(thresholds.dispatch_lag_p99)},
        {"dispatch_lag_max", seconds(thresholds.dispatch_lag_max)}};

    json::object cap;
    cap["max_concurrency"] = result.max_concurrency;
    cap["policy"] = to_string(result.policy);
    cap["binding"] = delayed > 0 || dropped > 0;
    cap["delayed"] = delayed;
    cap["delay_s"] = to_json(summarize(delay, protocol_fractions));
    cap["dropped"] = dropped;
    cap["peak_in_flight"] = result.peak_in_flight;
    out["cap"] = std::move(cap);

    std::map<std::string, std::size_t> by_message;
    for (const auto& f : result.failures)
        ++by_message[f.message];
    json::array errors;
    for (const auto& [message, count] : by_message)
        errors.push_back(json::object{{"message", message}, {"count", count}});
    out["errors"] = std::move(errors);
    out["interrupted"] = result.interrupted;
    return out;
}

json::array stage_rows(const open_loop_result& result, std::span<const stage> stages) {
    struct tally {
        std::size_t offered = 0, achieved = 0, completed = 0, failed = 0, dropped = 0;
        std::vector<double> latency;
    };
    std::vector<tally> per(stages.size());
    if (stages.empty())
        return {};
    const auto offset = [&](time_point t) {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(t - result.start);
    };
    const auto clamp = [&](std::size_t i) { return std::min(i, stages.size() - 1); };
    for (const auto& r : result.records) {
        auto& t = per[clamp(stage_index(stages, offset(r.scheduled)))];
        ++t.offered;
        if (r.dropped)
            ++t.dropped;
        if (r.dispatched)
            ++per[clamp(stage_index(stages, offset(*r.dispatched)))].achieved;
        if (r.completed && r.failed)
            ++t.failed;
        else if (r.completed) {
            ++t.completed;
            t.latency.push_back(seconds(*r.latency()));
        }
    }
    json::array rows;
    std::chrono::nanoseconds from{};
    for (std::size_t i = 0; i < stages.size(); ++i) {
        const auto& s = stages[i];
        const double length = static_cast<double>(s.duration.count()) / 1e9;
        auto& t = per[i];
        json::object row;
        row["stage"] = to_string(std::span<const stage>(&s, 1));
        row["from_s"] = static_cast<double>(from.count()) / 1e9;
        row["to_s"] = static_cast<double>((from + s.duration).count()) / 1e9;
        row["target_per_s"] = (s.from_rate + s.to_rate) / 2;
        row["target_from_per_s"] = s.from_rate;
        row["target_to_per_s"] = s.to_rate;
        row["offered"] = t.offered;
        row["offered_per_s"] = static_cast<double>(t.offered) / length;
        row["achieved"] = t.achieved;
        row["achieved_per_s"] = static_cast<double>(t.achieved) / length;
        row["completed"] = t.completed;
        row["failed"] = t.failed;
        row["dropped"] = t.dropped;
        row["latency_s"] = to_json(summarize(t.latency, protocol_fractions));
        rows.push_back(std::move(row));
        from += s.duration;
    }
    return rows;
}

} // namespace pacer::schedule
