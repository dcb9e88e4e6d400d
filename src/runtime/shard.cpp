#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/shard.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <ctime>
#include <stdexcept>

namespace pacer::runtime {

namespace {

std::optional<std::size_t> parse_count(std::string_view text) {
    std::size_t v = 0;
    const auto* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc{} || p != end || text.empty())
        return std::nullopt;
    return v;
}

} // namespace

std::optional<shard> parse_shard(std::string_view text) {
    const auto slash = text.find('/');
    if (slash == std::string_view::npos)
        return std::nullopt;
    const auto i = parse_count(text.substr(0, slash));
    const auto n = parse_count(text.substr(slash + 1));
    if (!i || !n || *n == 0 || *i >= *n)
        return std::nullopt;
    return shard{*i, *n, "--shard"};
}

std::optional<shard> shard_from_environment(const std::function<const char*(const char*)>& getenv,
                                            std::optional<std::size_t> shards) {
    struct pair {
        const char* rank;
        const char* size;
    };
    static constexpr pair launchers[] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"SLURM_PROCID", "SLURM_NTASKS"},
    };
    for (const auto& l : launchers) {
        const char* rank = getenv(l.rank);
        if (!rank)
            continue;
        const char* size = getenv(l.size);
        const auto i = parse_count(rank);
        const auto n = size ? parse_count(size) : std::nullopt;
        if (!i || !n || *n == 0 || *i >= *n)
            throw bad_input(fmt::format("{}={} with {}={} is not a valid shard", l.rank, rank,
                                        l.size, size ? size : "(unset)"));
        return shard{*i, *n, l.rank};
    }
    if (const char* index = getenv("JOB_COMPLETION_INDEX")) {
        const auto i = parse_count(index);
        if (!shards)
            throw bad_input(
                "JOB_COMPLETION_INDEX is set: give the number of shards with --shards N");
        if (!i || *i >= *shards)
            throw bad_input(
                fmt::format("JOB_COMPLETION_INDEX={} is not below --shards {}", index, *shards));
        return shard{*i, *shards, "JOB_COMPLETION_INDEX"};
    }
    return std::nullopt;
}

std::vector<std::size_t> shard_sessions(const shard& s, std::size_t total) {
    std::vector<std::size_t> out;
    for (std::size_t i = s.index; i < total; i += s.count)
        out.push_back(i);
    return out;
}

std::vector<std::chrono::nanoseconds>
shard_arrivals(const shard& s, const std::vector<std::chrono::nanoseconds>& all) {
    std::vector<std::chrono::nanoseconds> out;
    for (std::size_t i = s.index; i < all.size(); i += s.count)
        out.push_back(all[i]);
    return out;
}

std::optional<double> parse_start_at(std::string_view text) {
    if (text.empty())
        return std::nullopt;
    if (text.find('T') == std::string_view::npos) {
        double v = 0;
        const auto* end = text.data() + text.size();
        auto [p, ec] = std::from_chars(text.data(), end, v);
        if (ec != std::errc{} || p != end || !std::isfinite(v) || v < 0)
            return std::nullopt;
        return v;
    }
    // YYYY-MM-DDTHH:MM:SS[.fff]Z
    std::tm tm{};
    int consumed = 0;
    const std::string s(text);
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6)
        return std::nullopt;
    double fraction = 0;
    std::string_view rest = text.substr(static_cast<std::size_t>(consumed));
    if (!rest.empty() && rest.front() == '.') {
        std::size_t digits = 1;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
            ++digits;
        if (digits == 1)
            return std::nullopt;
        double scale = 0.1;
        for (std::size_t k = 1; k < digits; ++k, scale /= 10)
            fraction += (rest[k] - '0') * scale;
        rest.remove_prefix(digits);
    }
    if (rest != "Z")
        return std::nullopt;
    if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
        tm.tm_min > 59 || tm.tm_sec > 60)
        return std::nullopt;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    const std::time_t t = ::timegm(&tm);
    if (t == static_cast<std::time_t>(-1))
        return std::nullopt;
    return static_cast<double>(t) + fraction;
}

} // namespace pacer::runtime
