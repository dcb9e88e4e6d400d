#pragma once
// The executor, coroutine type, completion tokens and I/O object types of every pacer
// coroutine.
//
// Every pacer coroutine runs on an `io_context`, so its executor is named by type,
// `io_context::executor_type`, instead of Asio's type-erased `any_io_executor`. With the
// erased one every operation a coroutine awaits copies, compares and destroys an executor
// through a table of function pointers (in the handler, in Beast's composed operations, in the
// socket's work guard); a profile of 1,024 sessions put 5 % of the client's and 7 % of the
// mock's samples there. The typed executor is a pointer and a few bits, copied inline.
// Coroutines and I/O objects must agree on it: an `awaitable<T>` here awaits only other
// `awaitable<T>`s, and is spawned with `co_spawn(io_context, ...)` or that context's executor.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace pacer {

/// The executor of every pacer coroutine and I/O object.
using executor = boost::asio::io_context::executor_type;

/// A pacer coroutine.
template <class T = void>
using awaitable = boost::asio::awaitable<T, executor>;

/// `co_await op(..., use_awaitable)`: the result, or an exception for an error.
inline constexpr boost::asio::use_awaitable_t<executor> use_awaitable{};

/// `co_await op(..., use_tuple)` gives `[error_code, results...]` instead of throwing.
inline constexpr auto use_tuple = boost::asio::as_tuple(use_awaitable);

/// The monotonic timer on the typed executor.
using steady_timer = boost::asio::basic_waitable_timer<
    std::chrono::steady_clock, boost::asio::wait_traits<std::chrono::steady_clock>, executor>;

} // namespace pacer
