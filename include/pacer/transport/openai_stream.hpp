#pragma once
// What one SSE event of an OpenAI-compatible streaming response says (completions and chat
// completions, as vLLM, SGLang, TGI and llama.cpp's server send them), sans-io.
//
// - `data: [DONE]` ends the stream.
// - Otherwise the data is one JSON object. It carries text when `choices[0].text`
//   (completions) or `choices[0].delta.content` / `choices[0].delta.reasoning_content` (chat)
//   is a non-empty string: each such chunk is one token arrival for the latency metrics. A
//   chunk with `usage` (the last one, with `stream_options.include_usage`) gives the server's
//   own token counts. A chunk with an `error` member is the server's error, streamed.
// - Anything else (not JSON, not an object, `choices` not an array) is malformed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pacer::transport {

struct openai_usage {
    std::uint64_t prompt_tokens = 0;
    std::uint64_t completion_tokens = 0;
};

/// One event's reading; exactly one of `done`, `malformed` (non-empty), `server_error`
/// (non-empty) or an ordinary chunk (`has_text` and/or `usage`, or neither for a chunk
/// that only carries a role or a finish reason).
struct openai_chunk {
    bool done = false;
    bool has_text = false;
    std::optional<openai_usage> usage;
    std::string malformed;    ///< why the data is not a valid chunk
    std::string server_error; ///< the message of an `error` member
};

/// Reads the data of one SSE event (see the file comment). Never throws for bad data.
openai_chunk read_openai_chunk(std::string_view data);

/// Words separated by blanks (space, tab, CR, LF): the token approximation of both the
/// client's prompts and the LLM mock (a prompt of N words counts as N input tokens).
std::uint64_t approx_tokens(std::string_view text);

} // namespace pacer::transport
