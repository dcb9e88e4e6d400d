#pragma once
// The server a command starts for a run when no `--url` is given (the built-in mock of module
// `server`, which module `run` does not know): what the run needs of it.

#include <boost/json/object.hpp>

#include <string>

namespace pacer::run {

/// A server the command started for this run when no `--url` was given (the built-in mock,
/// module `server`, which this module does not know).
class local_server {
public:
    virtual ~local_server() = default;
    /// Where sessions reach it (`ws://127.0.0.1:<port>/v1/realtime`).
    virtual std::string url() const = 0;
    /// Stops it (once) and returns its stats (summary.json's `mock`).
    virtual boost::json::object stop() = 0;
};

} // namespace pacer::run
