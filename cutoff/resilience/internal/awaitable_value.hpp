// Internal: the value type of a call, and an adapter that lets `void` calls share the code
// written for calls that return something.
#ifndef CUTOFF_RESILIENCE_INTERNAL_AWAITABLE_VALUE_HPP_
#define CUTOFF_RESILIENCE_INTERNAL_AWAITABLE_VALUE_HPP_

#include <boost/asio/awaitable.hpp>
#include <type_traits>
#include <utility>
#include <variant>

#include "cutoff/core/context.hpp"

namespace cutoff::resilience::internal {

template <typename A>
struct AwaitableValue;
template <typename T, typename Executor>
struct AwaitableValue<boost::asio::awaitable<T, Executor>> {
  using type = T;
};

// What `F(const Context&)` yields when awaited.
template <typename F>
using CallResult = typename AwaitableValue<std::invoke_result_t<F&, const Context&>>::type;

// The value the internals carry: `std::monostate` stands in for void.
template <typename T>
using Stored = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

// Wraps a call returning awaitable<void> into one returning awaitable<std::monostate>; other
// calls pass through untouched (no extra coroutine frame).
template <typename F>
auto Valued(F f) {
  if constexpr (std::is_void_v<CallResult<F>>) {
    return [f = std::move(f)](const Context& ctx) mutable -> boost::asio::awaitable<std::monostate> {
      co_await f(ctx);
      co_return std::monostate{};
    };
  } else {
    return f;
  }
}

inline boost::asio::awaitable<void> DiscardValue(boost::asio::awaitable<std::monostate> op) {
  co_await std::move(op);
}

// Back from the stored value to what the caller asked for.
template <typename T>
boost::asio::awaitable<T> Unvalued(boost::asio::awaitable<Stored<T>> op) {
  if constexpr (std::is_void_v<T>)
    return DiscardValue(std::move(op));
  else
    return op;
}

}  // namespace cutoff::resilience::internal

#endif  // CUTOFF_RESILIENCE_INTERNAL_AWAITABLE_VALUE_HPP_
