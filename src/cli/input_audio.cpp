#include <pacer/cli/commands.hpp>
#include <pacer/cli/input_audio.hpp>
#include <pacer/core/units.hpp>
#include <pacer/protocol/realtime_events.hpp>
#include <pacer/run/run_job.hpp>
#include <pacer/runtime/audio_file.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/schedule/scenario.hpp>

#include <CLI/App.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

namespace pacer::cli {

session::conversation_plan load_scenario(const std::string& name, std::size_t wire_rate,
                                         bool native) {
    session::conversation_plan plan;
    if (name == "single")
        return plan;
    auto sc = schedule::builtin_scenario(name);
    if (!sc) {
        std::optional<std::string> text;
        try {
            text = runtime::read_file_if_exists(name);
        } catch (const std::exception& e) {
            throw usage_error(fmt::format("--scenario: {}", e.what()));
        }
        if (!text)
            throw usage_error(fmt::format("--scenario '{}' is neither single, multi-turn, "
                                          "barge-in nor a file",
                                          name));
        try {
            sc = schedule::parse_scenario(*text, name,
                                          std::filesystem::path(name).parent_path().string());
        } catch (const schedule::scenario_error& e) {
            throw usage_error(e.what());
        }
    }
    if (!sc->pause_packets && native)
        throw usage_error(fmt::format("scenario {}: pause_audio none needs --protocol "
                                      "openai-realtime or vllm-realtime: the native protocol "
                                      "streams one continuous input (silence between turns)",
                                      sc->name));
    if (sc->turns.size() == 1 && !sc->single())
        throw usage_error(fmt::format("scenario {}: one turn is what --audio FILE (or "
                                      "--duration D of silence) streams: use that",
                                      sc->name));
    if (sc->single())
        return plan; // a file of one `input` turn: today's session
    for (const auto& t : sc->turns) {
        session::session_turn turn;
        turn.interrupt_after = t.interrupt_after;
        if (t.what == schedule::turn_spec::source::silence) {
            turn.pcm = protocol::pcm_input::silence(silence_bytes(t.silence));
        } else if (t.what == schedule::turn_spec::source::file) {
            auto audio = load_input_audio(t.file, wire_rate);
            if (audio.wire)
                turn.wire_pcm = protocol::pcm_input(std::move(*audio.wire));
            turn.pcm = protocol::pcm_input(std::move(audio.pcm));
        } // else each session's own input (no pcm)
        plan.turns.push_back(std::move(turn));
    }
    plan.scenario = std::make_shared<const schedule::scenario>(std::move(*sc));
    return plan;
}

void load_run_input(run::run_job& job) {
    const run::run_options& s = job.options;
    const std::size_t wire_rate = job.realtime == protocol::realtime_protocol::openai
                                      ? protocol::openai_sample_rate
                                      : protocol::input_sample_rate;
    std::optional<loaded_input> loaded;
    if (!s.audio.empty()) {
        loaded = load_input_audio(s.audio, wire_rate);
        job.pcm = std::move(loaded->pcm);
    } else {
        job.pcm = protocol::pcm_input::silence(silence_bytes(silence_duration(s.duration, "30s")));
    }
    job.conversation = load_scenario(s.scenario, wire_rate, !job.realtime);
    if (job.conversation && s.processes > 1)
        throw usage_error("--scenario with several turns needs --processes 1 (the per-turn "
                          "figures are one process's)");
    job.input_length = job.conversation.length(job.pcm.size());
    if (loaded) {
        job.wire_pcm = std::move(loaded->wire);
        job.input_conversion = std::move(loaded->conversion);
    } else {
        job.input_conversion = silence_conversion(wire_rate);
    }
}

void add_scenario_option(CLI::App& command, std::string& scenario, const std::string& where,
                         const std::string& results) {
    command
        .add_option("--scenario", scenario,
                    "What " + where +
                        " says (docs/scenarios.md): single (the input once), multi-turn (the "
                        "input three times with 0.6-1 s pauses), barge-in (the input, then again "
                        "0.5 s into the assistant's reply), or a scenario JSON file of turns "
                        "(audio, pause, interrupt_after); " +
                        results)
        ->capture_default_str();
}

} // namespace pacer::cli
