#pragma once
// The completion token of every coroutine that reads an operation's error as data.

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace pacer {

/// `co_await op(..., use_tuple)` gives `[error_code, results...]` instead of throwing.
inline constexpr auto use_tuple = boost::asio::as_tuple(boost::asio::use_awaitable);

} // namespace pacer
