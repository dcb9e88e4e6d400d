#include <pacer/report/svg.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pacer::report {

namespace {

// Colour-blind-safe palette (Okabe-Ito).
constexpr const char* palette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                   "#56B4E9", "#D55E00", "#F0E442", "#000000"};
const char* colour(std::size_t i) {
    return palette[i % std::size(palette)];
}

constexpr double width = 800, height = 300;
constexpr double left = 72, right = 210, top = 28, bottom = 46;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;

double px(const axis& a, double v) {
    return left + a.fraction(v) * plot_w;
}
double py(const axis& a, double v) {
    return top + (1 - a.fraction(v)) * plot_h;
}

std::string coord(double v) {
    return fmt::format("{:.1f}", v);
}

std::string open_svg(const std::string& id, const std::string& title, double h = height) {
    return fmt::format("<svg id=\"{}\" class=\"plot\" viewBox=\"0 0 {} {}\" width=\"{}\" "
                       "height=\"{}\" role=\"img\"><title>{}</title>\n"
                       "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n",
                       escape(id), width, h, width, h, escape(title), width, h);
}

std::string tick_label(const axis& a, double v) {
    if (a.log && !a.powers_of_two) {
        const double e = std::round(std::log10(v));
        return format_number(std::pow(10.0, e));
    }
    return format_number(v);
}

// Frame, grid, ticks and labels of both axes.
std::string frame(const axis& x, const axis& y) {
    std::string s;
    for (double t : y.ticks()) {
        const double yy = py(y, t);
        s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e4e4e4\"/>"
                         "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
                         coord(left), coord(yy), coord(left + plot_w), coord(yy), coord(left - 5),
                         coord(yy + 4), escape(tick_label(y, t)));
    }
    for (double t : x.ticks()) {
        const double xx = px(x, t);
        s += fmt::format(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e4e4e4\"/>"
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
            coord(xx), coord(top), coord(xx), coord(top + plot_h), coord(xx),
            coord(top + plot_h + 15), escape(tick_label(x, t)));
    }
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#555\"/>\n",
                     coord(left), coord(top), coord(plot_w), coord(plot_h));
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                     coord(left + plot_w / 2), coord(height - 8), escape(x.label));
    s += fmt::format("<text x=\"14\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 14 {})\">{}</text>\n",
                     coord(top + plot_h / 2), coord(top + plot_h / 2), escape(y.label));
    return s;
}

// A legend entry from legend row `row` on; a name too long for the right margin wraps at its
// spaces onto the rows below (never cut), and `row` moves past the rows it took.
std::string legend_entry(std::size_t& row, const std::string& name, const char* c,
                         bool dashed = false) {
    constexpr std::size_t max_chars = 26; // about 170 px at font-size 11
    std::vector<std::string> lines(1);
    std::size_t chars = 0;
    for (std::size_t i = 0; i < name.size();) {
        auto next = name.find(' ', i);
        if (next == std::string::npos)
            next = name.size();
        const std::string word = name.substr(i, next - i);
        std::size_t n = 0;
        for (const unsigned char ch : word)
            n += (ch & 0xC0) == 0x80 ? 0 : 1;
        if (!lines.back().empty() && chars + 1 + n > max_chars) {
            lines.emplace_back();
            chars = 0;
        }
        if (!lines.back().empty()) {
            lines.back() += ' ';
            ++chars;
        }
        lines.back() += word;
        chars += n;
        i = next + 1;
    }
    const double yy = top + 8 + static_cast<double>(row) * 16;
    const double xx = left + plot_w + 12;
    std::string text = escape(lines.front());
    for (std::size_t k = 1; k < lines.size(); ++k)
        text +=
            fmt::format("<tspan x=\"{}\" dy=\"14\">{}</tspan>", coord(xx + 23), escape(lines[k]));
    row += 1 + ((lines.size() - 1) * 14 + 15) / 16; // the rows of 16 px the wrapped lines took
    return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"3\"{}/><text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n",
                       coord(xx), coord(yy), coord(xx + 18), coord(yy), c,
                       dashed ? " stroke-dasharray=\"5 3\"" : "", coord(xx + 23), coord(yy + 4),
                       text);
}

// A generous estimate of the width of `text` at font-size 11 (about 6.5 px a character; the
// UTF-8 continuation bytes of a character do not count).
double label_width(const std::string& text) {
    double chars = 0;
    for (const unsigned char ch : text)
        chars += (ch & 0xC0) == 0x80 ? 0 : 1;
    return 6.5 * chars;
}

// Where a label's text sits (x from x0 to x1, baseline y): labels must not overlap.
struct label_box {
    double x0, x1, y;
    bool overlaps(const label_box& o) const {
        return x0 < o.x1 && o.x0 < x1 && std::abs(y - o.y) < 12;
    }
};

// The first of `baselines` where a label from x0 to x1 overlaps none of `placed` (else the
// first), then placed.
double free_baseline(std::vector<label_box>& placed, double x0, double x1,
                     const std::vector<double>& baselines) {
    for (const double b : baselines) {
        const label_box box{x0, x1, b};
        if (std::none_of(placed.begin(), placed.end(),
                         [&](const label_box& p) { return p.overlaps(box); })) {
            placed.push_back(box);
            return b;
        }
    }
    placed.push_back({x0, x1, baselines.front()});
    return baselines.front();
}

std::string ref_lines(const std::vector<ref_line>& refs, const axis& x, const axis& y) {
    std::string s;
    std::vector<label_box> placed;
    for (const auto& r : refs) {
        const char* c = r.danger ? "#C00000" : "#777";
        const axis& a = r.vertical ? x : y;
        if (r.at < a.lo || r.at > a.hi) {
            // Off the scale: said in words rather than drawn at the edge, where it would lie.
            s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\" "
                             "text-anchor=\"end\">{} ({} the scale)</text>\n",
                             coord(left + plot_w - 3), coord(top - 6), c, escape(r.label),
                             r.at > a.hi ? "above" : "below");
            continue;
        }
        if (r.vertical) {
            if (x.log && r.at <= 0)
                continue;
            const double xx = px(x, r.at);
            // The label goes right of the line unless it would cross the plot's right edge
            // into the legend; then it ends left of the line.
            const double w = label_width(r.label);
            const bool fits_right = xx + 3 + w <= left + plot_w;
            // Lines close together (the idle baseline's end, the run's start) stack their
            // labels down the plot instead of writing over each other.
            std::vector<double> rows;
            for (double b = top + 11; b < top + plot_h - 4; b += 13)
                rows.push_back(b);
            const double base = fits_right ? free_baseline(placed, xx + 3, xx + 3 + w, rows)
                                           : free_baseline(placed, xx - 3 - w, xx - 3, rows);
            s += fmt::format(
                "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" "
                "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>{4}</title></line>"
                "<text x=\"{5}\" y=\"{6}\" font-size=\"11\" fill=\"{3}\"{7}>{4}</text>\n",
                coord(xx), coord(top), coord(top + plot_h), c, escape(r.label),
                coord(fits_right ? xx + 3 : xx - 3), coord(base),
                fits_right ? "" : " text-anchor=\"end\"");
        } else {
            if (y.log && r.at <= 0)
                continue;
            const double yy = py(y, r.at);
            // Above the line, else below it, else further off (two bounds close together).
            const double xr = left + plot_w - 3, w = label_width(r.label);
            const double base =
                free_baseline(placed, xr - w, xr, {yy - 3, yy + 12, yy - 16, yy + 25, yy - 29});
            s += fmt::format(
                "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
                "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>{4}</title></line>"
                "<text x=\"{5}\" y=\"{6}\" font-size=\"11\" fill=\"{3}\" "
                "text-anchor=\"end\">{4}</text>\n",
                coord(left), coord(yy), coord(left + plot_w), c, escape(r.label), coord(xr),
                coord(base));
        }
    }
    return s;
}

double nice_step(double span, int target) {
    const double raw = span / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag)
            return m * mag;
    return 10 * mag;
}

} // namespace

std::string escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string format_number(double v) {
    if (!std::isfinite(v))
        return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
    if (v == 0)
        return "0";
    const double a = std::abs(v);
    if (a >= 1e-4 && a < 1e6) {
        // 4 significant digits, trailing zeros dropped.
        const int decimals = std::max(0, 3 - static_cast<int>(std::floor(std::log10(a))));
        std::string s = fmt::format("{:.{}f}", v, decimals);
        if (s.find('.') != std::string::npos) {
            while (s.back() == '0')
                s.pop_back();
            if (s.back() == '.')
                s.pop_back();
        }
        return s;
    }
    if (a < 1e-4 && a >= 1e-9) {
        // Small values as plain decimals too (0.0000975, not 9.75e-05): 3 significant digits.
        const int decimals = 2 - static_cast<int>(std::floor(std::log10(a)));
        std::string s = fmt::format("{:.{}f}", v, decimals);
        while (s.back() == '0')
            s.pop_back();
        return s;
    }
    return fmt::format("{:.3g}", v);
}

double axis::fraction(double v) const {
    double f;
    if (log) {
        const double lv = std::log10(std::max(v, lo));
        f = (lv - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    } else {
        f = hi > lo ? (v - lo) / (hi - lo) : 0.0;
    }
    return std::clamp(f, 0.0, 1.0);
}

std::vector<double> axis::ticks() const {
    std::vector<double> t;
    if (log && powers_of_two) {
        for (double e = std::ceil(std::log2(lo) - 1e-9); e <= std::log2(hi) + 1e-9; e += 1)
            t.push_back(std::pow(2.0, e));
        return t;
    }
    if (log) {
        for (double e = std::ceil(std::log10(lo) - 1e-9); e <= std::log10(hi) + 1e-9; e += 1)
            t.push_back(std::pow(10.0, e));
        return t;
    }
    if (!(hi > lo))
        return {lo};
    const double step = nice_step(hi - lo, 5);
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-6; v += step)
        t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
    return t;
}

axis linear_axis(std::string label, double min, double max) {
    axis a;
    a.label = std::move(label);
    a.lo = std::min(0.0, min);
    if (!(max > a.lo))
        max = a.lo + 1;
    const double step = nice_step(max - a.lo, 5);
    a.hi = std::ceil(max / step - 1e-9) * step;
    if (a.hi <= max) // leave room above the largest value
        a.hi += step;
    if (a.lo < 0)
        a.lo = std::floor(a.lo / step) * step;
    return a;
}

axis log_axis(std::string label, double min, double max) {
    axis a;
    a.label = std::move(label);
    a.log = true;
    if (!(min > 0))
        min = 1e-6;
    if (!(max > min))
        max = min * 10;
    a.lo = std::pow(10.0, std::floor(std::log10(min)));
    a.hi = std::pow(10.0, std::ceil(std::log10(max) + 1e-9));
    return a;
}

std::string render(const xy_plot& p) {
    std::string s = open_svg(p.id, p.title);
    s += frame(p.x, p.y);
    std::size_t row = 0;
    for (const auto& b : p.bars) {
        const char* c = colour(b.colour);
        s += "<g class=\"bars\">";
        for (const auto& bar : b.bars) {
            const double x0 = px(p.x, bar.x0), x1 = px(p.x, bar.x1);
            const double y0 = py(p.y, p.y.log ? p.y.lo : 0.0), y1 = py(p.y, bar.y);
            s +=
                fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
                            "fill-opacity=\"0.75\"><title>{}</title></rect>",
                            coord(x0), coord(std::min(y0, y1)), coord(std::max(0.5, x1 - x0 - 0.5)),
                            coord(std::abs(y0 - y1)), c, escape(bar.title));
        }
        s += "</g>\n";
        s += legend_entry(row, b.name, c);
    }
    for (const auto& l : p.lines) {
        const char* c = colour(l.colour);
        std::string pts;
        double prev_y = 0;
        bool first = true;
        for (const auto& [x, y] : l.points) {
            if ((p.x.log && x <= 0) || (p.y.log && y <= 0))
                continue;
            if (l.step && !first)
                pts += fmt::format("{},{} ", coord(px(p.x, x)), coord(py(p.y, prev_y)));
            pts += fmt::format("{},{} ", coord(px(p.x, x)), coord(py(p.y, y)));
            prev_y = y;
            first = false;
        }
        s += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\">"
                         "<title>{}</title></polyline>\n",
                         c, l.dashed ? " stroke-dasharray=\"6 3\"" : "", pts, escape(l.name));
        if (l.markers) {
            s += "<g class=\"points\">";
            for (std::size_t i = 0; i < l.points.size(); ++i) {
                const auto [x, y] = l.points[i];
                if ((p.x.log && x <= 0) || (p.y.log && y <= 0))
                    continue;
                const std::string t =
                    i < l.point_titles.size()
                        ? l.point_titles[i]
                        : fmt::format("{}: {}, {}", l.name, format_number(x), format_number(y));
                s += fmt::format(
                    "<circle cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\"><title>{}</title>"
                    "</circle>",
                    coord(px(p.x, x)), coord(py(p.y, y)), c, escape(t));
            }
            s += "</g>\n";
        }
        s += legend_entry(row, l.name, c, l.dashed);
    }
    for (const auto& m : p.markers) {
        if ((p.x.log && m.x <= 0) || (p.y.log && m.y <= 0))
            continue;
        s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\" stroke=\"#000\" "
                         "stroke-width=\"0.5\"><title>{}</title></circle>\n",
                         coord(px(p.x, m.x)), coord(py(p.y, m.y)), m.good ? "#009E73" : "#C00000",
                         escape(m.title));
    }
    s += ref_lines(p.refs, p.x, p.y);
    s += "</svg>\n";
    return s;
}

std::string render(const bar_chart& c) {
    std::string s = open_svg(c.id, c.title);
    axis x; // categories: only the frame's geometry is used
    x.lo = 0;
    x.hi = static_cast<double>(std::max<std::size_t>(1, c.categories.size()));
    axis y = c.y;
    // Frame with y ticks only; category names under each group.
    for (double t : y.ticks()) {
        const double yy = py(y, t);
        s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e4e4e4\"/>"
                         "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n",
                         coord(left), coord(yy), coord(left + plot_w), coord(yy), coord(left - 5),
                         coord(yy + 4), escape(tick_label(y, t)));
    }
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#555\"/>\n",
                     coord(left), coord(top), coord(plot_w), coord(plot_h));
    s += fmt::format("<text x=\"14\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 14 {})\">{}</text>\n",
                     coord(top + plot_h / 2), coord(top + plot_h / 2), escape(y.label));
    const double group_w = plot_w / x.hi;
    const double n = static_cast<double>(std::max<std::size_t>(1, c.values.size()));
    const double bar_w = group_w * 0.8 / n;
    for (std::size_t g = 0; g < c.categories.size(); ++g) {
        const double gx = left + group_w * static_cast<double>(g);
        s += fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
            coord(gx + group_w / 2), coord(top + plot_h + 15), escape(c.categories[g]));
        for (std::size_t k = 0; k < c.values.size(); ++k) {
            const auto& v = g < c.values[k].second.size() ? c.values[k].second[g] : std::nullopt;
            if (!v)
                continue;
            const double x0 = gx + group_w * 0.1 + bar_w * static_cast<double>(k);
            const double y0 = py(y, y.log ? y.lo : 0.0), y1 = py(y, *v);
            s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
                             "<title>{} {}: {}{}</title></rect>\n",
                             coord(x0), coord(std::min(y0, y1)), coord(bar_w - 1),
                             coord(std::abs(y0 - y1)), colour(k), escape(c.values[k].first),
                             escape(c.categories[g]), escape(format_number(*v)),
                             c.unit.empty() ? "" : " " + escape(c.unit));
        }
    }
    std::size_t row = 0;
    for (std::size_t k = 0; k < c.values.size(); ++k)
        s += legend_entry(row, c.values[k].first, colour(k));
    s += ref_lines(c.refs, x, y);
    s += "</svg>\n";
    return s;
}

std::string render(const heat_strip& h) {
    // Wider left margin than the other plots: row labels name sessions.
    constexpr double hleft = 120, hplot_w = width - hleft - right;
    const double row_h = h.row_labels.size() > 40 ? 4.0 : (h.row_labels.size() > 16 ? 8.0 : 14.0);
    const double strip_h = row_h * static_cast<double>(h.row_labels.size());
    const double total_h = top + strip_h + bottom + 24;
    std::string s = open_svg(h.id, h.title, total_h);
    const std::size_t cols = h.cells.empty() ? 0 : h.cells.front().size();
    const double col_w = cols ? hplot_w / static_cast<double>(cols) : hplot_w;
    const double span = h.x1 - h.x0;
    const double llo = std::log10(h.lo), lhi = std::log10(h.hi);
    auto fill = [&](double v) -> std::string {
        if (v >= h.threshold)
            return "#C00000";
        // White-blue-orange ramp on a log scale: small deviations pale, close to the
        // threshold dark orange.
        const double f = std::clamp((std::log10(std::max(v, h.lo)) - llo) / (lhi - llo), 0.0, 1.0);
        const auto mix = [&](int a, int b) { return static_cast<int>(a + (b - a) * f); };
        return fmt::format("#{:02x}{:02x}{:02x}", mix(0xde, 0xe6), mix(0xeb, 0x7a),
                           mix(0xf7, 0x00));
    };
    for (std::size_t r = 0; r < h.row_labels.size(); ++r) {
        const double yy = top + row_h * static_cast<double>(r);
        if (row_h >= 8 || r % 10 == 0 || r + 1 == h.row_labels.size())
            s += fmt::format(
                "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"end\">{}</text>\n",
                coord(hleft - 4), coord(yy + row_h - 1.5), row_h >= 14 ? 11 : 8,
                escape(h.row_labels[r]));
        s += "<g>";
        for (std::size_t c = 0; c < cols && r < h.cells.size(); ++c) {
            const auto& v = c < h.cells[r].size() ? h.cells[r][c] : std::nullopt;
            if (!v)
                continue;
            const double t0 = h.x0 + span * static_cast<double>(c) / static_cast<double>(cols);
            s +=
                fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">"
                            "<title>{}, {}-{} s: max |deviation| {} {}</title></rect>",
                            coord(hleft + col_w * static_cast<double>(c)), coord(yy),
                            coord(col_w + 0.2), coord(row_h), fill(*v), escape(h.row_labels[r]),
                            format_number(t0), format_number(t0 + span / static_cast<double>(cols)),
                            format_number(*v * h.unit_scale), escape(h.unit_label));
        }
        s += "</g>\n";
    }
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#555\"/>\n",
                     coord(hleft), coord(top), coord(hplot_w), coord(strip_h));
    axis x;
    x.lo = h.x0;
    x.hi = h.x1;
    for (double t : x.ticks()) {
        const double xx = hleft + x.fraction(t) * hplot_w;
        s += fmt::format(
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
            coord(xx), coord(top + strip_h + 14), escape(format_number(t)));
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\n",
                     coord(hleft + hplot_w / 2), coord(top + strip_h + 30), escape(h.x_label));
    // Colour key: the decades below the threshold, then the threshold.
    const double kx = hleft + hplot_w + 12;
    std::vector<double> keys;
    for (double v = h.lo; v < h.threshold * 0.999; v *= 10)
        keys.push_back(v);
    keys.push_back(h.threshold);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const double ky = top + 4 + 16 * static_cast<double>(i);
        s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"12\" fill=\"{}\"/>"
                         "<text x=\"{}\" y=\"{}\" font-size=\"11\">{}{} {}</text>\n",
                         coord(kx), coord(ky), fill(keys[i]), coord(kx + 18), coord(ky + 10),
                         keys[i] >= h.threshold ? "\u2265 " : "",
                         format_number(keys[i] * h.unit_scale), escape(h.unit_label));
    }
    s += "</svg>\n";
    return s;
}

} // namespace pacer::report
