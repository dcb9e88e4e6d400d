#pragma once
// Internal to the report module: the scaffolding of report.html that html_report.cpp defines
// (figures printed from the summary with their data-key/data-value, sections, the page, the
// environment), shared with http_report.cpp, which renders `pacer http` folders.

#include <pacer/report/result_folder.hpp>
#include <pacer/report/svg.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace pacer::report::detail {

/// How a figure's number is shown: seconds and millis as "12.3 ms", counts plain, flags yes/no.
enum class unit { seconds, count, ratio, flag, text, cores, bytes, millis };

struct figure {
    std::string label;
    std::vector<std::string> path; ///< keys into the summary (array items as "[i]")
    unit u = unit::seconds;
};

const boost::json::value* lookup(const boost::json::object& root,
                                 const std::vector<std::string>& path);
std::optional<double> number_at(const boost::json::object& root,
                                const std::vector<std::string>& path);
/// A <td> with the summary's value at `path` (data-key, data-value) and its text.
std::string figure_cell(const boost::json::object& root, const std::vector<std::string>& path,
                        unit u, const std::string& prefix);
/// A two-column table of `figs` (absent ones print "–").
std::string figure_table(const boost::json::object& s, const std::vector<figure>& figs);
/// The figures of `figs` that `s` has (a summary of another version or mode lacks some).
std::vector<figure> present_in(const boost::json::object& s, std::vector<figure> figs);
/// The whole page around `body`.
std::string page(const std::string& title, const std::string& body);
/// A <section> with a heading, a paragraph, a plot and its "numbers of this figure" table.
std::string section(const std::string& id, const std::string& title, const std::string& text,
                    const std::string& plot, const std::string& table);
/// A table row of escaped text cells.
std::string row(std::initializer_list<std::string> cells);
/// A numeric <td> (value × scale, "–" when absent).
std::string num_cell(std::optional<double> v, double scale);
/// A scalar or an array of scalars as people write it.
std::string text_of(const boost::json::value& v);
/// The environment and command-line section; `side` names a comparison's side ("" for none).
std::string environment(const result_folder& f, const std::string& side);
/// The notes section (interrupted, unreadable files); "" when there is nothing to say.
std::string notes(const result_folder& f, const std::string& side);
/// A downsampled empirical CDF of non-negative values: (value × scale, fraction ≤ value).
series cdf_series(std::string name, std::vector<double> v, double scale, double floor_v,
                  std::size_t colour);
/// A plot-sized placeholder saying why there is nothing to draw.
std::string no_data(const std::string& id, const std::string& title, const std::string& why);
/// The same from a histogram of the values (each point within 1/2,048 of the exact one).
series cdf_series(std::string name, const log_histogram& h, double scale, double floor_v,
                  std::size_t colour);
double max_of(const std::vector<double>& v, double fallback);
/// A round interval width cutting `span` seconds into at most `max_bins`.
double bin_width(double span, std::size_t max_bins);

/// The "offered and achieved rate per stage" section of a staged open loop (summary.json's
/// `open_loop.stages`): a bar chart and the stage rows; "" when the run had no stages.
std::string stages_section(const boost::json::object& summary);
/// Vertical lines where each stage but the last ends, on a plot over the schedule's time
/// (plus `shift` seconds, when the plot's axis has another origin).
void stage_ends(const boost::json::object& summary, xy_plot& p, double shift = 0);

/// The page of a `pacer http` run or capacity search (http_report.cpp).
std::string render_http_report(const result_folder& f);

/// The tables of a `pacer http` folder (`requests`, `tokens`) or a capacity search (`probes`)
/// (http_tables.cpp).
std::vector<table> build_http_tables(const result_folder& f);

/// With telemetry (telemetry.jsonl, summary.json's `telemetry`): `telemetry`, one row per
/// sample, and `energy`, one row per measured window; none without (telemetry_report.cpp).
std::vector<table> telemetry_tables(const result_folder& f);

/// The value at `path` (keys, one per level) of `o` as a cell of its own kind (flag, count,
/// number, text); null where the path is missing or leads to an array or object.
cell json_cell(const boost::json::object& o, std::initializer_list<const char*> path);
/// report.html's power and utilisation over time, with the energy of each window; "" without
/// telemetry.jsonl (telemetry_report.cpp).
std::string telemetry_sections(const result_folder& f);

} // namespace pacer::report::detail
