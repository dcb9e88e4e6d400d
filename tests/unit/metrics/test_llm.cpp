// The metrics of `pacer http` (metrics/llm.hpp), the prompts and bodies
// (session/llm_prompts.hpp) and the base-URL parser (transport/http_client.hpp), from
// explicit time points: no clock, no socket.

#include <pacer/metrics/llm.hpp>
#include <pacer/session/llm_prompts.hpp>
#include <pacer/transport/http_client.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pacer::metrics {
namespace {

using std::chrono::milliseconds;

const time_point t0{};

// Scheduled at s ms, dispatched at d, tokens at the given ms, completed at c.
llm_request request(int s, int d, std::vector<int> tokens, int c) {
    llm_request r;
    r.scheduled = t0 + milliseconds(s);
    r.dispatched = t0 + milliseconds(d);
    r.first_byte = r.dispatched;
    for (int t : tokens)
        r.token_times.push_back(t0 + milliseconds(t));
    if (!r.token_times.empty())
        r.first_token = r.token_times.front();
    r.completed = t0 + milliseconds(c);
    r.input_len = 10;
    return r;
}

double num(const boost::json::object& o, const char* k) {
    return o.at(k).to_number<double>();
}

TEST(LlmMetrics, LatenciesAreAnchoredToTheScheduleWithTheUncorrectedViewBeside) {
    // Held 100 ms before dispatch: TTFT from the schedule is 150, from dispatch 50.
    const std::vector<llm_request> rs{request(0, 100, {150, 160, 180}, 200)};
    const auto s = llm_summary(rs, t0, {});
    EXPECT_DOUBLE_EQ(num(s, "mean_ttft_ms"), 150);
    EXPECT_DOUBLE_EQ(num(s, "mean_e2el_ms"), 200);
    const auto& u = s.at("uncorrected").as_object();
    EXPECT_DOUBLE_EQ(num(u, "mean_ttft_ms"), 50);
    EXPECT_DOUBLE_EQ(num(u, "mean_e2el_ms"), 100);
    // TPOT = (200 - 150) / (3 - 1); ITL = 10 and 20.
    EXPECT_DOUBLE_EQ(num(s, "mean_tpot_ms"), 25);
    EXPECT_DOUBLE_EQ(num(s, "mean_itl_ms"), 15);
    EXPECT_DOUBLE_EQ(num(s, "duration"), 0.2);
    EXPECT_DOUBLE_EQ(num(s, "request_throughput"), 5);
    EXPECT_DOUBLE_EQ(num(s, "output_throughput"), 15);
}

TEST(LlmMetrics, UsageCountsWinOverChunksAndErrorsAreCountedByKind) {
    auto ok = request(0, 0, {10, 20}, 30);
    ok.usage_completion_tokens = 4;
    ok.usage_prompt_tokens = 7;
    auto bad = request(0, 0, {10}, 40);
    bad.error = "disconnect";
    auto timeout = request(0, 0, {}, 50);
    timeout.error = "timeout";
    const std::vector<llm_request> rs{ok, bad, timeout};
    const auto s = llm_summary(rs, t0, {});
    EXPECT_EQ(s.at("completed").to_number<int>(), 1);
    EXPECT_EQ(s.at("failed").to_number<int>(), 2);
    EXPECT_EQ(s.at("errors").at("disconnect").to_number<int>(), 1);
    EXPECT_EQ(s.at("errors").at("timeout").to_number<int>(), 1);
    EXPECT_EQ(s.at("errors").at("malformed_sse").to_number<int>(), 0);
    EXPECT_EQ(s.at("total_output_tokens").to_number<int>(), 4);
    EXPECT_EQ(s.at("total_input_tokens").to_number<int>(), 7);
    // TPOT uses the usage count: (30 - 10) / (4 - 1).
    EXPECT_NEAR(num(s, "mean_tpot_ms"), 20.0 / 3, 1e-9);
}

TEST(LlmMetrics, PercentilesBesideMeanAndNullWhenNoRequestHasTheFigure) {
    // TTFT from the schedule: 10, 20, ..., 100 ms.
    std::vector<llm_request> rs;
    for (int i = 1; i <= 10; ++i)
        rs.push_back(request(0, 0, {10 * i}, 10 * i + 1));
    const auto s = llm_summary(rs, t0, {});
    EXPECT_DOUBLE_EQ(num(s, "median_ttft_ms"), 55);
    EXPECT_DOUBLE_EQ(num(s, "p90_ttft_ms"), 91);
    EXPECT_DOUBLE_EQ(num(s, "p95_ttft_ms"), 95.5);
    EXPECT_DOUBLE_EQ(num(s, "p99_ttft_ms"), 99.1);
    // One token each: no request has a TPOT or an ITL.
    for (const char* k : {"mean_tpot_ms", "p90_itl_ms", "std_tpot_ms"})
        EXPECT_TRUE(s.at(k).is_null()) << k;
    // Every request failed: nothing was measured, no figure is 0.
    for (auto& r : rs)
        r.error = "http_status";
    const auto failed = llm_summary(rs, t0, {});
    for (const char* m : {"ttft", "tpot", "itl", "e2el"})
        for (const char* stat : {"mean", "median", "std", "p90", "p95", "p99"}) {
            const std::string key = std::string(stat) + "_" + m + "_ms";
            EXPECT_TRUE(failed.at(key).is_null()) << key;
            EXPECT_TRUE(failed.at("uncorrected").at(key).is_null()) << key;
        }
}

TEST(LlmMetrics, GoodputCountsRequestsMeetingEverySlo) {
    const std::vector<llm_request> rs{request(0, 0, {50, 60}, 100),     // meets all
                                      request(0, 200, {250, 260}, 300), // TTFT 250 from schedule
                                      request(0, 0, {50, 200}, 200)};   // TPOT 150
    const auto slo = parse_goodput("ttft:100,tpot:50,e2el:1000");
    const auto s = llm_summary(rs, t0, slo);
    EXPECT_EQ(s.at("goodput_requests").to_number<int>(), 1);
    EXPECT_NEAR(num(s, "request_goodput"), 1 / 0.3, 1e-9);
    EXPECT_FALSE(llm_summary(rs, t0, {}).contains("request_goodput"));
}

TEST(LlmMetrics, ParseGoodputRefusesBadInput) {
    const auto slo = parse_goodput("e2el:2000,ttft:0.5");
    EXPECT_EQ(*slo.ttft_ms, 0.5);
    EXPECT_EQ(*slo.e2el_ms, 2000);
    EXPECT_FALSE(slo.tpot_ms);
    for (const char* bad : {"", "ttft", "ttft:", "ttft:-1", "ttft:0", "ttft:1,ttft:2", "foo:1",
                            "ttft:1,", "ttft:nan", "ttft:1x"})
        EXPECT_THROW(parse_goodput(bad), std::invalid_argument) << bad;
}

TEST(LlmMetrics, PercentileInterpolatesLikeNumpy) {
    const std::vector<double> v{1, 2, 3, 4};
    EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
    EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);
    EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
    EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
}

TEST(LlmMetrics, RequestLineHasEveryMomentAndNullsForWhatDidNotHappen) {
    llm_request r;
    r.index = 3;
    r.scheduled = t0 + milliseconds(10);
    r.dropped = true;
    const auto o = llm_request_json(r, t0);
    EXPECT_EQ(o.at("index").to_number<int>(), 3);
    EXPECT_DOUBLE_EQ(o.at("scheduled_s").to_number<double>(), 0.01);
    EXPECT_TRUE(o.at("dispatched_s").is_null());
    EXPECT_TRUE(o.at("ttft_ms").is_null());
    EXPECT_TRUE(o.at("dropped").as_bool());
}

} // namespace
} // namespace pacer::metrics

namespace pacer::session {
namespace {

TEST(LlmPrompts, SyntheticPromptsArePureFunctionsOfSeedAndIndex) {
    synthetic_prompts spec{100, 20, 0.5, 42};
    const auto a = make_synthetic_prompt(spec, 7);
    const auto b = make_synthetic_prompt(spec, 7);
    EXPECT_EQ(a.text, b.text);
    EXPECT_EQ(a.input_len, approx_tokens(a.text));
    EXPECT_GE(a.input_len, 50u);
    EXPECT_LE(a.input_len, 150u);
    EXPECT_GE(a.output_len, 10u);
    EXPECT_LE(a.output_len, 30u);
    EXPECT_NE(make_synthetic_prompt(spec, 8).text, a.text);
    spec.seed = 43;
    EXPECT_NE(make_synthetic_prompt(spec, 7).text, a.text);
    const auto fixed = make_synthetic_prompt({64, 16, 0, 1}, 0);
    EXPECT_EQ(fixed.input_len, 64u);
    EXPECT_EQ(fixed.output_len, 16u);
}

TEST(LlmPrompts, PromptFileLinesAreCheckedAndUsedRoundRobin) {
    const auto e = parse_prompt_jsonl("{\"prompt\": \"a b c\"}\n\n{\"prompt\": \"d\", "
                                      "\"output_len\": 5}\n",
                                      "p.jsonl");
    ASSERT_EQ(e.size(), 2u);
    const auto p2 = make_file_prompt(e, 2, 9);
    EXPECT_EQ(p2.text, "a b c");
    EXPECT_EQ(p2.input_len, 3u);
    EXPECT_EQ(p2.output_len, 9u);
    EXPECT_EQ(make_file_prompt(e, 1, 9).output_len, 5u);
    try {
        parse_prompt_jsonl("{\"prompt\": \"ok\"}\nnot json\n", "p.jsonl");
        FAIL();
    } catch (const std::invalid_argument& ex) {
        EXPECT_EQ(std::string(ex.what()).rfind("p.jsonl line 2:", 0), 0u) << ex.what();
    }
    EXPECT_THROW(parse_prompt_jsonl("\n\n", "p"), std::invalid_argument);
    EXPECT_THROW(parse_prompt_jsonl("{\"prompt\": \"\"}", "p"), std::invalid_argument);
    EXPECT_THROW(parse_prompt_jsonl("{\"prompt\": \"x\", \"output_len\": 0}", "p"),
                 std::invalid_argument);
}

TEST(LlmPrompts, BodiesCarryStreamingUsageAndThePassThroughFields) {
    request_options o{"m", false, true, 0.5};
    const auto v = boost::json::parse(request_body(o, {"hello world", 2, 7})).as_object();
    EXPECT_EQ(v.at("prompt").as_string(), "hello world");
    EXPECT_EQ(v.at("max_tokens").to_number<int>(), 7);
    EXPECT_TRUE(v.at("stream").as_bool());
    EXPECT_TRUE(v.at("stream_options").at("include_usage").as_bool());
    EXPECT_TRUE(v.at("ignore_eos").as_bool());
    EXPECT_EQ(v.at("temperature").as_double(), 0.5);
    o.chat = true;
    o.ignore_eos = false;
    o.temperature.reset();
    const auto c = boost::json::parse(request_body(o, {"hi", 1, 3})).as_object();
    EXPECT_EQ(c.at("messages").at(0).at("content").as_string(), "hi");
    EXPECT_FALSE(c.contains("prompt"));
    EXPECT_FALSE(c.contains("ignore_eos"));
    EXPECT_FALSE(c.contains("temperature"));
}

// The body is written by hand for speed: byte for byte what json::serialize gives the object
// it replaced, for every option and for prompts that need escaping.
TEST(LlmPrompts, BodiesAreTheBytesOfTheJsonObjectTheyStandFor) {
    const auto reference = [](const request_options& o, const prompt& p) {
        boost::json::object body;
        body["model"] = o.model;
        if (o.chat)
            body["messages"] =
                boost::json::array{boost::json::object{{"role", "user"}, {"content", p.text}}};
        else
            body["prompt"] = p.text;
        body["max_tokens"] = p.output_len;
        body["stream"] = true;
        body["stream_options"] = boost::json::object{{"include_usage", true}};
        if (o.ignore_eos)
            body["ignore_eos"] = true;
        if (o.temperature)
            body["temperature"] = *o.temperature;
        return boost::json::serialize(body);
    };
    std::string every_byte;
    for (int c = 1; c < 256; ++c)
        every_byte.push_back(static_cast<char>(c));
    const std::vector<std::string> texts = {"hello world",
                                            "",
                                            "say \"hi\" \\ back\n\t\r\b\f",
                                            "caf\xC3\xA9 \xE2\x82\xAC \x7F </script>",
                                            std::string("nul\0inside", 10),
                                            every_byte};
    const std::vector<std::optional<double>> temperatures = {std::nullopt, 0.0,  0.5,
                                                             1.0,          1e-7, 100.0};
    for (const bool chat : {false, true})
        for (const bool ignore_eos : {false, true})
            for (const auto& t : temperatures)
                for (const auto& text : texts)
                    for (const std::uint64_t out : {std::uint64_t{1}, std::uint64_t{1'000'000}}) {
                        const request_options o{"org/model \"x\"", chat, ignore_eos, t};
                        const prompt p{text, 1, out};
                        EXPECT_EQ(request_body(o, p), reference(o, p))
                            << "chat " << chat << " text " << text.size() << " bytes";
                    }
}

} // namespace
} // namespace pacer::session

namespace pacer::transport {
namespace {

TEST(HttpUrl, ParsesHostPortAndPrefix) {
    const auto a = parse_http_url("http://127.0.0.1:8000");
    EXPECT_EQ(a.host, "127.0.0.1");
    EXPECT_EQ(a.port, "8000");
    EXPECT_EQ(a.base_path, "");
    const auto b = parse_http_url("http://example.com/api/");
    EXPECT_EQ(b.port, "80");
    EXPECT_EQ(b.base_path, "/api");
    const auto c = parse_http_url("http://[::1]:9000/x");
    EXPECT_EQ(c.host, "::1");
    EXPECT_EQ(c.port, "9000");
}

TEST(HttpUrl, HttpsIsTlsOnPort443UnlessGivenAndUrlSaysItBack) {
    const auto a = parse_http_url("https://api.example.com/v2/");
    EXPECT_TRUE(a.tls);
    EXPECT_EQ(a.host, "api.example.com");
    EXPECT_EQ(a.port, "443");
    EXPECT_EQ(a.base_path, "/v2");
    EXPECT_EQ(a.url(), "https://api.example.com:443/v2");
    const auto b = parse_http_url("https://[::1]:8443");
    EXPECT_TRUE(b.tls);
    EXPECT_EQ(b.port, "8443");
    EXPECT_EQ(b.url(), "https://[::1]:8443");
    EXPECT_FALSE(parse_http_url("http://h").tls);
    EXPECT_EQ(parse_http_url("http://h").url(), "http://h:80");
}

TEST(HttpUrl, RefusesMalformedUrlsWithOneLine) {
    try {
        parse_http_url("ftp://api.example.com");
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("must start with http:// or https://"),
                  std::string::npos);
    }
    for (const char* bad : {"", "ws://h:1", "http://", "http://:80", "http://h:0", "http://h:70000",
                            "http://h:x", "http://h/?q=1", "http://u:p@h", "http://[::1",
                            "https://", "https://h:0", "https://u:p@h"})
        EXPECT_THROW(parse_http_url(bad), std::invalid_argument) << bad;
}

} // namespace
} // namespace pacer::transport
