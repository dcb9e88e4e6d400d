#pragma once
// Inside the trace module: a finite JSON number, as the readers of trace.jsonl and of
// input-send-receipts.json accept it.

#include <boost/json/value.hpp>

#include <cmath>
#include <optional>

namespace pacer::trace::detail {

/// `v` as a double when it is a finite JSON number (integer or not); nullopt otherwise.
inline std::optional<double> finite_number(const boost::json::value* v) {
    if (!v || !v->is_number())
        return std::nullopt;
    const double d = v->to_number<double>();
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

} // namespace pacer::trace::detail
