// samples.json streamed one session at a time (metrics::stream_samples) gives what the
// whole-file reader (metrics::read_samples) gives under the same rules, and refuses what it
// refuses; lenient (what `pacer report` reads) refuses before handing over any session.

#include <pacer/metrics/samples_file.hpp>
#include <pacer/metrics/samples_stream.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace pacer::metrics {
namespace {

namespace fs = std::filesystem;

fs::path write_temp(const std::string& text) {
    static int counter = 0;
    const auto p = fs::temp_directory_path() /
                   fmt::format("pacer-samples-stream-{}-{}", ::getpid(), counter++);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

std::vector<samples_session> streamed(const fs::path& p) {
    std::vector<samples_session> out;
    stream_samples(p, samples_rules::lenient,
                   [&](samples_session&& s) { out.push_back(std::move(s)); });
    return out;
}

void expect_same(const std::string& text) {
    const auto p = write_temp(text);
    const auto whole = parse_samples(text, samples_rules::lenient).sessions;
    const auto got = streamed(p);
    fs::remove(p);
    ASSERT_EQ(got.size(), whole.size()) << text;
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].index, whole[i].index) << text;
        EXPECT_EQ(got[i].samples.session_start_s, whole[i].samples.session_start_s) << text;
        EXPECT_EQ(got[i].samples.deviation_s, whole[i].samples.deviation_s) << text;
    }
}

TEST(SamplesStream, GivesWhatTheLenientReaderGives) {
    expect_same(R"({"schema_version":1,"sessions":[{"index":4,"session_start_s":12.5,)"
                R"("deviation_s":[0.000001,-0.25,3,18446744073709551615]},)"
                R"({"deviation_s":[]},{"index":9,"session_start_s":null,"deviation_s":[1e-3]}]})");
    // Lenient rules: a session that is not an object is skipped, a deviation that is not a
    // number is 0 (a nested container too), deviation_s that is not an array is empty, an
    // index that does not fit is the previous + 1, the last duplicate key wins.
    expect_same(R"({"sessions":[7,"x",{"index":-1,"deviation_s":[true,null,"a",[1,2],{"b":1},2]},)"
                R"({"deviation_s":{"a":[1]}},{"index":"3","deviation_s":"no"},)"
                R"({"index":2,"index":5,"deviation_s":[1],"deviation_s":[2,3],)"
                R"("other":{"deviation_s":[9],"index":99}}],"open_loop":{"sessions":[{}]}})");
    // Not an object, or no sessions array: no sessions.
    expect_same(R"([{"sessions":[{"index":1}]}])");
    expect_same(R"({"sessions":{"index":1}})");
    expect_same(R"({"nested":{"sessions":[{"index":1}]}})");
    expect_same(" {\"sessions\" : [ { \"index\" : 1 , \"deviation_s\" : [ 1 , 2 ] } ] } \n");
}

TEST(SamplesStream, LargeFilesCrossChunkBoundaries) {
    std::string text = R"({"sessions":[)";
    for (int s = 0; s < 40; ++s) {
        text += fmt::format(R"({}{{"index":{},"session_start_s":{}.123456789,"deviation_s":[)",
                            s ? "," : "", s, 1000 + s);
        for (int k = 0; k < 1000; ++k)
            text += fmt::format("{}{}", k ? "," : "", (k * 37 % 1001) * 1e-6 - 0.0003);
        text += "]}";
    }
    text += "]}";
    ASSERT_GT(text.size(), 4u * 64 * 1024); // several of the reader's 64 kB chunks
    expect_same(text);
}

TEST(SamplesStream, RefusesWhatIsNotJsonBeforeAnySession) {
    for (const std::string& bad : std::vector<std::string>{
             R"({"sessions":[{"index":1,"deviation_s":[1]},{"index":2,"deviation_s":[1,)",
             R"({"sessions":[{"index":1}]} trailing)", std::string("")}) {
        const auto p = write_temp(bad);
        std::size_t visited = 0;
        try {
            stream_samples(p, samples_rules::lenient, [&](samples_session&&) { ++visited; });
            ADD_FAILURE() << "accepted: " << bad;
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()).rfind(p.string() + " is not valid JSON: ", 0), 0u)
                << e.what();
        }
        EXPECT_EQ(visited, 0u) << bad;
        fs::remove(p);
    }
    const auto missing = fs::temp_directory_path() / "pacer-samples-stream-none/samples.json";
    try {
        stream_samples(missing, samples_rules::lenient, [](samples_session&&) {});
        ADD_FAILURE();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), missing.string() + " cannot be read");
    }
}

// What one reader made of a file: its error, or its sessions and arrivals.
struct outcome {
    std::optional<std::string> error;
    std::vector<samples_session> sessions;
    std::optional<std::vector<arrival_sample>> arrivals;
};

// The error as far as both readers must agree: strict's "is malformed: <reason>" names the
// reason in each reader's words.
std::string comparable(const std::string& error) {
    const auto at = error.find(" is malformed: ");
    return at == std::string::npos ? error : error.substr(0, at + 14);
}

outcome whole_file(const fs::path& p, samples_rules rules) {
    outcome o;
    try {
        auto r = read_samples(p, rules);
        o.sessions = std::move(r.sessions);
        o.arrivals = std::move(r.arrivals);
    } catch (const std::runtime_error& e) {
        o.error = comparable(e.what());
    }
    return o;
}

outcome streamed_file(const fs::path& p, samples_rules rules) {
    outcome o;
    try {
        o.arrivals = stream_samples(
            p, rules, [&](samples_session&& s) { o.sessions.push_back(std::move(s)); });
    } catch (const std::runtime_error& e) {
        o.error = comparable(e.what());
    }
    return o;
}

void expect_equal(const outcome& a, const outcome& b, const std::string& what) {
    ASSERT_EQ(a.error, b.error) << what;
    if (a.error)
        return;
    ASSERT_EQ(a.sessions.size(), b.sessions.size()) << what;
    for (std::size_t i = 0; i < a.sessions.size(); ++i) {
        const auto& x = a.sessions[i];
        const auto& y = b.sessions[i];
        EXPECT_EQ(x.index, y.index) << what;
        EXPECT_EQ(x.samples.session_start_s, y.samples.session_start_s) << what;
        EXPECT_EQ(x.samples.deviation_s, y.samples.deviation_s) << what;
        ASSERT_EQ(x.handshake.has_value(), y.handshake.has_value()) << what;
        if (x.handshake) {
            EXPECT_EQ(x.handshake->connect_s, y.handshake->connect_s) << what;
            EXPECT_EQ(x.handshake->tls_s, y.handshake->tls_s) << what;
            EXPECT_EQ(x.handshake->upgrade_s, y.handshake->upgrade_s) << what;
            EXPECT_EQ(x.handshake->update_ack_s, y.handshake->update_ack_s) << what;
        }
    }
    ASSERT_EQ(a.arrivals.has_value(), b.arrivals.has_value()) << what;
    if (!a.arrivals)
        return;
    ASSERT_EQ(a.arrivals->size(), b.arrivals->size()) << what;
    for (std::size_t i = 0; i < a.arrivals->size(); ++i) {
        const auto& x = (*a.arrivals)[i];
        const auto& y = (*b.arrivals)[i];
        EXPECT_EQ(x.index, y.index) << what;
        EXPECT_EQ(x.offset_ns, y.offset_ns) << what;
        EXPECT_EQ(x.dispatched_s, y.dispatched_s) << what;
        EXPECT_EQ(x.completed_s, y.completed_s) << what;
        EXPECT_EQ(x.cap_delay_s, y.cap_delay_s) << what;
        EXPECT_EQ(x.dropped, y.dropped) << what;
        EXPECT_EQ(x.failed, y.failed) << what;
    }
}

// A file whose only arrival has `fields`.
std::string one_arrival(const std::string& fields) {
    return R"({"sessions":[{"deviation_s":[1]}],"open_loop":{"arrivals":[{)" + fields + "}]}}";
}

// `text` padded with spaces so that it ends exactly where the reader's first 64 kB piece
// does, then `tail`.
std::string at_chunk_end(const std::string& text, const std::string& tail) {
    return text + std::string(64 * 1024 - text.size(), ' ') + tail;
}

TEST(SamplesStream, EqualsReadSamplesUnderBothRules) {
    const std::string good_arrival =
        R"("index":3,"offset_ns":-25,"dispatched_s":0.25,"completed_s":null,)"
        R"("cap_delay_s":0.5,"dropped":false,"failed":true)";
    const std::string handshake = R"("connect":0.001,"tls":0,"upgrade":0.002)";
    const std::vector<std::string> inputs{
        // Well formed.
        R"({"schema_version":1,"sessions":[{"index":4,"session_start_s":12.5,"deviation_s":)"
        R"([0.000001,-0.25,3,18446744073709551615],"handshake_s":{)" +
            handshake +
            R"(,"session_update_ack":0.003}},{"deviation_s":[],"handshake_s":null},)"
            R"({"session_start_s":null,"deviation_s":[1e-3],"handshake_s":{)" +
            handshake +
            R"(,"session_update_ack":null}}],"open_loop":{"start_s":1.5,)"
            R"("arrivals":[{)" +
            good_arrival + "},{" + good_arrival + "}]}}",
        R"({"open_loop":{"arrivals":[]},"sessions":[{"deviation_s":[2]}]})",
        R"({"sessions":[]})",
        // Not JSON: empty, incomplete, trailing text, a comment.
        "",
        " ",
        "{",
        R"({"sessions":[{"deviation_s":[1]},{"deviation_s":[1,)",
        R"({"sessions":[]} x)",
        R"({"sessions":[]}{})",
        "{\"sessions\":[]} \n\t ",
        R"({"sessions":[]} // no)",
        at_chunk_end(R"({"sessions":[{"deviation_s":[1]}]})", "\n"),
        at_chunk_end(R"({"sessions":[{"deviation_s":[1]}]})", "\nx"),
        at_chunk_end(R"({"sessions":[{"deviation_s":[1]}])", "}"),
        at_chunk_end(R"({"sessions":[{"deviation_s":[1]}])", ""),
        // No sessions array.
        "[1,2]",
        "5",
        R"({"runs":[]})",
        R"({"sessions":{}})",
        R"({"sessions":null,"open_loop":5})",
        R"({"nested":{"sessions":[{"deviation_s":[1]}]}})",
        // Sessions that are not objects, deviations that are not numbers.
        R"({"sessions":[3,{"deviation_s":[1]}]})",
        R"({"sessions":[[1],"x",null,{"deviation_s":[1]}]})",
        R"({"sessions":[{"deviation_s":[[1],{"a":1},true,null,"x",2]}]})",
        R"({"sessions":[{"index":0}]})",
        R"({"sessions":[{"deviation_s":5}]})",
        R"({"sessions":[{"deviation_s":{"a":[1]}}]})",
        // Indexes that are not recorded, or do not fit.
        R"({"sessions":[{"index":4294967296,"deviation_s":[]},{"deviation_s":[]}]})",
        R"({"sessions":[{"index":2.7,"deviation_s":[]},{"index":-1,"deviation_s":[]}]})",
        R"({"sessions":[{"index":"3","deviation_s":[]},{"index":[9],"deviation_s":[]}]})",
        R"({"sessions":[{"index":2,"index":"x","deviation_s":[1],"deviation_s":[2,3]}]})",
        // Handshakes.
        R"({"sessions":[{"deviation_s":[],"handshake_s":{"connect":1}}]})",
        R"({"sessions":[{"deviation_s":[],"handshake_s":{)" + handshake +
            R"(,"session_update_ack":{}}}]})",
        R"({"sessions":[{"deviation_s":[],"handshake_s":{)" + handshake +
            R"(,"session_update_ack":"x"}}]})",
        R"({"sessions":[{"deviation_s":[],"handshake_s":{"connect":{},"tls":0,"upgrade":0}}]})",
        R"({"sessions":[{"deviation_s":[],"handshake_s":{"connect":[1],"tls":0,"upgrade":0}}]})",
        R"({"sessions":[{"deviation_s":[],"handshake_s":{"connect":"1","tls":0,"upgrade":0}}]})",
        R"({"sessions":[{"deviation_s":[],"handshake_s":"x"},{"deviation_s":[],)"
        R"("handshake_s":[1]}]})",
        // open_loop sections.
        R"({"open_loop":5})",
        R"({"sessions":[],"open_loop":5})",
        R"({"sessions":[],"open_loop":null})",
        R"({"sessions":[],"open_loop":{}})",
        R"({"sessions":[],"open_loop":{"arrivals":{}}})",
        R"({"sessions":[],"open_loop":{"arrivals":[[]]}})",
        R"({"sessions":[],"open_loop":{"arrivals":[5]}})",
        R"({"sessions":[],"open_loop":5,"open_loop":{"arrivals":[]}})",
        R"({"open_loop":{"arrivals":[3]},"sessions":[{"deviation_s":[1]},{"deviation_s":"x"}]})",
        one_arrival(good_arrival),
        one_arrival(R"("index":3)"),
        one_arrival(good_arrival + R"(,"index":1.5)"),
        one_arrival(good_arrival + R"(,"index":-1)"),
        one_arrival(good_arrival + R"(,"index":2.0)"),
        one_arrival(good_arrival + R"(,"offset_ns":1e300)"),
        one_arrival(good_arrival + R"(,"offset_ns":9223372036854775808)"),
        one_arrival(good_arrival + R"(,"dispatched_s":"x")"),
        one_arrival(good_arrival + R"(,"completed_s":{})"),
        one_arrival(good_arrival + R"(,"cap_delay_s":null)"),
        one_arrival(good_arrival + R"(,"dropped":1)"),
        one_arrival(good_arrival + R"(,"failed":[true])"),
    };
    for (const auto rules : {samples_rules::strict, samples_rules::lenient}) {
        const char* mode = rules == samples_rules::strict ? "strict: " : "lenient: ";
        for (const auto& text : inputs) {
            const auto p = write_temp(text);
            const auto what = mode + text.substr(0, 200);
            expect_equal(streamed_file(p, rules), whole_file(p, rules), what);
            fs::remove(p);
        }
        const auto missing = fs::temp_directory_path() / "pacer-samples-stream-none/samples.json";
        expect_equal(streamed_file(missing, rules), whole_file(missing, rules), mode);
        const auto folder = fs::temp_directory_path();
        expect_equal(streamed_file(folder, rules), whole_file(folder, rules), mode);
    }
}

} // namespace
} // namespace pacer::metrics
