#pragma once
// What a command writes into a finished result folder besides its results: report.html and the
// --export tables. They are module `report`'s, which the job modules (`run`, `http`) do not
// know: the command (`cli`) passes them in.

#include <filesystem>
#include <functional>
#include <optional>
#include <string_view>

namespace pacer::console {

/// What the command writes into a finished run's folder besides its results: report.html
/// (unless --no-report) and the --export tables (module `report`, which the job modules do not
/// know). Each returns the path written, or nullopt when it printed a warning instead (a
/// failure never loses the run). Empty: nothing is written.
struct end_writers {
    std::function<std::optional<std::filesystem::path>(const std::filesystem::path& dir)> report;
    std::function<std::optional<std::filesystem::path>(const std::filesystem::path& dir,
                                                       std::string_view format)>
        tables;
};

} // namespace pacer::console
