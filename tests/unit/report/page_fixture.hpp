#pragma once
// What the report tests share (test_html_report*.cpp): a folder to write a made-up result
// folder into, and the readers of the page they check (a cell's data-value and text, an
// <svg> element and its data marks).

#include "unit/scratch_folder.hpp"
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace pacer::test::page {

/// A fresh result folder for one test, removed at its end.
class temp_folder {
public:
    const std::filesystem::path& path() const { return dir_.path; }

private:
    scratch_folder dir_{"pacer-report"};
};

/// Writes `text` to `p`, creating its folders.
inline void write(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

/// The data-value of the cell whose data-key is `key`, or nullopt when absent.
inline std::optional<std::string> data_value(const std::string& html, const std::string& key) {
    const auto k = html.find("data-key=\"" + key + "\" data-value=\"");
    if (k == std::string::npos)
        return std::nullopt;
    const auto start = html.find("data-value=\"", k) + 12;
    return html.substr(start, html.find('"', start) - start);
}

/// The text of the cell whose data-key is `key` ("(absent)" when there is none).
inline std::string cell_text(const std::string& html, const std::string& key) {
    const auto k = html.find("data-key=\"" + key + "\"");
    if (k == std::string::npos)
        return "(absent)";
    const auto gt = html.find('>', k);
    return html.substr(gt + 1, html.find("</td>", gt) - gt - 1);
}

/// The <svg id="id"> element, or "" when absent.
inline std::string svg_of(const std::string& html, const std::string& id) {
    const auto a = html.find("<svg id=\"" + id + "\"");
    if (a == std::string::npos)
        return "";
    return html.substr(a, html.find("</svg>", a) + 6 - a);
}

/// Data marks (lines, bars, points, cells) carry a hover title; frames and reference lines
/// (</line>) do not count.
inline std::size_t marks(const std::string& svg) {
    std::size_t n = 0;
    for (const char* end : {"</title></rect>", "</title></circle>", "</title></polyline>"})
        for (auto p = svg.find(end); p != std::string::npos; p = svg.find(end, p + 1))
            ++n;
    return n;
}

} // namespace pacer::test::page
