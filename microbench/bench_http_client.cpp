// The per-request CPU of `pacer http` outside the sockets: the JSON body of one request (a
// synthetic 128-word prompt) and the reading of one streamed chunk (the SSE event of a token as
// `pacer llm-mock` sends it, then its JSON). variant:0 is the way it was done before
// (a json::object serialized; a DOM on the heap), variant:1 the way `pacer http` does it now
// (the body written directly; the DOM in a stack buffer). Allocations per operation come from
// the counting operator new of bench_send_path.cpp.

#include <pacer/session/llm_prompts.hpp>
#include <pacer/transport/openai_stream.hpp>
#include <pacer/transport/sse.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// Defined in bench_send_path.cpp (the one replacement of operator new in this program).
std::uint64_t pacer_microbench_allocations();

namespace {

namespace json = boost::json;
using namespace pacer;

// The body as it was built before: a json::object, serialized.
std::string body_via_object(const session::request_options& o, const session::prompt& p) {
    json::object body;
    body["model"] = o.model;
    if (o.chat)
        body["messages"] = json::array{json::object{{"role", "user"}, {"content", p.text}}};
    else
        body["prompt"] = p.text;
    body["max_tokens"] = p.output_len;
    body["stream"] = true;
    body["stream_options"] = json::object{{"include_usage", true}};
    if (o.ignore_eos)
        body["ignore_eos"] = true;
    if (o.temperature)
        body["temperature"] = *o.temperature;
    return json::serialize(body);
}

void BM_RequestBody(benchmark::State& state) {
    const bool direct = state.range(0) == 1;
    const session::request_options o{"m", false, true, std::nullopt};
    const auto p = session::make_synthetic_prompt({128, 4, 0, 0}, 7);
    const auto before = pacer_microbench_allocations();
    for (auto _ : state) {
        std::string body = direct ? session::request_body(o, p) : body_via_object(o, p);
        benchmark::DoNotOptimize(body.data());
    }
    state.counters["allocs_per_op"] =
        benchmark::Counter(static_cast<double>(pacer_microbench_allocations() - before) /
                           static_cast<double>(state.iterations()));
}
BENCHMARK(BM_RequestBody)->ArgName("variant")->Arg(0)->Arg(1);

// One token's event as `pacer llm-mock` writes it (completions).
const std::string token_event =
    "data: "
    R"({"id":"cmpl-12345","object":"text_completion","created":0,"model":"m","choices":[{"index":0,"logprobs":null,"finish_reason":null,"text":" tok"}]})"
    "\n\n";

// The chunk as it was read before: the same DOM, every value on the heap.
bool has_text_via_heap(std::string_view data) {
    boost::system::error_code ec;
    const json::value v = json::parse(data, ec);
    if (ec || !v.is_object())
        return false;
    const auto* c = v.get_object().if_contains("choices");
    if (!c || !c->is_array() || c->get_array().empty() || !c->get_array()[0].is_object())
        return false;
    const auto* t = c->get_array()[0].get_object().if_contains("text");
    return t && t->is_string() && !t->get_string().empty();
}

void BM_StreamChunk(benchmark::State& state) {
    const bool stack = state.range(0) == 1;
    transport::sse_parser parser;
    std::vector<transport::sse_event> events;
    const auto before = pacer_microbench_allocations();
    for (auto _ : state) {
        events.clear();
        parser.feed(token_event, events);
        const bool text = stack ? transport::read_openai_chunk(events.front().data).has_text
                                : has_text_via_heap(events.front().data);
        benchmark::DoNotOptimize(text);
    }
    state.counters["allocs_per_op"] =
        benchmark::Counter(static_cast<double>(pacer_microbench_allocations() - before) /
                           static_cast<double>(state.iterations()));
}
BENCHMARK(BM_StreamChunk)->ArgName("variant")->Arg(0)->Arg(1);

} // namespace
