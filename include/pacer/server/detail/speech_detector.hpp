#pragma once
// The mock's server VAD (docs/native-mock.md, "Server VAD"), sans-io: PCM16 in, speech
// started/stopped out, on the audio's own clock (ms of input received), as OpenAI's
// `input_audio_buffer.speech_started/stopped` carry `audio_start_ms`/`audio_end_ms`.
//
// The rule: the input is cut into 80 ms windows; a window is voiced when its RMS is at least
// `threshold_dbfs` (dB relative to a full-scale PCM16 sample, 32768). Speech starts at the
// first voiced window after silence (at that window's start) and stops once `silence_ms` of
// unvoiced windows have followed it (at the end of the last voiced window). Zeros are -inf
// dBFS: silence never starts speech, whatever the threshold.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace pacer::server::detail {

struct speech_detector_options {
    double threshold_dbfs = -40;
    std::uint64_t silence_ms = 500;
    std::uint64_t sample_rate = 24000;
};

class speech_detector {
public:
    static constexpr std::uint64_t window_ms = 80;

    struct event {
        enum class kind { started, stopped };
        kind what;
        std::uint64_t audio_ms; ///< started: the speech's start; stopped: its end
    };

    explicit speech_detector(speech_detector_options o)
        : o_(o), window_samples_(o.sample_rate * window_ms / 1000) {}

    /// Feeds little-endian PCM16 bytes (any split, an odd byte kept for the next call);
    /// appends the events of every window it completes to `out`.
    void feed(std::string_view pcm, std::vector<event>& out) {
        for (const char c : pcm) {
            if (!half_) {
                low_ = static_cast<unsigned char>(c);
                half_ = true;
                continue;
            }
            half_ = false;
            const auto sample = static_cast<std::int16_t>(
                static_cast<std::uint16_t>(low_ | (static_cast<unsigned char>(c) << 8)));
            const double x = sample;
            sum_squares_ += x * x;
            if (++samples_ == window_samples_)
                close_window(out);
        }
    }

    bool speaking() const { return speaking_; }
    /// The RMS level of a window with `sum_squares` over `n` samples, in dBFS (-inf for zeros).
    static double dbfs(double sum_squares, std::uint64_t n) {
        if (n == 0 || sum_squares <= 0)
            return -INFINITY;
        return 10 * std::log10(sum_squares / static_cast<double>(n) / (32768.0 * 32768.0));
    }

private:
    void close_window(std::vector<event>& out) {
        const std::uint64_t start = windows_ * window_ms;
        const bool voiced = dbfs(sum_squares_, samples_) >= o_.threshold_dbfs;
        ++windows_;
        sum_squares_ = 0;
        samples_ = 0;
        if (voiced) {
            if (!speaking_) {
                speaking_ = true;
                out.push_back({event::kind::started, start});
            }
            quiet_ms_ = 0;
            return;
        }
        if (!speaking_)
            return;
        quiet_ms_ += window_ms;
        if (quiet_ms_ >= o_.silence_ms) {
            speaking_ = false;
            out.push_back({event::kind::stopped, windows_ * window_ms - quiet_ms_});
            quiet_ms_ = 0;
        }
    }

    speech_detector_options o_;
    std::uint64_t window_samples_;
    std::uint64_t windows_ = 0, samples_ = 0, quiet_ms_ = 0;
    double sum_squares_ = 0;
    unsigned low_ = 0;
    bool half_ = false, speaking_ = false;
};

} // namespace pacer::server::detail
