#pragma once
// Internal to the report module: the scaffolding of report.html that html_parts.cpp defines
// (figures printed from the summary with their data-key/data-value, sections, the page, the
// environment), shared by the page files (run_page.cpp, serve_page.cpp, recording_page.cpp,
// html_report.cpp) and http_report.cpp, which renders `pacer http` folders.

#include <pacer/core/histogram.hpp>
#include <pacer/metrics/serving.hpp>
#include <pacer/report/result_folder.hpp>
#include <pacer/report/svg.hpp>
#include <pacer/report/tables.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pacer::report::detail {

/// How a figure's number is shown: seconds and millis as "12.3 ms", counts plain, flags yes/no.
/// `seconds`: a figure in seconds shown in ms; `long_seconds`: one shown in s (waits).
enum class unit { seconds, count, ratio, flag, text, cores, bytes, millis, long_seconds };

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
                        unit u, const std::string& prefix = "");
/// A two-column table of `figs` (absent ones print "–").
std::string figure_table(const boost::json::object& s, const std::vector<figure>& figs);
/// The figures of `figs` that `s` has (a summary of another version or mode lacks some).
std::vector<figure> present_in(const boost::json::object& s, std::vector<figure> figs);
/// The whole page around `body`.
std::string page(const std::string& title, const std::string& body);
/// A <section> with a heading, a paragraph, a plot and its "numbers of this figure" table
/// (shown at once when `open`, else folded until clicked).
std::string section(const std::string& id, const std::string& title, const std::string& text,
                    const std::string& plot, const std::string& table, bool open = false);
/// A table row of escaped text cells.
std::string row(std::initializer_list<std::string> cells);
/// A numeric <td> (value × scale, "–" when absent).
std::string num_cell(std::optional<double> v, double scale = 1);
/// A scalar or an array of scalars as people write it.
std::string text_of(const boost::json::value& v);
/// The environment and command-line section; `side` names a comparison's side ("" for none).
std::string environment(const result_folder& f, const std::string& side = "");
/// The notes section (interrupted, unreadable files); "" when there is nothing to say.
std::string notes(const result_folder& f, const std::string& side = "");
/// A downsampled empirical CDF of non-negative values: (value × scale, fraction ≤ value).
series cdf_series(std::string name, std::vector<double> v, double scale, double floor_v,
                  std::size_t colour);
/// A plot-sized placeholder saying why there is nothing to draw.
std::string no_data(const std::string& id, const std::string& title, const std::string& why);
/// The same from a histogram of the values (each point within 1/2,048 of the exact one).
series cdf_series(std::string name, const log_histogram& h, double scale, double floor_v,
                  std::size_t colour);
double max_of(const std::vector<double>& v, double fallback = 0);
double max_of(const log_histogram& h, double fallback = 0);
/// A round interval width cutting `span` seconds into at most `max_bins`.
double bin_width(double span, std::size_t max_bins);

/// The "offered and achieved rate per stage" section of a staged open loop (summary.json's
/// `open_loop.stages`): a bar chart and the stage rows; "" when the run had no stages.
std::string stages_section(const boost::json::object& summary);
/// Vertical lines where each stage but the last ends, on a plot over the schedule's time
/// (plus `shift` seconds, when the plot's axis has another origin).
void stage_ends(const boost::json::object& summary, xy_plot& p, double shift = 0);

/// A packet further than this from its deadline is late (one packet period, 80 ms).
constexpr double late_s = metrics::pacing_tolerance_s;

/// A summary key as words ("first_unit" → "first unit").
std::string spaced(std::string key);
/// The first and last append start of every session, on the common axis.
struct time_span {
    double t0 = 0, t1 = 0;
    bool any = false;
};
time_span packet_span(const result_folder& f);
/// Every packet's |deviation| (of one serve level, or of all).
log_histogram abs_deviations(const result_folder& f,
                             std::optional<std::uint32_t> level = std::nullopt);
/// The summary's percentiles of one distribution (`keys` under `base`), as a figures table.
std::string dist_table(const boost::json::object& s, const std::vector<std::string>& base,
                       std::initializer_list<const char*> keys, const std::string& label);

/// The open loop's concurrency cap (summary.json's `open_loop.cap`): whether it bound, in a
/// verdict, then its figures; for run and http pages alike.
std::string cap_figures(const boost::json::object& s);

/// The figures of a run's summary table (its pacing, sessions, transport and open loop).
std::vector<figure> run_figures(const boost::json::object& s);

// The sections of the run pages (run_page.cpp). Those taking `folders` draw one series per
// folder (a comparison draws A and B), named by `names`.
std::string deviation_cdf_section(const std::vector<const result_folder*>& folders,
                                  const std::vector<std::string>& names);
std::string send_time_section(const std::vector<const result_folder*>& folders,
                              const std::vector<std::string>& names);
std::string loop_lag_section(const std::vector<const result_folder*>& folders,
                             const std::vector<std::string>& names);
std::string open_loop_sections(const std::vector<const result_folder*>& folders,
                               const std::vector<std::string>& names);
/// Lateness, deviation and sessions over time, on one time axis.
std::string over_time_sections(const result_folder& f);
std::string loop_lag_over_time_section(const result_folder& f);

/// The conversation section of a multi-turn run (summary.json's `turns`): voice-to-voice
/// latency per turn index (bars and a table), interruption latency, reply durations, unsolicited
/// replies; "" when no folder has turns (conversation_page.cpp).
std::string conversation_section(const std::vector<const result_folder*>& folders,
                                 const std::vector<std::string>& names);

/// One run of a serve sweep as a point of the level plots (serve_page.cpp).
struct level_point {
    std::size_t entry = 0; ///< index into summary.levels
    double concurrency = 0;
    bool valid = true, slo_met = true, second_try = false;
    std::string try_label; ///< " (confirm 1)", " (verify 2)", " (again)" or empty
    /// No session of the level reached the server: nothing was measured there (no client
    /// verdict, no serving figure; `aggregate` is null).
    bool unreachable = false;
    const boost::json::object* aggregate = nullptr;
};
/// The sweep's runs (warm-ups apart) that reached no server: level → why, as each run's
/// summary says.
std::map<double, std::string> unreachable_levels(const boost::json::object& s);
/// The sweep's runs as points, in the order of summary.levels.
std::vector<level_point> level_points(const boost::json::object& s);

/// A level's SLO check (summary.json's `levels[i].slo.checks[k]`) as words, its value beside
/// its bound: "turn-ttfa-p95 612 ms (bound ≤ 500 ms)" (serve_page.cpp).
std::string slo_check_text(const boost::json::object& check);
/// A capacity search's answer first: "capacity 7 sessions, limited by unit-miss-rate at 8
/// sessions, boundary held"; "" for a sweep without a capacity (serve_page.cpp).
std::string capacity_headline(const boost::json::object& summary);

/// The sections of a serve sweep: the figures per level, the level table, the capacity
/// (serve_page.cpp).
std::string serve_sections(const std::vector<const result_folder*>& folders,
                           const std::vector<std::string>& names);

/// The sections of a recording (recording_page.cpp).
std::string recording_sections(const result_folder& f);

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
