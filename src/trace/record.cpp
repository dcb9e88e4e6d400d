#include <pacer/core/float_repr.hpp>
#include <pacer/trace/record.hpp>

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
    out += R"({"direction":")";
    out += to_string(dir);
    out += R"(","time_s":)";
    append_fixed9(out, time_s);
    out += R"(,"event":)";
    out += event_json;
    out += "}\n";
}

} // namespace pacer::trace
