#include <pacer/metrics/samples_stream.hpp>

#include <boost/json/basic_parser_impl.hpp>

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

namespace pacer::metrics {

namespace json = boost::json;

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
