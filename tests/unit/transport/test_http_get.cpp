// transport::parse_http_url for a URL to GET (url_use::get): the URL of a server's own stats
// endpoint (`--server-metrics`), split into what the GET connects to and the target it sends;
// the reset query added to it. The same parser reads base URLs (tests/unit/metrics/test_llm.cpp).

#include <pacer/transport/http_get.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace {

using pacer::transport::url_use;

pacer::transport::http_endpoint get_url(std::string_view url, std::string_view flag) {
    return pacer::transport::parse_http_url(url, flag, url_use::get);
}

TEST(GetUrl, SplitsHostPortAndTarget) {
    const auto t = get_url("http://127.0.0.1:8097/stats", "--server-metrics");
    EXPECT_EQ(t.host, "127.0.0.1");
    EXPECT_EQ(t.port, "8097");
    EXPECT_EQ(t.target(), "/stats");
    EXPECT_EQ(t.target_with("reset=1"), "/stats?reset=1");

    const auto q = get_url("http://[::1]/metrics?format=json", "--server-metrics");
    EXPECT_EQ(q.host, "::1");
    EXPECT_EQ(q.port, "80");
    EXPECT_EQ(q.target(), "/metrics?format=json");
    EXPECT_EQ(q.target_with("reset=1"), "/metrics?format=json&reset=1");

    EXPECT_EQ(get_url("http://h:1", "--x").target(), "/");
    EXPECT_EQ(get_url("http://h:1?a=b", "--x").target(), "/?a=b");
    // A GET URL's path is sent as given; a base URL's prefix loses its trailing '/'.
    EXPECT_EQ(get_url("http://h/stats/", "--x").target(), "/stats/");
    EXPECT_EQ(pacer::transport::parse_http_url("http://h/api/").target(), "/api");
}

TEST(GetUrl, RefusesWhatItCannotGetNamingTheFlag) {
    for (const char* bad :
         {"https://127.0.0.1/stats", "ws://127.0.0.1/stats", "http:///stats", "http://h:0/stats",
          "http://h:70000/stats", "http://u@h/stats", "http://h/stats#top"}) {
        try {
            get_url(bad, "--server-metrics");
            ADD_FAILURE() << bad << " was accepted";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).rfind("--server-metrics '", 0), 0u) << e.what();
        }
    }
    // A query is a GET URL's only: a base URL refuses it.
    EXPECT_THROW(pacer::transport::parse_http_url("http://h/v1?x=1"), std::invalid_argument);
}

} // namespace
