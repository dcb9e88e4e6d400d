#pragma once
// The loop lag over time: the largest lag of the session contexts' 10 ms tickers in each second
// of the run, made after the run from the lags every monitor already keeps (nothing is added on
// a session context). summary.json "loop_lag_over_time".

#include <boost/json/object.hpp>

#include <vector>

namespace pacer::metrics {

/// {"interval_s": 1, "start_s": S, "max_s": [m0, m1, ...]}: S is the earliest monitor start
/// (CLOCK_MONOTONIC seconds), m_k the largest lag of any context whose tick woke in
/// [S + k, S + k + 1) (0 when none was late). Tick i of a context started at `started_s[c]`
/// woke at started_s[c] + (i + 1) x period_s + the sum of its lags 0..i (each deadline is one
/// period after the previous wake). Contexts without lags are left out; none at all: max_s
/// is empty.
boost::json::object loop_lag_over_time(const std::vector<std::vector<double>>& lags_s,
                                       const std::vector<double>& started_s, double period_s);

} // namespace pacer::metrics
