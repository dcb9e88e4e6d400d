#pragma once
// A session's input audio, PCM16 LE mono: the bytes of a file, held once in memory and shared
// read-only by every session, or generated silence, which is never held: every packet of it is
// read from one static zero packet, so a 24 h silence costs no more memory than a 1 s one (a
// 24 h input held whole would be 2.76 GB at 16 kHz, 4.1 GB more at openai-realtime's 24 kHz).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace pacer::protocol {

class pcm_input {
public:
    /// The largest packet a session reads (openai-realtime's 80 ms at 24 kHz).
    static constexpr std::size_t max_packet_bytes = 3840;

    pcm_input() = default;
    /// Held bytes (implicit: the inputs read from files, and the tests' buffers).
    pcm_input(std::shared_ptr<const std::vector<std::uint8_t>> bytes) : held_(std::move(bytes)) {
        size_ = held_ ? held_->size() : 0;
    }
    pcm_input(std::vector<std::uint8_t> bytes)
        : pcm_input(std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes))) {}
    pcm_input(const pcm_input&) = default;
    pcm_input& operator=(const pcm_input&) = default;
    /// A moved-from input is empty.
    pcm_input(pcm_input&& o) noexcept
        : held_(std::move(o.held_)), size_(std::exchange(o.size_, 0)) {}
    pcm_input& operator=(pcm_input&& o) noexcept {
        held_ = std::move(o.held_);
        size_ = std::exchange(o.size_, 0);
        return *this;
    }
    /// `bytes` of silence, held nowhere.
    static pcm_input silence(std::size_t bytes) {
        pcm_input p;
        p.size_ = bytes;
        return p;
    }

    /// Whether there is an input (held, or silence of some length).
    explicit operator bool() const { return held_ != nullptr || size_ > 0; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    bool is_silence() const { return held_ == nullptr && size_ > 0; }
    /// The held bytes; null for silence.
    const std::shared_ptr<const std::vector<std::uint8_t>>& held() const { return held_; }

    /// Bytes [offset, offset + n) clipped to the input; for silence, n ≤ max_packet_bytes.
    std::span<const std::uint8_t> bytes(std::size_t offset, std::size_t n) const;

    /// Packet `seq` of `count` 80 ms packets of this input at `rate` Hz (as
    /// `protocol::rate_packet`, realtime_events.hpp: the last takes whatever remains).
    std::span<const std::uint8_t> rate_packet(std::size_t rate, std::size_t seq,
                                              std::size_t count) const;

    /// This input at `to` Hz, from `from` Hz: held bytes are resampled (libsamplerate, as
    /// `runtime::resample_pcm16`); silence stays silence, of the length the rate gives.
    pcm_input at_rate(std::size_t from, std::size_t to) const;

private:
    std::shared_ptr<const std::vector<std::uint8_t>> held_;
    std::size_t size_ = 0;
};

} // namespace pacer::protocol
