#pragma once
// Output folders and files of the subcommands: module runtime's (runtime/output_dir.hpp).

#include <pacer/runtime/output_dir.hpp>

namespace pacer::cli {

using runtime::create_output_dir;
using runtime::default_output_dir;
using runtime::ensure_free_space;

} // namespace pacer::cli
