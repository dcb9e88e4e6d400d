#include <pacer/metrics/outcome.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace pacer::metrics {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// "Connection refused" -> "connection refused": the reason reads as part of a sentence.
std::string lower_first(std::string_view s) {
    std::string out(s);
    if (out.size() > 1 && std::isupper(static_cast<unsigned char>(out[0])) &&
        !std::isupper(static_cast<unsigned char>(out[1])))
        out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
    return out;
}

} // namespace

std::optional<std::string> connect_failure(std::string_view m) {
    // The messages of transport::ws_connection::connect and of the session deadline.
    constexpr std::string_view connect = "OSError: connect to ",
                               resolve = "OSError: cannot resolve ",
                               handshake = "OSError: handshake: ",
                               declined = "InvalidStatus: server rejected WebSocket connection: ",
                               timeout = "Session timeout after ";
    if (starts_with(m, connect)) {
        // "OSError: connect to HOST:PORT: REASON"; HOST may be an IPv6 address with colons.
        const auto rest = m.substr(connect.size());
        const auto port_end = rest.find(": ");
        if (port_end == std::string_view::npos)
            return lower_first(rest);
        return lower_first(rest.substr(port_end + 2));
    }
    if (starts_with(m, resolve)) {
        // "OSError: cannot resolve HOST: REASON".
        const auto rest = m.substr(resolve.size());
        const auto host_end = rest.find(": ");
        if (host_end == std::string_view::npos)
            return "cannot resolve " + std::string(rest);
        return fmt::format("cannot resolve {}: {}", rest.substr(0, host_end),
                           lower_first(rest.substr(host_end + 2)));
    }
    if (starts_with(m, handshake))
        return "WebSocket handshake failed: " + lower_first(m.substr(handshake.size()));
    if (starts_with(m, declined))
        return "the server declined the WebSocket upgrade: " +
               std::string(m.substr(declined.size()));
    if (starts_with(m, timeout)) {
        const auto rest = m.substr(timeout.size());
        return fmt::format("no connection within the {} session timeout",
                           rest.substr(0, rest.find(' ')));
    }
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
        for (const auto& e : s.errors)
            if ((reason = connect_failure(e)))
                break;
        if (!reason)
            return std::nullopt;
        ++reasons[*reason];
    }
    return std::max_element(reasons.begin(), reasons.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
}

std::string error_kind(std::string_view m) {
    if (starts_with(m, "Session timeout"))
        return "Timeout";
    if (starts_with(m, "admission rejected"))
        return "admission rejected";
    if (m.ends_with("is --protocol right?")) // protocol/opening.hpp
        return "wrong protocol";
    const auto colon = m.find(':');
    const auto word = m.substr(0, colon);
    if (colon != std::string_view::npos && !word.empty() &&
        std::all_of(word.begin(), word.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
        return std::string(word);
    return "other";
}

std::vector<error_count> count_errors(std::span<const std::vector<std::string>> per_session,
                                      bool by_kind) {
    std::map<std::string, std::size_t> counts;
    for (const auto& errors : per_session) {
        std::set<std::string> seen;
        for (const auto& e : errors)
            seen.insert(by_kind ? error_kind(e) : e);
        for (const auto& k : seen)
            ++counts[k];
    }
    std::vector<error_count> out;
    for (auto& [what, n] : counts)
        out.push_back({what, n});
    std::stable_sort(out.begin(), out.end(), [](const error_count& a, const error_count& b) {
        return a.sessions > b.sessions;
    });
    return out;
}

} // namespace pacer::metrics
