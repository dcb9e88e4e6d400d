// Datasets of the recorder (see dataset.hpp): the manifest, the normalization of its WAVs, the
// synthetic dataset made with espeak-ng, and `pacer dataset synth` checked and run
// (synth_dataset; the command only declares the options).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/record/dataset.hpp>
#include <pacer/runtime/audio_codec.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/output_dir.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <set>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace pacer::record {

namespace fs = std::filesystem;
namespace json = boost::json;

std::vector<sample> parse_manifest(std::string_view jsonl) {
    std::vector<sample> out;
    std::set<std::string> ids;
    std::size_t line_no = 0;
    while (!jsonl.empty()) {
        const auto nl = jsonl.find('\n');
        std::string_view line = jsonl.substr(0, nl);
        jsonl.remove_prefix(nl == std::string_view::npos ? jsonl.size() : nl + 1);
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        auto bad = [&](std::string_view why) {
            return std::invalid_argument(fmt::format("manifest line {}: {}", line_no, why));
        };
        std::error_code ec;
        const json::value v = json::parse(line, ec);
        if (ec || !v.is_object())
            throw bad("not a JSON object");
        const auto& o = v.get_object();
        sample s;
        const auto* id = o.if_contains("id");
        if (!id || !id->is_string() || id->get_string().empty())
            throw bad("needs a nonempty string \"id\"");
        s.id = id->get_string();
        if (s.id.find('/') != std::string::npos || s.id == "." || s.id == "..")
            throw bad(fmt::format("id \"{}\" must be usable as a folder name", s.id));
        if (!ids.insert(s.id).second)
            throw bad(fmt::format("id \"{}\" appears twice", s.id));
        s.subset = "default";
        if (const auto* sub = o.if_contains("subset")) {
            if (!sub->is_string() || sub->get_string().empty())
                throw bad("\"subset\" must be a nonempty string");
            s.subset = sub->get_string();
        }
        if (const auto* t = o.if_contains("text")) {
            if (!t->is_string())
                throw bad("\"text\" must be a string");
            s.text = t->get_string();
        }
        const auto* vars = o.if_contains("variants");
        if (!vars || !vars->is_object() || vars->get_object().empty())
            throw bad("needs an object \"variants\" with at least one name -> WAV path");
        for (const auto& [name, path] : vars->get_object()) {
            if (!path.is_string() || path.get_string().empty())
                throw bad(fmt::format("variant \"{}\" must be a nonempty path", name));
            const std::string n(name);
            if (n.empty() || n.find('/') != std::string::npos || n == "." || n == "..")
                throw bad(fmt::format("variant name \"{}\" must be usable as a folder name", n));
            s.variants[n] = path.get_string();
        }
        out.push_back(std::move(s));
    }
    if (out.empty())
        throw std::invalid_argument("manifest has no samples");
    return out;
}

std::vector<sample> select_per_subset(const std::vector<sample>& samples, std::size_t per_subset) {
    if (per_subset == 0)
        return samples;
    std::map<std::string, std::size_t> taken;
    std::vector<sample> out;
    for (const auto& s : samples)
        if (taken[s.subset]++ < per_subset)
            out.push_back(s);
    return out;
}

audio read_wav_mono(const fs::path& path) {
    return runtime::read_audio_mono(path).mono;
}

normalized_input normalize_wav(const fs::path& path) {
    const auto w = runtime::read_audio_mono(path);
    const bool is_pcm16 = w.pcm16;
    normalized_input n;
    const bool resampled = w.mono.rate != input_rate;
    const auto out = runtime::resample(w.mono.samples, w.mono.rate, input_rate);
    n.pcm = runtime::to_pcm16(out);
    if (n.pcm.empty())
        throw std::runtime_error(fmt::format("cannot read {}: no audio", path.string()));
    n.normalization = {{"source_sample_rate", w.mono.rate},
                       {"source_channels", w.channels},
                       {"source_format", w.encoding},
                       {"target_sample_rate", input_rate},
                       {"target_channels", 1},
                       {"target_format", "pcm16"},
                       {"downmixed", w.channels > 1},
                       {"resampled", resampled},
                       {"resampler", resampled ? "libsamplerate SRC_SINC_BEST_QUALITY" : "none"},
                       {"converted", resampled || w.channels > 1 || !is_pcm16},
                       {"source_frames", w.mono.samples.size()},
                       {"target_frames", out.size()}};
    return n;
}

std::optional<fs::path> find_program(std::string_view name) {
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const fs::path dir(std::string(rest.substr(0, colon)));
        rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
        const fs::path p = dir / std::string(name);
        if (::access(p.c_str(), X_OK) == 0)
            return p;
    }
    return std::nullopt;
}

namespace {

// Runs a program (no shell) to its end; returns its stdout. Throws when it cannot start or
// exits nonzero.
std::string run_program(const fs::path& program, std::vector<std::string> args) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<char*> argv;
    std::string prog = program.string();
    argv.push_back(prog.data());
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = ::posix_spawn(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        throw std::runtime_error(fmt::format("cannot start {}: {}", prog, std::strerror(rc)));
    }
    std::string text;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(out[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(fmt::format("{} failed (status {})", prog, status));
    return text;
}

constexpr std::string_view words[] = {
    "the",     "a",        "morning", "river",  "quiet",   "station", "light",  "window",
    "people",  "walked",   "across",  "bridge", "before",  "evening", "train",  "arrived",
    "slowly",  "bright",   "garden",  "market", "city",    "another", "small",  "dog",
    "watched", "children", "played",  "near",   "old",     "house",   "while",  "rain",
    "began",   "to",       "fall",    "on",     "roof",    "we",      "talked", "about",
    "music",   "books",    "weather", "every",  "day",     "follows", "simple", "rules",
    "our",     "teacher",  "said",    "that",   "numbers", "matter",  "most",   "when",
    "nobody",  "expects",  "them",    "green",  "fields",  "stretch", "far",    "beyond",
    "hills",   "under",    "blue",    "sky",    "and",     "clouds",  "drift",  "east"};

std::uint64_t next(std::mt19937_64& g, std::uint64_t n) {
    return g() % n;
}

} // namespace

std::string seeded_text(std::uint64_t seed, std::size_t count) {
    std::mt19937_64 g(seed);
    std::string text;
    std::size_t in_sentence = 0;
    const std::size_t n = std::size(words);
    for (std::size_t i = 0; i < count; ++i) {
        std::string w(words[next(g, n)]);
        if (in_sentence == 0)
            w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
        text += (text.empty() ? "" : " ") + w;
        ++in_sentence;
        if (in_sentence >= 6 + next(g, 6) || i + 1 == count) {
            text += ".";
            in_sentence = 0;
        }
    }
    return text;
}

namespace {

struct voice {
    std::string name;
    int speed = 160; // words per minute
    int pitch = 50;
};

constexpr std::string_view voices[] = {"en-us",      "en-gb",  "en-gb-scotland",
                                       "en-gb-x-rp", "en-029", "en-gb-x-gbclan"};

voice pick_voice(std::mt19937_64& g) {
    voice v;
    v.name = voices[next(g, std::size(voices))];
    v.speed = 140 + static_cast<int>(next(g, 41));
    v.pitch = 30 + static_cast<int>(next(g, 41));
    return v;
}

audio speak(const fs::path& espeak, const voice& v, const std::string& text, const fs::path& wav) {
    run_program(espeak, {"-v", v.name, "-s", std::to_string(v.speed), "-p", std::to_string(v.pitch),
                         "-w", wav.string(), text});
    auto a = read_wav_mono(wav);
    fs::remove(wav);
    return a;
}

} // namespace

std::size_t synthesize(const synth_options& o) {
    const auto espeak = o.espeak.find('/') != std::string::npos ? std::optional<fs::path>(o.espeak)
                                                                : find_program(o.espeak);
    if (!espeak)
        throw std::runtime_error(
            fmt::format("{} is not installed (Debian: apt-get install espeak-ng)", o.espeak));
    std::string version = run_program(*espeak, {"--version"});
    version = version.substr(0, version.find("  Data at")); // drop the host's data path
    while (!version.empty() && (version.back() == '\n' || version.back() == ' '))
        version.pop_back();
    fs::create_directories(o.output / "audio");
    const fs::path scratch = o.output / ".scratch.wav";
    std::string manifest;
    json::array samples;
    std::mt19937_64 g(o.seed);
    for (std::size_t s = 0; s < o.subsets; ++s) {
        for (std::size_t k = 0; k < o.per_subset; ++k) {
            const std::string id = fmt::format("s{}-{:04}", s, k);
            const std::string subset = fmt::format("subset-{}", s);
            const double span = o.max_s - o.min_s;
            const double target = o.min_s + span * double(next(g, 1'000'001)) / 1e6;
            const voice main = pick_voice(g), other = pick_voice(g);
            const std::uint64_t text_seed = g(), other_seed = g();
            // Words for the target at the voice's speed; one more try with more words when the
            // speech came out shorter than the minimum.
            auto count = static_cast<std::size_t>(std::max(1.0, target * main.speed / 60.0));
            std::string text;
            audio speech;
            for (int attempt = 0; attempt < 4; ++attempt) {
                text = seeded_text(text_seed, count);
                speech = speak(*espeak, main, text, scratch);
                if (speech.duration_s() >= o.min_s || speech.duration_s() <= 0)
                    break;
                count = static_cast<std::size_t>(
                    double(count) * std::max(1.1, o.min_s / std::max(0.1, speech.duration_s())) +
                    1);
            }
            const auto clean = runtime::resample(speech.samples, speech.rate, input_rate);
            // The overlap: a second voice, at half the level, over the middle of the sample.
            const auto other_text = seeded_text(
                other_seed, std::max<std::size_t>(
                                1, static_cast<std::size_t>(speech.duration_s() * 0.4 * 2.5)));
            const auto second = speak(*espeak, other, other_text, scratch);
            const auto second16 = runtime::resample(second.samples, second.rate, input_rate);
            std::vector<float> mixed = clean;
            const std::size_t offset = clean.size() * 3 / 10;
            for (std::size_t i = 0; i < second16.size() && offset + i < mixed.size(); ++i)
                mixed[offset + i] = 0.7f * mixed[offset + i] + 0.5f * second16[i];
            const fs::path dir = o.output / "audio" / id;
            fs::create_directories(dir);
            runtime::write_wav_float_as_pcm16(dir / "clean.wav", clean, input_rate);
            runtime::write_wav_float_as_pcm16(dir / "overlap.wav", mixed, input_rate);
            json::object line{
                {"id", id},
                {"subset", subset},
                {"text", text},
                {"variants", json::object{{"clean", "audio/" + id + "/clean.wav"},
                                          {"overlap", "audio/" + id + "/overlap.wav"}}}};
            manifest += json::serialize(line) + "\n";
            samples.push_back(json::object{
                {"id", id},
                {"duration_s", double(clean.size()) / input_rate},
                {"voice", main.name},
                {"speed_wpm", main.speed},
                {"pitch", main.pitch},
                {"overlap_voice", other.name},
                {"overlap_text", other_text},
                {"normalization",
                 json::object{{"source_sample_rate", speech.rate},
                              {"target_sample_rate", input_rate},
                              {"resampler", speech.rate == input_rate
                                                ? "none"
                                                : "libsamplerate SRC_SINC_BEST_QUALITY"},
                              {"format", "pcm16 mono"}}}});
        }
    }
    std::ofstream(o.output / "manifest.jsonl", std::ios::binary) << manifest;
    json::object meta{{"schema_version", 1},
                      {"kind", "pacer-synthetic-speech"},
                      {"generator", version},
                      {"seed", o.seed},
                      {"subsets", o.subsets},
                      {"per_subset", o.per_subset},
                      {"min_s", o.min_s},
                      {"max_s", o.max_s},
                      {"variants", json::array{"clean", "overlap"}},
                      {"samples", std::move(samples)}};
    std::ofstream(o.output / "dataset.json", std::ios::binary) << json::serialize(meta) << "\n";
    return o.subsets * o.per_subset;
}

int synth_dataset(synth_options o, bool dry_run) {
    if (o.output.empty())
        throw bad_input("-o/--output is required");
    if (!(o.min_s <= o.max_s))
        throw bad_input(fmt::format("--min-s {:g} must not exceed --max-s {:g}", o.min_s, o.max_s));
    if (fs::exists(o.output))
        throw bad_input(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            o.output.string()));
    const auto espeak = find_program("espeak-ng");
    if (!espeak)
        throw bad_input("espeak-ng is not installed (Debian: apt-get install espeak-ng)");
    // About 32 kB a second per variant, two variants.
    const auto bytes =
        static_cast<std::uint64_t>(double(o.subsets * o.per_subset) * o.max_s * 2 * 32000) + 4096;
    runtime::ensure_free_space(o.output, bytes, "16 kHz WAVs of both variants of every sample",
                               "synthesize fewer or shorter samples, or choose another disk");
    if (dry_run) {
        fmt::print("pacer dataset synth --dry-run: checked; nothing started, nothing written\n");
        fmt::print("  samples    {} subset(s) x {} = {}, {:g} to {:g} s each, seed {}\n", o.subsets,
                   o.per_subset, o.subsets * o.per_subset, o.min_s, o.max_s, o.seed);
        fmt::print("  variants   clean, overlap (a second voice over the middle)\n");
        fmt::print("  speech     {}\n", espeak->string());
        fmt::print("  output     {} (manifest.jsonl, dataset.json, audio/<id>/), at most {}\n",
                   o.output.string(), format_bytes(bytes));
        return runtime::exit_ok;
    }
    runtime::create_output_dir(o.output);
    o.espeak = espeak->string();
    const auto n = synthesize(o);
    fmt::print("{} sample(s) x 2 variants in {} (manifest.jsonl)\n", n, o.output.string());
    return runtime::exit_ok;
}

} // namespace pacer::record
