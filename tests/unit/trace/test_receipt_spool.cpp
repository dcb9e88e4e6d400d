// `pacer run --trace none` spools the receipts to one unnamed file instead of keeping them in
// memory: each session's text comes back whole and in order, memory stays at one small buffer
// per session whatever the number of packets, and nothing is left in the run folder.

#include <pacer/trace/receipt_spool.hpp>
#include <pacer/trace/writer.hpp>

#include <gtest/gtest.h>

#include "unit/scratch_folder.hpp"
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace trace = pacer::trace;

struct folder : pacer::test::scratch_folder {
    folder() : scratch_folder("pacer-spool") {}
};

TEST(ReceiptSpool, GivesEachSessionsTextBackWholeAndInOrderWithBoundedMemory) {
    folder dir;
    trace::receipt_spool spool(dir.path, 256);
    std::map<std::uint32_t, std::string> expected;
    std::mt19937 rng(7);
    for (int k = 0; k < 20000; ++k) { // three sessions' receipts, interleaved as they arrive
        const std::uint32_t session = rng() % 3;
        const std::string piece = "{\"seq\":" + std::to_string(k) + ",\"start_s\":1." +
                                  std::string(rng() % 90, '7') + "},";
        spool.append(session, piece);
        expected[session] += piece;
        ASSERT_LT(spool.buffered_bytes(), 3u * (256 + 100)) << "a buffer a session, no more";
    }
    EXPECT_TRUE(spool.error().empty()) << spool.error();
    EXPECT_GT(spool.spooled_bytes(), 20000u * 10);
    for (const auto& [session, text] : expected) {
        EXPECT_EQ(spool.take(session), text) << session;
        EXPECT_EQ(spool.take(session), "") << "taken once";
    }
    EXPECT_EQ(spool.buffered_bytes(), 0u);
    EXPECT_TRUE(fs::is_empty(dir.path)) << "the spool file has no name";
}

TEST(ReceiptSpool, KeepsTheTextInMemoryWhenTheFileCannotBeCreated) {
    trace::receipt_spool spool("/nonexistent-pacer-folder", 16);
    EXPECT_FALSE(spool.error().empty());
    spool.append(1, "0123456789abcdef0123");
    spool.append(1, "xyz");
    EXPECT_EQ(spool.take(1), "0123456789abcdef0123xyz");
}

TEST(ReceiptSpool, TheWriterInModeNoneHoldsNoPerPacketText) {
    folder dir;
    trace::writer_options o;
    o.root = dir.path;
    o.what = trace::mode::none;
    trace::writer_core core(o);
    ASSERT_TRUE(core.kept_receipts());
    std::string expected;
    const auto t0 = pacer::time_point{} + std::chrono::seconds(1000);
    for (int k = 0; k < 10000; ++k) { // 10,000 packets of one session, ~120 bytes each
        trace::record r;
        r.what = trace::record::kind::receipt;
        r.session = 4;
        r.payload = "{\"seq\":" + std::to_string(k) + R"(,"scheduled_s":12.345678901,)" +
                    R"("start_s":12.345701234,"completed_s":12.345711111,"bytes":3840},)";
        expected += r.payload;
        core.on_record(t0, std::move(r));
    }
    EXPECT_LT(core.kept_receipts()->buffered_bytes(),
              trace::receipt_spool::default_chunk_bytes + 200)
        << "the receipts went to the spool, not to memory";
    EXPECT_EQ(core.take_receipts(4), expected);
    EXPECT_TRUE(fs::is_empty(dir.path));
}

} // namespace
