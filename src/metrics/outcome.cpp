#include <pacer/metrics/outcome.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace pacer::metrics {

namespace {

// "Connection refused" -> "connection refused": the reason reads as part of a sentence.
std::string lower_first(std::string s) {
    if (s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) &&
        !std::isupper(static_cast<unsigned char>(s[1])))
        s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return s;
}

// Most frequent first; ties in the order of `what`.
std::vector<error_count> most_frequent_first(std::vector<error_count> out) {
    std::sort(out.begin(), out.end(), [](const error_count& a, const error_count& b) {
        return a.sessions != b.sessions ? a.sessions > b.sessions : a.what < b.what;
    });
    return out;
}

} // namespace

std::optional<std::string> connect_failure(const failure& f) {
    if (f.code == reach_failure::cannot_connect)
        return lower_first(f.cause.message());
    if (f.code == reach_failure::cannot_resolve)
        return fmt::format("cannot resolve {}: {}", f.detail, lower_first(f.cause.message()));
    if (f.code == reach_failure::handshake_failed)
        return "WebSocket handshake failed: " + lower_first(f.cause.message());
    if (f.code == reach_failure::upgrade_declined)
        return "the server declined the WebSocket upgrade: HTTP " + f.detail;
    if (f.code == reach_failure::no_connection_in_time)
        return fmt::format("no connection within the {}s session timeout", f.detail);
    return std::nullopt;
}

std::optional<std::string> unreachable_reason(std::span<const connect_outcome> sessions) {
    if (sessions.empty())
        return std::nullopt;
    std::map<std::string, std::size_t> reasons;
    for (const auto& s : sessions) {
        if (s.admitted || s.rejected)
            return std::nullopt;
        std::optional<std::string> reason;
        for (const auto& f : s.failures)
            if ((reason = connect_failure(f)))
                break;
        if (!reason)
            return std::nullopt;
        ++reasons[*reason];
    }
    return std::max_element(reasons.begin(), reasons.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
}

std::vector<error_count> count_kinds(std::span<const std::vector<failure>> per_session) {
    std::map<failure_kind, std::size_t> counts;
    for (const auto& failures : per_session) {
        std::set<failure_kind> seen;
        for (const auto& f : failures)
            seen.insert(kind_of(f.code));
        for (const auto k : seen)
            ++counts[k];
    }
    std::vector<error_count> out;
    for (const auto& [kind, n] : counts) // the kind's name is written here, into the summary
        out.push_back({make_error_condition(kind).message(), n});
    return most_frequent_first(std::move(out));
}

std::vector<error_count> count_messages(std::span<const std::vector<std::string>> per_session) {
    std::map<std::string, std::size_t> counts;
    for (const auto& errors : per_session)
        for (const auto& e : std::set<std::string>(errors.begin(), errors.end()))
            ++counts[e];
    std::vector<error_count> out;
    for (const auto& [what, n] : counts)
        out.push_back({what, n});
    return most_frequent_first(std::move(out));
}

} // namespace pacer::metrics
