#pragma once
// report.html and --export's tables at the end of `pacer run` and `pacer serve`: module
// report's (report/end_report.hpp).

#include <pacer/report/end_report.hpp>

namespace pacer::cli {

using report::replace_file;
using report::write_end_report;
using report::write_end_tables;
using report::write_table_files;

} // namespace pacer::cli
