#include <pacer/trace/record.hpp>

#include <fmt/format.h>

namespace pacer::trace {

std::string_view to_string(direction d) {
    switch (d) {
    case direction::send:
        return "send";
    case direction::receive:
        return "receive";
    case direction::error:
        return "error";
    case direction::admission:
        return "admission";
    }
    return "error";
}

void append_line(std::string& out, direction dir, double time_s, std::string_view event_json) {
    // Nine decimals: nanosecond resolution on CLOCK_MONOTONIC seconds.
    fmt::format_to(std::back_inserter(out), R"({{"direction":"{}","time_s":{:.9f},"event":)",
                   to_string(dir), time_s);
    out += event_json;
    out += "}\n";
}

} // namespace pacer::trace
