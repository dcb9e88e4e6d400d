#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/resources.hpp>

#include <fmt/format.h>

#include <ctime>
#include <stdexcept>
#include <sys/resource.h>

namespace pacer::runtime {

process_usage read_process_usage() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
    return {secs(ru.ru_utime) + secs(ru.ru_stime), static_cast<std::uint64_t>(ru.ru_maxrss) * 1024};
}

double thread_cpu_seconds() {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::size_t descriptor_limit() {
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    return static_cast<std::size_t>(rl.rlim_cur);
}

void ensure_descriptors(std::size_t needed) {
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
    const std::size_t have = descriptor_limit();
    if (have < needed)
        throw bad_input(fmt::format(
            "this run needs about {} file descriptors but the limit is {}; raise it with "
            "`ulimit -n {}` (or the hard limit in /etc/security/limits.conf) and retry",
            needed, have, needed));
}

} // namespace pacer::runtime
