// The client's URL and `--header` parsing (src/transport/ws_connection.cpp).

#include <pacer/transport/ws_connection.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace pacer::transport {
namespace {

TEST(WsUrl, PlainAndTlsSchemesWithTheirDefaultPorts) {
    const auto plain = parse_ws_url("ws://example.com/v1/realtime");
    EXPECT_FALSE(plain.tls);
    EXPECT_EQ(plain.port, "80");
    const auto tls = parse_ws_url("wss://example.com/v1/realtime");
    EXPECT_TRUE(tls.tls);
    EXPECT_EQ(tls.host, "example.com");
    EXPECT_EQ(tls.port, "443");
    EXPECT_EQ(tls.target, "/v1/realtime");
    const auto v6 = parse_ws_url("wss://[::1]:8443/x");
    EXPECT_TRUE(v6.tls);
    EXPECT_EQ(v6.host, "::1");
    EXPECT_EQ(v6.port, "8443");
}

TEST(WsUrl, OtherSchemesAreRefused) {
    EXPECT_THROW(parse_ws_url("https://example.com/"), std::invalid_argument);
    EXPECT_THROW(parse_ws_url("wsss://example.com/"), std::invalid_argument);
}

TEST(WsUrl, TheQueryStaysInTheTarget) {
    EXPECT_EQ(parse_ws_url("wss://h:1/v1/realtime?model=a&x=1").target, "/v1/realtime?model=a&x=1");
}

TEST(WsQuery, AParameterIsAddedAfterTheQueryAlreadyThere) {
    EXPECT_EQ(with_query_parameter("/v1/realtime", "model", "gpt-realtime"),
              "/v1/realtime?model=gpt-realtime");
    EXPECT_EQ(with_query_parameter("/v1/realtime?tenant=a&x=", "model", "m"),
              "/v1/realtime?tenant=a&x=&model=m");
    EXPECT_EQ(with_query_parameter("/v1/realtime?", "model", "m"), "/v1/realtime?model=m");
    EXPECT_EQ(with_query_parameter("/v1/realtime?a=1&", "model", "m"), "/v1/realtime?a=1&model=m");
}

TEST(WsQuery, TheValueIsPercentEncodedAndDecodesBack) {
    // Unreserved characters stay; '/', ' ', '&', '=', '+', '%', '?' and non-ASCII bytes do not.
    const std::string value = "org/Model-v1.2_x~ a&b=c+d%e?\xc3\xa9";
    const auto target = with_query_parameter("/v1/realtime", "model", value);
    EXPECT_EQ(target, "/v1/realtime?model=org%2FModel-v1.2_x~%20a%26b%3Dc%2Bd%25e%3F%C3%A9");
    EXPECT_EQ(query_parameter(target, "model"), value);
}

TEST(WsQuery, AParameterIsFoundByItsExactName) {
    EXPECT_EQ(query_parameter("/v1/realtime?x=1&model=a%2Fb&y", "model"), "a/b");
    EXPECT_EQ(query_parameter("/v1/realtime?model", "model"), "");
    EXPECT_EQ(query_parameter("/v1/realtime?models=a&xmodel=b", "model"), std::nullopt);
    EXPECT_EQ(query_parameter("/v1/realtime", "model"), std::nullopt);
    EXPECT_EQ(query_parameter("/v1/realtime?model=50%", "model"), "50%");       // a lone % stays
    EXPECT_EQ(query_parameter("/v1/realtime?model=a+b%2Bc", "model"), "a b+c"); // form encoding
}

TEST(WsHeader, NameAndTrimmedValue) {
    const auto [name, value] = parse_header("X-Tenant:   acme  ");
    EXPECT_EQ(name, "X-Tenant");
    EXPECT_EQ(value, "acme");
    EXPECT_EQ(parse_header("X-Empty:").second, "");
}

TEST(WsHeader, MalformedOrReservedHeadersAreRefusedWithoutTheirValue) {
    const std::vector<std::string> headers{"no colon secret",
                                           ": secret",
                                           "Bad Name: secret",
                                           "X-A: sec\rret",
                                           "X-A: sec\nret",
                                           std::string("X-A: sec\0ret", 12),
                                           "Host: secret",
                                           "upgrade: secret",
                                           "Connection: secret",
                                           "Sec-WebSocket-Protocol: secret",
                                           "sec-websocket-key: secret"};
    for (const auto& h : headers) {
        try {
            parse_header(h);
            ADD_FAILURE() << "accepted: " << h;
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos) << e.what();
        }
    }
}

TEST(WsHeader, PrepareTlsRefusesAnUnreadableCaFileByName) {
    auto ep = parse_ws_url("wss://127.0.0.1:1/v1/realtime");
    ep.client.ca_file = "/nonexistent/ca.pem";
    try {
        prepare_tls(ep);
        ADD_FAILURE() << "accepted a missing CA file";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("--ca-file /nonexistent/ca.pem"), std::string::npos);
    }
    auto plain = parse_ws_url("ws://127.0.0.1:1/v1/realtime");
    prepare_tls(plain);
    EXPECT_EQ(plain.client.tls_context, nullptr);
}

} // namespace
} // namespace pacer::transport
