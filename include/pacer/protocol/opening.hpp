#pragma once
// Telling a server of another protocol from its opening events, sans-io: a session started with
// the wrong `--protocol` ends at its first telling event with an error that says so, instead of
// waiting out its timeout. All three protocols open with `session.created`, in three shapes:
//
// - native (sglang-omni, docs/protocol.md §1.4): a `session` object; its `session.updated`
//   carries `session.sglang` (the granted capabilities);
// - openai-realtime: a `session` object without `sglang`;
// - vllm-realtime: no `session` object, a top-level `id` (vLLM's `SessionCreated`).
//
// Only a shape that positively names another protocol is refused: an event with neither a
// `session` object nor a top-level `id` names none and passes, as does an `error` (a server of
// the right protocol may refuse the session before anything else).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::protocol {

enum class wire_protocol : std::uint8_t { native, openai_realtime, vllm_realtime, vllm_omni };

/// `native`, `openai-realtime`, `vllm-realtime`, `vllm-omni`: the words of `--protocol`.
constexpr std::string_view wire_protocol_name(wire_protocol p) {
    switch (p) {
    case wire_protocol::native:
        return "native";
    case wire_protocol::openai_realtime:
        return "openai-realtime";
    case wire_protocol::vllm_omni:
        return "vllm-omni";
    case wire_protocol::vllm_realtime:
        break;
    }
    return "vllm-realtime";
}

/// What an opening event's JSON shows of its protocol (read by `describe_opening`, events.hpp).
struct opening_shape {
    bool session_object = false; ///< a `session` object
    bool sglang = false;         ///< `session.sglang` is present
    bool top_level_id = false;   ///< a top-level string `id`
};

/// The shape of a server frame already scanned as a JSON object with a string `type` (a
/// frame that does not parse shows nothing).
opening_shape describe_opening(std::string_view frame);

/// The protocol whose shape this is, when the shape names one.
constexpr std::optional<wire_protocol> shape_protocol(const opening_shape& s) {
    if (s.session_object)
        return s.sglang ? wire_protocol::native : wire_protocol::openai_realtime;
    if (s.top_level_id)
        return wire_protocol::vllm_realtime;
    return std::nullopt;
}

/// The check of a session's opening events against the protocol it speaks. `on_event` is
/// given the server's events in order while `active()`; it checks the first event and, for the
/// native protocol, the answer to `session.update` (`session.updated`), and returns the
/// session's error when one of them is another protocol's.
class opening_check {
public:
    explicit opening_check(wire_protocol expected) : expected_(expected) {}

    /// Whether the next event is still to be checked (decoding its shape costs a parse).
    bool active() const { return !done_; }

    std::optional<std::string> on_event(std::string_view type, const opening_shape& s) {
        if (done_)
            return std::nullopt;
        const bool first = !seen_first_;
        seen_first_ = true;
        const auto named = shape_protocol(s);
        if (first) {
            done_ = expected_ != wire_protocol::native;
            if (type == "error")
                return std::nullopt;
            const bool created =
                type == "session.created" || (expected_ == wire_protocol::openai_realtime &&
                                              type == "transcription_session.created");
            if (!created)
                return wrong(std::string("server's first event was '")
                                 .append(type)
                                 .append("', not the ")
                                 .append(wire_protocol_name(expected_))
                                 .append(" protocol's 'session.created'"));
            // The native protocol does not say what its session.created holds beyond an id:
            // an openai-realtime shape passes here, and its session.updated tells. vllm-omni's
            // session.created has openai-realtime's shape (a `session` object, no `sglang`).
            const bool openai_shape_ok =
                expected_ == wire_protocol::native || expected_ == wire_protocol::vllm_omni;
            if (named && *named != expected_ &&
                !(openai_shape_ok && *named == wire_protocol::openai_realtime))
                return wrong(std::string("server's first event was ")
                                 .append(describe(*named, "session.created"))
                                 .append(", not the ")
                                 .append(wire_protocol_name(expected_))
                                 .append(" protocol's"));
            return std::nullopt;
        }
        // Native only: the answer to session.update.
        if (type != "session.updated")
            return std::nullopt;
        done_ = true;
        if (named == wire_protocol::openai_realtime)
            return wrong(std::string("server answered session.update with ")
                             .append(describe(*named, "session.updated"))
                             .append(", not the native protocol's (with 'session.sglang')"));
        return std::nullopt;
    }

private:
    static std::string describe(wire_protocol p, std::string_view type) {
        std::string s = std::string("'").append(type).append("' in ");
        s.append(wire_protocol_name(p)).append("'s shape (");
        switch (p) {
        case wire_protocol::native:
            return s.append("with 'session.sglang')");
        case wire_protocol::openai_realtime:
        case wire_protocol::vllm_omni:
            return s.append("a 'session' object without 'sglang')");
        case wire_protocol::vllm_realtime:
            break;
        }
        return s.append("a top-level 'id', no 'session' object)");
    }
    std::string wrong(std::string what) {
        done_ = true;
        return what.append(": is --protocol right?");
    }

    wire_protocol expected_;
    bool seen_first_ = false;
    bool done_ = false;
};

} // namespace pacer::protocol
