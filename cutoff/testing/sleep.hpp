// Test support: an awaitable sleep on the calling coroutine's executor (cancellable like any
// Asio wait).
//
//   co_await cutoff::testing::Sleep(50ms);
#ifndef CUTOFF_TESTING_SLEEP_HPP_
#define CUTOFF_TESTING_SLEEP_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

namespace cutoff::testing {

inline boost::asio::awaitable<void> Sleep(std::chrono::steady_clock::duration d) {
  boost::asio::steady_timer t(co_await boost::asio::this_coro::executor, d);
  co_await t.async_wait(boost::asio::use_awaitable);
}

}  // namespace cutoff::testing

#endif  // CUTOFF_TESTING_SLEEP_HPP_
