#pragma once
// The client's connection settings as given (`--ca-file`, `--insecure`, `--header`,
// `--api-key-env`; docs/tls.md), what a `--processes` worker is passed of them, and what a
// run records and prints of its transport. Header values and the API key are secrets: nothing
// here prints or records them, only their names. The command line declares the flags
// (cli/client_options.hpp); what they mean, and their checks, are here, with `--url`,
// `--protocol`, `--model` and `--turns`.

#include <pacer/protocol/realtime_events.hpp>
#include <pacer/protocol/realtime_session.hpp>
#include <pacer/session/duplex_session.hpp>
#include <pacer/transport/ws_connection.hpp>

#include <boost/json/object.hpp>

#include <optional>
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

/// `--url`'s endpoint (`parse_ws_url`; a bad URL is a `bad_input`), or a default
/// endpoint when no URL was given (the command then starts its built-in mock).
transport::ws_endpoint url_option(const std::string& url);

/// Checks the flags and fills `ep.client`: the headers (validated), `Authorization: Bearer …`
/// from `--api-key-env`, and for wss:// the TLS context. Throws bad_input for bad
/// input: a malformed or reserved header, a missing or empty variable (named, never its value),
/// an unreadable CA file, or TLS flags on a ws:// URL.
void apply_client_settings(const client_settings& s, transport::ws_endpoint& ep);

/// `--protocol NAME` with `--model` as `run` and `serve` take them: nullopt for native, else
/// the realtime protocol. Throws bad_input for an unknown name, or vllm-realtime without a
/// model (the server needs to be told which).
std::optional<protocol::realtime_protocol> protocol_option(const std::string& name,
                                                           const std::string& model);
/// For vllm-omni, adds `duplex=1` and `autostart=0` to the URL's query (unless it names them;
/// an `autostart` other than 0 is bad_input: pacer opens with session.update).
/// For openai-realtime, puts `--model` into the URL's query as `model=` (percent-encoded), as
/// the OpenAI API and its clients expect; the query already in `--url` is kept. Nothing for the
/// other protocols, without a model, or when the URL already names the same model; a URL that
/// names another model is a bad_input (the server would serve that one).
void model_in_url(transport::ws_endpoint& ep, std::optional<protocol::realtime_protocol> p,
                  const std::string& model);
/// `--turns`: server-vad or manual (bad_input otherwise); `model` passes here (as manual)
/// and `omni_option` refuses it for any protocol but vllm-omni.
protocol::realtime_turns turns_option(const std::string& turns);

/// vllm-omni's options as given (`--chunk-ms`, `--ref-audio`, `--ack`, `--ack-ms`); zero and
/// empty: not given.
struct omni_cli {
    int chunk_ms = 0;
    std::string ref_audio;
    std::string ack;
    int ack_ms = 0;
};
/// What a vllm-omni session is given, resolved from the options.
struct omni_plan {
    duration chunk = protocol::packet_period;
    session::omni_settings settings;
};
/// Checks vllm-omni's options against the protocol: with another protocol any of them (or
/// `--turns model`) is bad_input; with vllm-omni the chunk (default 200 ms) must be a
/// multiple of 10 ms, the `--ref-audio` file a readable WAV (sent as a data URL), `--ack`
/// `played` or `never`, `--ack-ms` positive. Returns the default plan for other protocols.
omni_plan omni_option(const omni_cli& o, std::optional<protocol::realtime_protocol> p,
                      const std::string& turns);

} // namespace pacer::run
