#include <pacer/metrics/samples_file.hpp>
#include <pacer/runtime/files.hpp>

#include <boost/json/parse.hpp>

#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <string>

namespace pacer::metrics {

namespace json = boost::json;

namespace {

std::optional<double> optional_seconds(const json::value& v) {
    if (v.is_null())
        return std::nullopt;
    return v.to_number<double>();
}

// A session's `index` when it records one that fits.
std::optional<std::uint32_t> recorded_index(const json::object& o) {
    const auto* v = o.if_contains("index");
    if (!v || !v->is_number())
        return std::nullopt;
    const double d = v->to_number<double>();
    if (!(d >= 0 && d <= 4294967295.0))
        return std::nullopt;
    return static_cast<std::uint32_t>(d);
}

// A `handshake_s` object; throws when a phase is missing or not a number.
handshake_sample read_handshake(const json::object& o) {
    handshake_sample hs;
    hs.connect_s = o.at("connect").to_number<double>();
    hs.tls_s = o.at("tls").to_number<double>();
    hs.upgrade_s = o.at("upgrade").to_number<double>();
    if (const auto* a = o.if_contains("session_update_ack"))
        hs.update_ack_s = optional_seconds(*a);
    return hs;
}

arrival_sample read_arrival(const json::object& o) {
    arrival_sample a;
    a.index = o.at("index").to_number<std::size_t>();
    a.offset_ns = o.at("offset_ns").to_number<std::int64_t>();
    a.dispatched_s = optional_seconds(o.at("dispatched_s"));
    a.completed_s = optional_seconds(o.at("completed_s"));
    a.cap_delay_s = o.at("cap_delay_s").to_number<double>();
    a.dropped = o.at("dropped").as_bool();
    a.failed = o.at("failed").as_bool();
    return a;
}

// The `open_loop` arrivals; throws when the section or an arrival is malformed.
std::vector<arrival_sample> read_arrivals(const json::value& open_loop) {
    std::vector<arrival_sample> arrivals;
    for (const auto& a : open_loop.as_object().at("arrivals").as_array())
        arrivals.push_back(read_arrival(a.as_object()));
    return arrivals;
}

// Throws (strict) on anything malformed.
void read_strict(const json::object& doc, const json::array& sessions, run_samples& out) {
    std::uint32_t next = 0;
    for (const auto& s : sessions) {
        const auto& o = s.as_object();
        samples_session e;
        e.index = recorded_index(o).value_or(next);
        next = e.index + 1;
        if (const auto* start = o.if_contains("session_start_s"); start && start->is_number())
            e.samples.session_start_s = start->to_number<double>();
        for (const auto& d : o.at("deviation_s").as_array())
            e.samples.deviation_s.push_back(d.to_number<double>());
        if (const auto* h = o.if_contains("handshake_s"); h && h->is_object())
            e.handshake = read_handshake(h->as_object());
        out.sessions.push_back(std::move(e));
    }
    if (const auto* ol = doc.if_contains("open_loop"))
        out.arrivals = read_arrivals(*ol);
}

// Never throws: what cannot be read is left out (samples_rules::lenient).
void read_lenient(const json::object& doc, const json::array& sessions, run_samples& out) {
    std::uint32_t next = 0;
    for (const auto& v : sessions) {
        if (!v.is_object())
            continue;
        const auto& o = v.as_object();
        samples_session e;
        e.index = recorded_index(o).value_or(next);
        next = e.index + 1;
        if (const auto* start = o.if_contains("session_start_s"); start && start->is_number())
            e.samples.session_start_s = start->to_number<double>();
        if (const auto* d = o.if_contains("deviation_s"); d && d->is_array())
            for (const auto& x : d->as_array())
                e.samples.deviation_s.push_back(x.is_number() ? x.to_number<double>() : 0.0);
        if (const auto* h = o.if_contains("handshake_s"); h && h->is_object()) {
            try {
                e.handshake = read_handshake(h->as_object());
            } catch (const std::exception&) {
            }
        }
        out.sessions.push_back(std::move(e));
    }
    if (const auto* ol = doc.if_contains("open_loop")) {
        try {
            out.arrivals = read_arrivals(*ol);
        } catch (const std::exception&) {
        }
    }
}

} // namespace

run_samples parse_samples(std::string_view text, samples_rules rules) {
    boost::system::error_code ec;
    const auto doc = json::parse(text, ec);
    if (ec)
        throw std::runtime_error("is not valid JSON: " + ec.message());
    run_samples out;
    const auto* sessions = doc.is_object() ? doc.as_object().if_contains("sessions") : nullptr;
    if (!sessions || !sessions->is_array()) {
        if (rules == samples_rules::strict)
            throw std::runtime_error("has no sessions array");
        return out;
    }
    if (rules == samples_rules::lenient) {
        read_lenient(doc.as_object(), sessions->as_array(), out);
        return out;
    }
    try {
        read_strict(doc.as_object(), sessions->as_array(), out);
    } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("is malformed: {}", e.what()));
    }
    return out;
}

run_samples read_samples(const std::filesystem::path& file, samples_rules rules) {
    std::optional<std::string> text;
    if (rules == samples_rules::strict) {
        text = runtime::read_file_if_exists(file);
        if (!text)
            throw std::runtime_error(fmt::format("cannot read {}", file.string()));
    } else {
        text = runtime::read_file_if_readable(file);
        if (!text)
            throw std::runtime_error(fmt::format("{} cannot be read", file.string()));
    }
    try {
        return parse_samples(*text, rules);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(fmt::format("{} {}", file.string(), e.what()));
    }
}

} // namespace pacer::metrics
