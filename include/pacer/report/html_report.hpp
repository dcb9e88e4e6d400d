#pragma once
// `report.html`: one self-contained page for a result folder (inline SVG plots, inline CSS, no
// script, no external reference), readable offline and attachable to an issue.
//
// Every figure of the page that comes from summary.json is printed in a table cell
//   <td data-key="pacing.pacing_abs_deviation_s.p99" data-value="0.00316...">3.165 ms</td>
// whose `data-value` is the summary's number as written (shortest round-trip form), so a test
// or a script can check the page against the summary. Plots are drawn from the per-packet
// files (receipts, samples, schedule) and carry their values as hover titles; the table under
// each plot lists what it shows.

#include <pacer/report/result_folder.hpp>

#include <string>

namespace pacer::report {

/// The page for one folder.
std::string render_report(const result_folder& folder);

/// Two folders side by side: their figures in one table (A, B, B - A) and overlaid plots.
/// Throws folder_error unless both are runs (closed loop, open loop or merged) or both are
/// serve sweeps.
std::string render_comparison(const result_folder& a, const result_folder& b);

} // namespace pacer::report
