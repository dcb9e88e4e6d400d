#pragma once
// The native full-duplex realtime protocol (docs/protocol.md §1): builders of the four client
// events pacer sends, a reusable parser of incoming frames, and the profiles.
//
// Builders write compact JSON by hand: an append is built once per packet on the hot path,
// and its bytes are both sent and traced as they are.

#include <boost/json/object.hpp>
#include <boost/json/parser.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace pacer::protocol {

/// A server profile (docs/protocol.md §1.4 "Profiles").
struct profile {
    std::string_view name;
    std::string_view alias;
    int unit_ms;            ///< native unit
    int output_sample_rate; ///< Hz of output PCM16
    bool continuous;        ///< speaks continuously (VoiceChat) or only when answering
    bool stop_requires_eos; ///< a `stop` terminal is valid only after the client's EOS
    /// What the client asks for in `session.update` and the server must grant, exactly:
    /// `audio` for VoiceChat, `audio` and `text` for MiniCPM-o.
    std::span<const std::string_view> output_modalities;
};

/// The profile's `output_modalities` as a compact JSON array, e.g. `["audio","text"]`.
std::string output_modalities_json(const profile& p);

/// The VoiceChat profile, pacer's default.
const profile& default_profile();
/// The profile with this name or alias, or nullptr.
const profile* find_profile(std::string_view name);

/// One event id: 32 lowercase hex characters, held inline (making one allocates nothing).
struct event_id {
    std::array<char, 32> chars{};

    std::string_view view() const { return {chars.data(), chars.size()}; }
    operator std::string_view() const { return view(); }
    friend bool operator==(const event_id&, const event_id&) = default;
};

/// Event ids like Python's `uuid4().hex`: 32 lowercase hex characters from a splitmix64
/// stream. One source never repeats an id. Sessions seed theirs with `unique_id_seed()`, so
/// two sessions do not repeat each other's ids either, in one process (another run of the
/// same process, another shard) or in two (`--processes` workers, separate runs).
class event_id_source {
public:
    explicit event_id_source(std::uint64_t seed) : state_(seed) {}
    event_id next();

private:
    std::uint64_t state_;
};

/// 64 random bits from the operating system (`getrandom`), drawn once per process.
std::uint64_t process_nonce();

/// A seed for one session's `event_id_source`: the process nonce and `salt`, mixed with a
/// count of the calls so far, so no two calls of a process return the same seed and two
/// processes share one only by chance (odds about 2^-64). Thread-safe.
std::uint64_t unique_id_seed(std::uint64_t salt = 0);

/// `{"type":"session.update","event_id":…,"session":{"output_modalities":[…]}}` with the
/// profile's output modalities (`["audio"]` for the default VoiceChat profile).
std::string session_update(std::string_view event_id, const profile& p = default_profile());

/// Writes `input_audio_buffer.append` for packet `seq` carrying `pcm` (PCM16 LE mono 16 kHz)
/// into `out`, reusing its capacity: `t_start_ms` is the media offset `seq * 80.0`.
void append_event(std::string& out, std::string_view event_id, std::span<const std::uint8_t> pcm,
                  std::uint64_t seq);

/// The same event from audio already encoded as base64 (`audio_b64`).
void append_event_encoded(std::string& out, std::string_view event_id, std::string_view audio_b64,
                          std::uint64_t seq);

/// `{"type":"sglang.input_audio.end","event_id":…}`
std::string input_audio_end(std::string_view event_id);

/// `{"type":"session.close","event_id":…}`
std::string session_close(std::string_view event_id);

/// The server events the client tells apart. Anything else is `unknown` (recorded, ignored).
enum class server_event : std::uint8_t {
    session_created,
    session_updated,
    input_accepted,
    unit_done,
    response_created,
    output_audio_delta,
    output_audio_done,
    transcript_delta,
    transcript_done,
    text_delta,
    text_done,
    response_done,
    input_ended,
    input_drained,
    session_closed,
    error,
    unknown,
};
inline constexpr std::size_t server_event_count =
    static_cast<std::size_t>(server_event::unknown) + 1;

/// The kind of a server event `type`.
server_event classify_server_event(std::string_view type);

/// Parses frames into JSON objects, reusing its parser state between frames (one per session).
/// NaN and Infinity are rejected, as the reference client does.
class frame_parser {
public:
    frame_parser();

    /// Parses `frame`. On success returns nullptr and `object()`/`type()` describe it; on
    /// failure returns the reason (`"expected a JSON object"`, `"missing string 'type'"`, or
    /// the JSON error) and the previous object is gone.
    const char* parse(std::string_view frame);

    const boost::json::object& object() const { return *object_; }
    std::string_view type() const { return type_; }

private:
    boost::json::parser parser_;
    boost::json::value value_;
    const boost::json::object* object_ = nullptr;
    std::string_view type_;
};

/// `ValueError: malformed server frame '<first 200 characters>': <reason>`, worded as the
/// reference client words it (docs/protocol.md §1.5): the excerpt is written as Python's `repr`
/// of a string writes it (single quotes unless the text holds one and no double quote;
/// backslash escapes for the quote, `\\`, `\t`, `\n`, `\r` and other control characters), so
/// the message is one printable, valid UTF-8 line (a byte that is not UTF-8 becomes U+FFFD).
std::string malformed_frame_message(std::string_view frame, std::string_view reason);

/// The `<reason>` of `malformed_frame_message` for a frame the scanner (or `frame_parser`)
/// refused with `scan_reason`, the parser having stopped at byte `error_offset`, in the words
/// of the reference client (Python's `json` module and its own checks):
/// `ValueError: server event must be a JSON object`, `ValueError: server event type must be a
/// string`, `ValueError: nonfinite JSON number: NaN` (also `Infinity`, `-Infinity`), and for a
/// syntax error `JSONDecodeError: Expecting value: line L column C (char P)` (or `Extra data:
/// …` after a complete value), P counted in characters. Python words a few syntax errors more
/// precisely (an unterminated string, a missing delimiter); pacer says `Expecting value` there.
std::string reference_decode_error(std::string_view frame, std::string_view scan_reason,
                                   std::size_t error_offset);

/// Whether an `error` event's `sglang.fatal` is truthy, as Python's `bool()` judges it.
bool is_fatal_error(const boost::json::object& event);

} // namespace pacer::protocol
