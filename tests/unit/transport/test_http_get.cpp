// transport::parse_get_url: the URL of a server's own stats endpoint (`--server-metrics`), split
// into what the GET connects to and the target it sends; the reset query added to it.

#include <pacer/transport/http_get.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {

using pacer::transport::parse_get_url;

TEST(GetUrl, SplitsHostPortAndTarget) {
    const auto t = parse_get_url("http://127.0.0.1:8097/stats", "--server-metrics");
    EXPECT_EQ(t.host, "127.0.0.1");
    EXPECT_EQ(t.port, "8097");
    EXPECT_EQ(t.target, "/stats");
    EXPECT_EQ(t.with_query("reset=1"), "/stats?reset=1");

    const auto q = parse_get_url("http://[::1]/metrics?format=json", "--server-metrics");
    EXPECT_EQ(q.host, "::1");
    EXPECT_EQ(q.port, "80");
    EXPECT_EQ(q.target, "/metrics?format=json");
    EXPECT_EQ(q.with_query("reset=1"), "/metrics?format=json&reset=1");

    EXPECT_EQ(parse_get_url("http://h:1", "--x").target, "/");
    EXPECT_EQ(parse_get_url("http://h:1?a=b", "--x").target, "/?a=b");
}

TEST(GetUrl, RefusesWhatItCannotGetNamingTheFlag) {
    for (const char* bad :
         {"https://127.0.0.1/stats", "ws://127.0.0.1/stats", "http:///stats", "http://h:0/stats",
          "http://h:70000/stats", "http://u@h/stats", "http://h/stats#top"}) {
        try {
            parse_get_url(bad, "--server-metrics");
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("--server-metrics '", 0), 0u) << e.what();
        }
    }
}

} // namespace
