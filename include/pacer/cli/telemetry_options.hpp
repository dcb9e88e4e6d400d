#pragma once
// The telemetry flags of `pacer run` (and, once wired, `pacer serve`): `--gpu-telemetry`,
// `--nvml-library` (a test option), `--server-metrics`, `--telemetry-interval`,
// `--idle-baseline` and `--metrics-listen`. docs/telemetry.md describes them. Their values are
// checked and opened by telemetry::open_telemetry (telemetry/settings.hpp).

#include <pacer/telemetry/settings.hpp>

#include <string>

namespace CLI {
class App;
}

namespace pacer::cli {

/// The flags as typed, checked and opened (telemetry/settings.hpp).
using telemetry_settings = telemetry::settings;

/// Adds the telemetry flags (group "Telemetry") to `sub`; `--metrics-listen` fills `listen`.
/// `with_server_metrics` false leaves `--server-metrics` out, for a command that gives that
/// name another meaning (`pacer serve`'s native-mock `/stats`): `s.server_metrics` then stays
/// as the command sets it.
void add_telemetry_options(CLI::App& sub, telemetry_settings& s, std::string& listen,
                           bool with_server_metrics = true);

} // namespace pacer::cli
