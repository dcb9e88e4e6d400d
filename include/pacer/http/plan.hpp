#pragma once
// A `pacer http` plan made from its options' values (the server and its TLS trust, the
// schedule, the request headers, the prompt file) and the `--dry-run` plan printed from it. The
// command (src/cli/http_command.cpp) declares and checks the options; each function here throws
// bad_input with the one line the command prints (exit 2) when an input is bad.

#include <pacer/http/http_job.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace pacer::http {

/// The server of `--base-url`, its TLS trust (`--ca-file`, `--insecure`: one context per run)
/// and the request's fields (`--endpoint`, `--model`, ...) into `plan`. Throws
/// bad_input for a bad URL, endpoint or trust setting.
void resolve_server(const http_options& s, http_plan& plan);

/// The schedule into `plan`: the saved `--schedule`, or the one made from `--arrival`, `--rate`
/// or `--stages`, `--burstiness`, `--seed`, `--requests` and `--duration`
/// (schedule::open_loop_of: which of them go together, bad_input when not), then
/// `--shard`'s arrivals of it and `--cap-policy` (bad_input when bad).
void resolve_schedule(const http_options& s, http_plan& plan);

/// Adds `--header 'Name: value'` (each) and, with `--api-key-env VAR`, `Authorization: Bearer`
/// with the key read from the environment to `plan.headers`, their names to `plan.header_names`
/// (the key is never printed nor written). Throws bad_input for a header without a
/// valid name or on more than one line, or a key variable unset, empty or on more than one line.
void add_headers(const std::vector<std::string>& headers, const std::string& api_key_env,
                 http_plan& plan);

/// The entries of the JSONL prompt file `path` (`--prompts`). Throws bad_input when
/// it does not exist, cannot be read or is not a prompt file.
std::vector<session::prompt_file_entry> read_prompts(const std::string& path);

/// Prints the `--dry-run` plan of a checked `pacer http`: the server, the schedule, the cap,
/// the prompts, the headers, the output, the `telemetry` lines given, the descriptors needed
/// and (`--find-capacity`) the search.
void print_dry_run(const http_options& s, const http_plan& p,
                   const std::vector<std::string>& telemetry, std::size_t descriptors);

} // namespace pacer::http
