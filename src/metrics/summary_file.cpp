#include <pacer/metrics/summary_file.hpp>

namespace pacer::metrics {

namespace json = boost::json;

summary_file read_summary(const std::filesystem::path& dir) {
    return runtime::read_json_file(dir / "summary.json");
}

std::optional<double> recorded_input_duration(const json::object& summary) {
    const auto* config = summary.if_contains("config");
    if (!config || !config->is_object())
        return std::nullopt;
    const auto* d = config->get_object().if_contains("input_duration_s");
    if (!d || !d->is_number())
        return std::nullopt;
    return d->to_number<double>();
}

const json::value* recorded_profile_name(const json::object& summary) {
    const json::value* name = summary.if_contains("profile");
    if (const auto* config = summary.if_contains("config"); !name && config && config->is_object())
        name = config->get_object().if_contains("profile");
    return name;
}

std::optional<std::string_view> recorded_protocol(const json::object& summary) {
    const auto* wire = summary.if_contains("protocol");
    if (!wire) // a run: under its config
        if (const auto* config = summary.if_contains("config"); config && config->is_object())
            wire = config->as_object().if_contains("protocol");
    if (!wire || !wire->is_string())
        return std::nullopt;
    return std::string_view(wire->get_string());
}

} // namespace pacer::metrics
