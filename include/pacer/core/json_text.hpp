#pragma once
// JSON text of the result files (summary.json, capacity.json, requests.jsonl, the mocks'
// statistics): numbers as people and Python write them.

#include <boost/json/value.hpp>

#include <string>

namespace pacer {

/// `v` as compact JSON text, as boost::json::serialize writes it except for doubles: each is
/// in plain decimal, the shortest digits that read back as it (`python_float_repr`: `9.91763`,
/// `70.0`, `0.25`; scientific only below 1e-4 or from 1e16, `1e-05`), never Boost.JSON 1.81's
/// `9.91763E0` or `7E1`. JSON has no NaN nor infinity: a non-finite double is written `null`.
std::string json_text(const boost::json::value& v);

/// Appends json_text(v) to `out`.
void append_json_text(std::string& out, const boost::json::value& v);

} // namespace pacer
