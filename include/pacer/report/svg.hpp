#pragma once
// Small inline-SVG plotting helpers for report.html: an x/y plot (lines, step lines, bars,
// reference lines, markers) on linear or log axes, a categorical bar chart and a heat strip.
// Every mark carries a <title>, so a browser shows its value on hover; all text is escaped.
// Output is a self-contained <svg> element: no script, no external reference.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pacer::report {

/// Text for HTML and SVG content and attribute values: & < > " ' escaped.
std::string escape(std::string_view text);

/// A number for people: up to 4 significant digits, no exponent between 1e-4 and 1e6; from
/// 1e-9 to 1e-4 a plain decimal of 3 significant digits (0.0000975).
std::string format_number(double v);

struct axis {
    std::string label;
    double lo = 0, hi = 1;
    bool log = false; ///< base 10; lo must be > 0
    /// Log axes only: ticks at the powers of two within [lo, hi] (1, 2, 4, 8, 16, ...),
    /// labelled as they are, instead of the powers of ten (e.g. concurrency).
    bool powers_of_two = false;

    /// Fraction 0..1 of the way from lo to hi (clamped).
    double fraction(double v) const;
    /// Tick values: 1-2-5 steps (linear), powers of ten (log) or of two (`powers_of_two`).
    std::vector<double> ticks() const;
};

/// A linear axis from 0 (or the data's minimum when negative) to a round value above `max`.
axis linear_axis(std::string label, double min, double max);
/// A log axis covering [min, max] in whole decades (min, max > 0).
axis log_axis(std::string label, double min, double max);

struct series {
    std::string name;
    std::vector<std::pair<double, double>> points;
    bool step = false;      ///< draw as a step line (cumulative counts)
    bool markers = false;   ///< a dot with a hover title at every point
    bool dashed = false;    ///< a dashed line (e.g. what was offered, beside what happened)
    std::size_t colour = 0; ///< index into the palette
    /// Hover text of each point (same size as points), else "name: x, y".
    std::vector<std::string> point_titles;
};

/// Vertical bars over a continuous x: [x0, x1] with height y.
struct bar_series {
    std::string name;
    struct bar {
        double x0, x1, y;
        std::string title;
    };
    std::vector<bar> bars;
    std::size_t colour = 0;
};

/// A labelled reference line (the 80 ms line, an SLO, the capacity found).
struct ref_line {
    double at = 0;
    std::string label;
    bool vertical = false;
    bool danger = true; ///< red dashes; else grey
};

/// A point with its own colour and hover text (e.g. a level's validity verdict).
struct marker {
    double x = 0, y = 0;
    bool good = true;
    std::string title;
};

struct xy_plot {
    std::string id;    ///< the <svg> element's id
    std::string title; ///< the <svg>'s <title>
    axis x, y;
    std::vector<series> lines;
    std::vector<bar_series> bars;
    std::vector<ref_line> refs;
    std::vector<marker> markers;
};

std::string render(const xy_plot& p);

/// Bars by category: one group per category, one bar per series in each group.
struct bar_chart {
    std::string id, title;
    std::vector<std::string> categories;
    /// (series name, one value per category; nullopt draws no bar)
    std::vector<std::pair<std::string, std::vector<std::optional<double>>>> values;
    axis y;
    std::vector<ref_line> refs; ///< horizontal only
    std::string unit;           ///< appended to hover values, e.g. "ms"
};

std::string render(const bar_chart& c);

/// Rows x columns of cells coloured on a log scale from `lo` to `hi`; a cell at or above
/// `threshold` is red. nullopt cells are blank (nothing happened there).
struct heat_strip {
    std::string id, title;
    std::vector<std::string> row_labels;
    double x0 = 0, x1 = 1; ///< the columns span x0..x1 (seconds)
    std::string x_label;
    std::vector<std::vector<std::optional<double>>> cells; ///< [row][column]
    double lo = 1e-5, hi = 0.08, threshold = 0.08;
    std::string unit_label; ///< value scale for hover text, e.g. "ms"
    double unit_scale = 1e3;
};

std::string render(const heat_strip& h);

} // namespace pacer::report
