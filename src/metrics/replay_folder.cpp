// `pacer replay DIR` checked (see replay.hpp): the folder, the session folders it holds, the
// profile the run recorded, the output; then the `--dry-run` plan or execute_replay.

#include <pacer/core/bad_input.hpp>
#include <pacer/metrics/replay.hpp>
#include <pacer/metrics/summary_file.hpp>
#include <pacer/protocol/events.hpp>
#include <pacer/runtime/exit_status.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace pacer::metrics {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

bool is_session_folder(const fs::path& dir) {
    std::error_code ec;
    return fs::exists(dir / "trace.jsonl", ec) || fs::exists(dir / "input-send-receipts.json", ec);
}

bool is_session_name(const std::string& name) {
    return name.size() > 8 && name.rfind("session-", 0) == 0 &&
           std::all_of(name.begin() + 8, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `input_duration_s` of a run's summary.json (in `dir` or its parent), if there is one.
std::optional<double> run_input_duration(const fs::path& run_dir) {
    const auto summary = read_summary(run_dir);
    const auto* o = summary.object();
    return o ? metrics::recorded_input_duration(*o) : std::nullopt;
}

// The profile a run or serving level recorded in its summary.json (in `run_dir`): `profile`
// (a level of `pacer serve`) or `config.profile` (`pacer run`). Nullptr: none recorded (an
// older run, or no readable summary). A recorded name pacer does not know is bad input.
const protocol::profile* recorded_profile(const fs::path& run_dir) {
    const auto summary = read_summary(run_dir);
    const auto* o = summary.object();
    if (!o)
        return nullptr;
    if (const auto wire = recorded_protocol(*o); wire && *wire != "native")
        throw bad_input(fmt::format("{} was recorded with --protocol {}: replay checks the "
                                    "native protocol only (that summary.json has the "
                                    "protocol's own checks)",
                                    summary.path.string(), *wire));
    const json::value* name = recorded_profile_name(*o);
    if (!name)
        return nullptr;
    const auto* p = name->is_string() ? protocol::find_profile(name->get_string()) : nullptr;
    if (!p || p->name == "qwen3-omni-half-duplex")
        throw bad_input(fmt::format("{} records the profile {}, which replay does not check",
                                    summary.path.string(), json::serialize(*name)));
    return p;
}

// What `replay` would do, as checked: `--dry-run` prints it instead of reading the traces.
void print_replay_plan(const replay_request& s, const protocol::profile& profile,
                       std::span<const std::pair<std::string, fs::path>> sessions,
                       std::optional<double> input_duration, const fs::path& output) {
    fmt::print("pacer replay --dry-run: checked; nothing read past the folder list, nothing "
               "written\n");
    fmt::print("  source     {} ({} session(s): {}{})\n", s.dir, sessions.size(),
               sessions.front().first, sessions.size() > 1 ? " ... " + sessions.back().first : "");
    fmt::print("  profile    {}, startup reserve {:g} ms, input {}\n", profile.name,
               s.startup_reserve_ms,
               input_duration ? fmt::format("{:.2f} s (from summary.json)", *input_duration)
                              : std::string("length unknown (no summary.json)"));
    fmt::print("  output     {}\n", output.string());
}

} // namespace

int replay_folder(const replay_request& s) {
    const fs::path dir(s.dir);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw bad_input(fmt::format("cannot read {}: no such folder", dir.string()));
    // The profile: the one the run recorded; --profile may only repeat it (judging a session
    // by another profile than the one its client negotiated would be meaningless).
    const bool single_session = is_session_folder(dir);
    fs::path folder = fs::absolute(dir).lexically_normal();
    if (folder.filename().empty()) // `DIR/`: the folder itself, not an empty last name
        folder = folder.parent_path();
    const fs::path run_dir = single_session ? folder.parent_path() : dir;
    const auto* recorded = recorded_profile(run_dir);
    const protocol::profile* profile = recorded ? recorded : &protocol::default_profile();
    if (!s.profile.empty()) {
        profile = protocol::find_profile(s.profile);
        if (!profile)
            throw bad_input(fmt::format("--profile '{}' is unknown", s.profile));
        if (profile->name == "qwen3-omni-half-duplex")
            throw bad_input(
                "--profile qwen3 uses the legacy protocol, which replay does not check");
        if (recorded && recorded != profile)
            throw bad_input(fmt::format(
                "--profile {} contradicts the profile {} recorded in {}: drop --profile",
                profile->name, recorded->name, (run_dir / "summary.json").string()));
    }
    const char* profile_source = recorded ? "recorded" : s.profile.empty() ? "default" : "flag";
    if (!(s.startup_reserve_ms >= 0))
        throw bad_input("--startup-reserve-ms must be >= 0");
    const fs::path output = s.output.empty() ? dir / "report.json" : fs::path(s.output);
    if (fs::exists(output, ec))
        throw bad_input(fmt::format(
            "{} already exists; pacer never overwrites results: choose another --output",
            output.string()));

    std::vector<std::pair<std::string, fs::path>> sessions;
    std::optional<double> input_duration;
    if (single_session) {
        const auto name = folder.filename().string();
        sessions.emplace_back(name.empty() ? std::string("session") : name, dir);
        input_duration = run_input_duration(run_dir);
    } else {
        for (const auto& entry : fs::directory_iterator(dir, ec))
            if (entry.is_directory() && is_session_name(entry.path().filename().string()))
                sessions.emplace_back(entry.path().filename().string(), entry.path());
        if (ec)
            throw bad_input(fmt::format("cannot read {}: {}", dir.string(), ec.message()));
        std::sort(sessions.begin(), sessions.end());
        if (sessions.empty())
            throw bad_input(fmt::format(
                "{} holds neither trace.jsonl nor session-NNN/ folders (was the run kept with "
                "--keep-traces?)",
                dir.string()));
        input_duration = run_input_duration(dir);
    }

    if (s.dry_run) {
        print_replay_plan(s, *profile, sessions, input_duration, output);
        return runtime::exit_ok;
    }
    replay_job job;
    job.sessions = std::move(sessions);
    job.profile = profile;
    job.profile_source = profile_source;
    job.profile_origin = recorded            ? "recorded in " + (run_dir / "summary.json").string()
                         : s.profile.empty() ? std::string("the default: no profile recorded")
                                             : std::string("--profile");
    job.source = dir;
    job.context.input_duration_s = input_duration;
    job.context.startup_reserve_s = s.startup_reserve_ms / 1000.0;
    job.output = output;
    return execute_replay(job);
}

} // namespace pacer::metrics
