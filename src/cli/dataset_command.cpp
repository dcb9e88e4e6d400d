// `pacer dataset synth`: a reproducible synthetic speech dataset for `pacer record`
// (docs/recording.md).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/core/units.hpp>
#include <pacer/record/dataset.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

struct dataset_settings {
    std::size_t subsets = 4;
    std::size_t per_subset = 2;
    double min_s = 20;
    double max_s = 60;
    std::uint64_t seed = 1;
    std::string output;
    bool dry_run = false;
};

int synth(const dataset_settings& s) {
    if (s.output.empty())
        throw usage_error("-o/--output is required");
    if (!(s.min_s <= s.max_s))
        throw usage_error(
            fmt::format("--min-s {:g} must not exceed --max-s {:g}", s.min_s, s.max_s));
    const fs::path out(s.output);
    if (fs::exists(out))
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            out.string()));
    const auto espeak = record::find_program("espeak-ng");
    if (!espeak)
        throw usage_error("espeak-ng is not installed (Debian: apt-get install espeak-ng)");
    // About 32 kB a second per variant, two variants.
    const auto bytes =
        static_cast<std::uint64_t>(double(s.subsets * s.per_subset) * s.max_s * 2 * 32000) + 4096;
    ensure_free_space(out, bytes, "16 kHz WAVs of both variants of every sample",
                      "synthesize fewer or shorter samples, or choose another disk");
    if (s.dry_run) {
        fmt::print("pacer dataset synth --dry-run: checked; nothing started, nothing written\n");
        fmt::print("  samples    {} subset(s) x {} = {}, {:g} to {:g} s each, seed {}\n", s.subsets,
                   s.per_subset, s.subsets * s.per_subset, s.min_s, s.max_s, s.seed);
        fmt::print("  variants   clean, overlap (a second voice over the middle)\n");
        fmt::print("  speech     {}\n", espeak->string());
        fmt::print("  output     {} (manifest.jsonl, dataset.json, audio/<id>/), at most {}\n",
                   out.string(), format_bytes(bytes));
        return runtime::exit_ok;
    }
    create_output_dir(out);
    record::synth_options o;
    o.subsets = s.subsets;
    o.per_subset = s.per_subset;
    o.min_s = s.min_s;
    o.max_s = s.max_s;
    o.seed = s.seed;
    o.output = out;
    o.espeak = espeak->string();
    const auto n = record::synthesize(o);
    fmt::print("{} sample(s) x 2 variants in {} (manifest.jsonl)\n", n, out.string());
    return runtime::exit_ok;
}

} // namespace

command add_dataset_command(CLI::App& app) {
    auto s = std::make_shared<dataset_settings>();
    auto* sub = app.add_subcommand(
        "dataset", "Datasets for pacer record (docs/recording.md). `pacer dataset synth` makes a "
                   "reproducible synthetic one with espeak-ng.");
    sub->require_subcommand(1, 1);
    auto* synth_cmd = sub->add_subcommand(
        "synth",
        "Synthetic speech with espeak-ng: seeded text, voice, speed and pitch per sample; "
        "variants clean and overlap (a second voice over the middle), 16 kHz mono PCM16 "
        "(resampled with libsamplerate); manifest.jsonl and dataset.json. The same seed and "
        "espeak-ng version give the same files.\n"
        "Exit status: 0 written; 1 espeak-ng or a file failed; 2 bad input (nothing written).");
    synth_cmd->add_option("--subsets", s->subsets, "Subsets")
        ->check(whole_number(1, 1000))
        ->capture_default_str();
    synth_cmd->add_option("--per-subset", s->per_subset, "Samples per subset")
        ->check(whole_number(1, 100000))
        ->capture_default_str();
    synth_cmd->add_option("--min-s", s->min_s, "Shortest sample, seconds (about)")
        ->check(number_in(0, 3600, true))
        ->capture_default_str();
    synth_cmd->add_option("--max-s", s->max_s, "Longest sample, seconds (about)")
        ->check(number_in(0, 3600, true))
        ->capture_default_str();
    synth_cmd->add_option("--seed", s->seed, "Seed of the text, voices, speeds and lengths")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str();
    synth_cmd->add_option("-o,--output", s->output, "Dataset folder; must not exist")
        ->required()
        ->check(non_empty_path());
    add_dry_run_flag(*synth_cmd, s->dry_run);
    return {synth_cmd, [s] { return synth(*s); }};
}

} // namespace pacer::cli
