#include <pacer/core/bad_input.hpp>
#include <pacer/schedule/rng.hpp>
#include <pacer/session/llm_prompts.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace pacer::session {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 64> words = {
    "the",  "of",    "and",   "to",   "in",   "is",    "you",   "that",  "it",   "he",    "was",
    "for",  "on",    "are",   "as",   "with", "his",   "they",  "at",    "be",   "this",  "have",
    "from", "or",    "one",   "had",  "by",   "word",  "but",   "not",   "what", "all",   "were",
    "we",   "when",  "your",  "can",  "said", "there", "use",   "an",    "each", "which", "she",
    "do",   "how",   "their", "if",   "will", "up",    "other", "about", "out",  "many",  "then",
    "them", "these", "so",    "some", "her",  "would", "make",  "like",  "him"};

std::uint64_t draw_length(schedule::xoshiro256ss& rng, std::uint64_t len, double ratio) {
    const double l = static_cast<double>(len);
    const auto lo =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::floor(l * (1 - ratio))));
    const auto hi = std::max(lo, static_cast<std::uint64_t>(std::floor(l * (1 + ratio))));
    return lo + rng.next() % (hi - lo + 1);
}

} // namespace

std::vector<prompt_file_entry> parse_prompt_jsonl(std::string_view text, std::string_view source) {
    std::vector<prompt_file_entry> out;
    std::size_t line_no = 0, pos = 0;
    while (pos < text.size()) {
        const auto nl = std::min(text.find('\n', pos), text.size());
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        const auto bad = [&](std::string_view why) {
            return bad_input(fmt::format("{} line {}: {}", source, line_no, why));
        };
        boost::system::error_code ec;
        const json::value v = json::parse(line, ec);
        if (ec || !v.is_object())
            throw bad("not a JSON object (expected {\"prompt\": \"...\"})");
        const auto* p = v.get_object().if_contains("prompt");
        if (!p || !p->is_string() || p->get_string().empty())
            throw bad("needs a non-empty string \"prompt\"");
        prompt_file_entry e{std::string(p->get_string()), std::nullopt};
        if (const auto* o = v.get_object().if_contains("output_len")) {
            if (o->is_uint64() && o->get_uint64() > 0)
                e.output_len = o->get_uint64();
            else if (o->is_int64() && o->get_int64() > 0)
                e.output_len = static_cast<std::uint64_t>(o->get_int64());
            else
                throw bad("\"output_len\" must be a whole number > 0");
        }
        out.push_back(std::move(e));
    }
    if (out.empty())
        throw bad_input(fmt::format("{} holds no prompt", source));
    return out;
}

prompt make_synthetic_prompt(const synthetic_prompts& spec, std::size_t index) {
    // One generator per arrival, from (seed, index): independent of the order of the calls.
    schedule::xoshiro256ss rng(spec.seed ^ (0x9E3779B97F4A7C15ULL * (index + 1)));
    prompt p;
    p.input_len = draw_length(rng, spec.input_len, spec.range_ratio);
    p.output_len = draw_length(rng, spec.output_len, spec.range_ratio);
    p.text.reserve(p.input_len * 5);
    for (std::uint64_t i = 0; i < p.input_len; ++i) {
        if (i > 0)
            p.text.push_back(' ');
        p.text.append(words[rng.next() % words.size()]);
    }
    return p;
}

prompt make_file_prompt(const std::vector<prompt_file_entry>& entries, std::size_t index,
                        std::uint64_t default_output_len) {
    const auto& e = entries.at(index % entries.size());
    return {e.prompt, approx_tokens(e.prompt), e.output_len.value_or(default_output_len)};
}

std::string request_body(const request_options& options, const prompt& p) {
    // Written directly, not through a json::object: the same bytes json::serialize gives the
    // object {model, prompt | messages, max_tokens, stream, stream_options, ignore_eos,
    // temperature} (members in that order; strings escaped and numbers written by Boost.JSON),
    // without copying the prompt into a DOM first.
    const std::string model = json::serialize(json::string_view(options.model));
    const std::string text = json::serialize(json::string_view(p.text));
    std::string body;
    body.reserve(model.size() + text.size() + 160);
    body += R"({"model":)";
    body += model;
    if (options.chat) {
        body += R"(,"messages":[{"role":"user","content":)";
        body += text;
        body += "}]";
    } else {
        body += R"(,"prompt":)";
        body += text;
    }
    body += R"(,"max_tokens":)";
    body += json::serialize(json::value(p.output_len));
    body += R"(,"stream":true,"stream_options":{"include_usage":true})";
    if (options.ignore_eos)
        body += R"(,"ignore_eos":true)";
    if (options.temperature) {
        body += R"(,"temperature":)";
        body += json::serialize(json::value(*options.temperature));
    }
    body += '}';
    return body;
}

} // namespace pacer::session
