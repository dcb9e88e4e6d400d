// Unit tests of the native protocol's sans-io session machines (docs/protocol.md §1.5, §2):
// `native_session` (what the driver does next) and `task_completion` (§1.5 step 4). Each test
// drives a machine step by step with a manual clock: explicit time points, no io_context.

#include <pacer/protocol/constants.hpp>
#include <pacer/protocol/native_session.hpp>
#include <pacer/protocol/opening.hpp>

#include <gtest/gtest.h>

#include "unit/manual_timer.hpp"
#include <chrono>

namespace {

using namespace std::chrono_literals;
using pacer::time_point;
using pacer::protocol::driver_action;
using pacer::protocol::native_session;
using pacer::protocol::native_session_options;
using pacer::protocol::server_event;
using pacer::protocol::task_completion;
using pacer::test::manual_clock;
using kind = driver_action::kind;
using task = task_completion::task;
using done_kind = task_completion::action::kind;

native_session_options input_of(std::size_t packets) {
    native_session_options o;
    o.pcm_bytes = packets * pacer::protocol::packet_bytes;
    return o;
}

// Negotiates: created -> update sent -> updated.
void negotiate(native_session& s) {
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event);
    s.on_event(server_event::session_created);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_update);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event);
    s.on_event(server_event::session_updated);
}

TEST(native_session, constants_are_the_protocols) {
    EXPECT_EQ(pacer::protocol::packet_period, 80ms);
    EXPECT_EQ(pacer::protocol::packet_bytes, 2560u);
    EXPECT_EQ(pacer::protocol::post_close, 200ms);
    EXPECT_EQ(pacer::protocol::admission_retries, 3);
    EXPECT_EQ(pacer::protocol::admission_backoff, 250ms);
    EXPECT_EQ(pacer::protocol::max_message_bytes, 8u * 1024 * 1024);
    EXPECT_DOUBLE_EQ(pacer::protocol::late_threshold_s, 0.080);
}

TEST(native_session, healthy_session_streams_on_the_grid_anchored_to_packet_0) {
    manual_clock::reset();
    native_session s(input_of(3));
    negotiate(s);
    // Packet 0 goes at once; its actual send start (1 ms later) anchors the grid.
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::send_append);
    EXPECT_EQ(a.seq, 0u);
    const auto anchor = manual_clock::now() + 1ms;
    s.append_sent(anchor);
    EXPECT_EQ(s.origin(), anchor);
    // Packet 1 waits for origin + 80 ms: an absolute deadline.
    a = s.next(manual_clock::now() + 5ms);
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, anchor + 80ms);
    // A late wake (+30 ms) sends packet 1 at once, and packet 2 stays due at origin + 160 ms.
    manual_clock::set(anchor + 110ms);
    a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::send_append);
    EXPECT_EQ(a.seq, 1u);
    EXPECT_EQ(a.at, anchor + 80ms);
    s.append_sent(manual_clock::now());
    a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, anchor + 160ms);
    manual_clock::set(anchor + 160ms);
    ASSERT_EQ(s.next(manual_clock::now()).what, kind::send_append);
    s.append_sent(manual_clock::now());
    // End of input: not before origin + the input's duration (240 ms).
    a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, anchor + 240ms);
    manual_clock::set(a.at);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_end);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event);
    s.on_event(server_event::input_drained);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_close);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event);
    s.on_event(server_event::session_closed);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::done);
    EXPECT_EQ(s.appends_sent(), 3u);
}

TEST(native_session, a_given_origin_is_the_grid_and_the_stagger_is_ignored) {
    manual_clock::reset();
    auto o = input_of(2);
    o.origin = manual_clock::now() + 500ms;
    o.start_delay = 40ms;
    native_session s(o);
    negotiate(s);
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, *o.origin);
    manual_clock::set(*o.origin + 3ms);
    a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::send_append);
    s.append_sent(manual_clock::now());
    EXPECT_EQ(s.origin(), *o.origin); // the given origin, not the send start
}

TEST(native_session, stagger_waits_from_session_updated) {
    manual_clock::reset();
    auto o = input_of(1);
    o.start_delay = 40ms;
    native_session s(o);
    negotiate(s);
    const auto updated_at = manual_clock::now();
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, updated_at + 40ms);
    manual_clock::jump(10ms); // an early wake keeps the same deadline
    EXPECT_EQ(s.next(manual_clock::now()).at, updated_at + 40ms);
    manual_clock::set(updated_at + 40ms);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_append);
}

TEST(native_session, the_gate_start_plus_offset_is_the_origin) {
    manual_clock::reset();
    auto o = input_of(1);
    o.gate = true;
    o.start_offset = 20ms;
    native_session s(o);
    negotiate(s);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::join_gate);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event); // until the level starts
    s.gate_started(manual_clock::now() + 300ms);
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, manual_clock::now() + 320ms);
    EXPECT_EQ(s.given_origin(), manual_clock::now() + 320ms);
}

TEST(native_session, a_server_error_stops_streaming_and_closes_unless_fatal) {
    for (const bool fatal : {false, true}) {
        manual_clock::reset();
        native_session s(input_of(3));
        negotiate(s);
        ASSERT_EQ(s.next(manual_clock::now()).what, kind::send_append);
        s.append_sent(manual_clock::now());
        s.on_event(server_event::error, fatal);
        // No more appends, no end of input; session.close only after a nonfatal error.
        const auto a = s.next(manual_clock::now() + 80ms);
        if (fatal) {
            EXPECT_EQ(a.what, kind::wait_event) << "fatal: no session.close";
        } else {
            EXPECT_EQ(a.what, kind::send_close);
            EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event);
        }
        s.on_receiver_ended(); // the server closed the connection
        EXPECT_EQ(s.next(manual_clock::now()).what, kind::done);
        EXPECT_EQ(s.appends_sent(), 1u);
    }
}

TEST(native_session, an_error_before_negotiation_skips_to_close) {
    manual_clock::reset();
    native_session s(input_of(1));
    s.on_event(server_event::error, false);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_close);
}

TEST(native_session, session_closed_before_update_sends_nothing_more) {
    manual_clock::reset();
    // close_without_update: the server answers the update with session.closed and an
    // error-free end: here the updated event never comes, and the receive loop ends.
    native_session t(input_of(2));
    t.on_event(server_event::session_created);
    EXPECT_EQ(t.next(manual_clock::now()).what, kind::send_update);
    t.on_event(server_event::session_closed);
    t.on_receiver_ended();
    // Not aborted: the driver still waits for session.updated (the completion rules end it).
    EXPECT_EQ(t.next(manual_clock::now()).what, kind::wait_event);
}

TEST(native_session, lockstep_waits_for_each_unit_and_sends_eos_at_once) {
    manual_clock::reset();
    auto o = input_of(4);
    o.lockstep_unit_bytes = 2 * pacer::protocol::packet_bytes; // a unit every 2 packets
    native_session s(o);
    negotiate(s);
    ASSERT_EQ(s.next(manual_clock::now()).what, kind::send_append); // packet 0: no unit completed
    s.append_sent(manual_clock::now());
    auto a = s.next(manual_clock::now()); // packet 1 at once: lockstep never sleeps
    ASSERT_EQ(a.what, kind::send_append);
    EXPECT_EQ(a.seq, 1u);
    s.append_sent(manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what,
              kind::wait_event); // unit 0 completed: wait for its done
    s.on_event(server_event::unit_done);
    ASSERT_EQ(s.next(manual_clock::now()).what, kind::send_append);
    s.append_sent(manual_clock::now());
    ASSERT_EQ(s.next(manual_clock::now()).what, kind::send_append);
    s.append_sent(manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::wait_event);
    s.on_event(server_event::unit_done);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_end); // no grid wait in lockstep
}

TEST(native_session, a_short_last_packet_that_completes_no_unit_waits_for_none) {
    manual_clock::reset();
    auto o = input_of(1);
    o.pcm_bytes += 2; // a 2-byte tail packet
    o.lockstep_unit_bytes = 2 * pacer::protocol::packet_bytes;
    native_session s(o);
    negotiate(s);
    s.next(manual_clock::now());
    s.append_sent(manual_clock::now());
    s.next(manual_clock::now());
    s.append_sent(manual_clock::now());
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_end);
}

TEST(native_session, lockstep_with_an_origin_waits_for_it_once) {
    manual_clock::reset();
    auto o = input_of(1);
    o.origin = manual_clock::now() + 100ms;
    o.lockstep_unit_bytes = pacer::protocol::packet_bytes * 10;
    native_session s(o);
    negotiate(s);
    auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, *o.origin);
    manual_clock::set(*o.origin);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_append);
    s.append_sent(manual_clock::now() + 1ms);
    EXPECT_EQ(s.origin(), *o.origin);
}

TEST(native_session, eos_waits_for_the_last_packets_own_duration) {
    manual_clock::reset();
    native_session s(input_of(1));
    negotiate(s);
    ASSERT_EQ(s.next(manual_clock::now()).what, kind::send_append);
    s.append_sent(manual_clock::now());
    const auto a = s.next(manual_clock::now());
    ASSERT_EQ(a.what, kind::wait_until);
    EXPECT_EQ(a.at, manual_clock::now() + 80ms);
}

TEST(native_session, session_closed_early_needs_no_close) {
    manual_clock::reset();
    native_session s(input_of(1));
    negotiate(s);
    s.on_event(server_event::error, false);
    s.on_event(server_event::session_closed);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::done);
}

TEST(native_session, an_append_stays_the_step_until_its_send_start_is_reported) {
    manual_clock::reset();
    native_session s(input_of(2));
    negotiate(s);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_append);
    EXPECT_EQ(s.next(manual_clock::now() + 1ms).what,
              kind::send_append); // not sent yet: still packet 0
    EXPECT_EQ(s.next(manual_clock::now() + 1ms).seq, 0u);
    s.append_sent(manual_clock::now() + 1ms);
    EXPECT_EQ(s.next(manual_clock::now() + 2ms).what, kind::wait_until);
}

TEST(native_session, a_failed_send_ends_the_stream) {
    manual_clock::reset();
    native_session s(input_of(3));
    negotiate(s);
    s.next(manual_clock::now());
    s.append_sent(manual_clock::now());
    s.send_failed();
    manual_clock::jump(80ms);
    // No further append and no end of input (the session is stopping anyway).
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_close);
    EXPECT_EQ(s.appends_sent(), 1u);
}

// §1.5 step 4 -------------------------------------------------------------------------------

// The opening shapes of the three protocols (protocol/opening.hpp), read from their frames.
const pacer::protocol::opening_shape native_created = pacer::protocol::describe_opening(
    R"({"type":"session.created","session":{"id":"s","sglang":{"granted":null}}})");
const pacer::protocol::opening_shape openai_created = pacer::protocol::describe_opening(
    R"({"type":"session.created","session":{"id":"s","object":"realtime.session"}})");
const pacer::protocol::opening_shape vllm_created =
    pacer::protocol::describe_opening(R"({"type":"session.created","id":"s","created":0})");

TEST(native_session, opening_shapes_name_their_protocols) {
    using pacer::protocol::wire_protocol;
    EXPECT_EQ(shape_protocol(native_created), wire_protocol::native);
    EXPECT_EQ(shape_protocol(openai_created), wire_protocol::openai_realtime);
    EXPECT_EQ(shape_protocol(vllm_created), wire_protocol::vllm_realtime);
    // A bare event names none; a frame that is not JSON shows nothing.
    EXPECT_EQ(shape_protocol(pacer::protocol::describe_opening(R"({"type":"session.created"})")),
              std::nullopt);
    EXPECT_EQ(shape_protocol(pacer::protocol::describe_opening("{")), std::nullopt);
}

TEST(native_session, a_vllm_opening_ends_the_session_at_once_naming_it) {
    manual_clock::reset();
    native_session s(input_of(3));
    EXPECT_TRUE(s.checks_opening());
    const auto wrong = s.check_opening("session.created", vllm_created);
    ASSERT_TRUE(wrong.has_value());
    EXPECT_EQ(*wrong, "server's first event was 'session.created' in vllm-realtime's shape (a "
                      "top-level 'id', no 'session' object), not the native protocol's: is "
                      "--protocol right?");
    EXPECT_TRUE(s.wrong_protocol());
    EXPECT_FALSE(s.checks_opening());
    // Nothing is sent to that server, not even session.close, and no close is awaited.
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::done);
    EXPECT_EQ(s.appends_sent(), 0u);
}

TEST(native_session, an_openai_session_updated_ends_the_session_before_streaming) {
    manual_clock::reset();
    native_session s(input_of(3));
    // OpenAI's session.created passes (the native protocol says no more than its id)...
    EXPECT_EQ(s.check_opening("session.created", openai_created), std::nullopt);
    s.on_event(server_event::session_created);
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_update);
    EXPECT_TRUE(s.checks_opening());
    // ... and its answer to session.update tells.
    const auto wrong = s.check_opening(
        "session.updated", pacer::protocol::describe_opening(
                               R"({"type":"session.updated","session":{"id":"s","audio":{}}})"));
    ASSERT_TRUE(wrong.has_value());
    EXPECT_EQ(*wrong, "server answered session.update with 'session.updated' in "
                      "openai-realtime's shape (a 'session' object without 'sglang'), not the "
                      "native protocol's (with 'session.sglang'): is --protocol right?");
    EXPECT_EQ(s.next(manual_clock::now()).what, kind::done);
    EXPECT_EQ(s.appends_sent(), 0u);
}

TEST(native_session, another_first_event_type_is_named) {
    native_session s(input_of(1));
    const auto wrong = s.check_opening("transcription.delta", {});
    ASSERT_TRUE(wrong.has_value());
    EXPECT_EQ(*wrong, "server's first event was 'transcription.delta', not the native "
                      "protocol's 'session.created': is --protocol right?");
}

TEST(native_session, the_native_opening_and_shapeless_events_pass_and_the_check_ends) {
    manual_clock::reset();
    for (const auto& created : {native_created, pacer::protocol::opening_shape{}}) {
        native_session s(input_of(1));
        EXPECT_EQ(s.check_opening("session.created", created), std::nullopt);
        s.on_event(server_event::session_created);
        EXPECT_EQ(s.next(manual_clock::now()).what, kind::send_update);
        // Events between session.created and session.updated are not judged.
        EXPECT_EQ(s.check_opening("rate_limits.updated", openai_created), std::nullopt);
        EXPECT_TRUE(s.checks_opening());
        EXPECT_EQ(s.check_opening("session.updated", native_created), std::nullopt);
        EXPECT_FALSE(s.checks_opening()); // the check costs nothing once negotiated
        EXPECT_FALSE(s.wrong_protocol());
    }
    // An error first is the server's refusal, not another protocol.
    native_session s(input_of(1));
    EXPECT_EQ(s.check_opening("error", vllm_created), std::nullopt);
}

TEST(task_completion, receiver_ends_first_the_driver_gets_post_close_then_is_stalled) {
    manual_clock::reset();
    task_completion c;
    EXPECT_EQ(c.next(manual_clock::now(), false).what, done_kind::wait);
    EXPECT_EQ(c.next(manual_clock::now(), false).at, time_point::max());
    c.ended(task::receiver, manual_clock::now());
    auto a = c.next(manual_clock::now() + 10ms, false);
    ASSERT_EQ(a.what, done_kind::wait);
    EXPECT_EQ(a.at, manual_clock::now() + pacer::protocol::post_close);
    a = c.next(manual_clock::now() + 200ms, false);
    ASSERT_EQ(a.what, done_kind::stop_other);
    EXPECT_TRUE(a.driver_stalled);
    EXPECT_TRUE(c.driver_stalled());
    // Now stopping: wait (unbounded) for the driver to end.
    EXPECT_EQ(c.next(manual_clock::now() + 201ms, true).what, done_kind::wait);
    c.ended(task::driver, manual_clock::now() + 202ms);
    EXPECT_EQ(c.next(manual_clock::now() + 202ms, true).what, done_kind::done);
}

TEST(task_completion, driver_within_the_grace_is_not_stalled) {
    manual_clock::reset();
    task_completion c;
    c.ended(task::receiver, manual_clock::now());
    c.ended(task::driver, manual_clock::now() + 199ms);
    EXPECT_EQ(c.next(manual_clock::now() + 199ms, false).what, done_kind::done);
    EXPECT_FALSE(c.driver_stalled());
}

TEST(task_completion, driver_ends_first_the_receiver_is_stopped_silently) {
    manual_clock::reset();
    task_completion c;
    c.ended(task::driver, manual_clock::now());
    EXPECT_EQ(c.next(manual_clock::now(), false).at, manual_clock::now() + 200ms);
    const auto a = c.next(manual_clock::now() + 250ms, false);
    ASSERT_EQ(a.what, done_kind::stop_other);
    EXPECT_FALSE(a.driver_stalled);
}

TEST(task_completion, a_failure_or_an_outside_stop_gives_no_grace) {
    manual_clock::reset();
    task_completion c;
    c.ended(task::receiver, manual_clock::now()); // it failed: the session is stopping
    const auto a = c.next(manual_clock::now() + 10s, true);
    EXPECT_EQ(a.what, done_kind::wait);
    EXPECT_EQ(a.at, time_point::max());
    EXPECT_FALSE(c.driver_stalled());
}

TEST(task_completion, the_grace_is_configurable) {
    manual_clock::reset();
    task_completion c(50ms);
    c.ended(task::driver, manual_clock::now());
    EXPECT_EQ(c.next(manual_clock::now(), false).at, manual_clock::now() + 50ms);
}

} // namespace
