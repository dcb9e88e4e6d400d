#include <pacer/sweep/capacity.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace pacer::sweep {

namespace json = boost::json;

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

namespace {

// How a level was judged after its tries.
enum class judged { met, missed, client, stopped };

// The closing verification stops after this many rounds that moved the answer.
constexpr int max_verification_rounds = 4;

// The search's state: the last good level, the first bad one, and every level's judgement.
class capacity_search {
public:
    capacity_search(const capacity_settings& s, const level_probe& probe, capacity_result& r)
        : s_(s), probe_(probe), r_(r) {}

    // Doubling, then bisection, from level c; false when the search must stop (a signal, an
    // unreachable server, a client that cannot keep up).
    bool search_from(std::size_t c) {
        for (;;) {
            if (done(c))
                return true;
            const auto v = judge(c);
            if (v == judged::stopped)
                return false;
            if (v == judged::client) {
                r_.limited_by = "client";
                return false;
            }
            judgement_[c] = v == judged::met;
            if (v == judged::met) {
                good_ = c;
                c = bad_ ? (good_ + *bad_) / 2 : std::min(c * 2, s_.max_level);
            } else {
                bad_ = c;
                c = (good_ + *bad_) / 2;
            }
        }
    }

    // The verification rounds (see search_capacity); false when the search had to stop.
    bool verify() {
        for (int round = 0; round < max_verification_rounds; ++round) {
            r_.capacity_check.reset();
            r_.failing_check.reset();
            if (good_ > 0) {
                const auto v = verify_level(good_);
                if (!v)
                    return false;
                r_.capacity_check = v;
                r_.capacity_check->held = v->runs > 0 && v->met == v->runs;
                if (v->runs == 0) {
                    r_.notes.push_back(fmt::format(
                        "capacity level {}: no verification run had valid client timing, so "
                        "the boundary is not verified",
                        good_));
                    return true;
                }
                if (!r_.capacity_check->held) {
                    r_.notes.push_back(fmt::format(
                        "capacity level {} met its SLOs in {} of {} verification runs: it counts "
                        "as failing, and the search goes on below it",
                        good_, v->met, v->runs));
                    judgement_[good_] = false;
                    bad_ = good_;
                    good_ = highest_good_below(*bad_);
                    if (!search_from((good_ + *bad_) / 2))
                        return false;
                    continue;
                }
            }
            if (bad_) {
                const auto v = verify_level(*bad_);
                if (!v)
                    return false;
                r_.failing_check = v;
                r_.failing_check->held = v->runs > 0 && v->met == 0;
                if (v->runs == 0) {
                    r_.notes.push_back(fmt::format(
                        "first failing level {}: no verification run had valid client timing, "
                        "so the boundary is not verified",
                        *bad_));
                    return true;
                }
                if (v->met == v->runs) {
                    r_.notes.push_back(fmt::format(
                        "first failing level {} met its SLOs in every one of {} verification "
                        "runs: it counts as good, and the search goes on above it",
                        *bad_, v->runs));
                    judgement_[*bad_] = true;
                    good_ = *bad_;
                    bad_ = lowest_bad_above(good_);
                    r_.capacity_check.reset();
                    r_.failing_check.reset();
                    if (!search_from(bad_ ? (good_ + *bad_) / 2
                                          : std::min(good_ * 2, s_.max_level)))
                        return false;
                    continue;
                }
                if (v->met > 0)
                    r_.notes.push_back(
                        fmt::format("first failing level {} met its SLOs in {} of {} "
                                    "verification runs: the boundary is not sharp there",
                                    *bad_, v->met, v->runs));
            }
            return true;
        }
        r_.notes.push_back(fmt::format("the verification moved the answer {} times and stopped: "
                                       "the server's capacity is not stable at this resolution",
                                       max_verification_rounds));
        return true;
    }

    std::size_t good() const { return good_; }
    std::optional<std::size_t> bad() const { return bad_; }

private:
    // The search has its answer once the bracket is narrow enough, or the maximum level is good.
    bool done(std::size_t c) const {
        if (!bad_)
            return good_ >= s_.max_level;
        const auto width = std::max<std::size_t>(
            1, static_cast<std::size_t>(s_.resolution * static_cast<double>(good_)));
        return *bad_ - good_ <= width || c <= good_ || c >= *bad_;
    }

    // Runs level c once; nullopt when the search must stop.
    std::optional<level_outcome> run(std::size_t level, try_kind kind, std::size_t attempt) {
        const level_try t{level, kind, attempt};
        const auto o = probe_(t);
        r_.probed_levels.push_back(level);
        r_.probes.push_back({t, o});
        if (o.interrupted) {
            r_.limited_by = "interrupted";
            return std::nullopt;
        }
        if (o.unreachable) {
            r_.limited_by = "unreachable";
            return std::nullopt;
        }
        return o;
    }

    // Up to 1 + confirm runs: met at the first run that meets; missed or client only when all
    // fail. A level whose every run so far had invalid client timing gets at least two.
    judged judge(std::size_t c) {
        bool any_valid = false;
        for (std::size_t t = 1;; ++t) {
            const auto o = t == 1 ? run(c, try_kind::search, 1) : run(c, try_kind::confirm, t - 1);
            if (!o)
                return judged::stopped;
            if (o->met()) {
                if (t > 1)
                    r_.notes.push_back(fmt::format(
                        "level {} failed its first {} run(s) and met its SLOs on confirmation "
                        "try {}: it counts as good",
                        c, t - 1, t - 1));
                return judged::met;
            }
            any_valid = any_valid || o->valid;
            if (t >= 1 + s_.confirm && (any_valid || t >= 2))
                return any_valid ? judged::missed : judged::client;
        }
    }

    // verify_repeats runs with valid client timing: a run whose client fell behind says nothing
    // about the server and is run again, up to verify_repeats extra runs in all.
    std::optional<verification> verify_level(std::size_t level) {
        verification v{level, 0, 0, 0, false};
        for (std::size_t i = 1; v.runs < s_.verify_repeats && i <= 2 * s_.verify_repeats; ++i) {
            const auto o = run(level, try_kind::verify, i);
            if (!o)
                return std::nullopt;
            if (!o->valid) {
                ++v.invalid;
                continue;
            }
            ++v.runs;
            v.met += o->slo_met;
        }
        return v;
    }

    std::size_t highest_good_below(std::size_t level) const {
        std::size_t best = 0;
        for (const auto& [c, good] : judgement_)
            if (good && c < level)
                best = c;
        return best;
    }

    std::optional<std::size_t> lowest_bad_above(std::size_t level) const {
        for (const auto& [c, good] : judgement_)
            if (!good && c > level)
                return c;
        return std::nullopt;
    }

    const capacity_settings& s_;
    const level_probe& probe_;
    capacity_result& r_;
    std::size_t good_ = 0;
    std::optional<std::size_t> bad_;
    std::map<std::size_t, bool> judgement_; // level -> good, as last judged
};

json::value verification_json(const std::optional<verification>& v) {
    if (!v)
        return nullptr;
    return json::object{{"level", v->level},
                        {"runs", v->runs},
                        {"met", v->met},
                        {"client_not_valid", v->invalid},
                        {"held", v->held}};
}

} // namespace

capacity_result search_capacity(const capacity_settings& settings, const level_probe& probe) {
    capacity_result result;
    capacity_search search(settings, probe, result);
    if (search.search_from(settings.start_level) && settings.verify_repeats > 0)
        search.verify();
    result.sessions = search.good();
    result.first_failing_level = search.bad();
    if (result.limited_by == "max-level" && search.bad())
        result.limited_by = "slo";
    if (result.capacity_check || result.failing_check)
        result.boundary_held = (!result.capacity_check || result.capacity_check->held) &&
                               (!result.failing_check || result.failing_check->held);
    return result;
}

json::object capacity_json(const capacity_result& r, std::string_view slo) {
    json::object o;
    o["sessions"] = r.sessions;
    o["first_failing_level"] =
        r.first_failing_level ? json::value(*r.first_failing_level) : json::value(nullptr);
    o["limited_by"] = r.limited_by;
    json::array levels, probes, notes;
    for (auto c : r.probed_levels)
        levels.push_back(c);
    for (const auto& p : r.probes)
        probes.push_back(json::object{{"level", p.run.level},
                                      {"kind", to_string(p.run.kind)},
                                      {"attempt", p.run.attempt},
                                      {"client_timing_valid", p.outcome.valid},
                                      {"slo_met", p.outcome.slo_met},
                                      {"met", p.outcome.met()}});
    for (const auto& n : r.notes)
        notes.emplace_back(n);
    o["probed_levels"] = std::move(levels);
    o["probes"] = std::move(probes);
    o["verification"] = json::object{{"capacity_level", verification_json(r.capacity_check)},
                                     {"first_failing_level", verification_json(r.failing_check)}};
    o["boundary_held"] = r.boundary_held ? json::value(*r.boundary_held) : json::value(nullptr);
    o["notes"] = std::move(notes);
    o["slo"] = slo;
    return o;
}

} // namespace pacer::sweep
