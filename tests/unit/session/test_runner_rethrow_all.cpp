// The runner reports every exception its coroutines threw (src/session/runner.cpp,
// `rethrow_all`): none for none, the exception itself for one, all of them for several.

#include <pacer/session/rethrow_all.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using pacer::session::rethrow_all;

TEST(RunnerRethrowAll, NothingToReportThrowsNothing) {
    EXPECT_NO_THROW(rethrow_all({}));
}

TEST(RunnerRethrowAll, OneExceptionIsRethrownWithItsType) {
    const std::vector<std::exception_ptr> one{
        std::make_exception_ptr(std::invalid_argument("bad input"))};
    EXPECT_THROW(rethrow_all(one), std::invalid_argument);
}

TEST(RunnerRethrowAll, SeveralAreAllNamedInOrder) {
    const std::vector<std::exception_ptr> three{
        std::make_exception_ptr(std::runtime_error("session 3 broke")),
        std::make_exception_ptr(std::logic_error("session 7 broke")), std::make_exception_ptr(42)};
    try {
        rethrow_all(three);
        FAIL() << "nothing thrown";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "3 failures: [session 3 broke] [session 7 broke] "
                                         "[an exception of unknown type]");
    }
}

} // namespace
