#include <pacer/core/bad_input.hpp>
#include <pacer/core/sha256.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace pacer::schedule {

namespace json = boost::json;

namespace {

void append_integer(std::string& out, std::int64_t value) {
    char buffer[24];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

void append_unsigned(std::string& out, std::uint64_t value) {
    char buffer[24];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

// Shortest decimal that reads back to the same double (std::to_chars, exact by the
// standard, so the same on every machine). Only finite values reach here.
void append_double(std::string& out, double value) {
    char buffer[32];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

} // namespace

std::string canonical_offsets_text(std::span<const std::chrono::nanoseconds> offsets) {
    std::string text;
    text.reserve(offsets.size() * 12);
    for (const auto offset : offsets) {
        append_integer(text, offset.count());
        text.push_back('\n');
    }
    return text;
}

std::string schedule_sha256(std::span<const std::chrono::nanoseconds> offsets) {
    return sha256_hex(canonical_offsets_text(offsets));
}

std::string to_csv(std::span<const std::chrono::nanoseconds> offsets) {
    std::string text = "index,offset_ns\n";
    text.reserve(offsets.size() * 20 + 96);
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        append_unsigned(text, i);
        text.push_back(',');
        append_integer(text, offsets[i].count());
        text.push_back('\n');
    }
    text += "# sha256 ";
    text += schedule_sha256(offsets);
    text.push_back('\n');
    return text;
}

std::string to_json(const schedule_spec& spec, std::span<const std::chrono::nanoseconds> offsets) {
    std::string text;
    text.reserve(offsets.size() * 16 + 256);
    text += "{\n  \"arrival\": \"";
    text += to_string(spec.process);
    text += "\",\n  \"rate\": ";
    if (spec.stages.empty())
        append_double(text, spec.rate);
    else
        text += "null";
    text += ",\n  \"burstiness\": ";
    append_double(text, spec.burstiness);
    text += ",\n  \"seed\": ";
    append_unsigned(text, spec.seed);
    text += ",\n  \"count\": ";
    if (spec.count)
        append_unsigned(text, *spec.count);
    else
        text += "null";
    text += ",\n  \"duration_s\": ";
    if (spec.duration)
        append_double(text, static_cast<double>(spec.duration->count()) / 1e9);
    else
        text += "null";
    if (!spec.stages.empty()) {
        text += ",\n  \"stages\": \"";
        text += to_string(spec.stages);
        text += '"';
    }
    text += ",\n  \"offsets_ns\": [";
    for (std::size_t i = 0; i < offsets.size(); ++i) {
        text += i == 0 ? "\n    " : ",\n    ";
        append_integer(text, offsets[i].count());
    }
    text += offsets.empty() ? "],\n  \"sha256\": \"" : "\n  ],\n  \"sha256\": \"";
    text += schedule_sha256(offsets);
    text += "\"\n}\n";
    return text;
}

namespace {

std::string_view view(const json::string& s) {
    return {s.data(), s.size()};
}

// The text of each number that is a top-level member of the document, by key (the last of
// duplicate keys, as json::parse keeps). Boost.JSON 1.81 does not round every decimal to the
// nearest double (a value can come back one unit in the last place off, and the shortest text of
// that double can parse to yet another one), so the fractional numbers a schedule keeps are read
// from this text with std::from_chars, which does: `pacer schedule --format json` read back with
// --schedule then gives exactly the document it printed.
class top_level_numbers {
public:
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    std::map<std::string, std::string, std::less<>> text;

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) { return enter(); }
    bool on_object_end(std::size_t, json::error_code&) { return leave(); }
    bool on_array_begin(json::error_code&) { return enter(); }
    bool on_array_end(std::size_t, json::error_code&) { return leave(); }
    bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
        key_.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t, json::error_code&) {
        key_.append(s.data(), s.size());
        if (depth_ == 1) {
            text.erase(key_); // a later duplicate replaces the value, number or not
            member_ = key_;
        }
        key_.clear();
        return true;
    }
    bool on_string_part(json::string_view, std::size_t, json::error_code&) { return true; }
    bool on_string(json::string_view, std::size_t, json::error_code&) { return true; }
    bool on_number_part(json::string_view s, json::error_code&) {
        number_.append(s.data(), s.size());
        return true;
    }
    bool on_int64(std::int64_t, json::string_view s, json::error_code&) { return number(s); }
    bool on_uint64(std::uint64_t, json::string_view s, json::error_code&) { return number(s); }
    bool on_double(double, json::string_view s, json::error_code&) { return number(s); }
    bool on_bool(bool, json::error_code&) { return true; }
    bool on_null(json::error_code&) { return true; }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    bool enter() {
        ++depth_;
        return true;
    }
    bool leave() {
        --depth_;
        return true;
    }
    bool number(json::string_view s) {
        number_.append(s.data(), s.size());
        if (depth_ == 1)
            text[member_] = number_;
        number_.clear();
        return true;
    }

    int depth_ = 0;
    std::string key_;
    std::string member_; // the top-level member being read
    std::string number_;
};

// The top-level numbers' texts of `text` (of what precedes its first error, if any).
std::map<std::string, std::string, std::less<>> number_texts(std::string_view text) {
    json::basic_parser<top_level_numbers> p{json::parse_options{}};
    json::error_code ec;
    p.write_some(false, text.data(), text.size(), ec);
    return std::move(p.handler().text);
}

class reader {
public:
    reader(std::string_view source, std::string_view text)
        : source_(source), numbers_(number_texts(text)) {}

    [[noreturn]] void fail(std::string_view what) const {
        throw bad_input(fmt::format("{}: {}", source_, what));
    }

    const json::value& field(const json::object& obj, std::string_view name) const {
        const auto* v = obj.if_contains(name);
        if (!v)
            fail(fmt::format("missing field \"{}\"", name));
        return *v;
    }

    double number(const json::object& obj, std::string_view name) const {
        const auto& v = field(obj, name);
        if (!v.is_number())
            fail(fmt::format("\"{}\" must be a number", name));
        return nearest(v, name);
    }

    // `v` (a number, a top-level member `name`) rounded to the nearest double from its text.
    double nearest(const json::value& v, std::string_view name) const {
        if (v.is_double())
            if (const auto it = numbers_.find(name); it != numbers_.end()) {
                double d = 0;
                const auto& t = it->second;
                const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
                if (ec == std::errc{} && end == t.data() + t.size())
                    return d;
            }
        return v.to_number<double>();
    }

    // A non-negative integer; JSON numbers above 2^63 - 1 arrive as uint64.
    std::uint64_t unsigned_integer(const json::value& v, std::string_view name) const {
        if (v.is_uint64())
            return v.get_uint64();
        if (v.is_int64() && v.get_int64() >= 0)
            return static_cast<std::uint64_t>(v.get_int64());
        fail(fmt::format("{} must be a non-negative integer", name));
    }

private:
    std::string_view source_;
    std::map<std::string, std::string, std::less<>> numbers_;
};

} // namespace

schedule_document parse_schedule_json(std::string_view text, std::string_view source) {
    const reader r{source, text};
    json::error_code ec;
    const json::value root = json::parse(text, ec);
    if (ec)
        r.fail(fmt::format("not valid JSON: {}", ec.message()));
    if (!root.is_object())
        r.fail("not a schedule: the top level must be a JSON object");
    const auto& obj = root.get_object();

    schedule_document doc;
    const auto& arrival = r.field(obj, "arrival");
    if (!arrival.is_string())
        r.fail("\"arrival\" must be a string");
    const auto process = parse_arrival_process(view(arrival.get_string()));
    if (!process)
        r.fail(fmt::format("unknown \"arrival\" \"{}\" (expected poisson, gamma or constant)",
                           view(arrival.get_string())));
    doc.spec.process = *process;
    if (const auto* stages = obj.if_contains("stages")) {
        if (!stages->is_string())
            r.fail("\"stages\" must be a string such as \"30s:10/s,2m:10-50/s\"");
        try {
            doc.spec.stages = parse_stages(view(stages->get_string()));
        } catch (const std::invalid_argument& e) {
            r.fail(fmt::format("invalid arguments in the file: {}", e.what()));
        }
        if (!r.field(obj, "rate").is_null())
            r.fail("\"rate\" must be null in a staged schedule (the stages give the rate)");
    } else {
        doc.spec.rate = r.number(obj, "rate");
    }
    doc.spec.burstiness = r.number(obj, "burstiness");
    doc.spec.seed = r.unsigned_integer(r.field(obj, "seed"), "\"seed\"");
    if (const auto& count = r.field(obj, "count"); !count.is_null())
        doc.spec.count = r.unsigned_integer(count, "\"count\"");
    if (const auto& duration = r.field(obj, "duration_s"); !duration.is_null()) {
        if (!duration.is_number())
            r.fail("\"duration_s\" must be a number or null");
        const double ns = r.nearest(duration, "duration_s") * 1e9;
        if (!(ns > 0 && ns < 9.0e18))
            r.fail("\"duration_s\" must be > 0 and fit in 64-bit nanoseconds");
        doc.spec.duration = std::chrono::nanoseconds(std::llround(ns));
    }
    try {
        validate(doc.spec);
    } catch (const std::invalid_argument& e) {
        r.fail(fmt::format("invalid arguments in the file: {}", e.what()));
    }

    const auto& offsets = r.field(obj, "offsets_ns");
    if (!offsets.is_array())
        r.fail("\"offsets_ns\" must be an array of integers");
    const auto& array = offsets.get_array();
    doc.offsets.reserve(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) {
        const std::uint64_t ns = r.unsigned_integer(array[i], fmt::format("\"offsets_ns\"[{}]", i));
        if (ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            r.fail(fmt::format("\"offsets_ns\"[{}] does not fit in 64-bit nanoseconds", i));
        doc.offsets.emplace_back(static_cast<std::int64_t>(ns));
        if (i > 0 && doc.offsets[i] < doc.offsets[i - 1])
            r.fail(fmt::format("\"offsets_ns\" must be non-decreasing, but [{}] < [{}]", i, i - 1));
    }

    const auto& sha = r.field(obj, "sha256");
    if (!sha.is_string())
        r.fail("\"sha256\" must be a string");
    doc.sha256 = schedule_sha256(doc.offsets);
    if (view(sha.get_string()) != doc.sha256)
        r.fail(fmt::format("sha256 mismatch: the file says {} but its offsets hash to {} "
                           "(was the file edited?)",
                           view(sha.get_string()), doc.sha256));
    return doc;
}

schedule_document read_schedule_file(const std::filesystem::path& path) {
    std::optional<std::string> text;
    try {
        text = runtime::read_file_if_exists(path);
    } catch (const std::exception&) {
    }
    if (!text)
        throw bad_input(fmt::format("schedule file {}: cannot open it for reading", path.string()));
    return parse_schedule_json(*text, fmt::format("schedule file {}", path.string()));
}

} // namespace pacer::schedule
