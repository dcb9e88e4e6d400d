// The wait for a server's recovery before each run of a capacity search (recovery.hpp).

#include <pacer/sweep/recovery.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pacer::sweep {

namespace json = boost::json;

double canary_limit_s(double baseline_s) {
    return baseline_s + std::max(0.020, baseline_s / 2);
}

namespace {

bool recovered(const recovery_settings& s, std::optional<double> baseline_s,
               const recovery_look& l) {
    const bool canary_ok =
        !s.canary || (baseline_s && l.canary_s && *l.canary_s <= canary_limit_s(*baseline_s));
    const bool stats_ok = !s.stats || (l.pending && *l.pending == 0);
    return canary_ok && stats_ok;
}

json::value number_or_null(std::optional<double> v) {
    return v ? json::value(*v) : json::value(nullptr);
}

std::string ms(double seconds) {
    return fmt::format("{:.0f} ms", seconds * 1e3);
}

} // namespace

recovery_record wait_for_recovery(const recovery_settings& s, std::optional<double> baseline_s,
                                  const std::function<recovery_look()>& look,
                                  const recovery_clock& clock) {
    recovery_record r;
    const auto start = clock.now();
    for (;;) {
        const auto before = clock.now();
        r.last = look();
        ++r.looks;
        const auto after = clock.now();
        r.waited_s = to_seconds(after - start);
        if (recovered(s, baseline_s, r.last)) {
            r.recovered = true;
            return r;
        }
        if ((after - start) + recovery_pause + (after - before) > s.max)
            return r;
        if (clock.idle(recovery_pause)) {
            r.interrupted = true;
            r.waited_s = to_seconds(clock.now() - start);
            return r;
        }
    }
}

json::object recovery_json(const recovery_record& r, std::optional<double> baseline_s) {
    json::object o{{"recovered", r.recovered},
                   {"waited_s", r.waited_s},
                   {"looks", r.looks},
                   {"canary_s", number_or_null(r.last.canary_s)},
                   {"baseline_s", number_or_null(baseline_s)},
                   {"canary_limit_s",
                    baseline_s ? json::value(canary_limit_s(*baseline_s)) : json::value(nullptr)},
                   {"pending", number_or_null(r.last.pending)}};
    if (!r.last.error.empty())
        o["stats_error"] = r.last.error;
    if (r.interrupted)
        o["interrupted"] = true;
    return o;
}

std::string recovery_verdict(const std::vector<overload_record>& overloads,
                             std::optional<double> baseline_s) {
    if (overloads.empty())
        return "no level overloaded the server";
    double longest = 0;
    for (const auto& o : overloads) {
        if (!o.after)
            return "the server's recovery was not watched (--recovery none)";
        if (!o.after->recovered) {
            const auto& l = o.after->last;
            std::string why;
            if (l.canary_s)
                why = fmt::format("canary lag {} vs baseline {}", ms(*l.canary_s),
                                  baseline_s ? ms(*baseline_s) : std::string("-"));
            if (l.pending)
                why += fmt::format("{}pending {:g}", why.empty() ? "" : ", ", *l.pending);
            if (why.empty())
                why = l.error.empty() ? "no figure" : l.error;
            return fmt::format("the server stayed degraded after level {} ({}, {:.0f} s waited)",
                               o.level, why, o.after->waited_s);
        }
        longest = std::max(longest, o.after->waited_s);
    }
    return fmt::format("the server recovered within {:.0f} s after every overload ({} overload{})",
                       std::ceil(longest), overloads.size(), overloads.size() == 1 ? "" : "s");
}

json::object overloads_json(const recovery_settings& s, std::optional<double> baseline_s,
                            const std::string& pointer,
                            const std::vector<overload_record>& overloads) {
    json::array list;
    for (const auto& o : overloads) {
        json::object e{{"level", o.level}, {"folder", o.folder}};
        e["recovery"] =
            o.after ? json::value(recovery_json(*o.after, baseline_s)) : json::value(nullptr);
        list.push_back(std::move(e));
    }
    json::array checks;
    if (s.canary)
        checks.emplace_back("canary");
    if (s.stats)
        checks.emplace_back("stats");
    return json::object{{"checks", std::move(checks)},
                        {"max_s", to_seconds(s.max)},
                        {"canary_input_s", canary_input_s},
                        {"baseline_s", number_or_null(baseline_s)},
                        {"canary_limit_s", baseline_s ? json::value(canary_limit_s(*baseline_s))
                                                      : json::value(nullptr)},
                        {"stats_pointer", s.stats ? json::value(pointer) : json::value(nullptr)},
                        {"overloads", std::move(list)},
                        {"verdict", recovery_verdict(overloads, baseline_s)}};
}

} // namespace pacer::sweep
