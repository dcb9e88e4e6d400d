#pragma once
// `pacer run --trace none`: no session file, yet samples.json lists every packet's deviation,
// which the receipts give. The writer keeps them here instead of in memory: each session's
// receipts text is buffered up to `chunk_bytes`, then appended as one chunk to a single
// unnamed spool file (unlinked as soon as it is created, so nothing is left behind, even after
// a crash). Each chunk records where the session's previous chunk is, so memory holds one
// buffer per session with unwritten text and one offset per session, whatever the run's
// length; `take` reads one session's text back once, at the end of the run.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace pacer::trace {

class receipt_spool {
public:
    static constexpr std::size_t default_chunk_bytes = 4096;

    /// Spools into a new file in `folder` (created exclusively, unlinked at once). When it
    /// cannot be created, or a later write fails, `error()` says why and the text that could
    /// not be written stays in memory (nothing is lost).
    explicit receipt_spool(const std::filesystem::path& folder,
                           std::size_t chunk_bytes = default_chunk_bytes);
    ~receipt_spool();
    receipt_spool(const receipt_spool&) = delete;
    receipt_spool& operator=(const receipt_spool&) = delete;

    /// Adds `text` to the end of session `session`'s receipts.
    void append(std::uint32_t session, std::string_view text);

    /// Everything appended for `session`, in order, and forgets it (a second call returns "").
    std::string take(std::uint32_t session);

    /// Bytes held in memory (unwritten buffers), and bytes written to the file so far.
    std::uint64_t buffered_bytes() const { return buffered_; }
    std::uint64_t spooled_bytes() const { return end_; }
    /// The first failure to create, write or read the spool file; empty when there was none.
    const std::string& error() const { return error_; }

private:
    struct session_text {
        std::string tail;       // not yet in the file
        std::int64_t last = -1; // offset of the session's last chunk in the file, or -1
    };
    bool write_chunk(session_text& s);

    std::size_t chunk_bytes_;
    int fd_ = -1;
    bool writable_ = true;
    std::uint64_t end_ = 0; // the file's size
    std::uint64_t buffered_ = 0;
    std::map<std::uint32_t, session_text> sessions_;
    std::string error_;
};

} // namespace pacer::trace
