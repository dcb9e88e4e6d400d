#pragma once
// The client's connection flags shared by `pacer run` and `pacer serve`: wss:// trust
// (`--ca-file`, `--insecure`) and handshake headers (`--header`, `--api-key-env`).
// docs/tls.md describes them. Header values and the API key are secrets: nothing here prints
// or records them, only their names.

#include <pacer/run/client_settings.hpp>

namespace CLI {
class App;
}

namespace pacer::cli {

/// Adds `--ca-file`, `--insecure`, `--header` (repeatable), `--api-key-env` and the hidden
/// `--headers-env` to a subcommand.
void add_client_options(CLI::App& sub, run::client_settings& s);
/// Adds vllm-omni's `--chunk-ms`, `--ref-audio`, `--ack` and `--ack-ms` (docs/protocols.md).
void add_omni_options(CLI::App& sub, run::omni_cli& o);

// What the flags mean is run's (run/client_settings.hpp): the commands call run::url_option,
// run::protocol_option, run::turns_option, run::omni_option, run::model_in_url and
// run::apply_client_settings.

} // namespace pacer::cli
