#include <pacer/trace/lines.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include "json_number.hpp"
#include <cmath>
#include <optional>

namespace pacer::trace {

namespace json = boost::json;

using detail::finite_number;

parsed_trace parse_trace(std::string_view jsonl) {
    parsed_trace out;
    std::size_t line_no = 0;
    while (!jsonl.empty()) {
        const auto nl = jsonl.find('\n');
        const std::string_view text = jsonl.substr(0, nl);
        jsonl.remove_prefix(nl == std::string_view::npos ? jsonl.size() : nl + 1);
        ++line_no;
        auto fail = [&](std::string_view why) {
            out.errors.push_back(fmt::format("trace line {}: {}", line_no, why));
        };
        boost::system::error_code ec;
        json::value v = json::parse(text, ec);
        if (ec) {
            fail(fmt::format("unreadable JSON: {}", ec.message()));
            continue;
        }
        if (!v.is_object()) {
            fail("not a JSON object");
            continue;
        }
        auto& o = v.get_object();
        const auto* dir = o.if_contains("direction");
        const auto t = finite_number(o.if_contains("time_s"));
        auto* ev = o.if_contains("event");
        if (!dir || !dir->is_string() || dir->get_string().empty() || !t || !ev ||
            !ev->is_object()) {
            fail("expected {\"direction\": str, \"time_s\": number, \"event\": object}");
            continue;
        }
        trace_line l;
        l.direction = std::string(dir->get_string());
        l.time_s = *t;
        l.event = std::move(ev->get_object());
        l.line = line_no;
        out.lines.push_back(std::move(l));
    }
    return out;
}

} // namespace pacer::trace
