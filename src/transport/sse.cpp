#include <pacer/transport/sse.hpp>

#include <fmt/format.h>

namespace pacer::transport {

namespace {

constexpr std::string_view bom = "\xEF\xBB\xBF";

} // namespace

bool sse_parser::feed(std::string_view bytes, std::vector<sse_event>& out) {
    if (failed())
        return false;
    std::size_t i = 0;
    // A byte order mark may only open the stream, and may itself be split across feeds.
    while (at_start_ && i < bytes.size()) {
        if (bytes[i] == bom[bom_seen_]) {
            ++i;
            if (++bom_seen_ == bom.size())
                at_start_ = false;
            continue;
        }
        // Not a BOM after all: the bytes taken so far are ordinary line bytes.
        line_.append(bom.substr(0, bom_seen_));
        at_start_ = false;
    }
    for (; i < bytes.size(); ++i) {
        const char c = bytes[i];
        if (c == '\n' && after_cr_) {
            after_cr_ = false; // the LF of a CRLF: the line already ended at the CR
            continue;
        }
        after_cr_ = false;
        if (c == '\r' || c == '\n') {
            after_cr_ = c == '\r';
            line_done(out);
            if (failed())
                return false;
            continue;
        }
        // Take the run of ordinary bytes at once.
        std::size_t j = i;
        while (j < bytes.size() && bytes[j] != '\r' && bytes[j] != '\n')
            ++j;
        line_.append(bytes.substr(i, j - i));
        i = j - 1;
        if (line_.size() + data_.size() > max_event_bytes_) {
            error_ = fmt::format("an event is longer than {} bytes", max_event_bytes_);
            line_.clear();
            data_.clear();
            return false;
        }
    }
    return true;
}

void sse_parser::line_done(std::vector<sse_event>& out) {
    if (at_start_) { // the stream began with a partial BOM and then a line end
        line_.append(bom.substr(0, bom_seen_));
        at_start_ = false;
    }
    const std::string_view line = line_;
    if (line.empty()) {
        if (has_data_) {
            if (!data_.empty() && data_.back() == '\n')
                data_.pop_back();
            out.push_back({std::move(event_), std::move(data_), last_id_});
        }
        data_.clear();
        event_.clear();
        has_data_ = false;
        return;
    }
    if (line.front() != ':') {
        const auto colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::string_view value;
        if (colon != std::string_view::npos) {
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ')
                value.remove_prefix(1);
        }
        if (field == "data") {
            if (data_.size() + value.size() + 1 > max_event_bytes_) {
                error_ = fmt::format("an event is longer than {} bytes", max_event_bytes_);
                data_.clear();
                line_.clear();
                return;
            }
            data_.append(value);
            data_.push_back('\n');
            has_data_ = true;
        } else if (field == "event") {
            event_.assign(value);
        } else if (field == "id") {
            if (value.find('\0') == std::string_view::npos)
                last_id_.assign(value);
        }
        // `retry` and unknown fields are ignored.
    }
    line_.clear();
}

} // namespace pacer::transport
