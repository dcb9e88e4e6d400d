// `pacer dataset synth`: a reproducible synthetic speech dataset for `pacer record`
// (docs/recording.md). The options; their checks, the plan and the synthesis are module
// `record`'s (record::synth_dataset, src/record/dataset.cpp).

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/record/dataset.hpp>

#include <CLI/CLI.hpp>

namespace pacer::cli {

namespace {

// The options as CLI11 fills them (-o as typed; record::synth_options holds a path).
struct dataset_settings {
    record::synth_options synth;
    std::string output;
    bool dry_run = false;
};

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
    synth_cmd->add_option("--subsets", s->synth.subsets, "Subsets")
        ->check(whole_number(1, 1000))
        ->capture_default_str();
    synth_cmd->add_option("--per-subset", s->synth.per_subset, "Samples per subset")
        ->check(whole_number(1, 100000))
        ->capture_default_str();
    synth_cmd->add_option("--min-s", s->synth.min_s, "Shortest sample, seconds (about)")
        ->check(number_in(0, 3600, true))
        ->capture_default_str();
    synth_cmd->add_option("--max-s", s->synth.max_s, "Longest sample, seconds (about)")
        ->check(number_in(0, 3600, true))
        ->capture_default_str();
    synth_cmd->add_option("--seed", s->synth.seed, "Seed of the text, voices, speeds and lengths")
        ->check(whole_number(0, UINT64_MAX))
        ->capture_default_str();
    synth_cmd->add_option("-o,--output", s->output, "Dataset folder; must not exist")
        ->required()
        ->check(non_empty_path());
    add_dry_run_flag(*synth_cmd, s->dry_run);
    return {synth_cmd, [s] {
                auto o = s->synth;
                o.output = s->output;
                return record::synth_dataset(std::move(o), s->dry_run);
            }};
}

} // namespace pacer::cli
