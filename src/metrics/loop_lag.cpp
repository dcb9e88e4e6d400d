#include <pacer/metrics/loop_lag.hpp>

#include <boost/json/array.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace pacer::metrics {

boost::json::object loop_lag_over_time(const std::vector<std::vector<double>>& lags_s,
                                       const std::vector<double>& started_s, double period_s) {
    double start = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < lags_s.size() && c < started_s.size(); ++c)
        if (!lags_s[c].empty())
            start = std::min(start, started_s[c]);
    std::vector<double> max_s;
    if (std::isfinite(start))
        for (std::size_t c = 0; c < lags_s.size() && c < started_s.size(); ++c) {
            double woke = started_s[c];
            for (const double lag : lags_s[c]) {
                woke += period_s + lag;
                const auto k = static_cast<std::size_t>(std::max(0.0, std::floor(woke - start)));
                if (k >= max_s.size())
                    max_s.resize(k + 1, 0.0);
                max_s[k] = std::max(max_s[k], lag);
            }
        }
    boost::json::array arr;
    for (const double m : max_s)
        arr.push_back(m);
    return {{"interval_s", 1},
            {"start_s", std::isfinite(start) ? start : 0.0},
            {"max_s", std::move(arr)}};
}

} // namespace pacer::metrics
