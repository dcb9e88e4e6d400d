#include <pacer/runtime/files.hpp>
#include <pacer/runtime/json_file.hpp>

#include <boost/json/parse.hpp>

#include <exception>

namespace pacer::runtime {

json_file read_json_file(const std::filesystem::path& path) {
    json_file f;
    f.path = path;
    std::optional<std::string> text;
    try {
        text = read_file_if_exists(f.path);
        f.missing = !text;
    } catch (const std::exception&) {
    }
    if (!text) {
        f.why = "cannot be read";
        return f;
    }
    boost::system::error_code ec;
    auto v = boost::json::parse(*text, ec);
    if (ec) {
        f.why = "is not valid JSON: " + ec.message();
        return f;
    }
    f.json = std::move(v);
    return f;
}

} // namespace pacer::runtime
