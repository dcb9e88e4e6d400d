#pragma once
// The client's connection settings as given (`--ca-file`, `--insecure`, `--header`,
// `--api-key-env`; docs/tls.md), what a `--processes` worker is passed of them, and what a
// run records and prints of its transport. Header values and the API key are secrets: nothing
// here prints or records them, only their names. The command line declares and checks the
// flags (cli/client_options.hpp).

#include <pacer/transport/ws_connection.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace pacer::run {

struct client_settings {
    std::string ca_file;
    bool insecure = false;
    std::vector<std::string> headers; ///< `Name: value`, as given
    std::string api_key_env;          ///< the variable's name, never its value
    std::string headers_env; ///< hidden: a `--processes` worker's headers, from this variable
};

/// The arguments a `--processes` worker needs for the same connection settings. The headers
/// (whose values may be secrets) do not go on the command line, which `ps` shows: they are put
/// in the environment variable PACER_WORKER_HEADERS, which the worker reads with
/// `--headers-env` (the API key's variable is inherited as it is).
std::vector<std::string> client_worker_args(const client_settings& s);

/// summary.json's `transport`: `{tls, insecure, ca_file, headers: [names], handshake_s:
/// {connections, connect, tls, upgrade}}` (distributions in seconds over the upgraded
/// connections; `tls` only for wss://).
boost::json::object transport_json(const transport::ws_endpoint& ep);

/// The summary line about the transport, or "" for plain ws:// without headers. `--insecure`
/// is said loudly.
std::string transport_line(const transport::ws_endpoint& ep);

} // namespace pacer::run
