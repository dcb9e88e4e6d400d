// Shard arithmetic: sessions and arrivals split exactly, nothing lost or duplicated.

#include <pacer/core/bad_input.hpp>
#include <pacer/runtime/shard.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using namespace pacer::runtime;

TEST(shard, parse) {
    const auto s = parse_shard("2/5");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->index, 2u);
    EXPECT_EQ(s->count, 5u);
    for (const char* bad : {"", "5/5", "1/0", "a/b", "1/", "/3", "-1/3", "1/3x", "13"})
        EXPECT_FALSE(parse_shard(bad)) << bad;
}

TEST(shard, sessions_split_exactly_and_evenly) {
    for (std::size_t total : {0u, 1u, 7u, 1024u, 1025u}) {
        for (std::size_t n : {1u, 2u, 3u, 7u, 16u}) {
            std::multiset<std::size_t> seen;
            std::size_t smallest = total, largest = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const auto part = shard_sessions({i, n, ""}, total);
                seen.insert(part.begin(), part.end());
                smallest = std::min(smallest, part.size());
                largest = std::max(largest, part.size());
            }
            ASSERT_EQ(seen.size(), total);
            for (std::size_t k = 0; k < total; ++k)
                EXPECT_EQ(seen.count(k), 1u);
            if (total > 0) {
                EXPECT_LE(largest - smallest, 1u);
            }
        }
    }
}

TEST(shard, arrivals_pool_back_to_the_single_host_schedule) {
    std::vector<std::chrono::nanoseconds> all;
    for (int i = 0; i < 101; ++i)
        all.emplace_back(i * 1000 + i * i);
    std::vector<std::chrono::nanoseconds> pooled;
    for (std::size_t i = 0; i < 4; ++i) {
        const auto part = shard_arrivals({i, 4, ""}, all);
        // Shard i takes arrivals i, i+4, ...
        for (std::size_t k = 0; k < part.size(); ++k)
            EXPECT_EQ(part[k], all[i + 4 * k]);
        pooled.insert(pooled.end(), part.begin(), part.end());
    }
    std::sort(pooled.begin(), pooled.end());
    EXPECT_EQ(pooled, all);
}

TEST(shard, launcher_environments) {
    std::map<std::string, std::string> env;
    auto get = [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
    };
    EXPECT_FALSE(shard_from_environment(get, std::nullopt));

    env = {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "3"}};
    auto s = shard_from_environment(get, std::nullopt);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->index, 1u);
    EXPECT_EQ(s->count, 3u);
    EXPECT_EQ(s->source, "OMPI_COMM_WORLD_RANK");

    env = {{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}};
    EXPECT_EQ(shard_from_environment(get, std::nullopt)->source, "PMI_RANK");

    env = {{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "5"}};
    s = shard_from_environment(get, std::nullopt);
    EXPECT_EQ(s->index, 4u);
    EXPECT_EQ(s->count, 5u);

    env = {{"JOB_COMPLETION_INDEX", "2"}};
    EXPECT_THROW(shard_from_environment(get, std::nullopt),
                 pacer::bad_input); // needs --shards
    s = shard_from_environment(get, 3);
    EXPECT_EQ(s->index, 2u);
    EXPECT_EQ(s->count, 3u);
    EXPECT_THROW(shard_from_environment(get, 2), pacer::bad_input); // index >= count

    env = {{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "3"}};
    EXPECT_THROW(shard_from_environment(get, std::nullopt), pacer::bad_input);
    env = {{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "3"}};
    EXPECT_THROW(shard_from_environment(get, std::nullopt), pacer::bad_input);
}

TEST(shard, start_at) {
    EXPECT_DOUBLE_EQ(*parse_start_at("1796050800"), 1796050800.0);
    EXPECT_DOUBLE_EQ(*parse_start_at("1796050800.25"), 1796050800.25);
    EXPECT_DOUBLE_EQ(*parse_start_at("1970-01-01T00:00:00Z"), 0.0);
    EXPECT_DOUBLE_EQ(*parse_start_at("2026-11-30T17:00:00Z"), 1796058000.0);
    EXPECT_DOUBLE_EQ(*parse_start_at("2026-11-30T17:00:00.5Z"), 1796058000.5);
    for (const char* bad : {"", "soon", "-5", "2026-11-30T17:00:00", "2026-13-01T00:00:00Z",
                            "2026-11-30T17:00:00+01:00", "2026-11-30T17:00:00.Z", "nan"})
        EXPECT_FALSE(parse_start_at(bad)) << bad;
}

} // namespace
