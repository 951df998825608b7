// WithClient: runs `f(client)` on a fresh http::Client with `options`, to completion, and
// returns its result. Test-only.
//
//   std::string body = test_support::WithClient({}, [&](http::Client& c) -> asio::awaitable<std::string> {
//     co_return (co_await c.request(Context(), {.url = url})).body;
//   });
#ifndef CUTOFF_TESTS_SUPPORT_WITH_CLIENT_HPP_
#define CUTOFF_TESTS_SUPPORT_WITH_CLIENT_HPP_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/this_coro.hpp>
#include <utility>

#include "cutoff/http/client.hpp"
#include "tests/support/run_sync.hpp"

namespace cutoff::test_support {

template <typename F>
auto WithClient(http::ClientOptions options, F f) {
  using Result = typename decltype(f(std::declval<http::Client&>()))::value_type;
  return RunSync([&]() -> boost::asio::awaitable<Result> {
    http::Client client(co_await boost::asio::this_coro::executor, options);
    co_return co_await f(client);
  });
}

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_WITH_CLIENT_HPP_
