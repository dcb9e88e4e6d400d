// The native mock's option parsing: fault names and the `--fault-sessions` list.

#include <pacer/server/native_mock.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace pacer::server {
namespace {

TEST(NativeMockOptions, FaultNamesMatchTheReferencePeer) {
    EXPECT_EQ(parse_peer_fault("none"), peer_fault::none);
    EXPECT_EQ(parse_peer_fault("server_error"), peer_fault::server_error);
    EXPECT_EQ(parse_peer_fault("delayed_fatal"), peer_fault::delayed_fatal);
    EXPECT_EQ(parse_peer_fault("nonfatal_error"), peer_fault::nonfatal_error);
    EXPECT_EQ(parse_peer_fault("timeout"), peer_fault::timeout);
    EXPECT_EQ(parse_peer_fault("malformed_json"), peer_fault::malformed_json);
    EXPECT_EQ(parse_peer_fault("nonfinite"), peer_fault::nonfinite);
    EXPECT_EQ(parse_peer_fault("disconnect"), peer_fault::disconnect);
    EXPECT_EQ(parse_peer_fault("linger"), peer_fault::linger);
    EXPECT_EQ(parse_peer_fault("close_without_update"), peer_fault::close_without_update);
    try {
        parse_peer_fault("stall");
        FAIL() << "an unknown fault was accepted";
    } catch (const std::invalid_argument& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("--fault must be one of none, server_error, ", 0), 0u) << what;
        EXPECT_NE(what.find("(got 'stall')"), std::string::npos) << what;
    }
}

TEST(NativeMockOptions, SessionListsTakeIndicesAndRanges) {
    const auto s = session_set::parse("0,2,5-7");
    for (std::size_t i : {0, 2, 5, 6, 7})
        EXPECT_TRUE(s.contains(i)) << i;
    for (std::size_t i : {1, 3, 4, 8, 100})
        EXPECT_FALSE(s.contains(i)) << i;
    EXPECT_TRUE(session_set::parse("3").contains(3));
    EXPECT_TRUE(session_set::parse("4-4").contains(4));
    EXPECT_TRUE(session_set::parse("9,1").contains(1)); // any order
}

TEST(NativeMockOptions, BadSessionListsAreRefusedWithTheFlagName) {
    for (const char* bad : {"", ",", "1,", ",1", "1,,2", "a", "1-", "-1", "5-2", "1 ,2", "1.5",
                            "99999999999999999999999"}) {
        try {
            session_set::parse(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("--fault-sessions must list", 0), 0u) << e.what();
        }
    }
}

} // namespace
} // namespace pacer::server
