#pragma once
// Module `record` (the module table: cmake/PacerModules.cmake, docs/architecture.md) owns datasets
// and `pacer dataset synth`, `run.json`, the per-variant post-processing and the checks, plan and
// execution of `pacer record` (record_plan.hpp, record_job.hpp).
// It may include core, trace, runtime, protocol, transport, session, metrics; it may not include
// schedule, server, telemetry, report, sweep, run, http, cli, console, capacity_search (the build
// fails if it does): the command starts any built-in mock, shows the progress line
// (record_observer) and passes the report writers (end_writers).
//
// Datasets of the recorder (`pacer dataset`, `pacer record`): a JSONL manifest of samples, each
// with named variants (WAV files), their normalization to the protocol's input format (16 kHz
// mono PCM16, resampled with libsamplerate) and a reproducible synthetic dataset made with
// espeak-ng (`pacer dataset synth`: synth_dataset).

#include <pacer/runtime/audio_codec.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::record {

/// The protocol's input rate (docs/protocol.md §2.1).
inline constexpr int input_rate = 16000;

/// One sample of a manifest: an id, its subset, its variants (name -> WAV path, relative to the
/// dataset folder or absolute) and an optional reference text.
struct sample {
    std::string id;
    std::string subset;
    std::string text;
    std::map<std::string, std::string> variants;
};

/// Parses a JSONL manifest: one object per nonblank line with a nonempty string `id`, a string
/// `subset` (default "default"), an object `variants` of nonempty string paths (at least one)
/// and an optional string `text`. Ids are unique. Throws std::invalid_argument naming the line
/// and what is wrong.
std::vector<sample> parse_manifest(std::string_view jsonl);

/// The first `per_subset` samples of every subset, in manifest order (0: all).
std::vector<sample> select_per_subset(const std::vector<sample>& samples, std::size_t per_subset);

// Audio is read, converted and written in runtime (runtime/audio_codec.hpp: runtime::resample,
// runtime::to_pcm16, runtime::write_wav_*): the one place that calls libsndfile and
// libsamplerate.
using audio = runtime::mono_audio;

/// The protocol input made from any WAV libsndfile reads: channels averaged to mono, resampled
/// to 16 kHz, quantized to PCM16 LE (clipped, rounded). `normalization` records the conversion:
/// source rate, channels and format, and what was done (`resampled`, `downmixed`, `resampler`).
struct normalized_input {
    std::vector<std::uint8_t> pcm;
    boost::json::object normalization;
};
normalized_input normalize_wav(const std::filesystem::path& path);

/// Reads a WAV as mono float (channels averaged); throws std::runtime_error naming the file.
audio read_wav_mono(const std::filesystem::path& path);

/// `pacer dataset synth`: subsets x per_subset samples, each `min_s`..`max_s` seconds of
/// espeak-ng speech (seeded text, voice, speed and pitch), with variants `clean` and `overlap`
/// (a second seeded voice over the middle of the sample at half the level).
struct synth_options {
    std::size_t subsets = 4;
    std::size_t per_subset = 2;
    double min_s = 20;
    double max_s = 60;
    std::uint64_t seed = 1;
    std::filesystem::path output;     ///< created; must not exist
    std::string espeak = "espeak-ng"; ///< the program (looked up on PATH)
};

/// The espeak-ng program on PATH, or nullopt.
std::optional<std::filesystem::path> find_program(std::string_view name);

/// Makes the dataset: `manifest.jsonl`, `dataset.json` (the options, the espeak-ng version,
/// every sample's normalization) and `audio/<id>/{clean,overlap}.wav` (16 kHz mono PCM16).
/// Throws std::runtime_error on failure. Returns the number of samples.
std::size_t synthesize(const synth_options& options);

/// `pacer dataset synth` with `options` (`espeak` is looked up on PATH): checks them (an
/// output given and not existing, min_s <= max_s, espeak-ng installed, room on the disk for
/// the WAVs), then prints the plan when `dry_run` or synthesizes into a new folder and prints
/// one line. Bad input throws bad_input (one line, nothing written); returns the
/// exit status.
int synth_dataset(synth_options options, bool dry_run);

/// One seeded sentence generator (exposed for tests): the same seed gives the same words.
std::string seeded_text(std::uint64_t seed, std::size_t words);

} // namespace pacer::record
