// The pure parts of `pacer serve`'s job (sweep/serve_job.hpp): the levels of --concurrencies
// and the disk estimate the command checks the output folder's filesystem against.

#include <pacer/sweep/serve_job.hpp>
#include <pacer/trace/disk_estimate.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace pacer;
using levels = std::vector<std::size_t>;

// The line parse_levels throws for `text` ("" when it throws nothing).
std::string refusal(const std::string& text) {
    try {
        sweep::parse_levels(text, 100);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(serve_job, the_levels_are_taken_in_the_order_given) {
    EXPECT_EQ(sweep::parse_levels("1,8,2", 100), (levels{1, 8, 2}));
    EXPECT_EQ(sweep::parse_levels("100", 100), (levels{100}));
}

TEST(serve_job, a_level_that_is_no_whole_number_in_range_is_refused_naming_the_option) {
    const std::string range = "--concurrencies '{}': each level must be a whole number from 1 "
                              "to 100 (e.g. 1,2,4,8)";
    for (const std::string text : {"0", "101", "1,,2", "1,x", "-1", "1.5"}) {
        auto expected = range;
        expected.replace(expected.find("{}"), 2, text);
        EXPECT_EQ(refusal(text), expected) << text;
    }
}

TEST(serve_job, a_level_given_twice_or_none_is_refused) {
    EXPECT_EQ(refusal("2,4,2"), "--concurrencies '2,4,2': level 2 appears twice");
    EXPECT_EQ(refusal(""), "--concurrencies needs at least one level");
}

TEST(serve_job, the_disk_estimate_counts_every_run_and_with_drop_traces_one_levels_traces) {
    sweep::serve_options o;
    o.repeats = 2;
    o.warmup_runs = 1;
    o.warmup_level = 1;
    sweep::sweep_options w;
    w.levels = {2, 4};
    w.input_duration_s = {3.0, 5.0}; // a one-session warm-up streams the first input only
    const auto traces = [](std::size_t n, double d) {
        return trace::trace_bytes_estimate(n, d, "native");
    };
    const auto receipts = [](std::size_t n, double d) {
        return trace::receipt_bytes_estimate(n, d);
    };
    const auto all_receipts = receipts(1, 3) + 2 * (receipts(2, 5) + receipts(4, 5));
    EXPECT_EQ(sweep::disk_estimate(o, w),
              all_receipts + traces(1, 3) + 2 * (traces(2, 5) + traces(4, 5)));
    o.drop_traces = true;
    EXPECT_EQ(sweep::disk_estimate(o, w), all_receipts + traces(4, 5));
}

TEST(serve_job, a_capacity_search_is_estimated_by_its_doubling_levels_up_to_the_maximum) {
    sweep::serve_options o;
    o.find_capacity = true;
    o.start_level = 3;
    o.max_level = 20;
    sweep::sweep_options w;
    w.input_duration_s = {2.0};
    std::uint64_t expected = 0;
    for (std::size_t c : {3, 6, 12, 20}) // 24 would pass the maximum: the maximum instead
        expected +=
            trace::trace_bytes_estimate(c, 2, "native") + trace::receipt_bytes_estimate(c, 2);
    EXPECT_EQ(sweep::disk_estimate(o, w), expected);
}

} // namespace
