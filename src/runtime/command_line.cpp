// This process's command line, header values redacted (command_line.hpp).

#include <pacer/runtime/command_line.hpp>

#include <fstream>
#include <iterator>

namespace pacer::runtime {

namespace {

// "Name: value" -> "Name: <redacted>"; without a colon, all of it.
std::string redact_value(const std::string& header) {
    const auto colon = header.find(':');
    return colon == std::string::npos ? std::string("<redacted>")
                                      : header.substr(0, colon) + ": <redacted>";
}

} // namespace

std::vector<std::string> redact_headers(std::vector<std::string> args,
                                        const std::vector<std::string_view>& header_options) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        for (const auto opt : header_options) {
            const std::string_view a = args[i];
            if (a == opt && i + 1 < args.size()) {
                args[i + 1] = redact_value(args[i + 1]);
                ++i;
                break;
            }
            // --header=Name: value, and -HName: value for a one-letter option
            const bool long_form = opt.size() > 2 && a.size() > opt.size() + 1 &&
                                   a.substr(0, opt.size()) == opt && a[opt.size()] == '=';
            const bool short_form = opt.size() == 2 && a.size() > 2 && a.substr(0, 2) == opt;
            if (long_form || short_form) {
                const std::size_t at = long_form ? opt.size() + 1 : 2;
                args[i] = std::string(a.substr(0, at)) + redact_value(std::string(a.substr(at)));
                break;
            }
        }
    }
    return args;
}

boost::json::array recorded_command_line(const std::vector<std::string_view>& header_options) {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::string cur;
    for (char c : raw) {
        if (c == '\0') {
            args.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty())
        args.push_back(std::move(cur));
    boost::json::array out;
    for (auto& a : redact_headers(std::move(args), header_options))
        out.emplace_back(a);
    return out;
}

} // namespace pacer::runtime
