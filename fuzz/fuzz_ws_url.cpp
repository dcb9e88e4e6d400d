// `parse_ws_url` reads --url: it returns an endpoint with a host, an all-digit port and a
// target starting with '/', or throws pacer::bad_input, and nothing else.

#include <pacer/core/bad_input.hpp>
#include <pacer/transport/ws_connection.hpp>

#include "fail.hpp"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <typeinfo>

namespace {

using pacer::fuzz::fail;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view url(reinterpret_cast<const char*>(data), size);
    try {
        const auto ep = pacer::transport::parse_ws_url(url);
        if (ep.host.empty())
            fail("empty host", url);
        if (ep.port.empty() || ep.port.find_first_not_of("0123456789") != std::string::npos)
            fail("port is not all digits", ep.port);
        if (ep.target.empty() || ep.target.front() != '/')
            fail("target does not start with '/'", ep.target);
    } catch (const pacer::bad_input&) {
        // The documented failure.
    } catch (const std::exception& e) {
        fail(typeid(e).name(), e.what());
    }
    return 0;
}
