#include <pacer/core/failure.hpp>
#include <pacer/report/error_kind.hpp>

#include <algorithm>
#include <cctype>

namespace pacer::report {

namespace {

std::string kind_name(failure_kind k) {
    return make_error_condition(k).message();
}

} // namespace

std::string error_kind(std::string_view m) {
    // The wording of session::session_errc's reference text (session/error.hpp).
    if (m.starts_with("Session timeout"))
        return kind_name(failure_kind::timeout);
    if (m.starts_with("admission rejected"))
        return kind_name(failure_kind::admission_rejected);
    if (m.ends_with("is --protocol right?")) // protocol/opening.hpp
        return kind_name(failure_kind::wrong_protocol);
    const auto colon = m.find(':');
    const auto word = m.substr(0, colon);
    if (colon != std::string_view::npos && !word.empty() &&
        std::all_of(word.begin(), word.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
        return std::string(word);
    return kind_name(failure_kind::other);
}

} // namespace pacer::report
