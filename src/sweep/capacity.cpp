#include <pacer/sweep/capacity.hpp>

#include <boost/json/array.hpp>

#include <algorithm>

namespace pacer::sweep {

namespace json = boost::json;

capacity_result search_capacity(const capacity_settings& settings, const level_probe& probe) {
    // Doubling until a level fails its SLOs, then bisection between the last good level and
    // the first bad one. A level whose client timing is not valid twice in a row ends the
    // search: beyond it, the figures would measure the client, not the server. (One second
    // try, because a single stall of this host, such as the kernel writing back the previous
    // levels' traces, must not end a search that later levels would pass.)
    capacity_result result;
    std::size_t good = 0, c = settings.start_level;
    std::optional<std::size_t> bad;
    bool second_try = false;
    for (;;) {
        const auto r = probe(c, second_try);
        result.probed_levels.push_back(c);
        if (r.interrupted) {
            result.limited_by = "interrupted";
            break;
        }
        if (r.unreachable) {
            result.limited_by = "unreachable";
            break;
        }
        if (!r.valid) {
            if (!second_try) {
                second_try = true;
                continue;
            }
            result.limited_by = "client";
            break;
        }
        second_try = false;
        if (r.slo_met) {
            good = c;
            if (!bad && c == settings.max_level)
                break;
            c = bad ? (good + *bad) / 2 : std::min(c * 2, settings.max_level);
        } else {
            bad = c;
            result.limited_by = "slo";
            c = (good + *bad) / 2;
        }
        if (bad && (*bad - good <= std::max<std::size_t>(
                                       1, static_cast<std::size_t>(settings.resolution *
                                                                   static_cast<double>(good))) ||
                    c <= good))
            break;
    }
    result.sessions = good;
    result.first_failing_level = bad;
    return result;
}

json::object capacity_json(const capacity_result& r, std::string_view slo) {
    json::object o;
    o["sessions"] = r.sessions;
    o["first_failing_level"] =
        r.first_failing_level ? json::value(*r.first_failing_level) : json::value(nullptr);
    o["limited_by"] = r.limited_by;
    json::array probes;
    for (auto c : r.probed_levels)
        probes.push_back(c);
    o["probed_levels"] = std::move(probes);
    o["slo"] = slo;
    return o;
}

} // namespace pacer::sweep
