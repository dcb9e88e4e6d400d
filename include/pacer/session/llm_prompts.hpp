#pragma once
// The prompts of `pacer http` and the JSON bodies that carry them, sans-io.
//
// Synthetic prompts are a pure function of (seed, arrival index): arrival i draws its input
// and output lengths uniformly from [floor(L * (1 - r)), floor(L * (1 + r))] (at least 1; r is
// `--range-ratio`, as vLLM's random dataset does) and its words from a fixed list of common
// English words. Tokens are approximated by words: a prompt of N words is counted as N input
// tokens (real tokenizers give about 1 to 1.3 tokens per such word; the server's `usage`
// counts are used whenever it sends them). A shard builds exactly the prompts the single-host
// run gives its arrivals, since each depends on its global index only.

#include <pacer/transport/openai_stream.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pacer::session {

/// Words separated by blanks (space, tab, CR, LF): the token approximation.
using transport::approx_tokens;

struct prompt {
    std::string text;
    std::uint64_t input_len = 0;  ///< approx_tokens(text)
    std::uint64_t output_len = 0; ///< max_tokens
};

struct synthetic_prompts {
    std::uint64_t input_len = 128;
    std::uint64_t output_len = 128;
    double range_ratio = 0; ///< in [0, 1)
    std::uint64_t seed = 0;
};

/// One line of a prompt file: `{"prompt": "...", "output_len": 128}` (output_len optional).
struct prompt_file_entry {
    std::string prompt;
    std::optional<std::uint64_t> output_len;
};

/// Parses a JSONL prompt file (blank lines skipped). Throws bad_input with one
/// line naming `source` and the line number for anything else, or for a file with no prompt.
std::vector<prompt_file_entry> parse_prompt_jsonl(std::string_view text, std::string_view source);

/// The synthetic prompt of arrival `index`.
prompt make_synthetic_prompt(const synthetic_prompts& spec, std::size_t index);

/// Arrival `index` takes line `index mod size` of the file; `default_output_len` when the line
/// gives none.
prompt make_file_prompt(const std::vector<prompt_file_entry>& entries, std::size_t index,
                        std::uint64_t default_output_len);

struct request_options {
    std::string model;
    bool chat = false; ///< /v1/chat/completions: `messages`, else `prompt`
    bool ignore_eos = false;
    std::optional<double> temperature;
};

/// The JSON body: model, prompt or messages, max_tokens, `"stream": true`,
/// `stream_options.include_usage`, and ignore_eos and temperature when set.
std::string request_body(const request_options& options, const prompt& p);

} // namespace pacer::session
