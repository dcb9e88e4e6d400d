#include <pacer/metrics/samples_stream.hpp>

#include <boost/json/basic_parser_impl.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <array>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <optional>
#include <string>

namespace pacer::metrics {

namespace json = boost::json;

namespace {

struct malformed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Where the parser is, by the keys of the objects it is in (arrays add a level of their own).
enum class where {
    other,      // anything pacer does not read
    root,       // the top-level object
    sessions,   // the `sessions` array
    session,    // one of its objects
    deviations, // a session's `deviation_s` array
    handshake,  // a session's `handshake_s` object
    open_loop,  // the `open_loop` object
    arrivals,   // its `arrivals` array
    arrival,    // one of its objects
};

class handler {
public:
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    explicit handler(const std::function<void(samples_session&&)>& on_session)
        : on_session_(on_session) {}

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }

    bool on_object_begin(boost::system::error_code&) {
        const where up = top();
        where w = where::other;
        if (stack_.empty())
            w = where::root;
        else if (up == where::sessions)
            w = where::session;
        else if (up == where::session && key_ == "handshake_s")
            w = where::handshake;
        else if (up == where::root && key_ == "open_loop")
            w = where::open_loop;
        else if (up == where::arrivals)
            w = where::arrival;
        else if (up == where::session && key_ == "deviation_s")
            throw malformed("deviation_s is not an array");
        if (w == where::session) {
            session_ = samples_session{};
            session_.index = next_index_;
            has_deviations_ = false;
        } else if (w == where::handshake) {
            handshake_ = handshake_sample{};
            seen_ = 0;
        } else if (w == where::open_loop) {
            arrivals_.emplace();
            arrivals_seen_ = false;
        } else if (w == where::arrival) {
            arrival_ = arrival_sample{};
            seen_ = 0;
        }
        stack_.push_back(w);
        key_.clear();
        return true;
    }

    bool on_object_end(std::size_t, boost::system::error_code&) {
        const where w = top();
        stack_.pop_back();
        key_.clear();
        if (w == where::session) {
            if (!has_deviations_)
                throw malformed("a session has no deviation_s");
            next_index_ = session_.index + 1;
            on_session_(std::move(session_));
            session_ = samples_session{};
        } else if (w == where::handshake) {
            if ((seen_ & 7) != 7)
                throw malformed("a handshake_s lacks connect, tls or upgrade");
            session_.handshake = handshake_;
        } else if (w == where::arrival) {
            if ((seen_ & 127) != 127)
                throw malformed("an arrival lacks one of its fields");
            arrivals_->push_back(arrival_);
        } else if (w == where::open_loop && !arrivals_seen_) {
            throw malformed("open_loop has no arrivals");
        }
        return true;
    }

    bool on_array_begin(boost::system::error_code&) {
        const where up = top();
        where w = where::other;
        if (up == where::root && key_ == "sessions")
            w = where::sessions;
        else if (up == where::session && key_ == "deviation_s")
            w = where::deviations, has_deviations_ = true;
        else if (up == where::open_loop && key_ == "arrivals")
            w = where::arrivals, arrivals_seen_ = true;
        else if (up == where::session || up == where::handshake || up == where::arrival)
            bad_value();
        if (w == where::sessions)
            has_sessions_ = true;
        stack_.push_back(w);
        key_.clear();
        return true;
    }

    bool on_array_end(std::size_t, boost::system::error_code&) {
        stack_.pop_back();
        key_.clear();
        return true;
    }

    bool on_key_part(std::string_view s, std::size_t, boost::system::error_code&) {
        key_part_ += s;
        return true;
    }
    bool on_key(std::string_view s, std::size_t, boost::system::error_code&) {
        key_ = std::move(key_part_);
        key_ += s;
        key_part_.clear();
        return true;
    }

    bool on_string_part(std::string_view, std::size_t, boost::system::error_code&) { return true; }
    bool on_string(std::string_view, std::size_t, boost::system::error_code&) {
        bad_value();
        return true;
    }
    bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t v, std::string_view, boost::system::error_code&) {
        number(static_cast<double>(v), v);
        return true;
    }
    bool on_uint64(std::uint64_t v, std::string_view, boost::system::error_code&) {
        number(static_cast<double>(v), static_cast<std::int64_t>(v));
        return true;
    }
    bool on_double(double v, std::string_view, boost::system::error_code&) {
        number(v, static_cast<std::int64_t>(v));
        return true;
    }
    bool on_bool(bool b, boost::system::error_code&) {
        if (top() == where::arrival && (key_ == "dropped" || key_ == "failed")) {
            (key_ == "dropped" ? arrival_.dropped : arrival_.failed) = b;
            seen_ |= key_ == "dropped" ? 32 : 64;
        } else {
            bad_value();
        }
        return true;
    }
    bool on_null(boost::system::error_code&) {
        const where w = top();
        if (w == where::handshake && key_ == "session_update_ack")
            return true;
        if (w == where::arrival && (key_ == "dispatched_s" || key_ == "completed_s")) {
            seen_ |= key_ == "dispatched_s" ? 4 : 8;
            return true;
        }
        bad_value();
        return true;
    }
    bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
    bool on_comment(std::string_view, boost::system::error_code&) { return true; }

    bool has_sessions() const { return has_sessions_; }
    std::optional<std::vector<arrival_sample>> take_arrivals() { return std::move(arrivals_); }

private:
    where top() const { return stack_.empty() ? where::other : stack_.back(); }

    // A value of the wrong kind where pacer reads one (strict rules refuse the file). Values
    // pacer does not read may be anything.
    void bad_value() const {
        const where w = top();
        if (w == where::deviations)
            throw malformed("a deviation is not a number");
        if (w == where::sessions)
            throw malformed("a session is not an object");
        if (w == where::arrivals)
            throw malformed("an arrival is not an object");
        if (w == where::session && key_ == "deviation_s")
            throw malformed("deviation_s is not an array");
        if (w == where::handshake && (key_ == "connect" || key_ == "tls" || key_ == "upgrade" ||
                                      key_ == "session_update_ack"))
            throw malformed(fmt::format("handshake_s.{} is not a number", key_));
        if (w == where::arrival && (key_ == "index" || key_ == "offset_ns" ||
                                    key_ == "dispatched_s" || key_ == "completed_s" ||
                                    key_ == "cap_delay_s" || key_ == "dropped" || key_ == "failed"))
            throw malformed(fmt::format("an arrival's {} has the wrong type", key_));
    }

    void number(double d, std::int64_t i) {
        switch (top()) {
        case where::deviations:
            session_.samples.deviation_s.push_back(d);
            return;
        case where::session:
            if (key_ == "index" && d >= 0 && d <= 4294967295.0)
                session_.index = static_cast<std::uint32_t>(d);
            else if (key_ == "session_start_s")
                session_.samples.session_start_s = d;
            return;
        case where::handshake:
            if (key_ == "connect")
                handshake_.connect_s = d, seen_ |= 1;
            else if (key_ == "tls")
                handshake_.tls_s = d, seen_ |= 2;
            else if (key_ == "upgrade")
                handshake_.upgrade_s = d, seen_ |= 4;
            else if (key_ == "session_update_ack")
                handshake_.update_ack_s = d;
            return;
        case where::arrival:
            if (key_ == "index")
                arrival_.index = static_cast<std::size_t>(d), seen_ |= 1;
            else if (key_ == "offset_ns")
                arrival_.offset_ns = i, seen_ |= 2;
            else if (key_ == "dispatched_s")
                arrival_.dispatched_s = d, seen_ |= 4;
            else if (key_ == "completed_s")
                arrival_.completed_s = d, seen_ |= 8;
            else if (key_ == "cap_delay_s")
                arrival_.cap_delay_s = d, seen_ |= 16;
            else if (key_ == "dropped" || key_ == "failed")
                bad_value();
            return;
        case where::sessions:
        case where::arrivals:
            bad_value();
            return;
        default:
            return;
        }
    }

    const std::function<void(samples_session&&)>& on_session_;
    std::vector<where> stack_;
    std::string key_, key_part_;
    samples_session session_;
    std::uint32_t next_index_ = 0;
    bool has_deviations_ = false, has_sessions_ = false;
    handshake_sample handshake_;
    arrival_sample arrival_;
    unsigned seen_ = 0;
    std::optional<std::vector<arrival_sample>> arrivals_;
    bool arrivals_seen_ = false;
};

} // namespace

std::optional<std::vector<arrival_sample>>
stream_samples(const std::filesystem::path& file,
               const std::function<void(samples_session&&)>& on_session) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(file.c_str(), "rb"),
                                                       &std::fclose);
    if (!in)
        throw std::runtime_error(fmt::format("cannot read {}", file.string()));
    json::basic_parser<handler> parser(json::parse_options{}, on_session);
    std::string buffer(64 * 1024, '\0');
    try {
        for (;;) {
            const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), in.get());
            if (n == 0 && std::ferror(in.get()))
                throw std::runtime_error(
                    fmt::format("cannot read {}: {}", file.string(), std::strerror(errno)));
            const bool more = n == buffer.size();
            boost::system::error_code ec;
            parser.write_some(more, buffer.data(), n, ec);
            if (ec)
                throw std::runtime_error(
                    fmt::format("{} is not valid JSON: {}", file.string(), ec.message()));
            if (!more)
                break;
        }
    } catch (const malformed& e) {
        throw std::runtime_error(fmt::format("{} is malformed: {}", file.string(), e.what()));
    }
    if (!parser.handler().has_sessions())
        throw std::runtime_error(fmt::format("{} has no sessions array", file.string()));
    return parser.handler().take_arrivals();
}

namespace {

using boost::system::error_code;
using json::string_view;

// SAX handler: follows the path root object → "sessions" array → session object → its keys,
// and keeps only the current session's entry. Depth counts the open containers.
struct samples_handler {
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    enum class session_key : unsigned char { other, index, start, deviations };

    const std::function<void(samples_session&)>* visit = nullptr; // null: only check the text
    int depth = 0;
    bool root_object = false;
    bool key_is_sessions = false; // the current key at depth 1
    bool in_sessions = false;     // inside the root's "sessions" array (depth >= 2)
    bool in_session = false;      // inside one of its objects (depth >= 3)
    bool in_deviations = false;   // inside that session's "deviation_s" array (depth >= 4)
    session_key key = session_key::other;
    std::string key_buf;
    std::uint32_t next = 0; // the index of an entry that records none
    std::optional<std::uint32_t> index;
    samples_session entry;

    // A value begins at the current depth (a scalar, or a container before it opens).
    void value(std::optional<double> number) {
        if (in_deviations && depth == 4) {
            if (visit)
                entry.samples.deviation_s.push_back(number.value_or(0.0));
            return;
        }
        if (in_session && depth == 3) {
            if (key == session_key::index)
                index = number && *number >= 0 && *number <= 4294967295.0
                            ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(*number))
                            : std::nullopt;
            else if (key == session_key::start)
                entry.samples.session_start_s = number;
            else if (key == session_key::deviations)
                entry.samples.deviation_s.clear(); // a later duplicate key wins
        }
    }

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }
    bool on_object_begin(error_code&) {
        value(std::nullopt);
        if (depth == 0)
            root_object = true;
        if (in_sessions && depth == 2) {
            in_session = true;
            index.reset();
            entry = samples_session{};
        }
        ++depth;
        return true;
    }
    bool on_object_end(std::size_t, error_code&) {
        --depth;
        if (in_session && depth == 2) {
            in_session = false;
            entry.index = index.value_or(next);
            next = entry.index + 1;
            if (visit)
                (*visit)(entry);
            entry = samples_session{};
        }
        return true;
    }
    bool on_array_begin(error_code&) {
        value(std::nullopt);
        if (depth == 1 && root_object && key_is_sessions)
            in_sessions = true;
        if (in_session && depth == 3 && key == session_key::deviations)
            in_deviations = true;
        ++depth;
        return true;
    }
    bool on_array_end(std::size_t, error_code&) {
        --depth;
        if (in_deviations && depth == 3)
            in_deviations = false;
        if (in_sessions && depth == 1)
            in_sessions = false;
        return true;
    }
    bool on_key_part(string_view s, std::size_t, error_code&) {
        if (depth == 1 || (in_session && depth == 3))
            key_buf.append(s.data(), s.size());
        return true;
    }
    bool on_key(string_view s, std::size_t, error_code&) {
        if (depth == 1 || (in_session && depth == 3)) {
            key_buf.append(s.data(), s.size());
            if (depth == 1)
                key_is_sessions = key_buf == "sessions";
            else
                key = key_buf == "index"             ? session_key::index
                      : key_buf == "session_start_s" ? session_key::start
                      : key_buf == "deviation_s"     ? session_key::deviations
                                                     : session_key::other;
            key_buf.clear();
        }
        return true;
    }
    bool on_string_part(string_view, std::size_t, error_code&) { return true; }
    bool on_string(string_view, std::size_t, error_code&) {
        value(std::nullopt);
        return true;
    }
    bool on_number_part(string_view, error_code&) { return true; }
    bool on_int64(std::int64_t i, string_view, error_code&) {
        value(static_cast<double>(i));
        return true;
    }
    bool on_uint64(std::uint64_t u, string_view, error_code&) {
        value(static_cast<double>(u));
        return true;
    }
    bool on_double(double d, string_view, error_code&) {
        value(d);
        return true;
    }
    bool on_bool(bool, error_code&) {
        value(std::nullopt);
        return true;
    }
    bool on_null(error_code&) {
        value(std::nullopt);
        return true;
    }
    bool on_comment_part(string_view, error_code&) { return true; }
    bool on_comment(string_view, error_code&) { return true; }
};

// One pass over the file; `visit` null only checks it.
void stream(const std::filesystem::path& file, const std::function<void(samples_session&)>* visit) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw std::runtime_error(fmt::format("{} cannot be read", file.string()));
    json::basic_parser<samples_handler> parser{json::parse_options{}};
    parser.handler().visit = visit;
    std::array<char, 64 * 1024> buf{};
    error_code ec;
    while (true) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (in.bad())
            throw std::runtime_error(fmt::format("{} cannot be read", file.string()));
        const bool more = !in.eof();
        // A complete parse leaves nothing unread: trailing text is an error, as in json::parse.
        const std::size_t used = parser.write_some(more, buf.data(), got, ec);
        if (!ec && used < got)
            ec = json::error::extra_data;
        if (ec)
            throw std::runtime_error(
                fmt::format("{} is not valid JSON: {}", file.string(), ec.message()));
        if (!more)
            break;
    }
    if (!parser.done())
        throw std::runtime_error(fmt::format("{} is not valid JSON: {}", file.string(),
                                             error_code(json::error::incomplete).message()));
}

} // namespace

void for_each_samples_session(const std::filesystem::path& file,
                              const std::function<void(samples_session&)>& visit) {
    stream(file, nullptr);
    stream(file, &visit);
}

} // namespace pacer::metrics
