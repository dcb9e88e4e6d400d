#pragma once
// The receive hot path: validates a server frame as JSON and extracts only what the client
// acts on (`type`, `sglang.fatal`), without building a DOM. A 4.7 kB audio delta is scanned
// once, with no allocation per string, instead of being copied into a tree and destroyed.

#include <memory>
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

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace pacer::protocol
