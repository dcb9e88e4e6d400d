// `input-send-receipts.json` has one type and one parser (trace/receipts): pacer's own files are
// read back strictly at the end of a run; any recorded folder (replay, reports, serving levels,
// pacer record) leniently, with other clients' receipts.

#include <pacer/trace/receipts.hpp>

#include <boost/json/parse.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pacer::trace {
namespace {

constexpr std::string_view id32 = "0123456789abcdef0123456789abcdef";

// Moved from metrics (ParseReceipts.ReadsTheC4Shape) with its assertions.
TEST(ParseReceipts, ReadsTheC4Shape) {
    const auto r = parse_receipts(R"({"session_start_s":null,"admitted":false,"appends":[]})",
                                  receipt_rules::any_client);
    EXPECT_FALSE(r.session_start_s);
    EXPECT_EQ(r.admitted, false);
    const auto s = parse_receipts(
        R"({"session_start_s":1.5,"admitted":true,"appends":[{"event_id":"e","seq":0,"scheduled_s":1.5,"start_s":1.5,"completed_s":1.6}]})",
        receipt_rules::any_client);
    ASSERT_EQ(s.appends.size(), 1u);
    EXPECT_EQ(s.appends[0].id(), "e");
    EXPECT_DOUBLE_EQ(*s.appends[0].scheduled(), 1.5);
    EXPECT_THROW(parse_receipts("{", receipt_rules::any_client), std::runtime_error);
    EXPECT_THROW(parse_receipts(R"({"session_start_s":1})", receipt_rules::any_client),
                 std::runtime_error);
}

// What the session writes (head, appends, tail) is what the parser reads, under both rules.
TEST(ParseReceipts, ReadsWhatTheFormatterWrites) {
    session_result r;
    r.session_start_s = 100.25;
    r.admitted = true;
    append_receipt a;
    ASSERT_TRUE(a.set_id(id32));
    a.seq = 0;
    a.scheduled_s = 100.25;
    a.start_s = 100.2501;
    a.completed_s = 100.2502;
    append_receipt b = a;
    b.seq = 1;
    b.scheduled_s = 100.33;
    b.start_s = 100.3303;
    b.completed_s = 100.3304;
    std::string text = receipts_head(r) + receipt_json(a) + "," + receipt_json(b);
    r.appends_sent = 2;
    text += receipts_tail(r);
    for (const auto rules : {receipt_rules::pacer, receipt_rules::any_client}) {
        const auto parsed = parse_receipts(text, rules);
        EXPECT_DOUBLE_EQ(*parsed.session_start_s, 100.25);
        EXPECT_EQ(parsed.admitted, true);
        ASSERT_EQ(parsed.appends.size(), 2u);
        EXPECT_EQ(parsed.appends[1].id(), id32);
        EXPECT_EQ(parsed.appends[1].seq, 1u);
        EXPECT_DOUBLE_EQ(parsed.appends[1].scheduled_s, 100.33);
        EXPECT_DOUBLE_EQ(parsed.appends[1].start_s, 100.3303);
        EXPECT_DOUBLE_EQ(parsed.appends[1].completed_s, 100.3304);
    }
    session_result back;
    EXPECT_EQ(read_receipts_text(back, text, "the receipts"), "");
    ASSERT_EQ(back.appends.size(), 2u);
    EXPECT_EQ(back.appends[0].id(), id32);

    session_result empty;
    const auto none = parse_receipts(receipts_tail(empty), receipt_rules::pacer);
    EXPECT_FALSE(none.session_start_s);
    EXPECT_EQ(none.admitted, false);
    EXPECT_TRUE(none.appends.empty());
}

// C1/C2 receipts record no `scheduled_s` and other clients may use short ids: any client's
// rules read them (no schedule: NaN, `scheduled()` nullopt); pacer's rules refuse them.
TEST(ParseReceipts, OnlyAnyClientRulesReadReceiptsWithoutScheduleOrShortIds) {
    const std::string c2 =
        R"({"session_start_s":2.0,"appends":[{"event_id":"e0","seq":0,"start_s":2.0,"completed_s":2.1}]})";
    const auto r = parse_receipts(c2, receipt_rules::any_client);
    EXPECT_FALSE(r.admitted);
    ASSERT_EQ(r.appends.size(), 1u);
    EXPECT_EQ(r.appends[0].id(), "e0");
    EXPECT_FALSE(r.appends[0].scheduled());
    EXPECT_THROW(parse_receipts(c2, receipt_rules::pacer), std::runtime_error);
    session_result s;
    EXPECT_EQ(read_receipts_text(s, c2, "the receipts").rfind("the receipts: append receipt 0", 0),
              0u);

    // A 32-character id without a schedule: still not pacer's.
    const std::string no_schedule = R"({"appends":[{"event_id":")" + std::string(id32) +
                                    R"(","seq":0,"start_s":2.0,"completed_s":2.1}]})";
    EXPECT_NO_THROW(parse_receipts(no_schedule, receipt_rules::any_client));
    EXPECT_THROW(parse_receipts(no_schedule, receipt_rules::pacer), std::runtime_error);
}

TEST(ParseReceipts, RefusesWhatNoRulesRead) {
    const auto append = [](std::string_view fields) {
        return R"({"session_start_s":1.0,"appends":[{)" + std::string(fields) + "}]}";
    };
    const std::string id = R"("event_id":")" + std::string(id32) + R"(",)";
    const std::string times = R"("scheduled_s":1.0,"start_s":1.0,"completed_s":1.1)";
    ASSERT_NO_THROW(parse_receipts(append(id + R"("seq":3,)" + times), receipt_rules::pacer));
    for (const auto& bad : {
             append(R"("event_id":")" + std::string(33, 'a') + R"(","seq":0,)" + times),
             append(id + R"("seq":-1,)" + times),
             append(id + R"("seq":1.5,)" + times),
             append(id + times),
             append(id + R"("seq":0,"scheduled_s":1.0,"start_s":"1.0","completed_s":1.1)"),
             append(id + R"("seq":0,"scheduled_s":1.0,"start_s":1.0)"),
             std::string(R"({"session_start_s":"1","appends":[]})"),
             std::string(R"({"appends":[1]})"),
             std::string("[]"),
         }) {
        EXPECT_THROW(parse_receipts(bad, receipt_rules::any_client), std::runtime_error) << bad;
        EXPECT_THROW(parse_receipts(bad, receipt_rules::pacer), std::runtime_error) << bad;
    }
}

// samples.json's read-back: the deviations alone, in order, as the receipts give them; an error
// worded as read_receipts_text words it, and nothing kept from a refused file.
TEST(ParseReceipts, DeviationsAloneAreTheReceiptsDeviations) {
    session_result r;
    r.session_start_s = 40.0;
    std::string text = receipts_head(r);
    std::vector<double> expected;
    for (std::uint64_t i = 0; i < 50; ++i) {
        append_receipt a;
        ASSERT_TRUE(a.set_id(id32));
        a.seq = i;
        a.scheduled_s = 40.0 + 0.08 * static_cast<double>(i);
        a.start_s = a.scheduled_s + (i % 2 == 0 ? 1e-4 : -3e-6) * static_cast<double>(i);
        a.completed_s = a.start_s + 1e-5;
        expected.push_back(a.start_s - a.scheduled_s);
        if (i > 0)
            text += ",";
        append_receipt_json(text, a);
    }
    r.appends_sent = 50;
    text += receipts_tail(r);
    const auto parsed = parse_receipts(text, receipt_rules::pacer);
    std::vector<double> out = {9.0, 9.0}; // cleared first
    ASSERT_EQ(read_receipt_deviations(text, "the receipts", out), "");
    ASSERT_EQ(out.size(), parsed.appends.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i], parsed.appends[i].start_s - parsed.appends[i].scheduled_s) << i;
        EXPECT_NEAR(out[i], expected[i], 1e-9) << i;
    }

    // The last of two `appends` arrays is the one read.
    const std::string one = R"({"event_id":")" + std::string(id32) +
                            R"(","seq":0,"scheduled_s":1.0,"start_s":1.5,"completed_s":2})";
    ASSERT_EQ(read_receipt_deviations(
                  R"({"appends":[)" + one + "," + one + R"(],"appends":[)" + one + "]}", "x", out),
              "");
    EXPECT_EQ(out, std::vector<double>{0.5});

    // A refused file: the same words as the full reader's, and no deviations.
    const std::string c2 =
        R"({"appends":[)" + one + R"(,{"event_id":"e0","seq":1,"start_s":2.0,"completed_s":2.1}]})";
    session_result full;
    const auto full_error = read_receipts_text(full, c2, "the receipts");
    ASSERT_FALSE(full_error.empty());
    EXPECT_EQ(read_receipt_deviations(c2, "the receipts", out), full_error);
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(read_receipt_deviations("", "the receipts", out),
              read_receipts_text(full, "", "the receipts"));
}

// The oracle for the streaming reader: `parse_receipts` as it was written on Boost.JSON's DOM
// (until 2026-12-02), kept here only to compare with. Either the same result or the same error.
namespace dom {
namespace json = boost::json;
std::optional<double> finite_number(const json::value* v) {
    if (!v || !v->is_number())
        return std::nullopt;
    const double d = v->to_number<double>();
    return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}
append_receipt parse_append(const json::value& item, std::size_t index, receipt_rules rules) {
    if (!item.is_object())
        throw std::runtime_error("append receipt " + std::to_string(index) + " is not an object");
    const auto& o = item.get_object();
    const bool pacer = rules == receipt_rules::pacer;
    append_receipt a;
    const auto* id = o.if_contains("event_id");
    const std::string_view id_text =
        id && id->is_string() ? std::string_view(id->get_string()) : std::string_view();
    if (!a.set_id(id_text) || (pacer && id_text.size() != a.event_id.size()))
        throw std::runtime_error("append receipt " + std::to_string(index) + ": event_id is not " +
                                 (pacer ? "32" : "at most 32") + " characters");
    const auto* seq = o.if_contains("seq");
    const auto start = finite_number(o.if_contains("start_s"));
    const auto completed = finite_number(o.if_contains("completed_s"));
    const auto scheduled = finite_number(o.if_contains("scheduled_s"));
    boost::system::error_code ec;
    if (seq && seq->is_number())
        a.seq = seq->to_number<std::uint64_t>(ec);
    if (!seq || !seq->is_number() || ec || !start || !completed || (pacer && !scheduled))
        throw std::runtime_error(
            "append receipt " + std::to_string(index) +
            " lacks a non-negative integer seq or a number " +
            (pacer ? "scheduled_s, start_s or completed_s" : "start_s or completed_s"));
    a.scheduled_s = scheduled.value_or(std::numeric_limits<double>::quiet_NaN());
    a.start_s = *start;
    a.completed_s = *completed;
    return a;
}
send_receipts parse_receipts(std::string_view text, receipt_rules rules) {
    boost::system::error_code ec;
    const json::value v = json::parse(text, ec);
    if (ec)
        throw std::runtime_error("unreadable JSON: " + ec.message());
    if (!v.is_object())
        throw std::runtime_error("not a JSON object");
    const auto& o = v.get_object();
    send_receipts r;
    if (const auto* s = o.if_contains("session_start_s"); s && !s->is_null()) {
        r.session_start_s = finite_number(s);
        if (!r.session_start_s)
            throw std::runtime_error("session_start_s is neither a number nor null");
    }
    if (const auto* a = o.if_contains("admitted"); a && a->is_bool())
        r.admitted = a->get_bool();
    const auto* appends = o.if_contains("appends");
    if (!appends || !appends->is_array())
        throw std::runtime_error("missing array 'appends'");
    for (const auto& item : appends->get_array())
        r.appends.push_back(parse_append(item, r.appends.size(), rules));
    return r;
}
} // namespace dom

// What a parse gives, as text: the error, or every field (bit-exact numbers).
std::string outcome(std::string_view text, receipt_rules rules, bool use_dom) {
    try {
        const auto r = use_dom ? dom::parse_receipts(text, rules) : parse_receipts(text, rules);
        std::string s = "start=" + (r.session_start_s ? std::to_string(*r.session_start_s) : "-") +
                        " admitted=" + (r.admitted ? std::to_string(*r.admitted) : "-");
        for (const auto& a : r.appends) {
            s += " [" + std::string(a.id()) + " " + std::to_string(a.seq);
            for (double d : {a.scheduled_s, a.start_s, a.completed_s}) {
                char buf[32];
                std::snprintf(buf, sizeof buf, " %a", d);
                s += buf;
            }
            s += "]";
        }
        return s;
    } catch (const std::runtime_error& e) {
        return std::string("error: ") + e.what();
    }
}

// The streaming reader decides every case as the DOM reader did: duplicate keys (the last
// wins), values of the wrong kind at every level, nesting that looks like an append but is
// not one, the forms a number takes, syntax errors after a semantic one, and the error order.
TEST(ParseReceipts, TheStreamingReaderAgreesWithTheDomReader) {
    const std::string id = std::string(id32);
    const std::string ok =
        R"({"event_id":")" + id + R"(","seq":1,"scheduled_s":1.0,"start_s":1.25,"completed_s":2})";
    const std::vector<std::string> cases = {
        R"({"session_start_s":null,"admitted":false,"appends":[]})",
        R"({"session_start_s":1.5,"admitted":true,"appends":[)" + ok + "," + ok + "]}\n",
        R"({"appends":[)" + ok + "]}",
        R"({"appends":[)" + ok + "]} x",
        R"({"appends":[)" + ok + "]",
        R"({"appends":[)" + ok + R"(],"appends":5})",
        R"({"appends":5,"appends":[)" + ok + "]}",
        R"({"appends":[1],"appends":[)" + ok + "]}",
        R"({"appends":[)" + ok + R"(,1,{"seq":"x"}]})",
        R"({"appends":[)" + ok + R"(,[],null,"s",true]})",
        R"({"appends":[{"seq":2}],"session_start_s":"x"})",
        R"({"session_start_s":1,"session_start_s":null,"appends":[]})",
        R"({"session_start_s":null,"session_start_s":{},"appends":[]})",
        R"({"session_start_s":1e400,"appends":[]})",
        R"({"session_start_s":-3,"admitted":1,"appends":[]})",
        R"({"admitted":true,"admitted":"yes","appends":[]})",
        R"({"x":{"appends":[1]},"y":[{"session_start_s":"bad"}],"appends":[]})",
        R"([{"appends":[]}])",
        R"("appends")",
        R"({"appends":{"0":)" + ok + "}}",
        R"({"appends":[[)" + ok + "]]}",
        R"({"appends":[{"nested":)" + ok + "}]}",
        R"({"appends":[{"event_id":")" + id +
            R"(","seq":1,"seq":"2","scheduled_s":1,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"event_id":")" + id +
            R"(","seq":"2","seq":7,"scheduled_s":1,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"event_id":1,"event_id":")" + id +
            R"(","seq":0,"scheduled_s":1,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"event_id":")" + id +
            R"(","event_id":{"a":"b"},"seq":0,"scheduled_s":1,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"event_id":"AB","seq":0,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"event_id":")" + std::string(33, 'a') +
            R"(","seq":0,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":0,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":-0.0,"start_s":-1e-9,"completed_s":0,"scheduled_s":[1]}]})",
        R"({"appends":[{"seq":3.0,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":3.5,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":-1,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":18446744073709551615,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":18446744073709551616,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":1.8446744073709549568e19,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":1,"start_s":1e999,"completed_s":1}]})",
        R"({"appends":[{"seq":1,"start_s":{"start_s":1},"completed_s":1}]})",
        R"({"appends":[{"seq":1,"start_s":1,"completed_s":1,"start_s":null}]})",
        R"({"appends":[{"seq":1,"start_s":9007199254740993,"completed_s":0.1}]})",
        R"({"appends":[{"seq":1,"start_s":1,"completed_s":1,"x":{"seq":"no","y":[{}]}}]})",
        R"({"appends":[{"seq":1,"start_s":1,"completed_s":1}]})",
        R"({"appends":[{"seq":1,"start_s":1,"completed_s":1}]} )",
        R"({"appends":[{"seq":1,"start_s":1,"completed_s":1},{)",
        "",
        "{",
        R"({"session_start_s":"x")",
    };
    for (const auto& text : cases) {
        for (const auto rules : {receipt_rules::pacer, receipt_rules::any_client}) {
            EXPECT_EQ(outcome(text, rules, false), outcome(text, rules, true))
                << text << (rules == receipt_rules::pacer ? " (pacer)" : " (any client)");
        }
    }
    // And the formatter's output, many appends long.
    session_result r;
    r.session_start_s = 12.5;
    r.admitted = true;
    std::string text = receipts_head(r);
    for (std::uint64_t i = 0; i < 500; ++i) {
        append_receipt a;
        ASSERT_TRUE(a.set_id(id32));
        a.seq = i;
        a.scheduled_s = 12.5 + 0.08 * static_cast<double>(i);
        a.start_s = a.scheduled_s + 1e-4 * static_cast<double>(i % 7);
        a.completed_s = a.start_s + 3e-5;
        if (i > 0)
            text += ",";
        append_receipt_json(text, a);
    }
    r.appends_sent = 500;
    text += receipts_tail(r);
    EXPECT_EQ(outcome(text, receipt_rules::pacer, false),
              outcome(text, receipt_rules::pacer, true));
}

} // namespace
} // namespace pacer::trace
