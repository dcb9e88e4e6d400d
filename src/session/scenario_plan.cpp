// `--scenario` loaded into a conversation_plan (see scenario_plan.hpp).

#include <pacer/core/bad_input.hpp>
#include <pacer/core/nearest_name.hpp>
#include <pacer/runtime/exit_status.hpp>
#include <pacer/runtime/files.hpp>
#include <pacer/runtime/input_audio.hpp>
#include <pacer/schedule/scenario.hpp>
#include <pacer/session/scenario_plan.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <stdexcept>

namespace pacer::session {

namespace {

// A turn's WAV, its mistakes named by the scenario file and the turn's field.
runtime::loaded_input load_turn_audio(const schedule::scenario& sc, std::size_t i,
                                      std::size_t wire_rate) {
    const std::string& file = sc.turns[i].file;
    const auto where = fmt::format("scenario {}: turns[{}].audio", sc.name, i);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        throw bad_input(
            fmt::format("{}: {} {}", where, file,
                        std::filesystem::exists(file, ec) ? "is not a file" : "does not exist"));
    try {
        return runtime::load_input_audio(file, wire_rate);
    } catch (const bad_input& e) {
        std::string why = e.what(); // "--audio FILE: why", as for --audio itself
        if (why.starts_with("--audio "))
            why.erase(0, 8);
        throw bad_input(fmt::format("{}: {}", where, why));
    }
}

} // namespace

conversation_plan load_scenario(const std::string& name, std::size_t wire_rate, bool native) {
    conversation_plan plan;
    if (name == "single")
        return plan;
    auto sc = schedule::builtin_scenario(name);
    if (!sc) {
        std::optional<std::string> text;
        try {
            text = runtime::read_file_if_exists(name);
        } catch (const std::exception& e) {
            throw bad_input(fmt::format("--scenario: {}", e.what()));
        }
        if (!text) {
            const auto near = nearest_name({"single", "multi-turn", "barge-in"}, name);
            throw bad_input(fmt::format(
                "--scenario '{}' is neither single, multi-turn, "
                "barge-in nor a file{}",
                name, near.empty() ? std::string() : fmt::format("; did you mean '{}'?", near)));
        }
        sc = schedule::parse_scenario(*text, name,
                                      std::filesystem::path(name).parent_path().string());
    }
    if (!sc->pause_packets && native)
        throw bad_input(fmt::format("scenario {}: pause_audio none needs --protocol "
                                    "openai-realtime or vllm-realtime: the native protocol "
                                    "streams one continuous input (silence between turns)",
                                    sc->name));
    if (sc->turns.size() == 1 && !sc->single())
        throw bad_input(fmt::format("scenario {}: one turn is what --audio FILE (or "
                                    "--duration D of silence) streams: use that",
                                    sc->name));
    if (sc->single())
        return plan; // a file of one `input` turn: today's session
    for (std::size_t i = 0; i < sc->turns.size(); ++i) {
        const auto& t = sc->turns[i];
        session_turn turn;
        turn.interrupt_after = t.interrupt_after;
        if (t.what == schedule::turn_spec::source::silence) {
            turn.pcm = protocol::pcm_input::silence(runtime::silence_bytes(t.silence));
        } else if (t.what == schedule::turn_spec::source::file) {
            auto audio = load_turn_audio(*sc, i, wire_rate);
            if (audio.wire)
                turn.wire_pcm = protocol::pcm_input(std::move(*audio.wire));
            turn.pcm = protocol::pcm_input(std::move(audio.pcm));
        } // else each session's own input (no pcm)
        plan.turns.push_back(std::move(turn));
    }
    plan.scenario = std::make_shared<const schedule::scenario>(std::move(*sc));
    return plan;
}

} // namespace pacer::session
