#include <pacer/runtime/files.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <cstring>
#include <exception>

namespace pacer::trace {

std::string receipts_head(const session_result& r) {
    return fmt::format(R"({{"session_start_s":{},"admitted":{},"appends":[)",
                       r.session_start_s ? fmt::format("{:.9f}", *r.session_start_s)
                                         : std::string("null"),
                       r.admitted ? "true" : "false");
}

std::string receipt_json(const append_receipt& a) {
    return fmt::format(
        R"({{"event_id":"{}","seq":{},"scheduled_s":{:.9f},"start_s":{:.9f},"completed_s":{:.9f}}})",
        a.id(), a.seq, a.scheduled_s, a.start_s, a.completed_s);
}

std::string receipts_tail(const session_result& r) {
    return r.appends_sent > 0 ? std::string("]}\n") : receipts_head(r) + "]}\n";
}

std::string read_receipts(session_result& r, const std::filesystem::path& file) {
    std::optional<std::string> text;
    try {
        text = runtime::read_file_if_exists(file);
    } catch (const std::exception&) {
    }
    if (!text)
        return fmt::format("cannot read {}", file.string());
    return read_receipts_text(r, *text, file.string());
}

std::string read_receipts_text(session_result& r, std::string_view text, std::string_view origin) {
    boost::system::error_code ec;
    const auto doc = boost::json::parse(text, ec);
    const auto* appends =
        ec || !doc.is_object() ? nullptr : doc.get_object().if_contains("appends");
    if (!appends || !appends->is_array())
        return fmt::format("{} is not a receipts file", origin);
    r.appends.clear();
    r.appends.reserve(appends->get_array().size());
    try {
        for (const auto& v : appends->get_array()) {
            const auto& o = v.as_object();
            append_receipt a;
            const auto& id = o.at("event_id").as_string();
            if (id.size() != a.event_id.size())
                return fmt::format("{}: an event_id is not 32 characters", origin);
            std::memcpy(a.event_id.data(), id.data(), id.size());
            a.seq = o.at("seq").to_number<std::uint64_t>();
            a.scheduled_s = o.at("scheduled_s").to_number<double>();
            a.start_s = o.at("start_s").to_number<double>();
            a.completed_s = o.at("completed_s").to_number<double>();
            r.appends.push_back(a);
        }
    } catch (const std::exception& e) {
        return fmt::format("{}: unreadable receipt: {}", origin, e.what());
    }
    return {};
}

} // namespace pacer::trace
