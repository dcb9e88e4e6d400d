// `parse_schedule_json` reads `--schedule FILE`: for any text it returns a document or throws
// pacer::bad_input, nothing else. An accepted document must keep the promises of the
// header (non-negative, non-decreasing offsets whose hash is `sha256`) and survive a round trip
// through `to_json`, the form `pacer schedule --format json` prints.

#include <pacer/core/bad_input.hpp>
#include <pacer/schedule/schedule_file.hpp>

#include "fail.hpp"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

namespace {

namespace sched = pacer::schedule;

using pacer::fuzz::fail;

bool same(const sched::schedule_document& a, const sched::schedule_document& b) {
    return a.spec.process == b.spec.process && a.spec.rate == b.spec.rate &&
           a.spec.burstiness == b.spec.burstiness && a.spec.seed == b.spec.seed &&
           a.spec.count == b.spec.count && a.spec.duration == b.spec.duration &&
           a.offsets == b.offsets && a.sha256 == b.sha256;
}

void check(const sched::schedule_document& doc) {
    for (std::size_t i = 0; i < doc.offsets.size(); ++i) {
        if (doc.offsets[i].count() < 0)
            fail("negative offset");
        if (i > 0 && doc.offsets[i] < doc.offsets[i - 1])
            fail("decreasing offsets");
    }
    if (doc.sha256 != sched::schedule_sha256(doc.offsets))
        fail("sha256 does not match the offsets", doc.sha256);
    const std::string again = sched::to_json(doc.spec, doc.offsets);
    try {
        if (!same(doc, sched::parse_schedule_json(again, "round trip")))
            fail("to_json round trip changes the document", again);
    } catch (const pacer::bad_input& e) {
        fail("to_json of an accepted document is rejected", e.what());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        check(sched::parse_schedule_json(text, "fuzz"));
    } catch (const pacer::bad_input&) {
        // The documented failure.
    } catch (const std::exception& e) {
        fail(typeid(e).name(), e.what());
    }
    return 0;
}
