// `pacer merge`: pools the raw samples of runs that streamed at the same time.

#include <pacer/cli/checks.hpp>
#include <pacer/cli/commands.hpp>
#include <pacer/cli/output.hpp>
#include <pacer/metrics/merge.hpp>

#include <boost/json/serialize.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <span>

namespace pacer::cli {

namespace fs = std::filesystem;

namespace {

struct merge_settings {
    std::vector<std::string> inputs;
    std::string output;
    bool allow_clock_skew = false;
    double max_clock_error_ms = 10;
    bool dry_run = false;
};

// What `merge` would do, as checked: `--dry-run` prints it instead of writing.
void print_merge_plan(const merge_settings& s, std::span<const metrics::run_part> parts) {
    fmt::print("pacer merge --dry-run: checked; nothing written\n");
    for (std::size_t i = 0; i < parts.size(); ++i)
        fmt::print("  part       {}\n", s.inputs[i]);
    fmt::print("  clocks     agree within {:g} ms{}\n", s.max_clock_error_ms,
               s.allow_clock_skew ? " (or skew allowed)" : "");
    fmt::print("  output     {}/summary.json\n", s.output);
}

int run_merge(const merge_settings& s) {
    if (s.inputs.empty())
        throw usage_error("merge needs at least one run folder");
    if (fs::exists(s.output))
        throw usage_error(fmt::format(
            "--output {} already exists; pacer never overwrites results: choose a new folder",
            s.output));
    std::vector<metrics::run_part> parts;
    for (const auto& in : s.inputs) {
        try {
            parts.push_back(metrics::read_run_part(in));
        } catch (const std::runtime_error& e) {
            throw usage_error(e.what());
        }
    }
    try {
        metrics::check_clocks(parts, s.max_clock_error_ms / 1e3, s.allow_clock_skew);
    } catch (const std::runtime_error& e) {
        throw usage_error(e.what());
    }
    if (s.dry_run) {
        print_merge_plan(s, parts);
        return exit_ok;
    }
    auto merged = metrics::merge_parts(parts);
    merged["clock_check"] = boost::json::object{{"max_error_s", s.max_clock_error_ms / 1e3},
                                                {"allow_clock_skew", s.allow_clock_skew}};
    create_output_dir(s.output);
    write_new_file(fs::path(s.output) / "summary.json", boost::json::serialize(merged) + "\n");
    const auto& p = merged.at("pacing").as_object();
    const auto& dev = p.at("pacing_abs_deviation_s").as_object();
    auto ms = [](const boost::json::value& v) {
        return v.is_null() ? std::string("-")
                           : fmt::format("{:.2f} ms", v.to_number<double>() * 1e3);
    };
    fmt::print("pacer merge: {} parts\n", parts.size());
    fmt::print("  sessions   {} complete of {}\n",
               p.at("sessions").at("complete").to_number<double>(),
               p.at("sessions").at("requested").to_number<double>());
    fmt::print("  packets    {} sent, {} late (> 80 ms) -> {}\n",
               p.at("packets").at("sent").to_number<double>(),
               p.at("packets").at("late").to_number<std::uint64_t>(),
               merged.at("pacing_qualified").as_bool() ? "PACING QUALIFIED" : "PACING UNQUALIFIED");
    fmt::print("  |dev|      p50 {}  p99 {}  p99.9 {}  max {}  (pooled)\n", ms(dev.at("p50")),
               ms(dev.at("p99")), ms(dev.at("p99.9")), ms(dev.at("max")));
    fmt::print("  overlap    {} input streams at once at the peak\n",
               p.at("peak_overlapping_input_streams").to_number<std::uint64_t>());
    fmt::print("  results    {}\n", (fs::path(s.output) / "summary.json").string());
    return merged.at("pacing_qualified").as_bool() ? exit_ok : exit_unqualified;
}

} // namespace

command add_merge_command(CLI::App& app) {
    auto s = std::make_shared<merge_settings>();
    auto* sub = app.add_subcommand(
        "merge", "Pool the raw samples of runs that streamed at the same time (worker processes or "
                 "shards on several hosts): percentiles over every packet of every part, late "
                 "packets, sessions, and the peak number of overlapping input streams, aligned on "
                 "the wall clock with each part's recorded (monotonic, realtime) pair.");
    sub->add_option("runs", s->inputs, "Run folders (each with summary.json and samples.json)")
        ->required();
    sub->add_option("-o,--output", s->output, "New folder for the pooled summary.json")->required();
    sub->add_option("--max-clock-error-ms", s->max_clock_error_ms,
                    "Parts from several hosts: each host's realtime clock must be NTP-synchronised "
                    "with at most this maximum error (as recorded by adjtimex at its run)")
        ->check(number_in(0, max_ms))
        ->capture_default_str();
    sub->add_flag("--allow-clock-skew", s->allow_clock_skew,
                  "Merge parts from several hosts even when their clocks are not known to agree");
    add_dry_run_flag(*sub, s->dry_run);
    return {sub, [s] { return run_merge(*s); }};
}

} // namespace pacer::cli
