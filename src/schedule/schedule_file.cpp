#include <pacer/core/sha256.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <boost/json.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
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
    append_double(text, spec.rate);
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

class reader {
public:
    explicit reader(std::string_view source) : source_(source) {}

    [[noreturn]] void fail(std::string_view what) const {
        throw schedule_file_error(fmt::format("{}: {}", source_, what));
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
};

} // namespace

schedule_document parse_schedule_json(std::string_view text, std::string_view source) {
    const reader r{source};
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
    doc.spec.rate = r.number(obj, "rate");
    doc.spec.burstiness = r.number(obj, "burstiness");
    doc.spec.seed = r.unsigned_integer(r.field(obj, "seed"), "\"seed\"");
    if (const auto& count = r.field(obj, "count"); !count.is_null())
        doc.spec.count = r.unsigned_integer(count, "\"count\"");
    if (const auto& duration = r.field(obj, "duration_s"); !duration.is_null()) {
        if (!duration.is_number())
            r.fail("\"duration_s\" must be a number or null");
        const double ns = duration.to_number<double>() * 1e9;
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
        throw schedule_file_error(
            fmt::format("schedule file {}: cannot open it for reading", path.string()));
    return parse_schedule_json(*text, fmt::format("schedule file {}", path.string()));
}

} // namespace pacer::schedule
