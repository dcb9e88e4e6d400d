// `pacer schedule` executed (see arrival_options.hpp): the options checked into a schedule, then
// the schedule or its `--dry-run` plan printed.

#include <pacer/runtime/exit_status.hpp>
#include <pacer/schedule/arrival_options.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include <fmt/core.h>

#include <cstdio>
#include <span>
#include <stdexcept>

namespace pacer::schedule {

namespace {

// What `schedule` would print, as checked: `--dry-run` prints this instead of the schedule.
void print_schedule_plan(const schedule_request& o, const schedule_spec& spec,
                         std::span<const std::chrono::nanoseconds> offsets) {
    fmt::print("pacer schedule --dry-run: checked; the schedule is not printed\n");
    fmt::print("  arrivals   {} ({} at {}, burstiness {:g}, seed {}){}\n", offsets.size(),
               to_string(spec.process), rate_text(spec), spec.burstiness, spec.seed,
               offsets.empty() ? std::string()
                               : fmt::format(", last at {:.3f} s",
                                             static_cast<double>(offsets.back().count()) / 1e9));
    fmt::print("  format     {}, sha256 {}\n", o.format, schedule_sha256(offsets));
}

} // namespace

int print_schedule(const schedule_request& o) {
    const arrival_command command{"pacer schedule", "--count", true, false, false};
    const auto doc = open_loop_of(o.arrivals, command, "");
    const auto& spec = doc->spec;
    const auto& offsets = doc->offsets;

    if (o.dry_run) {
        print_schedule_plan(o, spec, offsets);
        return runtime::exit_ok;
    }
    const std::string text = o.format == "json" ? to_json(spec, offsets) : to_csv(offsets);
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout))
        throw std::runtime_error("cannot write the schedule to stdout");
    return runtime::exit_ok;
}

} // namespace pacer::schedule
