#pragma once
// Flat tables of a result folder for pandas and spreadsheets (`pacer export`): one row per
// packet, per session, per level (serve), per request (open loop) and per turn (--scenario).
// Column names carry their unit (`_s` seconds; counts and flags have none).

#include <pacer/report/result_folder.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pacer::report {

/// Empty (null), a flag, a count, a measurement or text. (A plain struct, not a std::variant:
/// g++ 12 reports variant<..., std::string> temporaries maybe-uninitialized, GCC PR 24639.)
struct cell {
    enum class type { null, flag, count, number, text };
    type kind = type::null;
    bool flag = false;
    std::int64_t count = 0;
    double number = 0;
    std::string text;

    cell() = default;
    cell(bool b) : kind(type::flag), flag(b) {}
    cell(std::int64_t n) : kind(type::count), count(n) {}
    cell(double d) : kind(type::number), number(d) {}
    cell(std::string s) : kind(type::text), text(std::move(s)) {}
};

struct table {
    std::string name; ///< the file's stem: packets, sessions, levels, requests
    std::vector<std::string> columns;
    std::vector<std::vector<cell>> rows;
};

/// Every table the folder supports: `packets` and `sessions` always; `levels` for a serve
/// sweep; `requests` for an open-loop run; `turns` (one row per turn of every session, from
/// each run's turns.jsonl) for a multi-turn --scenario.
std::vector<table> build_tables(const result_folder& folder);

/// CSV (RFC 4180 quoting, LF line ends) with a header line: numbers in shortest round-trip form,
/// empty for null, `true`/`false` for flags, text quoted when it holds a comma, a quote or a line
/// break.
std::string to_csv(const table& t);

/// One JSON object per row, keys in column order, null for empty cells.
std::string to_jsonl(const table& t);

} // namespace pacer::report
