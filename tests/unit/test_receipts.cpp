// `input-send-receipts.json` has one type and one parser (trace/receipts): pacer's own files are
// read back strictly at the end of a run; any recorded folder (replay, reports, serving levels,
// pacer record) leniently, with other clients' receipts.

#include <pacer/trace/receipts.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

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

} // namespace
} // namespace pacer::trace
