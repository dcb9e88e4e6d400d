#include <pacer/metrics/oracle.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace pacer::metrics {

namespace json = boost::json;

namespace {

constexpr double input_bytes_per_ms = 32.0;

// A field that failed the wire schema: the record is reported and skipped.
struct schema_error {
    std::string what;
};

std::optional<double> number(const json::value* v) {
    if (!v)
        return std::nullopt;
    if (v->is_double())
        return std::isfinite(v->get_double()) ? std::optional<double>(v->get_double())
                                              : std::nullopt;
    if (v->is_int64())
        return static_cast<double>(v->get_int64());
    if (v->is_uint64())
        return static_cast<double>(v->get_uint64());
    return std::nullopt;
}

// An optional nonnegative number field: absent or null -> nullopt; anything else invalid throws.
std::optional<double> opt_nonnegative(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v || v->is_null())
        return std::nullopt;
    const auto n = number(v);
    if (!n || *n < 0)
        throw schema_error{fmt::format("{} must be a nonnegative number", key)};
    return n;
}

std::optional<std::int64_t> opt_int(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v || v->is_null())
        return std::nullopt;
    if (v->is_int64())
        return v->get_int64();
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(v->get_uint64());
    throw schema_error{fmt::format("{} must be an integer", key)};
}

// An optional string field; with `identifier`, it must be nonempty.
std::optional<std::string> opt_string(const json::object& o, std::string_view key,
                                      bool identifier = true) {
    const auto* v = o.if_contains(key);
    if (!v || v->is_null())
        return std::nullopt;
    if (!v->is_string() || (identifier && v->get_string().empty()))
        throw schema_error{
            fmt::format("{} must be a {}string", key, identifier ? "nonempty " : "")};
    return std::string(v->get_string());
}

const json::object* opt_object(const json::object& o, std::string_view key) {
    const auto* v = o.if_contains(key);
    if (!v || v->is_null())
        return nullptr;
    if (!v->is_object())
        throw schema_error{fmt::format("{} must be an object", key)};
    return &v->get_object();
}

// Python's str() of a JSON value, as the reference formats its messages.
std::string py_str(const json::value* v) {
    if (!v || v->is_null())
        return "None";
    if (v->is_bool())
        return v->get_bool() ? "True" : "False";
    if (v->is_string())
        return std::string(v->get_string());
    return json::serialize(*v);
}

std::string py_str(const std::optional<std::string>& s) {
    return s ? *s : "None";
}

std::size_t pcm_bytes_or_throw(const std::optional<std::string>& b64) {
    if (!b64)
        throw schema_error{"missing PCM payload"};
    const auto n = pcm16_bytes(*b64);
    if (!n)
        throw schema_error{"PCM16 payload must contain whole nonempty samples"};
    return *n;
}

struct sent_command {
    std::string type;
    double time_s = 0;
    double input_end_ms = 0;
    std::optional<std::int64_t> seq;
};

struct response_state {
    std::optional<std::string> terminal, reason;
    bool audio_done = false, audio_seen = false;
    std::optional<std::string> item_id;
};

bool is_media_delta(std::string_view t) {
    return t == "response.output_audio.delta" || t == "response.output_audio_transcript.delta" ||
           t == "response.output_text.delta";
}

std::string_view acknowledged_command(std::string_view t) {
    if (t == "session.updated")
        return "session.update";
    if (t == "sglang.input_audio.accepted")
        return "input_audio_buffer.append";
    if (t == "sglang.input_audio.ended" || t == "sglang.input_audio.drained")
        return "sglang.input_audio.end";
    if (t == "session.closed")
        return "session.close";
    return {};
}

json::object required_capabilities(const protocol::profile& p) {
    json::object c;
    c["interaction"] = "native";
    c["native_full_duplex"] = true;
    c["input_audio_format"] = json::object{{"type", "audio/pcm"}, {"rate", 16000}};
    c["tail_policy"] = "pad";
    c["microturn_ms"] = nullptr;
    c["client_commit"] = false;
    c["proactive_output"] = false;
    c["pressure_policy"] = "reject";
    c["strict_order"] = true;
    c["supports_server_interrupt"] = false;
    c["supports_resume"] = false;
    c["supports_truncate"] = false;
    c["native_unit_ms"] = p.unit_ms;
    c["output_audio_format"] = json::object{{"type", "audio/pcm"}, {"rate", p.output_sample_rate}};
    // Exactly the profile's list, in its order (the strictest reference rule: VoiceChat
    // `["audio"]`, MiniCPM-o `["audio","text"]`). A grant that passes it also passes the
    // later, looser references (a list of strings holding "audio").
    json::array modalities;
    for (const auto m : p.output_modalities)
        modalities.emplace_back(m);
    c["output_modalities"] = std::move(modalities);
    return c;
}

// Same JSON kind (a Python type check) and equal value.
bool same_typed(const json::value* got, const json::value& want) {
    if (!got)
        return false;
    const bool got_int = got->is_int64() || got->is_uint64();
    const bool want_int = want.is_int64() || want.is_uint64();
    if (got_int != want_int || (!got_int && got->kind() != want.kind()))
        return false;
    return *got == want;
}

class oracle {
public:
    oracle(const protocol::profile& p, std::optional<int> limit)
        : profile_(p), limit_(limit), unit_ms_(p.unit_ms),
          unit_bytes_(static_cast<std::size_t>(16000 * p.unit_ms / 1000 * 2)),
          required_(required_capabilities(p)) {}

    oracle_result run(std::span<const trace_line> trace) {
        for (std::size_t i = 0; i < trace.size(); ++i) {
            try {
                record(i, trace[i]);
            } catch (const schema_error& e) {
                v_.push_back(fmt::format("record {}: {}", i, e.what));
            }
        }
        return finish();
    }

private:
    void check(bool ok, std::string message) {
        if (!ok)
            v_.push_back(std::move(message));
    }

    int& count(std::string_view dir, std::string_view type) {
        return counts_[{std::string(dir), std::string(type)}];
    }

    void record(std::size_t index, const trace_line& r) {
        if (r.direction != "send" && r.direction != "receive" && r.direction != "error" &&
            r.direction != "admission")
            throw schema_error{fmt::format("invalid direction '{}'", r.direction)};
        if (!(r.time_s >= 0))
            throw schema_error{"time_s must be a nonnegative number"};
        check(r.time_s >= previous_time_, fmt::format("record {}: clock regressed", index));
        previous_time_ = r.time_s;
        if (r.direction == "admission") {
            admission(r.event);
            return;
        }
        if (r.direction == "error") {
            v_.push_back("client error: " + py_str(r.event.if_contains("message")));
            return;
        }
        const auto type = opt_string(r.event, "type");
        const auto event_id = opt_string(r.event, "event_id");
        if (!type || !event_id)
            throw schema_error{"an event needs a nonempty string type and event_id"};
        const auto* sglang = opt_object(r.event, "sglang");
        auto& ids = r.direction == "send" ? send_ids_ : receive_ids_;
        check(!ids.contains(*event_id), fmt::format("duplicate {} event_id", r.direction));
        ids.insert(*event_id);
        ++count(r.direction, *type);
        check(!closed_, fmt::format("{} after session.closed", *type));
        if (r.direction == "send")
            send(*type, *event_id, sglang, r);
        else
            receive(*type, sglang, r);
    }

    void admission(const json::object& e) {
        const auto* type = e.if_contains("type");
        const auto* status = e.if_contains("http_status");
        const auto* attempt = e.if_contains("attempt");
        const bool valid = e.size() == 3 && type && type->is_string() &&
                           type->get_string() == "connection_denied" && status &&
                           status->is_int64() && status->get_int64() == 503 && attempt &&
                           attempt->is_int64() && attempt->get_int64() >= 1 &&
                           attempt->get_int64() <= max_admission_attempts;
        if (!valid)
            throw schema_error{fmt::format("invalid admission record {}", json::serialize(e))};
        const auto n = attempt->get_int64();
        check(send_ids_.empty() && receive_ids_.empty(),
              "admission diagnostic after the session started");
        check(n == static_cast<std::int64_t>(admissions_) + 1,
              "admission attempts are not contiguous from one");
        check(!limit_ || n <= *limit_,
              fmt::format("admission attempt {} exceeds the recorded limit {}", n,
                          limit_ ? *limit_ : 0));
        ++admissions_;
    }

    void send(const std::string& type, const std::string& event_id, const json::object* sglang,
              const trace_line& r) {
        std::optional<std::int64_t> seq;
        if (type == "session.update") {
            check(session_id_.has_value(), "session.update before session.created");
        } else if (type == "input_audio_buffer.append") {
            check(updated_, "audio input before session.updated");
            check(count("send", "sglang.input_audio.end") == 0, "input after EOS");
            seq = sglang ? opt_int(*sglang, "seq") : std::nullopt;
            const auto t_start_ms = sglang ? opt_nonnegative(*sglang, "t_start_ms") : std::nullopt;
            check(seq == next_seq_, "input sequence is not contiguous");
            check(!t_start_ms || std::abs(*t_start_ms - input_ms()) <= 1e-7,
                  "input media time is not sample-contiguous");
            input_bytes_ += pcm_bytes_or_throw(opt_string(r.event, "audio", false));
            ++next_seq_;
            input_times_.push_back(r.time_s);
        } else if (type == "sglang.input_audio.end") {
            check(updated_, "EOS before session.updated");
        } else if (type == "session.close") {
            check(drained_, "session.close before input drained");
        } else {
            v_.push_back(fmt::format("client command outside this scenario: {}", type));
        }
        if (!sent_.contains(event_id))
            sent_order_.push_back(event_id);
        sent_[event_id] = sent_command{type, r.time_s, input_ms(), seq};
    }

    void receive(const std::string& type, const json::object* sglang, const trace_line& r) {
        const auto& e = r.event;
        const auto client_event_id = opt_string(e, "client_event_id");
        const sent_command* cmd = nullptr;
        if (client_event_id)
            if (auto it = sent_.find(*client_event_id); it != sent_.end())
                cmd = &it->second;
        if (const auto ack = acknowledged_command(type); !ack.empty()) {
            check(cmd && cmd->type == ack,
                  fmt::format("{}: missing matching prior client event", type));
            auto key = std::make_pair(type, client_event_id.value_or(std::string()));
            check(!acknowledged_.contains(key), fmt::format("duplicate {}", type));
            acknowledged_.insert(std::move(key));
        }
        if (type == "session.created") {
            check(!created_, "duplicate session.created");
            created_ = true;
            const auto* session = opt_object(e, "session");
            const auto* id = session ? session->if_contains("id") : nullptr;
            const bool ok = id && id->is_string() && !id->get_string().empty();
            session_id_ =
                ok ? std::optional<std::string>(std::string(id->get_string())) : std::nullopt;
            check(ok, "missing session ID");
        } else if (type == "session.updated") {
            session_updated(e);
        } else if (type == "sglang.input_audio.accepted") {
            const auto seq = opt_int(e, "seq");
            const auto end_ms = opt_nonnegative(e, "accepted_end_ms");
            if (cmd) {
                check(seq == cmd->seq, "accepted input sequence mismatch");
                check(end_ms == cmd->input_end_ms, "accepted input duration mismatch");
            }
        } else if (type == "sglang.input_audio.ended") {
            check(opt_nonnegative(e, "accepted_end_ms") == input_ms(),
                  "ended input duration mismatch");
            check(opt_string(e, "tail_policy", false) == "pad", "ended tail policy mismatch");
            ended_ = true;
        } else if (type == "sglang.input_audio.drained") {
            check(ended_, "input drained before ended receipt");
            const double expected = input_ms();
            check(opt_nonnegative(e, "accepted_end_ms") == expected,
                  "drained input duration mismatch");
            check(opt_nonnegative(e, "consumed_ms") == expected,
                  "drained consumed duration mismatch");
            check(opt_nonnegative(e, "discarded_ms") == 0.0, "accepted input was discarded");
            const double padding = std::ceil(expected / unit_ms_) * unit_ms_ - expected;
            check(opt_nonnegative(e, "padding_ms") == padding, "drained padding mismatch");
            drained_ = true;
            if (cmd)
                drain_after_eos_s_ = r.time_s - cmd->time_s;
        } else if (type == "sglang.unit.done") {
            unit_done(e, sglang);
        } else if (type == "response.created") {
            check(updated_, "response before session.updated");
            const auto* resp = opt_object(e, "response");
            if (!resp) {
                v_.push_back("response.created missing response");
            } else {
                const auto id = response_id(*resp);
                check(!responses_.contains(id), "duplicate response.created");
                check(opt_string(*resp, "status", false) == "in_progress",
                      "invalid created response status");
                if (!responses_.contains(id))
                    response_order_.push_back(id);
                responses_[id] = response_state{};
            }
        } else if (type.starts_with("response.")) {
            response_event(type, r);
        } else if (type == "session.closed") {
            check(drained_, "session.closed before input drained");
            check(opt_string(e, "reason", false) == "client_closed",
                  "unexpected session close reason");
            closed_ = true;
            if (cmd)
                close_ack_s_ = r.time_s - cmd->time_s;
        } else if (type == "error") {
            const auto* err = opt_object(e, "error");
            const auto* fatal = sglang ? sglang->if_contains("fatal") : nullptr;
            if (fatal && !fatal->is_null() && !fatal->is_bool())
                throw schema_error{"sglang.fatal must be a boolean"};
            v_.push_back(fmt::format("server error: code={} fatal={}: {}",
                                     py_str(err ? err->if_contains("code") : nullptr),
                                     py_str(fatal),
                                     py_str(err ? err->if_contains("message") : nullptr)));
        } else {
            v_.push_back(fmt::format("unsupported server event: {}", type));
        }
    }

    static std::string response_id(const json::object& resp) {
        const auto id = opt_string(resp, "id");
        if (!id)
            throw schema_error{"response.id must be a nonempty string"};
        return *id;
    }

    void session_updated(const json::object& e) {
        const auto* session = opt_object(e, "session");
        const auto* id = session ? session->if_contains("id") : nullptr;
        check(session_id_ && id && id->is_string() && id->get_string() == *session_id_,
              "session ID changed");
        const json::object* granted = nullptr;
        if (session)
            if (const auto* ext = session->if_contains("sglang"); ext && ext->is_object())
                if (const auto* g = ext->get_object().if_contains("granted"); g && g->is_object())
                    granted = &g->get_object();
        check(granted != nullptr, "missing granted capabilities");
        if (granted) {
            for (const auto& kv : required_) {
                const std::string_view name = kv.key();
                check(same_typed(granted->if_contains(name), kv.value()),
                      fmt::format("unsupported capability: {}", name));
            }
        }
        updated_ = true;
    }

    void unit_done(const json::object& e, const json::object* sglang) {
        const auto unit_id = opt_string(e, "unit_id");
        const json::object* media = sglang ? opt_object(*sglang, "media_time") : nullptr;
        std::optional<double> t_start, duration;
        if (media) {
            t_start = opt_nonnegative(*media, "t_start_ms");
            duration = opt_nonnegative(*media, "duration_ms");
            if (!t_start || !duration)
                throw schema_error{"media_time needs nonnegative t_start_ms and duration_ms"};
        }
        const std::string id = unit_id.value_or("");
        const bool prefix = id.starts_with("unit_");
        const std::string digits = prefix ? id.substr(5) : "";
        const bool numeric =
            !digits.empty() && digits.size() < 18 &&
            std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!numeric) {
            v_.push_back(fmt::format("invalid native unit ID: {}", py_str(unit_id)));
        } else if (!media) {
            v_.push_back("unit receipt missing media time");
        } else {
            const auto k = std::stoll(digits);
            check(units_.empty() || k > units_.back().first,
                  "native unit receipts are not increasing");
            check(*t_start == static_cast<double>(k) * unit_ms_,
                  "native unit media time is not unit-aligned");
            units_.emplace_back(k, *duration);
        }
    }

    void response_event(const std::string& type, const trace_line& r) {
        const auto& e = r.event;
        check(!drained_ || (!is_media_delta(type) && count("send", "session.close") > 0),
              fmt::format("{} after drain", type));
        const auto* resp = opt_object(e, "response");
        const std::optional<std::string> id =
            resp ? std::optional<std::string>(response_id(*resp)) : opt_string(e, "response_id");
        response_state* state = nullptr;
        if (id)
            if (auto it = responses_.find(*id); it != responses_.end())
                state = &it->second;
        check(state != nullptr, fmt::format("{}: unknown response", type));
        if (!state)
            return;
        check(!state->terminal.has_value(),
              fmt::format("{}: output after response terminal", type));
        if (type == "response.done") {
            std::optional<std::string> status, reason;
            if (resp) {
                status = opt_string(*resp, "status", false);
                if (const auto* details = opt_object(*resp, "status_details")) {
                    reason = opt_string(*details, "reason");
                    if (!reason)
                        throw schema_error{"status_details.reason must be a nonempty string"};
                }
            }
            std::optional<std::pair<std::string_view, std::string_view>> terminal;
            if (reason == "stop")
                terminal = {"completed", "sglang.input_audio.end"};
            else if (reason == "client_closed")
                terminal = {"cancelled", "session.close"};
            check(terminal.has_value(),
                  fmt::format("unsupported response terminal reason: {}", py_str(reason)));
            if (terminal) {
                check(status == terminal->first,
                      fmt::format("terminal status {} contradicts reason {}", py_str(status),
                                  *reason));
                if (reason != "stop" || profile_.stop_requires_eos)
                    check(count("send", terminal->second) > 0,
                          fmt::format("terminal reason {} without its client command", *reason));
            }
            check(reason != "stop" || !drained_,
                  "native completed terminal after the drain receipt");
            check(!state->audio_seen || state->audio_done, "missing output_audio.done");
            state->terminal = status ? status : std::optional<std::string>("None");
            state->reason = reason;
        } else if (type == "response.output_audio.delta") {
            const auto item = opt_string(e, "item_id");
            check(!state->audio_done, "audio after output_audio.done");
            check(item.has_value(), "audio missing item ID");
            check(!state->item_id || state->item_id == item, "audio item ID changed");
            check(opt_int(e, "content_index") == 0 && opt_int(e, "output_index") == 0,
                  "invalid audio indexes");
            output_bytes_ += pcm_bytes_or_throw(opt_string(e, "delta", false));
            audio_times_.push_back(r.time_s);
            state->audio_seen = true;
            state->item_id = item;
        } else if (type == "response.output_audio.done") {
            check(!state->audio_done, "duplicate output_audio.done");
            state->audio_done = true;
        } else if (type == "response.output_audio_transcript.delta" ||
                   type == "response.output_text.delta") {
            check(opt_string(e, "delta", false).has_value(), "text delta missing content");
        } else if (type != "response.output_audio_transcript.done" &&
                   type != "response.output_text.done") {
            v_.push_back(fmt::format("unsupported server event: {}", type));
        }
    }

    double input_ms() const { return static_cast<double>(input_bytes_) / input_bytes_per_ms; }

    oracle_result finish() {
        static constexpr std::pair<std::string_view, std::string_view> once[] = {
            {"receive", "session.created"},
            {"send", "session.update"},
            {"receive", "session.updated"},
            {"send", "sglang.input_audio.end"},
            {"receive", "sglang.input_audio.ended"},
            {"receive", "sglang.input_audio.drained"},
            {"send", "session.close"},
            {"receive", "session.closed"},
        };
        for (const auto& [dir, type] : once)
            check(count(dir, type) == 1, fmt::format("expected exactly one {} {}", dir, type));
        check(!input_times_.empty(), "missing audio input");
        const std::size_t expected_units =
            unit_bytes_ ? (input_bytes_ + unit_bytes_ - 1) / unit_bytes_ : 0;
        std::size_t nonempty = 0;
        double duration_sum = 0;
        bool contiguous = true;
        for (std::size_t i = 0; i < units_.size(); ++i) {
            nonempty += units_[i].second != 0;
            duration_sum += units_[i].second;
            contiguous = contiguous && units_[i].first == static_cast<long long>(i);
        }
        check(contiguous, "native unit receipts are not contiguous from zero");
        check(nonempty == expected_units,
              fmt::format("expected {} nonempty native units, observed {}", expected_units,
                          nonempty));
        check(units_.size() == nonempty ||
                  (units_.size() == nonempty + 1 && units_.back().second == 0 && unit_bytes_ &&
                   input_bytes_ % unit_bytes_ == 0),
              "an empty EOS unit requires exactly unit-aligned input");
        check(duration_sum == input_ms(),
              "native unit durations do not account for the accepted input");
        if (profile_.continuous) {
            const std::uint64_t expected_output =
                static_cast<std::uint64_t>(expected_units) *
                static_cast<std::uint64_t>(profile_.output_sample_rate) *
                static_cast<std::uint64_t>(profile_.unit_ms) / 1000 * 2;
            check(output_bytes_ == expected_output,
                  fmt::format("output audio is not conserved: {} of {} bytes for {} units",
                              output_bytes_, expected_output, expected_units));
        }
        for (const auto& id : sent_order_)
            if (sent_.at(id).type == "input_audio_buffer.append")
                check(acknowledged_.contains({"sglang.input_audio.accepted", id}),
                      "missing input acceptance receipt");
        for (const auto& id : response_order_) {
            const auto& s = responses_.at(id);
            check(s.terminal == "completed" && s.reason == "stop",
                  fmt::format("response {} ended {}/{}, expected completed/stop", id,
                              py_str(s.terminal), py_str(s.reason)));
        }

        oracle_result r;
        r.violations = std::move(v_);
        if (!audio_times_.empty())
            r.input_output_overlap =
                std::any_of(input_times_.begin(), input_times_.end(), [&](double t) {
                    return audio_times_.front() < t && t < audio_times_.back();
                });
        r.input_audio_s = static_cast<double>(input_bytes_) / input_bytes_per_s;
        r.output_audio_s = static_cast<double>(output_bytes_) / (2.0 * profile_.output_sample_rate);
        r.admission_denials = admissions_;
        if (!audio_times_.empty() && !input_times_.empty())
            r.first_audio_packet_s = audio_times_.front() - input_times_.front();
        for (std::size_t i = 1; i < audio_times_.size(); ++i)
            r.audio_packet_gap_max_s = std::max(
                r.audio_packet_gap_max_s.value_or(-std::numeric_limits<double>::infinity()),
                audio_times_[i] - audio_times_[i - 1]);
        r.drain_after_eos_s = drain_after_eos_s_;
        r.close_ack_s = close_ack_s_;
        r.verdict = !r.violations.empty()                              ? "fail"
                    : (!profile_.continuous || r.input_output_overlap) ? "pass"
                                                                       : "not_exercised";
        return r;
    }

    const protocol::profile& profile_;
    std::optional<int> limit_;
    double unit_ms_;
    std::size_t unit_bytes_;
    json::object required_;

    std::vector<std::string> v_;
    std::map<std::pair<std::string, std::string>, int> counts_;
    std::set<std::string> send_ids_, receive_ids_;
    std::map<std::string, sent_command> sent_;
    std::vector<std::string> sent_order_;
    std::set<std::pair<std::string, std::string>> acknowledged_;
    std::map<std::string, response_state> responses_;
    std::vector<std::string> response_order_;
    std::vector<double> input_times_, audio_times_;
    std::vector<std::pair<long long, double>> units_;
    std::size_t input_bytes_ = 0;
    std::uint64_t output_bytes_ = 0;
    std::int64_t next_seq_ = 0;
    std::size_t admissions_ = 0;
    std::optional<std::string> session_id_;
    bool created_ = false, updated_ = false, ended_ = false, drained_ = false, closed_ = false;
    double previous_time_ = -std::numeric_limits<double>::infinity();
    std::optional<double> drain_after_eos_s_, close_ack_s_;
};

json::value opt_json(const std::optional<double>& v) {
    return v ? json::value(*v) : json::value(nullptr);
}

} // namespace

json::object oracle_result::metrics_json() const {
    json::object o;
    o["input_audio_s"] = input_audio_s;
    o["output_audio_s"] = output_audio_s;
    o["admission_denials"] = admission_denials;
    o["first_audio_packet_s"] = opt_json(first_audio_packet_s);
    o["audio_packet_gap_max_s"] = opt_json(audio_packet_gap_max_s);
    o["input_output_overlap"] = input_output_overlap;
    o["drain_after_eos_s"] = opt_json(drain_after_eos_s);
    o["close_ack_s"] = opt_json(close_ack_s);
    return o;
}

oracle_result evaluate_trace(std::span<const trace_line> trace, const protocol::profile& profile,
                             std::optional<int> admission_limit) {
    return oracle(profile, admission_limit).run(trace);
}

} // namespace pacer::metrics
