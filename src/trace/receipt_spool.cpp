#include <pacer/trace/receipt_spool.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace pacer::trace {

namespace {

// A chunk: this header, then `length` bytes of the session's text.
struct chunk_header {
    std::int64_t previous; // offset of the session's chunk before this one, or -1
    std::uint64_t length;
};

// Repeats `io` (pread or pwrite) until `size` bytes at `at` are done: false on an error or a
// short end of file.
template <class Byte>
bool positioned_all(ssize_t (*io)(int, Byte*, std::size_t, off_t), int fd, Byte* data,
                    std::size_t size, std::uint64_t at) {
    auto* p = static_cast<std::conditional_t<std::is_const_v<Byte>, const char, char>*>(data);
    while (size > 0) {
        const ssize_t n = io(fd, p, size, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        size -= static_cast<std::size_t>(n);
        at += static_cast<std::uint64_t>(n);
    }
    return true;
}

bool pwrite_all(int fd, const void* data, std::size_t size, std::uint64_t at) {
    return positioned_all<const void>(::pwrite, fd, data, size, at);
}

bool pread_all(int fd, void* data, std::size_t size, std::uint64_t at) {
    return positioned_all<void>(::pread, fd, data, size, at);
}

} // namespace

receipt_spool::receipt_spool(const std::filesystem::path& folder, std::size_t chunk_bytes)
    : chunk_bytes_(std::max<std::size_t>(chunk_bytes, 1)) {
    const auto path = folder / fmt::format(".receipts-spool-{}", ::getpid());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0)
        error_ = fmt::format("cannot create {}: {}", path.string(), std::strerror(errno));
    else
        (void)::unlink(path.c_str()); // the descriptor keeps it until the run ends
}

receipt_spool::~receipt_spool() {
    if (fd_ >= 0)
        ::close(fd_);
}

bool receipt_spool::write_chunk(session_text& s) {
    if (fd_ < 0 || !writable_ || s.tail.empty())
        return false;
    const chunk_header h{s.last, s.tail.size()};
    if (!pwrite_all(fd_, &h, sizeof h, end_) ||
        !pwrite_all(fd_, s.tail.data(), s.tail.size(), end_ + sizeof h)) {
        error_ = fmt::format("cannot write the receipts spool: {}", std::strerror(errno));
        writable_ = false; // the rest stays in memory; the chunks written stay readable
        return false;
    }
    s.last = static_cast<std::int64_t>(end_);
    end_ += sizeof h + s.tail.size();
    buffered_ -= s.tail.size();
    s.tail.clear();
    return true;
}

void receipt_spool::append(std::uint32_t session, std::string_view text) {
    auto& s = sessions_[session];
    s.tail += text;
    buffered_ += text.size();
    if (s.tail.size() >= chunk_bytes_)
        write_chunk(s);
}

std::string receipt_spool::take(std::uint32_t session) {
    const auto it = sessions_.find(session);
    if (it == sessions_.end())
        return {};
    auto s = std::move(it->second);
    sessions_.erase(it);
    buffered_ -= s.tail.size();
    // The chain runs backwards from the last chunk: collect the offsets, then read forwards.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> chunks; // (offset of text, length)
    for (std::int64_t at = s.last; at >= 0 && fd_ >= 0;) {
        chunk_header h{};
        if (!pread_all(fd_, &h, sizeof h, static_cast<std::uint64_t>(at))) {
            error_ = fmt::format("cannot read the receipts spool: {}", std::strerror(errno));
            return s.tail;
        }
        chunks.emplace_back(static_cast<std::uint64_t>(at) + sizeof h, h.length);
        at = h.previous;
    }
    std::uint64_t total = s.tail.size();
    for (const auto& c : chunks)
        total += c.second;
    std::string text(total, '\0');
    std::uint64_t pos = 0;
    for (auto c = chunks.rbegin(); c != chunks.rend(); ++c) {
        if (!pread_all(fd_, text.data() + pos, c->second, c->first)) {
            error_ = fmt::format("cannot read the receipts spool: {}", std::strerror(errno));
            return s.tail;
        }
        pos += c->second;
    }
    std::copy(s.tail.begin(), s.tail.end(), text.begin() + static_cast<std::ptrdiff_t>(pos));
    return text;
}

} // namespace pacer::trace
