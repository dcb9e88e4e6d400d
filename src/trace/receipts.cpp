#include <pacer/core/float_repr.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/basic_parser_impl.hpp>

#include <fmt/format.h>

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

// SAX handler for `input-send-receipts.json`: reads the file in one pass, without Boost.JSON's
// DOM (a run reads every session's receipts back for samples.json: the DOM was most of that
// cost). It keeps what `parse_receipts` documents and the first reason to refuse it, and
// decides as the DOM did: the last of duplicate keys wins, and the errors are checked in the
// order top-level object, `session_start_s`, `appends`, then the first bad append.
// Depths: 1 inside the top object, 2 inside `appends`, 3 inside an append.
struct receipts_handler {
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    enum class top_key : unsigned char { other, session_start, admitted, appends };
    enum class append_key : unsigned char { other, event_id, seq, scheduled, start, completed };
    enum class start_state : unsigned char { absent, null, number, bad };

    receipt_rules rules = receipt_rules::pacer;
    int depth = 0;
    bool top_is_object = false;
    top_key key1 = top_key::other;
    append_key key3 = append_key::other;
    std::string key_buf;

    start_state start = start_state::absent;
    double start_s = 0;
    std::optional<bool> admitted;
    bool appends_is_array = false;
    bool in_appends = false; // inside the array of the current `appends` key
    std::vector<append_receipt> appends;
    // When set, each good append's deviation (start_s - scheduled_s) goes here instead of
    // `appends` (samples.json's read-back needs no more).
    std::vector<double>* deviations = nullptr;
    std::size_t items = 0;  // items of that array so far
    std::string item_error; // the first bad item's reason ("" while none)

    // The append being read (depth 3), each field valid only as its last value.
    bool in_item = false;
    std::string id;
    bool id_is_string = false;
    std::optional<std::uint64_t> seq;
    std::optional<double> scheduled, start_field, completed;

    void key_at_top(std::string_view k) {
        key1 = k == "session_start_s" ? top_key::session_start
               : k == "admitted"      ? top_key::admitted
               : k == "appends"       ? top_key::appends
                                      : top_key::other;
        if (key1 == top_key::session_start) {
            start = start_state::bad; // until its value says otherwise
        } else if (key1 == top_key::admitted) {
            admitted.reset();
        } else if (key1 == top_key::appends) {
            appends_is_array = false;
            appends.clear();
            if (deviations)
                deviations->clear();
            items = 0;
            item_error.clear();
        }
    }

    void key_in_item(std::string_view k) {
        key3 = k == "event_id"      ? append_key::event_id
               : k == "seq"         ? append_key::seq
               : k == "scheduled_s" ? append_key::scheduled
               : k == "start_s"     ? append_key::start
               : k == "completed_s" ? append_key::completed
                                    : append_key::other;
        switch (key3) {
        case append_key::event_id:
            id.clear();
            id_is_string = false;
            break;
        case append_key::seq:
            seq.reset();
            break;
        case append_key::scheduled:
            scheduled.reset();
            break;
        case append_key::start:
            start_field.reset();
            break;
        case append_key::completed:
            completed.reset();
            break;
        case append_key::other:
            break;
        }
    }

    bool at_top(top_key k) const { return depth == 1 && top_is_object && key1 == k; }
    bool at_item(append_key k) const { return depth == 3 && in_item && key3 == k; }
    // A value that begins where the appends array holds its items.
    bool item_slot() const { return depth == 2 && in_appends; }

    void not_an_object_item() {
        if (item_error.empty())
            item_error = fmt::format("append receipt {} is not an object", items);
        ++items;
    }

    void begin_item() {
        in_item = true;
        id.clear();
        id_is_string = false;
        seq.reset();
        scheduled.reset();
        start_field.reset();
        completed.reset();
    }

    void end_item() {
        in_item = false;
        const std::size_t index = items++;
        if (!item_error.empty())
            return; // the DOM stopped at the first bad append
        const bool pacer = rules == receipt_rules::pacer;
        append_receipt a;
        const std::string_view id_text = id_is_string ? std::string_view(id) : std::string_view();
        if (!a.set_id(id_text) || (pacer && id_text.size() != a.event_id.size())) {
            item_error = fmt::format("append receipt {}: event_id is not {} characters", index,
                                     pacer ? "32" : "at most 32");
            return;
        }
        if (!seq || !start_field || !completed || (pacer && !scheduled)) {
            item_error = fmt::format(
                "append receipt {} lacks a non-negative integer seq or a number {}", index,
                pacer ? "scheduled_s, start_s or completed_s" : "start_s or completed_s");
            return;
        }
        a.seq = *seq;
        a.scheduled_s = scheduled.value_or(std::numeric_limits<double>::quiet_NaN());
        a.start_s = *start_field;
        a.completed_s = *completed;
        if (deviations)
            deviations->push_back(a.start_s - a.scheduled_s);
        else
            appends.push_back(a);
    }

    // A number at the current position: `as_double` finite or not, `as_seq` when it is a
    // non-negative integer that fits 64 bits (as Boost.JSON's `to_number<std::uint64_t>`).
    void number(double as_double, std::optional<std::uint64_t> as_seq) {
        const std::optional<double> finite =
            std::isfinite(as_double) ? std::optional<double>(as_double) : std::nullopt;
        if (at_top(top_key::session_start)) {
            start = finite ? start_state::number : start_state::bad;
            start_s = as_double;
        } else if (item_slot()) {
            not_an_object_item();
        } else if (at_item(append_key::seq)) {
            seq = as_seq;
        } else if (at_item(append_key::scheduled)) {
            scheduled = finite;
        } else if (at_item(append_key::start)) {
            start_field = finite;
        } else if (at_item(append_key::completed)) {
            completed = finite;
        }
    }
    // Any other scalar (string, bool, null) at the current position, where a number is wanted.
    void other_scalar() {
        if (item_slot())
            not_an_object_item();
    }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) {
        if (depth == 0)
            top_is_object = true;
        else if (item_slot())
            begin_item();
        ++depth;
        return true;
    }
    bool on_object_end(std::size_t, json::error_code&) {
        --depth;
        if (item_slot() && in_item)
            end_item();
        return true;
    }
    bool on_array_begin(json::error_code&) {
        if (at_top(top_key::appends)) {
            appends_is_array = true;
            in_appends = true;
        } else if (item_slot()) {
            not_an_object_item();
        }
        ++depth;
        return true;
    }
    bool on_array_end(std::size_t, json::error_code&) {
        --depth;
        if (at_top(top_key::appends))
            in_appends = false;
        return true;
    }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        if (depth == 1 || (depth == 3 && in_item))
            key_buf.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code&) {
        if (depth == 1 || (depth == 3 && in_item)) {
            key_buf.append(s.data(), s.size());
            if (depth == 1)
                key_at_top(key_buf);
            else
                key_in_item(key_buf);
            key_buf.clear();
        }
        return true;
    }
    bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
        if (at_item(append_key::event_id))
            id.append(s.data(), s.size());
        return true;
    }
    bool on_string(json::string_view s, std::size_t, json::error_code&) {
        if (at_item(append_key::event_id)) {
            id.append(s.data(), s.size());
            id_is_string = true;
        }
        other_scalar();
        return true;
    }
    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
        number(static_cast<double>(i),
               i >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(i)) : std::nullopt);
        return true;
    }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
        number(static_cast<double>(u), u);
        return true;
    }
    bool on_double(double d, json::string_view, json::error_code&) {
        // Boost.JSON's to_number<std::uint64_t>: exact, and within its largest exact double.
        const bool integral = d >= 0 && d <= 18446744073709549568.0 &&
                              static_cast<double>(static_cast<std::uint64_t>(d)) == d;
        number(d, integral ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(d))
                           : std::nullopt);
        return true;
    }
    bool on_bool(bool b, json::error_code&) {
        if (at_top(top_key::admitted))
            admitted = b;
        other_scalar();
        return true;
    }
    bool on_null(json::error_code&) {
        if (at_top(top_key::session_start))
            start = start_state::null;
        other_scalar();
        return true;
    }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }
};

// Runs the handler over `text`; throws std::runtime_error with the first reason to refuse it.
void parse(std::string_view text, json::basic_parser<receipts_handler>& p) {
    json::error_code ec;
    const std::size_t n = p.write_some(false, text.data(), text.size(), ec);
    if (!ec && n != text.size())
        ec = json::error::extra_data;
    if (ec)
        throw std::runtime_error(fmt::format("unreadable JSON: {}", ec.message()));
    const auto& h = p.handler();
    if (!h.top_is_object)
        throw std::runtime_error("not a JSON object");
    if (h.start == receipts_handler::start_state::bad)
        throw std::runtime_error("session_start_s is neither a number nor null");
    if (!h.appends_is_array)
        throw std::runtime_error("missing array 'appends'");
    if (!h.item_error.empty())
        throw std::runtime_error(h.item_error);
}

} // namespace

send_receipts parse_receipts(std::string_view text, receipt_rules rules) {
    json::basic_parser<receipts_handler> p{json::parse_options{}};
    auto& h = p.handler();
    h.rules = rules;
    // pacer's appends take ~135 characters each: one allocation for the usual file (at most
    // half the text's size), where growing by doubling copied and faulted in the heap again.
    h.appends.reserve(text.size() / 128);
    parse(text, p);
    send_receipts r;
    if (h.start == receipts_handler::start_state::number)
        r.session_start_s = h.start_s;
    r.admitted = h.admitted;
    r.appends = std::move(h.appends);
    return r;
}

std::string read_receipt_deviations(std::string_view text, std::string_view origin,
                                    std::vector<double>& out) {
    json::basic_parser<receipts_handler> p{json::parse_options{}};
    p.handler().rules = receipt_rules::pacer;
    p.handler().deviations = &out;
    out.clear();
    try {
        parse(text, p);
    } catch (const std::runtime_error& e) {
        out.clear();
        return fmt::format("{}: {}", origin, e.what());
    }
    return {};
}

namespace {
// A receipts file's text, or nullopt when it is missing or cannot be read.
std::optional<std::string> receipts_file_text(const std::filesystem::path& file) {
    try {
        return runtime::read_file_if_exists(file);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}
} // namespace

std::string read_receipts(session_result& r, const std::filesystem::path& file) {
    const auto text = receipts_file_text(file);
    if (!text)
        return fmt::format("cannot read {}", file.string());
    return read_receipts_text(r, *text, file.string());
}

std::string read_receipt_deviations(const std::filesystem::path& file, std::vector<double>& out) {
    out.clear();
    const auto text = receipts_file_text(file);
    if (!text)
        return fmt::format("cannot read {}", file.string());
    return read_receipt_deviations(*text, file.string(), out);
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
