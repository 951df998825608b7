// Test support: an awaitable sleep on the calling coroutine's executor (cancellable like any
// Asio wait).
//
//   co_await cutoff::test_support::Sleep(50ms);
#ifndef CUTOFF_TESTS_SUPPORT_SLEEP_HPP_
#define CUTOFF_TESTS_SUPPORT_SLEEP_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

namespace cutoff::test_support {

inline boost::asio::awaitable<void> Sleep(std::chrono::steady_clock::duration d) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
  co_await t.async_wait(boost::asio::use_awaitable);
}

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_SLEEP_HPP_
