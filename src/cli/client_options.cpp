#include <pacer/cli/client_options.hpp>
#include <pacer/cli/commands.hpp>

#include <CLI/CLI.hpp>

namespace pacer::cli {

void add_client_options(CLI::App& sub, run::client_settings& s) {
    sub.add_option("--ca-file", s.ca_file,
                   "wss://: trust the CA certificates of this PEM file instead of the system's "
                   "CA store (docs/tls.md)")
        ->check(CLI::ExistingFile);
    sub.add_flag("--insecure", s.insecure,
                 "wss:// without verifying the server's certificate or name (said loudly in the "
                 "summary; for test servers only)");
    sub.add_option("--header", s.headers,
                   "Extra handshake header 'Name: value' (repeatable). Values are treated as "
                   "secrets: only names are recorded. Host, Upgrade, Connection and "
                   "Sec-WebSocket-* are refused");
    sub.add_option("--api-key-env", s.api_key_env,
                   "Send 'Authorization: Bearer <key>' with the key read from this environment "
                   "variable (never from the command line, never recorded)");
    sub.add_option("--headers-env", s.headers_env)->group(""); // a worker's headers
}

} // namespace pacer::cli
