#include <pacer/metrics/samples_stream.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace pacer::metrics {

namespace json = boost::json;
using boost::system::error_code;

namespace {

// Strict rules refuse the file (read_samples' "is malformed: <reason>").
struct malformed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Where the parser is: what the innermost open container is to pacer.
enum class where {
    other,      // anything pacer does not read
    root,       // the top-level object
    sessions,   // its `sessions` array
    session,    // one of its objects
    deviations, // a session's `deviation_s` array
    handshake,  // a session's `handshake_s` object
    open_loop,  // the top-level `open_loop` object
    arrivals,   // its `arrivals` array
    arrival,    // one of its objects
};

enum class kind { object, array, string, number, boolean, null };

// One SAX handler for both rules. Every value, scalar or container, goes through value(),
// which knows from the enclosing container and key what pacer expects there; what does not
// fit throws (strict) or is left out as read_samples' lenient rules leave it out. With no
// `on_session` it only follows the text (the lenient check before the real pass).
class handler {
public:
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    handler(samples_rules rules, const std::function<void(samples_session&&)>* on_session)
        : strict_(rules == samples_rules::strict), on_session_(on_session) {}

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }

    bool on_object_begin(error_code&) {
        stack_.push_back(value(kind::object, nullptr));
        key_.clear();
        return true;
    }
    bool on_object_end(std::size_t, error_code&) {
        const where w = stack_.back();
        stack_.pop_back();
        key_.clear();
        if (w == where::session)
            end_session();
        else if (w == where::handshake)
            end_handshake();
        else if (w == where::arrival)
            end_arrival();
        else if (w == where::open_loop && !arrivals_seen_)
            bad_open_loop("open_loop has no arrivals");
        return true;
    }
    bool on_array_begin(error_code&) {
        stack_.push_back(value(kind::array, nullptr));
        key_.clear();
        return true;
    }
    bool on_array_end(std::size_t, error_code&) {
        stack_.pop_back();
        key_.clear();
        return true;
    }

    bool on_key_part(json::string_view s, std::size_t, error_code&) {
        if (reads_keys())
            key_part_.append(s.data(), s.size());
        return true;
    }
    bool on_key(json::string_view s, std::size_t, error_code&) {
        if (reads_keys()) {
            key_ = std::move(key_part_);
            key_.append(s.data(), s.size());
        }
        key_part_.clear();
        return true;
    }

    bool on_string_part(json::string_view, std::size_t, error_code&) { return true; }
    bool on_string(json::string_view, std::size_t, error_code&) {
        value(kind::string, nullptr);
        return true;
    }
    bool on_number_part(json::string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, error_code&) {
        const json::value v(i);
        value(kind::number, &v);
        return true;
    }
    bool on_uint64(std::uint64_t u, json::string_view, error_code&) {
        const json::value v(u);
        value(kind::number, &v);
        return true;
    }
    bool on_double(double d, json::string_view, error_code&) {
        const json::value v(d);
        value(kind::number, &v);
        return true;
    }
    bool on_bool(bool b, error_code&) {
        const json::value v(b);
        value(kind::boolean, &v);
        return true;
    }
    bool on_null(error_code&) {
        value(kind::null, nullptr);
        return true;
    }
    bool on_comment_part(json::string_view, error_code&) { return true; }
    bool on_comment(json::string_view, error_code&) { return true; }

    bool has_sessions() const { return has_sessions_; }
    // Strict: why the open_loop section is refused (told once the file is read, as
    // read_samples reads it after the sessions and only when there is a sessions array).
    const std::optional<std::string>& open_loop_error() const { return open_loop_error_; }
    std::optional<std::vector<arrival_sample>> take_arrivals() {
        if (open_loop_bad_)
            return std::nullopt;
        return std::move(arrivals_);
    }

private:
    where top() const { return stack_.empty() ? where::other : stack_.back(); }

    // Keys are only kept where pacer reads them (not in the folders it skips).
    bool reads_keys() const {
        const where w = top();
        return w == where::root || w == where::session || w == where::handshake ||
               w == where::open_loop || w == where::arrival;
    }

    // Strict: throws. Lenient: the caller leaves the value out.
    void refuse(const std::string& why) const {
        if (strict_)
            throw malformed(why);
    }

    // A value begins (a container before it opens); returns what it is to pacer. `v` is the
    // number or bool, else null.
    where value(kind k, const json::value* v) {
        if (stack_.empty())
            return k == kind::object ? where::root : where::other;
        switch (top()) {
        case where::root:
            return root_value(k);
        case where::sessions:
            if (k == kind::object) {
                session_ = samples_session{};
                index_.reset();
                has_deviations_ = false;
                return where::session;
            }
            refuse("a session is not an object");
            return where::other;
        case where::session:
            return session_value(k, v);
        case where::deviations:
            if (k != kind::number)
                refuse("a deviation is not a number");
            if (on_session_)
                session_.samples.deviation_s.push_back(k == kind::number ? v->to_number<double>()
                                                                         : 0.0);
            return where::other;
        case where::handshake:
            handshake_value(k, v);
            return where::other;
        case where::open_loop:
            if (key_ != "arrivals")
                return where::other;
            if (k == kind::array) {
                arrivals_seen_ = true;
                return where::arrivals;
            }
            bad_open_loop("open_loop.arrivals is not an array");
            return where::other;
        case where::arrivals:
            if (k == kind::object) {
                arrival_ = arrival_sample{};
                seen_ = 0;
                return where::arrival;
            }
            bad_open_loop("an arrival is not an object");
            return where::other;
        case where::arrival:
            arrival_value(k, v);
            return where::other;
        case where::other:
            return where::other;
        }
        return where::other;
    }

    where root_value(kind k) {
        if (key_ == "sessions") {
            if (k != kind::array)
                return where::other;
            has_sessions_ = true;
            return where::sessions;
        }
        if (key_ == "open_loop") {
            arrivals_.emplace();
            arrivals_seen_ = false;
            open_loop_bad_ = false;
            open_loop_error_.reset(); // the last of a repeated key wins
            if (k == kind::object)
                return where::open_loop;
            bad_open_loop("open_loop is not an object");
        }
        return where::other;
    }

    where session_value(kind k, const json::value* v) {
        // Each key as it comes: the last of a repeated key wins, as with json::parse.
        if (key_ == "index") {
            index_.reset();
            if (k == kind::number) {
                const double d = v->to_number<double>();
                if (d >= 0 && d <= 4294967295.0)
                    index_ = static_cast<std::uint32_t>(d);
            }
        } else if (key_ == "session_start_s") {
            session_.samples.session_start_s.reset();
            if (k == kind::number)
                session_.samples.session_start_s = v->to_number<double>();
        } else if (key_ == "deviation_s") {
            session_.samples.deviation_s.clear();
            has_deviations_ = k == kind::array;
            if (k == kind::array)
                return where::deviations;
            refuse("deviation_s is not an array");
        } else if (key_ == "handshake_s") {
            session_.handshake.reset();
            if (k == kind::object) {
                handshake_ = handshake_sample{};
                seen_ = 0;
                handshake_bad_ = false;
                return where::handshake;
            }
        }
        return where::other;
    }

    void handshake_value(kind k, const json::value* v) {
        static constexpr std::array<const char*, 3> phases{"connect", "tls", "upgrade"};
        for (unsigned i = 0; i < phases.size(); ++i) {
            if (key_ != phases[i])
                continue;
            if (k == kind::number) {
                (i == 0   ? handshake_.connect_s
                 : i == 1 ? handshake_.tls_s
                          : handshake_.upgrade_s) = v->to_number<double>();
                seen_ |= 1u << i;
            } else {
                bad_handshake(fmt::format("handshake_s.{} is not a number", key_));
            }
            return;
        }
        if (key_ == "session_update_ack") {
            if (k == kind::number)
                handshake_.update_ack_s = v->to_number<double>();
            else if (k == kind::null)
                handshake_.update_ack_s.reset();
            else
                bad_handshake("handshake_s.session_update_ack is not a number");
        }
    }

    void arrival_value(kind k, const json::value* v) {
        error_code ec;
        unsigned bit = 0;
        if (key_ == "index") {
            bit = 1;
            if (k == kind::number)
                arrival_.index = v->to_number<std::size_t>(ec);
        } else if (key_ == "offset_ns") {
            bit = 2;
            if (k == kind::number)
                arrival_.offset_ns = v->to_number<std::int64_t>(ec);
        } else if (key_ == "dispatched_s" || key_ == "completed_s") {
            bit = key_ == "dispatched_s" ? 4 : 8;
            auto& t = bit == 4 ? arrival_.dispatched_s : arrival_.completed_s;
            t.reset();
            if (k == kind::number)
                t = v->to_number<double>();
            else if (k != kind::null)
                ec = json::error::not_number;
        } else if (key_ == "cap_delay_s") {
            bit = 16;
            if (k == kind::number)
                arrival_.cap_delay_s = v->to_number<double>();
        } else if (key_ == "dropped" || key_ == "failed") {
            bit = key_ == "dropped" ? 32 : 64;
            if (k == kind::boolean)
                (bit == 32 ? arrival_.dropped : arrival_.failed) = v->get_bool();
        } else {
            return;
        }
        const bool fits = !ec && (bit == 4 || bit == 8 ? true
                                  : bit >= 32          ? k == kind::boolean
                                                       : k == kind::number);
        if (fits)
            seen_ |= bit;
        else
            bad_open_loop(fmt::format("an arrival's {} has the wrong type", key_));
    }

    void end_session() {
        if (!has_deviations_) {
            refuse("a session has no deviation_s array");
        }
        session_.index = index_.value_or(next_index_);
        next_index_ = session_.index + 1;
        if (on_session_)
            (*on_session_)(std::move(session_));
        session_ = samples_session{};
    }

    void end_handshake() {
        if ((seen_ & 7) != 7)
            bad_handshake("a handshake_s lacks connect, tls or upgrade");
        if (!handshake_bad_)
            session_.handshake = handshake_;
    }

    void end_arrival() {
        if ((seen_ & 127) != 127)
            bad_open_loop("an arrival lacks one of its fields");
        if (!open_loop_bad_ && on_session_)
            arrivals_->push_back(arrival_);
    }

    // Lenient: a handshake that cannot be read is absent.
    void bad_handshake(const std::string& why) {
        refuse(why);
        handshake_bad_ = true;
    }

    // Strict: refused at the end. Lenient: an open_loop section that cannot be read is absent.
    void bad_open_loop(const std::string& why) {
        if (strict_ && !open_loop_error_)
            open_loop_error_ = why;
        open_loop_bad_ = true;
        if (arrivals_)
            arrivals_->clear();
    }

    const bool strict_;
    const std::function<void(samples_session&&)>* on_session_; // null: only follow the text
    std::vector<where> stack_;
    std::string key_, key_part_;
    bool has_sessions_ = false;
    // The current session.
    samples_session session_;
    std::optional<std::uint32_t> index_;
    std::uint32_t next_index_ = 0; // the index of an entry that records none
    bool has_deviations_ = false;
    handshake_sample handshake_;
    bool handshake_bad_ = false;
    // The open_loop section.
    std::optional<std::vector<arrival_sample>> arrivals_;
    bool arrivals_seen_ = false, open_loop_bad_ = false;
    std::optional<std::string> open_loop_error_;
    arrival_sample arrival_;
    unsigned seen_ = 0; // the fields of the current handshake or arrival met so far
};

// read_samples' messages for a file it cannot read.
[[noreturn]] void cannot_read(const std::filesystem::path& file, samples_rules rules,
                              const std::string& reason) {
    if (rules == samples_rules::lenient)
        throw std::runtime_error(fmt::format("{} cannot be read", file.string()));
    if (reason.empty())
        throw std::runtime_error(fmt::format("cannot read {}", file.string()));
    throw std::runtime_error(fmt::format("cannot read {}: {}", file.string(), reason));
}

// One pass over the file; `on_session` null only follows the text.
std::optional<std::vector<arrival_sample>>
stream(const std::filesystem::path& file, samples_rules rules,
       const std::function<void(samples_session&&)>* on_session) {
    std::error_code fec;
    if (!std::filesystem::exists(file, fec))
        cannot_read(file, rules, "");
    if (!std::filesystem::is_regular_file(file, fec))
        cannot_read(file, rules, "not a file");
    std::ifstream in(file, std::ios::binary);
    if (!in)
        cannot_read(file, rules, std::strerror(errno));
    json::basic_parser<handler> parser(json::parse_options{}, rules, on_session);
    std::array<char, 64 * 1024> buf{};
    const auto not_json = [&](error_code ec) {
        throw std::runtime_error(
            fmt::format("{} is not valid JSON: {}", file.string(), ec.message()));
    };
    try {
        for (;;) {
            in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
            const auto got = static_cast<std::size_t>(in.gcount());
            if (in.bad())
                cannot_read(file, rules, std::strerror(errno));
            const bool more = !in.eof();
            error_code ec;
            // A complete document leaves nothing unread: trailing text is an error, as in
            // json::parse.
            const std::size_t used = parser.write_some(more, buf.data(), got, ec);
            if (!ec && used < got)
                ec = json::error::extra_data;
            if (ec)
                not_json(ec);
            if (!more)
                break;
        }
    } catch (const malformed& e) {
        throw std::runtime_error(fmt::format("{} is malformed: {}", file.string(), e.what()));
    }
    if (!parser.done())
        not_json(json::error::incomplete);
    if (!parser.handler().has_sessions()) {
        if (rules == samples_rules::strict)
            throw std::runtime_error(fmt::format("{} has no sessions array", file.string()));
        return std::nullopt;
    }
    if (const auto& why = parser.handler().open_loop_error())
        throw std::runtime_error(fmt::format("{} is malformed: {}", file.string(), *why));
    return parser.handler().take_arrivals();
}

} // namespace

std::optional<std::vector<arrival_sample>>
stream_samples(const std::filesystem::path& file, samples_rules rules,
               const std::function<void(samples_session&&)>& on_session) {
    if (rules == samples_rules::lenient)
        stream(file, rules, nullptr);
    return stream(file, rules, &on_session);
}

} // namespace pacer::metrics
