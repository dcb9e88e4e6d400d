#include <pacer/core/base64.hpp>
#include <pacer/metrics/oracle.hpp>
#include <pacer/record/dataset.hpp>
#include <pacer/record/postprocess.hpp>
#include <pacer/record/postprocess_command.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/resources.hpp>
#include <pacer/trace/receipts.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sched.h>
#include <spawn.h>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace pacer::record {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::string_view string_field(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

std::string read_whole(const fs::path& p) {
    auto text = runtime::read_file_if_exists(p);
    if (!text)
        throw std::runtime_error(fmt::format("cannot read {}", p.string()));
    return std::move(*text);
}

void write_whole(const fs::path& p, std::string_view text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush())
        throw std::runtime_error(fmt::format("cannot write {}", p.string()));
}

json::array strings(const std::vector<std::string>& v) {
    json::array a;
    for (const auto& s : v)
        a.emplace_back(s);
    return a;
}

} // namespace

output_reconstruction reconstruct_output(std::span<const metrics::trace_line> trace, int rate,
                                         double reserve_s) {
    output_reconstruction r;
    std::optional<double> first_send;
    const double bytes_per_s = 2.0 * rate;
    double play_end = 0; // when the audio queued so far ends playing
    bool started = false;
    for (const auto& l : trace) {
        const auto type = string_field(l.event, "type");
        if (l.direction == "send" && type == "input_audio_buffer.append" && !first_send)
            first_send = l.time_s;
        if (l.direction != "receive")
            continue;
        if (type == "response.output_audio_transcript.delta" ||
            type == "response.output_text.delta") {
            r.transcript += string_field(l.event, "delta");
            continue;
        }
        if (type != "response.output_audio.delta")
            continue;
        auto bytes = base64_decode(string_field(l.event, "delta"));
        if (!bytes || bytes->size() % 2) {
            r.errors.push_back(
                fmt::format("trace line {}: undecodable output audio delta", l.line));
            continue;
        }
        if (bytes->empty())
            continue;
        if (!started) {
            started = true;
            if (first_send)
                r.initial_delay_s = l.time_s - *first_send;
            play_end = l.time_s + reserve_s;
        } else if (l.time_s > play_end + metrics::playback_epsilon_s) {
            // The player ran dry: silence until this packet arrives.
            const double gap = l.time_s - play_end;
            const auto samples = static_cast<std::size_t>(std::llround(gap * rate));
            r.playout.insert(r.playout.end(), samples * 2, 0);
            ++r.underruns;
            r.underrun_s += gap;
            play_end = l.time_s;
        }
        r.media.insert(r.media.end(), bytes->begin(), bytes->end());
        r.playout.insert(r.playout.end(), bytes->begin(), bytes->end());
        play_end += double(bytes->size()) / bytes_per_s;
    }
    return r;
}

std::string variant_status(const status_inputs& in) {
    if (in.preparation_error)
        return "error";
    if (in.input_too_long)
        return "invalid";
    if (in.session_error || in.postprocess_error)
        return "error";
    if (in.artifact_errors > 0)
        return "fail";
    if (in.verdict == "pass" || in.verdict == "fail" || in.verdict == "not_exercised")
        return in.verdict;
    return "error";
}

json::object process_variant(const variant_job& job) {
    const auto& profile = job.profile ? *job.profile : protocol::default_profile();
    const std::string trace_text = read_whole(job.dir / "continuous.jsonl");
    const std::string receipts_text = read_whole(job.dir / "input-send-receipts.json");
    const std::string input = read_whole(job.dir / "input.pcm");
    std::vector<std::string> errors = job.session_errors;
    // Artifact checks (docs/recording.md): an empty or odd input, unreadable trace lines,
    // receipts that do not match the traced appends, sent audio that is not the input, the
    // input pacing deviation.
    if (input.empty() || input.size() % 2)
        errors.emplace_back("input.pcm is empty or has an odd size");
    auto parsed = metrics::parse_trace(trace_text);
    for (auto& e : parsed.errors)
        errors.push_back(std::move(e));
    trace::send_receipts receipts;
    try {
        receipts = trace::parse_receipts(receipts_text, trace::receipt_rules::any_client);
    } catch (const std::runtime_error& e) {
        errors.push_back(fmt::format("input-send-receipts.json: {}", e.what()));
    }
    std::string sent;
    std::size_t appends = 0;
    for (const auto& l : parsed.lines)
        if (l.direction == "send" && string_field(l.event, "type") == "input_audio_buffer.append") {
            const auto bytes = base64_decode(string_field(l.event, "audio"));
            if (bytes)
                sent += *bytes;
            else
                errors.push_back(fmt::format("trace line {}: undecodable append audio", l.line));
            if (appends < receipts.appends.size() && receipts.appends[appends].start_s != l.time_s)
                errors.push_back(
                    fmt::format("receipt {}: start_s differs from the trace time", appends));
            ++appends;
        }
    if (appends != receipts.appends.size())
        errors.push_back(fmt::format("receipts list {} appends, the trace {}",
                                     receipts.appends.size(), appends));
    if (appends > 0 && sent != input)
        errors.emplace_back("the sent audio is not input.pcm");
    const auto pacing = metrics::pacing_deviation(parsed.lines);
    if (pacing.error)
        errors.push_back(*pacing.error);

    const auto oracle = metrics::evaluate_trace(parsed.lines, profile);
    metrics::session_params context;
    context.input_duration_s = job.input_duration_s;
    context.startup_reserve_s = job.startup_reserve_s;
    const auto serving = metrics::compute_session_metrics(parsed.lines, receipts, profile, context);

    auto out = reconstruct_output(parsed.lines, profile.output_sample_rate, job.startup_reserve_s);
    for (auto& e : out.errors)
        errors.push_back(std::move(e));
    runtime::write_wav_pcm16(job.dir / "output-media.wav", out.media, profile.output_sample_rate);
    runtime::write_wav_pcm16(job.dir / "output-playout.wav", out.playout,
                             profile.output_sample_rate);
    const double rate = profile.output_sample_rate;
    json::object playout{{"sample_rate", profile.output_sample_rate},
                         {"startup_reserve_s", job.startup_reserve_s},
                         {"media_duration_s", double(out.media.size()) / (2 * rate)},
                         {"playout_duration_s", double(out.playout.size()) / (2 * rate)},
                         {"underruns", out.underruns},
                         {"underrun_s", out.underrun_s}};
    write_whole(job.dir / "playout.json", json::serialize(playout) + "\n");
    write_whole(job.dir / "transcript.json",
                json::serialize(
                    json::object{{"text", out.transcript},
                                 {"source", profile.continuous ? "response.output_audio_transcript"
                                                               : "response.output_text"}}) +
                    "\n");

    status_inputs si;
    si.artifact_errors = errors.size();
    si.verdict = oracle.verdict;
    const std::string status = variant_status(si);
    json::object timing{{"appends", pacing.deviations_s.size()},
                        {"max_abs_deviation_s", pacing.max_abs_deviation_s},
                        {"within_tolerance", pacing.within_tolerance},
                        {"pacing_tolerance_s", metrics::pacing_tolerance_s}};
    json::object c{
        {"id", "continuous"},
        {"scenario", "continuous"},
        {"status", status},
        {"violations", strings(oracle.violations)},
        {"coverage", json::object{{"input_output_overlap", oracle.input_output_overlap}}},
        {"metrics", oracle.metrics_json()},
        {"artifact_errors", strings(errors)},
        {"input_timing", timing},
        {"serving", serving.to_json()}};
    json::object report{{"schema_version", 1},
                        {"command", "record"},
                        {"profile", profile.name},
                        {"source", job.dir.string()},
                        {"cases", json::array{c}},
                        {"summary", json::object{{"selected", 1},
                                                 {"passed", status == "pass"},
                                                 {"failed", status == "fail"},
                                                 {"not_exercised", status == "not_exercised"}}}};
    write_whole(job.dir / "report.json", json::serialize(report) + "\n");

    std::size_t denials = oracle.admission_denials;
    return json::object{
        {"status", status},
        {"protocol_verdict", oracle.verdict},
        {"qualified", status == "pass"},
        {"errors", strings(errors)},
        {"violations", strings(oracle.violations)},
        {"input_timing", std::move(timing)},
        {"output",
         json::object{{"media_duration_s", playout.at("media_duration_s")},
                      {"playout_duration_s", playout.at("playout_duration_s")},
                      {"underruns", out.underruns},
                      {"initial_delay_s", out.initial_delay_s ? json::value(*out.initial_delay_s)
                                                              : json::value(nullptr)},
                      {"admission_denials", denials}}}};
}

// ---- the worker process -------------------------------------------------------------------

namespace {

bool read_line(int fd, std::string& buffer, std::string& line) {
    for (;;) {
        if (const auto nl = buffer.find('\n'); nl != std::string::npos) {
            line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            return true;
        }
        char chunk[4096];
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        buffer.append(chunk, static_cast<std::size_t>(n));
    }
}

bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        const ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        text.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

} // namespace

int worker_loop(int in_fd, int out_fd) {
    std::string buffer, line;
    while (read_line(in_fd, buffer, line)) {
        json::object summary;
        std::string dir;
        try {
            const auto v = json::parse(line);
            const auto& o = v.as_object();
            dir = std::string(o.at("dir").as_string());
            variant_job job;
            job.dir = dir;
            job.profile = protocol::find_profile(o.at("profile").as_string());
            job.input_duration_s = o.at("input_duration_s").to_number<double>();
            job.startup_reserve_s = o.at("startup_reserve_s").to_number<double>();
            if (const auto* e = o.if_contains("session_errors"))
                for (const auto& x : e->as_array())
                    job.session_errors.emplace_back(x.as_string());
            std::string command;
            if (const auto* c = o.if_contains("command"); c && c->is_string())
                command = std::string(c->get_string());
            summary = postprocess_variant(job, command);
        } catch (const std::exception& e) {
            summary = {{"status", "error"},
                       {"errors", json::array{fmt::format("post-processing: {}", e.what())}}};
        }
        summary["dir"] = dir;
        // Its own CPU and its post-processing commands' (reaped children).
        rusage children{};
        ::getrusage(RUSAGE_CHILDREN, &children);
        summary["cpu_s"] = runtime::read_process_usage().cpu_s +
                           double(children.ru_utime.tv_sec + children.ru_stime.tv_sec) +
                           double(children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e6;
        summary["worker_pid"] = static_cast<std::int64_t>(::getpid());
        if (!write_all(out_fd, json::serialize(summary) + "\n"))
            return 1;
    }
    return 0;
}

std::size_t default_worker_count() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::size_t cpus = 1;
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = static_cast<std::size_t>(CPU_COUNT(&set));
    return std::clamp<std::size_t>(cpus / 4, 1, 4);
}

worker_pool::worker_pool(const std::string& binary, std::size_t workers, done_fn done)
    : done_(std::move(done)) {
    for (std::size_t i = 0; i < workers; ++i) {
        int to[2], from[2];
        if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, to[0], 0);
        posix_spawn_file_actions_adddup2(&fa, from[1], 1);
        std::string b = binary, cmd = "record", flag = "--worker";
        char* argv[] = {b.data(), cmd.data(), flag.data(), nullptr};
        auto w = std::make_unique<worker>();
        const int rc = ::posix_spawn(&w->pid, b.c_str(), &fa, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(to[0]);
        ::close(from[1]);
        if (rc != 0) {
            ::close(to[1]);
            ::close(from[0]);
            finish();
            throw std::runtime_error(
                fmt::format("cannot start a post-processing worker {}: {}", b, std::strerror(rc)));
        }
        w->to = to[1];
        w->from = from[0];
        workers_.push_back(std::move(w));
    }
    for (auto& w : workers_)
        w->feeder = std::thread([this, p = w.get()] { feed(*p); });
}

worker_pool::~worker_pool() {
    finish();
}

void worker_pool::submit(json::object job) {
    {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(job));
    }
    cv_.notify_one();
}

void worker_pool::feed(worker& w) {
    std::string buffer, line;
    bool alive = true;
    for (;;) {
        json::object job;
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
            if (queue_.empty())
                return;
            job = std::move(queue_.front());
            queue_.pop_front();
        }
        json::object summary;
        if (alive && write_all(w.to, json::serialize(job) + "\n") &&
            read_line(w.from, buffer, line)) {
            std::error_code ec;
            const auto v = json::parse(line, ec);
            if (!ec && v.is_object())
                summary = v.get_object();
        } else {
            alive = false;
        }
        if (summary.empty())
            summary = {{"status", "error"},
                       {"errors", json::array{"the post-processing worker died"}}};
        done_(job, summary);
    }
}

double worker_pool::finish() {
    if (finished_)
        return cpu_s_;
    finished_ = true;
    {
        std::lock_guard lock(mutex_);
        closing_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) {
        if (w->feeder.joinable())
            w->feeder.join();
        ::close(w->to); // end of input: the worker exits
        ::close(w->from);
        int status = 0;
        rusage ru{};
        while (::wait4(w->pid, &status, 0, &ru) < 0 && errno == EINTR) {
        }
        cpu_s_ += double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    }
    return cpu_s_;
}

} // namespace pacer::record
