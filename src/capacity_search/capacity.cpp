#include <pacer/capacity_search/capacity.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace pacer::capacity_search {

namespace json = boost::json;

std::string_view to_string(limit l) noexcept {
    switch (l) {
    case limit::slo:
        return "slo";
    case limit::client:
        return "client";
    case limit::max_level:
        return "max-level";
    case limit::max_rate:
        return "max-rate";
    case limit::unreachable:
        return "unreachable";
    case limit::interrupted:
        return "interrupted";
    case limit::nothing_to_run:
        return "nothing-to-run";
    case limit::not_recovered:
        return "not-recovered";
    }
    return "slo";
}

std::string_view to_string(try_kind kind) noexcept {
    switch (kind) {
    case try_kind::search:
        return "search";
    case try_kind::confirm:
        return "confirm";
    case try_kind::verify:
        return "verify";
    }
    return "search";
}

std::optional<double> level_space::above(double good, std::size_t) const {
    const auto max = static_cast<double>(s_.max_level);
    if (good >= max)
        return std::nullopt;
    return std::min(good * 2, max);
}

std::optional<double> level_space::below(double bad, std::size_t downs) const {
    return between(0, bad, downs); // no good level known: 0 is the floor
}

std::optional<double> level_space::between(double good, double bad, std::size_t) const {
    const auto g = static_cast<std::size_t>(good), b = static_cast<std::size_t>(bad);
    const auto width =
        std::max<std::size_t>(1, static_cast<std::size_t>(s_.resolution * static_cast<double>(g)));
    const auto c = (g + b) / 2;
    if (b - g <= width || c <= g || c >= b)
        return std::nullopt;
    return static_cast<double>(c);
}

double capacity_space::gently(double, double next) const {
    return next;
}

double level_space::gently(double good, double next) const {
    const double most = std::max(good + 1, std::floor(good * s_.growth));
    return std::min(next, most);
}

std::string level_space::name(double value) const {
    return fmt::format("level {}", static_cast<std::size_t>(value));
}

std::optional<double> rate_space::above(double good, std::size_t ups) const {
    if (ups >= max_moves_ || good * 2 > max_rate_)
        return std::nullopt;
    return good * 2;
}

std::optional<double> rate_space::below(double bad, std::size_t downs) const {
    if (downs >= max_moves_)
        return std::nullopt;
    return bad / 2;
}

std::optional<double> rate_space::between(double good, double bad, std::size_t splits) const {
    if (splits >= steps_)
        return std::nullopt;
    return (good + bad) / 2;
}

std::string rate_space::name(double value) const {
    return fmt::format("rate {:g} requests/s", value);
}

namespace {

// How a value was judged after its tries.
enum class judged { met, missed, client, not_recovered, stopped };

// The closing verification stops after this many rounds that moved the answer.
constexpr int max_verification_rounds = 4;

// The search's state: the last good value, the first bad one, and every value's judgement.
class search_state {
public:
    /// Why the search stopped before it found its answer (nullopt: it did not).
    std::optional<limit> stop() const { return stop_; }

    search_state(const capacity_space& space, const search_policy& policy,
                 const capacity_probe_fn& probe, capacity_search_result& r)
        : space_(space), s_(policy), probe_(probe), r_(r) {}

    // Up, down, then between, from value c (the first value; after it the space chooses);
    // false when the search must stop (a signal, an unreachable server, nothing to run, a
    // client that cannot keep up).
    bool search_from(std::optional<double> c) {
        for (; c; c = next()) {
            const auto v = judge(*c);
            if (v == judged::stopped)
                return false;
            if (v == judged::client || v == judged::not_recovered) {
                stop_ = v == judged::client ? limit::client : limit::not_recovered;
                if (v == judged::not_recovered)
                    r_.notes.push_back(fmt::format(
                        "{} missed only on a server that had not recovered from the run "
                        "before: the search stops there (raise --recovery-max)",
                        space_.name(*c)));
                return false;
            }
            judgement_[*c] = v == judged::met;
            if (v == judged::met) {
                r_.good = *c;
            } else {
                r_.bad = *c;
                missed_ = true;
            }
        }
        return true;
    }

    // The next value the space gives for what is known, counted by the way it was chosen;
    // once some value missed, above the last good value only as far as the space allows.
    std::optional<double> next() {
        if (r_.good && r_.bad)
            return gently(space_.between(*r_.good, *r_.bad, splits_++));
        if (r_.good)
            return gently(space_.above(*r_.good, ups_++));
        return space_.below(*r_.bad, downs_++);
    }

    // The verification rounds (see search_capacity); false when the search had to stop.
    bool verify() {
        for (int round = 0; round < max_verification_rounds; ++round) {
            r_.capacity_check.reset();
            r_.failing_check.reset();
            if (r_.good) {
                const double good = *r_.good;
                const auto v = verify_value(good);
                if (!v)
                    return false;
                r_.capacity_check = v;
                r_.capacity_check->held = v->runs > 0 && v->met == v->runs;
                if (v->runs == 0) {
                    r_.notes.push_back(
                        fmt::format("capacity {}: no verification run had valid client timing, so "
                                    "the boundary is not verified",
                                    space_.name(good)));
                    return true;
                }
                if (!r_.capacity_check->held) {
                    r_.notes.push_back(fmt::format(
                        "capacity {} met its SLOs in {} of {} verification runs: it counts "
                        "as failing, and the search goes on below it",
                        space_.name(good), v->met, v->runs));
                    judgement_[good] = false;
                    missed_ = true;
                    r_.bad = good;
                    r_.good = highest_good_below(good);
                    if (!search_again())
                        return false;
                    continue;
                }
            }
            if (r_.bad) {
                const double bad = *r_.bad;
                const auto v = verify_value(bad);
                if (!v)
                    return false;
                r_.failing_check = v;
                r_.failing_check->held = v->runs > 0 && v->met == 0;
                if (v->runs == 0) {
                    r_.notes.push_back(fmt::format(
                        "first failing {}: no verification run had valid client timing, "
                        "so the boundary is not verified",
                        space_.name(bad)));
                    return true;
                }
                if (v->met == v->runs) {
                    r_.notes.push_back(
                        fmt::format("first failing {} met its SLOs in every one of {} verification "
                                    "runs: it counts as good, and the search goes on above it",
                                    space_.name(bad), v->runs));
                    judgement_[bad] = true;
                    r_.good = bad;
                    r_.bad = lowest_bad_above(bad);
                    r_.capacity_check.reset();
                    r_.failing_check.reset();
                    if (!search_again())
                        return false;
                    continue;
                }
                if (v->met > 0)
                    r_.notes.push_back(
                        fmt::format("first failing {} met its SLOs in {} of {} "
                                    "verification runs: the boundary is not sharp there",
                                    space_.name(bad), v->met, v->runs));
            }
            return true;
        }
        r_.notes.push_back(fmt::format("the verification moved the answer {} times and stopped: "
                                       "the server's capacity is not stable at this resolution",
                                       max_verification_rounds));
        return true;
    }

private:
    std::optional<double> gently(std::optional<double> c) const {
        if (!c || !missed_ || !r_.good || *c <= *r_.good)
            return c;
        return space_.gently(*r_.good, *c);
    }

    // After a verification moved the answer, the space's step counts start again.
    bool search_again() {
        ups_ = downs_ = splits_ = 0;
        return search_from(next());
    }

    // Runs value c once; nullopt when the search must stop.
    std::optional<level_outcome> run(double value, try_kind kind, std::size_t attempt) {
        const capacity_try t{value, kind, attempt};
        const auto o = probe_(t);
        r_.probes.push_back({t, o});
        if (o.interrupted)
            stop_ = limit::interrupted;
        else if (o.unreachable)
            stop_ = limit::unreachable;
        else if (o.nothing_to_run)
            stop_ = limit::nothing_to_run;
        else
            return o;
        return std::nullopt;
    }

    // Up to 1 + confirm runs: met at the first run that meets; missed or client only when all
    // fail. Under client_policy::ends_search a value whose every run so far had invalid client
    // timing gets at least two.
    judged judge(double c) {
        const bool client_ends = s_.client == client_policy::ends_search;
        bool any_valid = false, recovered_miss = false;
        for (std::size_t t = 1;; ++t) {
            const auto o = t == 1 ? run(c, try_kind::search, 1) : run(c, try_kind::confirm, t - 1);
            if (!o)
                return judged::stopped;
            if (o->met()) {
                if (t > 1)
                    r_.notes.push_back(fmt::format(
                        "{} failed its first {} run(s) and met its SLOs on confirmation "
                        "try {}: it counts as good",
                        space_.name(c), t - 1, t - 1));
                return judged::met;
            }
            any_valid = any_valid || o->valid || !client_ends;
            recovered_miss = recovered_miss || o->recovered;
            if (t >= 1 + s_.confirm && (any_valid || t >= 2)) {
                if (!any_valid)
                    return judged::client;
                if (recovered_miss)
                    return judged::missed;
                if (t >= 2 + s_.confirm)
                    return judged::not_recovered;
            }
        }
    }

    // verify_repeats runs with valid client timing: a run whose client fell behind says nothing
    // about the server and is run again, up to verify_repeats extra runs in all.
    std::optional<value_verification> verify_value(double value) {
        value_verification v{value, 0, 0, 0, 0, false};
        for (std::size_t i = 1; v.runs < s_.verify_repeats && i <= 2 * s_.verify_repeats; ++i) {
            const auto o = run(value, try_kind::verify, i);
            if (!o)
                return std::nullopt;
            if (!o->valid || !o->recovered) {
                ++(o->valid ? v.unrecovered : v.invalid);
                continue;
            }
            ++v.runs;
            v.met += o->slo_met;
        }
        return v;
    }

    std::optional<double> highest_good_below(double value) const {
        std::optional<double> best;
        for (const auto& [c, good] : judgement_)
            if (good && c < value)
                best = c;
        return best;
    }

    std::optional<double> lowest_bad_above(double value) const {
        for (const auto& [c, good] : judgement_)
            if (!good && c > value)
                return c;
        return std::nullopt;
    }

    const capacity_space& space_;
    std::optional<limit> stop_; // why the search stopped before its answer, if it did
    const search_policy& s_;
    const capacity_probe_fn& probe_;
    capacity_search_result& r_;
    std::size_t ups_ = 0, downs_ = 0, splits_ = 0;
    bool missed_ = false;              // some value missed: grow gently from now on
    std::map<double, bool> judgement_; // value -> good, as last judged
};

} // namespace

json::value verification_json(const std::optional<value_verification>& v, value_kind kind) {
    if (!v)
        return nullptr;
    json::object o;
    if (kind == value_kind::level)
        o["level"] = static_cast<std::size_t>(v->value);
    else
        o["rate"] = v->value;
    o["runs"] = v->runs;
    o["met"] = v->met;
    o["client_not_valid"] = v->invalid;
    if (kind == value_kind::level) // a rate search never waits for recovery
        o["not_recovered"] = v->unrecovered;
    o["held"] = v->held;
    return o;
}

capacity_search_result search_capacity(const capacity_space& space, double start,
                                       const search_policy& policy,
                                       const capacity_probe_fn& probe) {
    capacity_search_result result;
    search_state search(space, policy, probe, result);
    if (search.search_from(start) && policy.verify_repeats > 0)
        search.verify();
    result.limited_by = search.stop().value_or(result.bad ? limit::slo : space.top());
    if (result.capacity_check || result.failing_check)
        result.boundary_held = (!result.capacity_check || result.capacity_check->held) &&
                               (!result.failing_check || result.failing_check->held);
    return result;
}

capacity_result search_capacity(const capacity_settings& settings, const level_probe& probe) {
    const auto level = [](double v) { return static_cast<std::size_t>(v); };
    const auto r =
        search_capacity(level_space(settings), static_cast<double>(settings.start_level),
                        {settings.confirm, settings.verify_repeats, client_policy::ends_search},
                        [&](const capacity_try& t) {
                            return probe({level(t.value), t.kind, t.attempt});
                        });
    capacity_result result;
    result.sessions = level(r.good.value_or(0));
    if (r.bad)
        result.first_failing_level = level(*r.bad);
    result.limited_by = r.limited_by;
    for (const auto& p : r.probes) {
        result.probed_levels.push_back(level(p.run.value));
        result.probes.push_back({{level(p.run.value), p.run.kind, p.run.attempt}, p.outcome});
    }
    result.capacity_check = r.capacity_check;
    result.failing_check = r.failing_check;
    result.boundary_held = r.boundary_held;
    result.notes = r.notes;
    return result;
}

search_cost search_cost_at(const capacity_settings& settings, std::size_t capacity) {
    search_cost cost;
    search_capacity(settings, [&](const level_try& t) {
        ++cost.runs;
        cost.above += t.level > capacity;
        return level_outcome{.slo_met = t.level <= capacity};
    });
    return cost;
}

json::object capacity_json(const capacity_result& r, std::string_view slo) {
    json::object o;
    o["sessions"] = r.sessions;
    o["first_failing_level"] =
        r.first_failing_level ? json::value(*r.first_failing_level) : json::value(nullptr);
    o["limited_by"] = to_string(r.limited_by);
    json::array levels, probes, notes;
    for (auto c : r.probed_levels)
        levels.push_back(c);
    for (const auto& p : r.probes)
        probes.push_back(json::object{{"level", p.run.level},
                                      {"kind", to_string(p.run.kind)},
                                      {"attempt", p.run.attempt},
                                      {"client_timing_valid", p.outcome.valid},
                                      {"slo_met", p.outcome.slo_met},
                                      {"met", p.outcome.met()},
                                      {"server_recovered", p.outcome.recovered}});
    for (const auto& n : r.notes)
        notes.emplace_back(n);
    o["probed_levels"] = std::move(levels);
    o["probes"] = std::move(probes);
    o["verification"] = json::object{
        {"capacity_level", verification_json(r.capacity_check, value_kind::level)},
        {"first_failing_level", verification_json(r.failing_check, value_kind::level)}};
    o["boundary_held"] = r.boundary_held ? json::value(*r.boundary_held) : json::value(nullptr);
    o["notes"] = std::move(notes);
    o["slo"] = slo;
    return o;
}

} // namespace pacer::capacity_search
