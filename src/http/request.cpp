// One streaming request of `pacer http` (request.hpp).

#include <pacer/http/request.hpp>
#include <pacer/transport/openai_stream.hpp>
#include <pacer/transport/sse.hpp>

#include <algorithm>
#include <map>

namespace pacer::http {

namespace {

session::prompt prompt_for(const http_plan& p, std::size_t global_index) {
    return p.prompt_file
               ? session::make_file_prompt(*p.prompt_file, global_index, p.synthetic.output_len)
               : session::make_synthetic_prompt(p.synthetic, global_index);
}

} // namespace

// One request: streams the answer, records every moment and any error as data.
awaitable<void> one_request(transport::http_pool& pool, const http_plan& plan,
                            metrics::llm_request& r) {
    const auto pr = prompt_for(plan, r.index);
    r.input_len = pr.input_len;
    r.output_len = pr.output_len;
    // One arrival time per token asked (capped: a server may stop early).
    r.token_times.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(pr.output_len, 256)));
    std::string body = session::request_body(plan.request, pr);
    transport::sse_parser parser;
    std::vector<transport::sse_event> events;
    bool done = false;
    transport::http_body_sink sink;
    sink.on_head = [&](unsigned status, time_point t) {
        r.first_byte = t;
        r.status = status;
    };
    sink.on_data = [&](std::string_view bytes, time_point t) {
        events.clear();
        const bool fed = parser.feed(bytes, events);
        for (const auto& e : events) {
            if (done)
                break; // anything after [DONE] is ignored
            const auto c = transport::read_openai_chunk(e.data);
            if (!c.malformed.empty()) {
                r.error = "malformed_sse";
                r.error_message = c.malformed;
                return false;
            }
            if (!c.server_error.empty()) {
                r.error = "server_error";
                r.error_message = c.server_error;
                return false;
            }
            if (c.done) {
                done = true;
                continue;
            }
            if (c.has_text) {
                if (!r.first_token)
                    r.first_token = t;
                r.token_times.push_back(t);
            }
            if (c.usage) {
                r.usage_prompt_tokens = c.usage->prompt_tokens;
                r.usage_completion_tokens = c.usage->completion_tokens;
            }
        }
        if (!fed) {
            r.error = "malformed_sse";
            r.error_message = parser.error();
            return false;
        }
        return true;
    };
    const auto ex = co_await pool.post_stream(plan.target, std::move(body), plan.headers,
                                              clock::now() + plan.timeout, sink);
    r.completed = clock::now();
    r.connect_s = ex.connect_s;
    r.tls_handshake_s = ex.tls_s;
    switch (ex.error) {
    case transport::http_error::none:
        if (!done) {
            r.error = "malformed_sse";
            r.error_message = "the stream ended without data: [DONE]";
        }
        break;
    case transport::http_error::connect:
        r.error = "connect";
        r.error_message = ex.message;
        break;
    case transport::http_error::status:
        r.error = "http_status";
        r.error_message = ex.message;
        break;
    case transport::http_error::timeout:
        r.error = "timeout";
        r.error_message = "no complete answer within --timeout";
        break;
    case transport::http_error::disconnect:
        r.error = "disconnect";
        r.error_message = ex.message;
        break;
    case transport::http_error::aborted:
        break; // the sink said why
    }
}

std::optional<std::string> unreachable(const std::vector<metrics::llm_request>& records) {
    std::map<std::string, std::size_t> reasons;
    for (const auto& r : records) {
        if (r.first_byte)
            return std::nullopt;
        if (r.error == "connect")
            ++reasons[r.error_message];
    }
    if (reasons.empty())
        return std::nullopt;
    return std::max_element(reasons.begin(), reasons.end(),
                            [](const auto& a, const auto& b) { return a.second < b.second; })
        ->first;
}

} // namespace pacer::http
