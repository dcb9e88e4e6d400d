#pragma once
// The client's connection flags shared by `pacer run` and `pacer serve`: wss:// trust
// (`--ca-file`, `--insecure`) and handshake headers (`--header`, `--api-key-env`).
// docs/tls.md describes them. Header values and the API key are secrets: nothing here prints
// or records them, only their names.

#include <pacer/protocol/realtime_events.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/run/client_settings.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace pacer::cli {

/// Adds `--ca-file`, `--insecure`, `--header` (repeatable), `--api-key-env` and the hidden
/// `--headers-env` to a subcommand.
void add_client_options(CLI::App& sub, run::client_settings& s);

/// Checks the flags and fills `ep.client`: the headers (validated), `Authorization: Bearer …`
/// from `--api-key-env`, and for wss:// the TLS context. Throws usage_error for bad input: a
/// malformed or reserved header, a missing or empty variable (named, never its value), an
/// unreadable CA file, or TLS flags on a ws:// URL.
/// `--url`'s endpoint (`parse_ws_url`; a bad URL is a `usage_error`), or a default endpoint when
/// no URL was given (the command then starts its built-in mock).
transport::ws_endpoint url_option(const std::string& url);

void apply_client_settings(const run::client_settings& s, transport::ws_endpoint& ep);

/// `--protocol NAME` with `--model` as `run` and `serve` take them: nullopt for native, else
/// the realtime protocol. Throws usage_error for an unknown name, or vllm-realtime without a
/// model (the server needs to be told which).
std::optional<protocol::realtime_protocol> protocol_option(const std::string& name,
                                                           const std::string& model);
/// For openai-realtime, puts `--model` into the URL's query as `model=` (percent-encoded), as
/// the OpenAI API and its clients expect; the query already in `--url` is kept. Nothing for the
/// other protocols, without a model, or when the URL already names the same model; a URL that
/// names another model is a usage_error (the server would serve that one).
void model_in_url(transport::ws_endpoint& ep, std::optional<protocol::realtime_protocol> p,
                  const std::string& model);
/// `--turns`: server-vad or manual (usage_error otherwise).
protocol::realtime_turns turns_option(const std::string& turns);

} // namespace pacer::cli
