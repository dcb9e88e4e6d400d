// The Prometheus text parser reads a server's metrics endpoint (`--server-metrics`). Whatever
// the bytes, it must not crash; no line gives both a sample and a warning; and every sample it
// reads, written back with `format_sample`, reads back as the same sample without a warning.

#include <pacer/telemetry/exposition.hpp>

#include "fail.hpp"
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using pacer::fuzz::fail;

bool same_value(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto e = pacer::telemetry::parse_exposition(text);
    std::size_t lines = 0;
    for (char c : text)
        lines += c == '\n';
    if (!text.empty() && text.back() != '\n')
        ++lines;
    if (e.samples.size() + e.warnings.size() > lines)
        fail("more samples and warnings than lines", text);
    for (const auto& s : e.samples) {
        const auto written = pacer::telemetry::format_sample(s);
        if (written.find('\n') != std::string::npos)
            fail("a written sample spans lines", written);
        const auto back = pacer::telemetry::parse_exposition(written + "\n");
        if (!back.warnings.empty() || back.samples.size() != 1)
            fail("a written sample does not read back", written);
        const auto& b = back.samples[0];
        if (b.name != s.name || b.labels != s.labels || !same_value(b.value, s.value) ||
            b.timestamp_ms != s.timestamp_ms)
            fail("a written sample reads back different", written);
        (void)e.type_of(s.name);
    }
    return 0;
}
