#include <pacer/core/float_repr.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include "json_number.hpp"
#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <stdexcept>

namespace pacer::trace {

std::string receipts_head(const session_result& r) {
    return fmt::format(R"({{"session_start_s":{},"admitted":{},"appends":[)",
                       r.session_start_s ? fmt::format("{:.9f}", *r.session_start_s)
                                         : std::string("null"),
                       r.admitted ? "true" : "false");
}

void append_receipt_json(std::string& out, const append_receipt& a) {
    out += R"({"event_id":")";
    out += a.id();
    out += R"(","seq":)";
    char seq[24];
    out.append(seq, std::to_chars(seq, seq + sizeof seq, a.seq).ptr);
    out += R"(,"scheduled_s":)";
    append_fixed9(out, a.scheduled_s);
    out += R"(,"start_s":)";
    append_fixed9(out, a.start_s);
    out += R"(,"completed_s":)";
    append_fixed9(out, a.completed_s);
    out += '}';
}

std::string receipt_json(const append_receipt& a) {
    std::string out;
    append_receipt_json(out, a);
    return out;
}

std::string receipts_tail(const session_result& r) {
    return r.appends_sent > 0 ? std::string("]}\n") : receipts_head(r) + "]}\n";
}

bool append_receipt::set_id(std::string_view id) {
    if (id.size() > event_id.size())
        return false;
    event_id.fill('\0');
    std::copy(id.begin(), id.end(), event_id.begin());
    return true;
}

namespace {

namespace json = boost::json;

using detail::finite_number;

append_receipt parse_append(const json::value& item, std::size_t index, receipt_rules rules) {
    if (!item.is_object())
        throw std::runtime_error(fmt::format("append receipt {} is not an object", index));
    const auto& o = item.get_object();
    const bool pacer = rules == receipt_rules::pacer;
    append_receipt a;
    const auto* id = o.if_contains("event_id");
    const std::string_view id_text =
        id && id->is_string() ? std::string_view(id->get_string()) : std::string_view();
    if (!a.set_id(id_text) || (pacer && id_text.size() != a.event_id.size()))
        throw std::runtime_error(fmt::format("append receipt {}: event_id is not {} characters",
                                             index, pacer ? "32" : "at most 32"));
    const auto* seq = o.if_contains("seq");
    const auto start = finite_number(o.if_contains("start_s"));
    const auto completed = finite_number(o.if_contains("completed_s"));
    const auto scheduled = finite_number(o.if_contains("scheduled_s"));
    boost::system::error_code ec;
    if (seq && seq->is_number())
        a.seq = seq->to_number<std::uint64_t>(ec);
    if (!seq || !seq->is_number() || ec || !start || !completed || (pacer && !scheduled))
        throw std::runtime_error(
            fmt::format("append receipt {} lacks a non-negative integer seq or a number {}", index,
                        pacer ? "scheduled_s, start_s or completed_s" : "start_s or completed_s"));
    a.scheduled_s = scheduled.value_or(std::numeric_limits<double>::quiet_NaN());
    a.start_s = *start;
    a.completed_s = *completed;
    return a;
}

} // namespace

send_receipts parse_receipts(std::string_view text, receipt_rules rules) {
    boost::system::error_code ec;
    const json::value v = json::parse(text, ec);
    if (ec)
        throw std::runtime_error(fmt::format("unreadable JSON: {}", ec.message()));
    if (!v.is_object())
        throw std::runtime_error("not a JSON object");
    const auto& o = v.get_object();
    send_receipts r;
    if (const auto* s = o.if_contains("session_start_s"); s && !s->is_null()) {
        r.session_start_s = finite_number(s);
        if (!r.session_start_s)
            throw std::runtime_error("session_start_s is neither a number nor null");
    }
    if (const auto* a = o.if_contains("admitted"); a && a->is_bool())
        r.admitted = a->get_bool();
    const auto* appends = o.if_contains("appends");
    if (!appends || !appends->is_array())
        throw std::runtime_error("missing array 'appends'");
    r.appends.reserve(appends->get_array().size());
    for (const auto& item : appends->get_array())
        r.appends.push_back(parse_append(item, r.appends.size(), rules));
    return r;
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
    try {
        r.appends = parse_receipts(text, receipt_rules::pacer).appends;
    } catch (const std::runtime_error& e) {
        return fmt::format("{}: {}", origin, e.what());
    }
    return {};
}

} // namespace pacer::trace
