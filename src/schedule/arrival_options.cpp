// The open-loop arrival options checked into a schedule, for every command (arrival_options.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/units.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/schedule/arrival_options.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace pacer::schedule {

namespace {

// --stages, or --rate with the count or --duration.
void take_rate_and_length(const arrival_options& o, const arrival_command& c, schedule_spec& spec) {
    if (o.stages) {
        if (o.rate || o.duration)
            throw bad_input(
                fmt::format("--stages sets the rate and the length of the schedule: drop --rate{}",
                            c.has_duration ? " and --duration" : ""));
        spec.stages = parse_stages(*o.stages);
        return;
    }
    if (!o.rate)
        throw bad_input(fmt::format("{} needs --rate R (arrivals per second){}", c.name,
                                    c.replays ? ", --stages or --schedule FILE" : " or --stages"));
    if (!o.count && !o.duration)
        throw bad_input(
            c.has_duration
                ? fmt::format("{} needs {} N or --duration D (or both)", c.name, c.count_flag)
                : fmt::format("{} needs {} N (how many arrivals)", c.name, c.count_flag));
    spec.rate = *o.rate;
}

} // namespace

schedule_spec spec_from(const arrival_options& o, const arrival_command& c) {
    schedule_spec spec;
    const std::string arrival = o.arrival.value_or("poisson");
    const auto process = parse_arrival_process(arrival);
    if (!process)
        throw bad_input(
            fmt::format("--arrival must be poisson, gamma or constant (got '{}')", arrival));
    spec.process = *process;
    if (o.burstiness && spec.process != arrival_process::gamma)
        throw bad_input(fmt::format(
            "--burstiness applies only to --arrival gamma (got --arrival {})", arrival));
    take_rate_and_length(o, c, spec);
    spec.burstiness = o.burstiness.value_or(1);
    spec.seed = o.seed;
    if (o.count) {
        if (*o.count <= 0)
            throw bad_input(fmt::format("{} must be > 0, got {}", c.count_flag, *o.count));
        spec.count = static_cast<std::uint64_t>(*o.count);
    }
    if (o.duration) {
        const auto d = parse_duration(*o.duration);
        if (!d)
            throw bad_input(
                fmt::format("--duration must be a duration such as 60s, 1.5m or 250ms, got \"{}\"",
                            *o.duration));
        spec.duration = *d;
    }
    validate(spec);
    return spec;
}

std::optional<schedule_document> open_loop_of(const arrival_options& o, const arrival_command& c,
                                              const std::string& schedule_file) {
    if (!schedule_file.empty()) {
        if (o.asked())
            throw bad_input(
                fmt::format("--schedule replays a saved schedule: drop --arrival/--rate/--stages/"
                            "--burstiness/{}{}",
                            c.count_flag, c.has_duration ? "/--duration" : ""));
        return read_schedule_file(schedule_file);
    }
    if (!o.asked() && c.may_be_closed)
        return std::nullopt;
    schedule_document doc;
    doc.spec = spec_from(o, c);
    doc.offsets = make_schedule(doc.spec);
    doc.sha256 = schedule_sha256(doc.offsets);
    return doc;
}

} // namespace pacer::schedule
