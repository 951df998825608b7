// Test support: run a coroutine to completion on a private io_context and return its result
// (or rethrow its exception).
//
//   int n = cutoff::test_support::RunSync([&]() -> boost::asio::awaitable<int> { co_return 42; });
#ifndef CUTOFF_TESTS_SUPPORT_RUN_SYNC_HPP_
#define CUTOFF_TESTS_SUPPORT_RUN_SYNC_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <utility>

namespace cutoff::test_support {

template <typename F>
auto RunSync(F&& make) {
  boost::asio::io_context io;
  auto future = boost::asio::co_spawn(io, std::forward<F>(make)(), boost::asio::use_future);
  io.run();
  return future.get();
}

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_RUN_SYNC_HPP_
