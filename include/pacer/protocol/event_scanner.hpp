#pragma once
// The receive hot path: validates a server frame as JSON and extracts only what the client
// acts on (`type`, `sglang.fatal`, a delta's `response_id`), without building a DOM. A 4.7 kB
// audio delta is scanned once, with no allocation per string, instead of being copied into a
// tree and destroyed. The mocks read the client's appends with it too (`event_id`, `sglang.seq`,
// the size of `audio`), so a 3.5 kB append is not copied into a tree either.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace pacer::protocol {

class event_scanner {
public:
    event_scanner();
    ~event_scanner();
    event_scanner(const event_scanner&) = delete;
    event_scanner& operator=(const event_scanner&) = delete;

    /// Scans one frame. Returns nullptr when it is a JSON object with a string `type`, else the
    /// reason (the same words as `frame_parser::parse`). NaN and Infinity are rejected.
    const char* scan(std::string_view frame);
    /// After a failed `scan`: the byte offset where the parser stopped (for
    /// `reference_decode_error`).
    std::size_t error_offset() const;

    /// The frame's `type` (valid until the next `scan`).
    std::string_view type() const;
    /// Whether `sglang.fatal` is truthy, as Python's `bool()` judges it.
    bool fatal() const;
    /// The top-level `event_id` when it is a string, else empty (valid until the next `scan`).
    std::string_view event_id() const;
    /// The top-level `response_id` when it is a string (a response's deltas), else empty (valid
    /// until the next `scan`).
    std::string_view response_id() const;
    /// `sglang.seq` when `sglang` is an object and its `seq` an integer that fits in int64 (what
    /// Boost.JSON's `is_int64()` accepts), else nullopt.
    std::optional<std::int64_t> seq() const;
    /// `base64_decoded_size` of the top-level `audio` string, or of `delta` (an audio delta's
    /// PCM; meaningless for a text delta), whichever came last (0 when neither is a string);
    /// the string itself is neither kept nor decoded.
    std::size_t audio_decoded_size() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace pacer::protocol
