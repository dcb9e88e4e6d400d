#pragma once
// JSON text of the result files (summary.json, capacity.json, requests.jsonl, the mocks'
// statistics): numbers as people and Python write them.

#include <boost/json/value.hpp>

#include <string>

namespace pacer {

/// `v` as compact JSON text, as boost::json::serialize writes it except for doubles: each is
/// in plain decimal, the shortest digits that read back as it (`plain_float_text`: `9.91763`,
/// `70.0`, `0.25`, `0.000084`; scientific only from 1e16), never Boost.JSON 1.81's
/// `9.91763E0` or `7E1`, nor Python's `8.4e-05`. JSON has no NaN nor infinity: a non-finite
/// double is written `null`.
std::string json_text(const boost::json::value& v);

/// Appends json_text(v) to `out`.
void append_json_text(std::string& out, const boost::json::value& v);

} // namespace pacer
