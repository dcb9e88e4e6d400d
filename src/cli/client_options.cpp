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

void add_omni_options(CLI::App& sub, run::omni_cli& o) {
    sub.add_option("--chunk-ms", o.chunk_ms,
                   "vllm-omni: each append's audio, a multiple of 10 ms, on the absolute grid "
                   "(default 200)");
    sub.add_option("--ref-audio", o.ref_audio,
                   "vllm-omni: a WAV of the assistant's voice, sent in session.update as a "
                   "data:audio/wav;base64 URL (MiniCPM-o refuses a session without it)");
    sub.add_option("--ack", o.ack,
                   "vllm-omni: the listener acknowledges played audio (played, the default) or "
                   "never (shows the server's ack_only stall)");
    sub.add_option("--ack-ms", o.ack_ms,
                   "vllm-omni: the listener's playback.ack period while a reply plays (default "
                   "200)");
}

} // namespace pacer::cli
