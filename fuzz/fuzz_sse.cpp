// The SSE parser reads a server's response body. Whatever the bytes and however they are split,
// it must not crash, must give the same events for a split feed as for a whole one, must keep
// every event within its bound, and `read_openai_chunk` must read any event's data without
// throwing.

#include <pacer/transport/openai_stream.hpp>
#include <pacer/transport/sse.hpp>

#include "fail.hpp"
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using pacer::fuzz::fail;
using pacer::transport::sse_event;
using pacer::transport::sse_parser;

constexpr std::size_t bound = 4096;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0)
        return 0;
    // The first byte chooses where to split the rest.
    const std::string_view all(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::size_t cut = all.empty() ? 0 : data[0] % (all.size() + 1);

    sse_parser whole(bound), split(bound);
    std::vector<sse_event> a, b;
    whole.feed(all, a);
    split.feed(all.substr(0, cut), b);
    split.feed(all.substr(cut), b);
    if (whole.failed() != split.failed())
        fail("split and whole feeds disagree on failure", all);
    if (!whole.failed()) {
        if (a.size() != b.size())
            fail("split and whole feeds give different event counts", all);
        for (std::size_t i = 0; i < a.size(); ++i)
            if (a[i].data != b[i].data || a[i].event != b[i].event || a[i].id != b[i].id)
                fail("split and whole feeds give different events", all);
    }
    for (const auto& e : a) {
        if (e.data.size() > bound)
            fail("an event exceeds the bound", e.data);
        const auto c = pacer::transport::read_openai_chunk(e.data);
        if (c.done && (c.has_text || !c.malformed.empty()))
            fail("[DONE] read as something else too", e.data);
    }
    return 0;
}
