// The Prometheus text format (see exposition.hpp): a line-at-a-time reader and the writer.

#include <pacer/telemetry/exposition.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace pacer::telemetry {

namespace {

bool name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
bool name_char(char c) {
    return name_start(c) || (c >= '0' && c <= '9');
}
bool label_start(char c) {
    return name_start(c) && c != ':';
}
bool label_char(char c) {
    return label_start(c) || (c >= '0' && c <= '9');
}
bool blank(char c) {
    return c == ' ' || c == '\t';
}

void skip_blanks(std::string_view& s) {
    while (!s.empty() && blank(s.front()))
        s.remove_prefix(1);
}

std::string_view take_token(std::string_view& s) {
    std::size_t n = 0;
    while (n < s.size() && !blank(s[n]))
        ++n;
    const auto t = s.substr(0, n);
    s.remove_prefix(n);
    return t;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i]))
            return false;
    }
    return true;
}

// A sample value: a float as Go's ParseFloat reads it (the exposition's own reference), or
// NaN, Inf, +Inf, -Inf in any case. Hexadecimal floats are refused.
std::optional<double> parse_value(std::string_view t) {
    if (t.empty())
        return std::nullopt;
    bool negative = false;
    std::string_view body = t;
    if (body.front() == '+' || body.front() == '-') {
        negative = body.front() == '-';
        body.remove_prefix(1);
    }
    if (iequals(body, "inf") || iequals(body, "infinity"))
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
    if (iequals(body, "nan"))
        return std::numeric_limits<double>::quiet_NaN();
    if (body.empty() || !((body.front() >= '0' && body.front() <= '9') || body.front() == '.'))
        return std::nullopt;
    if (body.size() > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X'))
        return std::nullopt;
    double v = 0;
    const auto [end, ec] =
        std::from_chars(body.data(), body.data() + body.size(), v, std::chars_format::general);
    // Out of range: the format's reader (Go) gives ±Inf or 0; a value that large or small in
    // a scrape is kept as from_chars leaves it unchanged, so refuse it instead of guessing.
    if (ec != std::errc{} || end != body.data() + body.size())
        return std::nullopt;
    return negative ? -v : v;
}

std::optional<std::int64_t> parse_timestamp(std::string_view t) {
    std::int64_t v = 0;
    const char* b = t.data();
    const char* e = t.data() + t.size();
    if (b != e && *b == '+')
        ++b;
    const auto [end, ec] = std::from_chars(b, e, v);
    if (b == e || ec != std::errc{} || end != e)
        return std::nullopt;
    return v;
}

// `# HELP` text: \\ and \n are escapes.
std::string unescape_help(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '\\' || s[i + 1] == 'n')) {
            out.push_back(s[i + 1] == 'n' ? '\n' : '\\');
            ++i;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

std::optional<metric_type> parse_type(std::string_view t) {
    if (t == "counter")
        return metric_type::counter;
    if (t == "gauge")
        return metric_type::gauge;
    if (t == "histogram")
        return metric_type::histogram;
    if (t == "summary")
        return metric_type::summary;
    if (t == "untyped")
        return metric_type::untyped;
    return std::nullopt;
}

bool valid_name(std::string_view n) {
    if (n.empty() || !name_start(n.front()))
        return false;
    for (char c : n)
        if (!name_char(c))
            return false;
    return true;
}

// Reads one sample line; returns why it is malformed, or "" with `out` filled.
std::string parse_sample_line(std::string_view s, metric_sample& out) {
    std::size_t n = 0;
    while (n < s.size() && name_char(s[n]))
        ++n;
    if (n == 0 || !name_start(s.front()))
        return "not a metric name";
    out.name = std::string(s.substr(0, n));
    s.remove_prefix(n);
    if (!s.empty() && !blank(s.front()) && s.front() != '{')
        return "not a metric name";
    skip_blanks(s);
    if (!s.empty() && s.front() == '{') {
        s.remove_prefix(1);
        for (;;) {
            skip_blanks(s);
            if (s.empty())
                return "unclosed '{'";
            if (s.front() == '}') {
                s.remove_prefix(1);
                break;
            }
            std::size_t k = 0;
            while (k < s.size() && label_char(s[k]))
                ++k;
            if (k == 0 || !label_start(s.front()))
                return "not a label name";
            std::string label(s.substr(0, k));
            s.remove_prefix(k);
            skip_blanks(s);
            if (s.empty() || s.front() != '=')
                return "a label without '='";
            s.remove_prefix(1);
            skip_blanks(s);
            if (s.empty() || s.front() != '"')
                return "a label value without '\"'";
            s.remove_prefix(1);
            std::string value;
            bool closed = false;
            while (!s.empty()) {
                const char c = s.front();
                s.remove_prefix(1);
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\') {
                    if (s.empty())
                        return "an unfinished escape";
                    const char e = s.front();
                    s.remove_prefix(1);
                    if (e == 'n')
                        value.push_back('\n');
                    else if (e == '\\' || e == '"')
                        value.push_back(e);
                    else
                        return "an unknown escape in a label value";
                } else {
                    value.push_back(c);
                }
            }
            if (!closed)
                return "an unclosed label value";
            for (const auto& l : out.labels)
                if (l.first == label)
                    return "a repeated label";
            out.labels.emplace_back(std::move(label), std::move(value));
            skip_blanks(s);
            if (!s.empty() && s.front() == ',') {
                s.remove_prefix(1);
                continue;
            }
            if (!s.empty() && s.front() == '}')
                continue;
            return "labels not separated by ','";
        }
        skip_blanks(s);
    }
    const auto value_token = take_token(s);
    if (value_token.empty())
        return "no value";
    const auto v = parse_value(value_token);
    if (!v)
        return "a value that is not a number";
    out.value = *v;
    skip_blanks(s);
    if (!s.empty()) {
        const auto ts_token = take_token(s);
        const auto ts = parse_timestamp(ts_token);
        if (!ts)
            return "a timestamp that is not an integer";
        out.timestamp_ms = *ts;
        skip_blanks(s);
        if (!s.empty())
            return "bytes after the timestamp";
    }
    return {};
}

std::string quote_line(std::string_view line) {
    std::string shown;
    for (char c : line.substr(0, 80))
        shown.push_back(static_cast<unsigned char>(c) < 0x20 ? '?' : c);
    return shown + (line.size() > 80 ? "..." : "");
}

std::string escape_label(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out.push_back(c);
    }
    return out;
}

std::string escape_help(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out.push_back(c);
    }
    return out;
}

std::string format_value(double v) {
    if (std::isnan(v))
        return "NaN";
    if (std::isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", v); // the shortest form that reads back to v
}

} // namespace

std::string_view to_string(metric_type t) noexcept {
    switch (t) {
    case metric_type::counter:
        return "counter";
    case metric_type::gauge:
        return "gauge";
    case metric_type::histogram:
        return "histogram";
    case metric_type::summary:
        return "summary";
    case metric_type::untyped:
        break;
    }
    return "untyped";
}

metric_type exposition::type_of(std::string_view sample_name) const {
    if (const auto it = types.find(std::string(sample_name)); it != types.end())
        return it->second;
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
        if (sample_name.size() > suffix.size() && sample_name.ends_with(suffix)) {
            const auto family = sample_name.substr(0, sample_name.size() - suffix.size());
            if (const auto it = types.find(std::string(family));
                it != types.end() &&
                (it->second == metric_type::histogram || it->second == metric_type::summary))
                return it->second;
        }
    }
    return metric_type::untyped;
}

exposition parse_exposition(std::string_view text) {
    exposition out;
    std::size_t number = 0;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++number;
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        const std::string_view whole = line;
        skip_blanks(line);
        if (line.empty())
            continue;
        const auto warn = [&](std::string_view why) {
            out.warnings.push_back(
                fmt::format("line {}: {}: '{}'", number, why, quote_line(whole)));
        };
        if (line.front() == '#') {
            line.remove_prefix(1);
            skip_blanks(line);
            const auto keyword = take_token(line);
            if (keyword != "HELP" && keyword != "TYPE")
                continue; // a comment
            skip_blanks(line);
            const auto name = take_token(line);
            if (!valid_name(name)) {
                warn(fmt::format("# {} without a metric name", keyword));
                continue;
            }
            skip_blanks(line);
            if (keyword == "HELP") {
                out.help[std::string(name)] = unescape_help(line);
                continue;
            }
            const auto type_token = take_token(line);
            skip_blanks(line);
            const auto type = parse_type(type_token);
            if (!type || !line.empty()) {
                warn("# TYPE with an unknown type");
                continue;
            }
            if (!out.types.emplace(std::string(name), *type).second)
                warn("a second # TYPE for the same metric");
            continue;
        }
        metric_sample s;
        if (const auto why = parse_sample_line(line, s); !why.empty()) {
            warn(why);
            continue;
        }
        out.samples.push_back(std::move(s));
    }
    return out;
}

std::string format_sample(const metric_sample& s) {
    std::string out = s.name;
    if (!s.labels.empty()) {
        out.push_back('{');
        for (std::size_t i = 0; i < s.labels.size(); ++i)
            out += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", s.labels[i].first,
                               escape_label(s.labels[i].second));
        out.push_back('}');
    }
    out.push_back(' ');
    out += format_value(s.value);
    if (s.timestamp_ms)
        out += fmt::format(" {}", *s.timestamp_ms);
    return out;
}

std::string format_exposition(const std::vector<metric_family>& families) {
    std::string out;
    for (const auto& f : families) {
        if (!f.help.empty())
            out += fmt::format("# HELP {} {}\n", f.name, escape_help(f.help));
        out += fmt::format("# TYPE {} {}\n", f.name, to_string(f.type));
        for (const auto& [labels, value] : f.series) {
            out += format_sample({f.name, labels, value, std::nullopt});
            out.push_back('\n');
        }
    }
    return out;
}

} // namespace pacer::telemetry
