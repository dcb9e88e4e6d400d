#include <pacer/core/clock.hpp>
#include <pacer/record/postprocess_command.hpp>

#include <boost/json/array.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace pacer::record {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string tail_of(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes)
        return std::string(text);
    auto tail = text.substr(text.size() - max_bytes);
    if (const auto nl = tail.find('\n'); nl != std::string_view::npos && nl + 1 < tail.size())
        tail.remove_prefix(nl + 1);
    return std::string(tail);
}

namespace {

std::string file_tail(const fs::path& p, std::size_t max_bytes) {
    std::ifstream in(p, std::ios::binary | std::ios::ate);
    if (!in)
        return {};
    const auto size = static_cast<std::size_t>(in.tellg());
    // One more byte than kept, so that a cut line is recognised as such.
    const std::size_t take = std::min(size, max_bytes + 1);
    in.seekg(static_cast<std::streamoff>(size - take));
    std::string s(take, '\0');
    in.read(s.data(), static_cast<std::streamsize>(take));
    return tail_of(s, max_bytes);
}

} // namespace

json::object run_postprocess_command(const std::string& command, const fs::path& dir,
                                     std::string_view status) {
    const auto started = clock::now();
    const fs::path folder = fs::absolute(dir).lexically_normal();
    const std::string out_path = (folder / "postprocess-command.out").string();
    const std::string err_path = (folder / "postprocess-command.err").string();
    json::object r{{"command", command}};

    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
        const std::string_view v(*e);
        if (!v.starts_with("PACER_VARIANT_DIR=") && !v.starts_with("PACER_VARIANT_STATUS="))
            env_strings.emplace_back(v);
    }
    env_strings.push_back("PACER_VARIANT_DIR=" + folder.string());
    env_strings.push_back(fmt::format("PACER_VARIANT_STATUS={}", status));
    std::vector<char*> envp;
    for (auto& s : env_strings)
        envp.push_back(s.data());
    envp.push_back(nullptr);

    std::string sh = "/bin/sh", dash_c = "-c", cmd = command, name = "pacer-postprocess",
                arg = folder.string();
    char* argv[] = {sh.data(), dash_c.data(), cmd.data(), name.data(), arg.data(), nullptr};

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults, empty;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP})
        sigaddset(&defaults, s);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                        POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, sh.c_str(), &fa, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        r["exit_status"] = nullptr;
        r["error"] = fmt::format("cannot start /bin/sh: {}", std::strerror(rc));
        r["stderr_tail"] = "";
        r["wall_s"] = to_seconds(clock::now() - started);
        r["cpu_s"] = 0.0;
        r["ok"] = false;
        return r;
    }
    int wstatus = 0;
    rusage ru{};
    while (::wait4(pid, &wstatus, 0, &ru) < 0 && errno == EINTR) {
    }
    r["wall_s"] = to_seconds(clock::now() - started);
    r["cpu_s"] = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    r["stderr_tail"] = file_tail(err_path, stderr_tail_bytes);
    if (WIFEXITED(wstatus)) {
        r["exit_status"] = WEXITSTATUS(wstatus);
        r["ok"] = WEXITSTATUS(wstatus) == 0;
    } else {
        r["exit_status"] = nullptr;
        r["signal"] = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
        r["ok"] = false;
    }
    return r;
}

json::object postprocess_variant(const variant_job& job, const std::string& command) {
    json::object summary;
    try {
        summary = process_variant(job);
    } catch (const std::exception& e) {
        summary = {{"status", "error"},
                   {"errors", json::array{fmt::format("post-processing: {}", e.what())}}};
    }
    if (command.empty())
        return summary;
    const auto* status = summary.if_contains("status");
    auto hook = run_postprocess_command(
        command, job.dir,
        status && status->is_string() ? std::string_view(status->get_string()) : "error");
    if (!hook.at("ok").as_bool()) {
        std::string why;
        if (const auto* e = hook.if_contains("error"))
            why = std::string(e->as_string());
        else if (const auto* s = hook.if_contains("signal"))
            why = fmt::format("killed by signal {}", s->to_number<int>());
        else
            why = fmt::format("exited with status {}", hook.at("exit_status").to_number<int>());
        std::string tail(hook.at("stderr_tail").as_string());
        while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r'))
            tail.pop_back();
        if (const auto nl = tail.rfind('\n'); nl != std::string::npos)
            tail.erase(0, nl + 1); // its last line; the tail is in postprocess_command
        auto* errors = summary.if_contains("errors");
        if (!errors || !errors->is_array())
            errors = &(summary["errors"] = json::array{});
        errors->as_array().emplace_back(
            fmt::format("post-processing command: {}{}", why, tail.empty() ? "" : ": " + tail));
        summary["status"] = "error";
        summary["qualified"] = false;
    }
    summary["postprocess_command"] = std::move(hook);
    return summary;
}

} // namespace pacer::record
