#include <pacer/core/float_repr.hpp>
#include <pacer/core/json_text.hpp>

#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <cmath>

namespace pacer {

void append_json_text(std::string& out, const boost::json::value& v) {
    switch (v.kind()) {
    case boost::json::kind::null:
        out += "null";
        return;
    case boost::json::kind::bool_:
        out += v.get_bool() ? "true" : "false";
        return;
    case boost::json::kind::int64:
        fmt::format_to(std::back_inserter(out), "{}", v.get_int64());
        return;
    case boost::json::kind::uint64:
        fmt::format_to(std::back_inserter(out), "{}", v.get_uint64());
        return;
    case boost::json::kind::double_:
        out += std::isfinite(v.get_double()) ? plain_float_text(v.get_double()) : "null";
        return;
    case boost::json::kind::string:
        out += boost::json::serialize(v.get_string()); // quoted and escaped
        return;
    case boost::json::kind::array: {
        out += '[';
        bool first = true;
        for (const auto& e : v.get_array()) {
            if (!first)
                out += ',';
            first = false;
            append_json_text(out, e);
        }
        out += ']';
        return;
    }
    case boost::json::kind::object: {
        out += '{';
        bool first = true;
        for (const auto& [key, e] : v.get_object()) {
            if (!first)
                out += ',';
            first = false;
            out += boost::json::serialize(boost::json::string_view(key));
            out += ':';
            append_json_text(out, e);
        }
        out += '}';
        return;
    }
    }
}

std::string json_text(const boost::json::value& v) {
    std::string out;
    append_json_text(out, v);
    return out;
}

} // namespace pacer
