// Conformance with a client no one here wrote: the official OpenAI Node SDK's `OpenAIRealtimeWS`
// (openai_realtime_ws.cjs beside this file; versions pinned in package.json and
// package-lock.json, installed into the build tree by scripts/node-deps.sh) against
// `pacer native-mock --protocol openai-realtime` over wss://, each as its own process, the
// mock's throwaway certificate trusted through NODE_EXTRA_CA_CERTS. The script checks every
// event it waits for; this test checks its exit, its report and what the mock saw.
//
// Skipped, with the reason, when no `node` is on PATH; `scripts/test.sh` installs Node and the
// packages for the plain build (ctest label `conformance`). Nothing here measures a speed.

#include <gtest/gtest.h>

#include "integration/process.hpp"
#include "integration/tls_files.hpp"
#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

namespace pacer::test {
namespace {

namespace fs = std::filesystem;

/// The first `node` on PATH, or "".
std::string find_node() {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const fs::path p = fs::path(dir) / "node";
        if (!dir.empty() && ::access(p.c_str(), X_OK) == 0)
            return p.string();
    }
    return "";
}

/// The line of `out` that starts with `prefix`, without it; "" when there is none.
std::string line_after(const std::string& out, const std::string& prefix) {
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0)
            return line.substr(prefix.size());
    return "";
}

std::vector<std::string> strings(const boost::json::value& v) {
    std::vector<std::string> out;
    for (const auto& s : v.as_array())
        out.emplace_back(s.as_string());
    return out;
}

TEST(OpenAiSdkConformance, RealtimeWsSessionTurnsAndCancelAgainstTheMockOverWss) {
    const std::string node = find_node();
    if (node.empty())
        GTEST_SKIP() << "node is not installed: scripts/node-deps.sh installs Node.js (Debian's "
                        "nodejs) and the pinned openai SDK; scripts/test.sh runs it";
    const fs::path modules = PACER_NODE_MODULES;
    ASSERT_TRUE(fs::exists(modules / "openai" / "realtime" / "ws.js"))
        << "the openai SDK is not in " << modules.string()
        << ": run scripts/node-deps.sh BUILD_DIR (scripts/test.sh does)";

    temp_dir dir;
    fs::create_directories(dir.path());
    const fs::path cert = dir / "cert.pem", key = dir / "key.pem", stats = dir / "stats.json";
    make_self_signed(cert, key);
    std::optional<mock_process> mock(
        std::in_place,
        std::vector<std::string>{"--protocol", "openai-realtime", "--reply-ms", "400", "--tls-cert",
                                 cert.string(), "--tls-key", key.string(), "--stats-output",
                                 stats.string()},
        "native-mock");
    const std::string plain = mock->url(); // ws://127.0.0.1:PORT/v1/realtime
    const std::string base = "https://" + plain.substr(std::string("ws://").size(),
                                                       plain.size() - std::string("ws://").size() -
                                                           std::string("/realtime").size());
    const std::string model = "gpt-realtime/pacer test";
    child script({"/usr/bin/env", "NODE_EXTRA_CA_CERTS=" + cert.string(),
                  "NODE_PATH=" + modules.string(), node,
                  std::string(PACER_CONFORMANCE_DIR) + "/openai_realtime_ws.cjs", base, model});
    const std::string out = script.read_all();
    const int exit_code = script.wait();
    EXPECT_EQ(mock->stop(), 0);
    mock.reset();
    ASSERT_EQ(exit_code, 0) << out;

    const auto report = boost::json::parse(line_after(out, "conformance: "));
    EXPECT_EQ(at(report, {"url"}).as_string(), "/v1/realtime?model=gpt-realtime%2Fpacer+test");
    const auto& turns = at(report, {"turns"}).as_array();
    ASSERT_EQ(turns.size(), 2u);
    for (const auto& t : turns) {
        EXPECT_EQ(at(t, {"status"}).as_string(), "completed");
        // Each response is the mock's --reply-ms 400: five deltas of 80 ms of 24 kHz PCM16.
        EXPECT_EQ(at(t, {"deltas"}).to_number<int>(), 5);
        EXPECT_EQ(at(t, {"bytes"}).to_number<int>(), 5 * 3840);
    }
    EXPECT_EQ(at(report, {"cancelled", "status"}).as_string(), "cancelled");
    EXPECT_EQ(at(report, {"error"}).as_string(), "response_cancel_not_active");

    // What reached the mock: the SDK's URL (the model percent-decoded) and bearer key, over TLS.
    const auto s = read_json(stats);
    EXPECT_TRUE(at(s, {"tls"}).as_bool());
    EXPECT_EQ(at(s, {"sessions_seen"}).to_number<int>(), 1);
    EXPECT_EQ(at(s, {"sessions_completed"}).to_number<int>(), 1);
    EXPECT_EQ(strings(at(s, {"request_models"})), std::vector<std::string>{model});
    EXPECT_EQ(strings(at(s, {"request_query_names"})), std::vector<std::string>{"model"});
    const auto headers = strings(at(s, {"request_header_names"}));
    EXPECT_NE(std::find(headers.begin(), headers.end(), "authorization"), headers.end());
    EXPECT_EQ(at(s, {"responses"}).to_number<int>(), 2);
    EXPECT_EQ(at(s, {"responses_cancelled"}).to_number<int>(), 1);
}

} // namespace
} // namespace pacer::test
