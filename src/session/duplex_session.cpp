// One duplex session, as the program runs it: the generic session coroutine (session_run.hpp)
// on Asio's steady_timer and the WebSocket connection, for the protocol its options name.

#include <pacer/session/duplex_session.hpp>

#include "session_run.hpp"
#include "session_state.hpp"
#include <atomic>

namespace pacer::session {

std::size_t session_states_alive() {
    return detail::states_alive.load(std::memory_order_relaxed);
}

awaitable<session_result> run_duplex_session(session_options options, trace::channel& traces) {
    co_return co_await detail::run_cancellable<detail::asio_io>(std::move(options), traces);
}

} // namespace pacer::session
