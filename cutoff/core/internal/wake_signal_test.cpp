#include "cutoff/core/internal/wake_signal.hpp"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <thread>

namespace cutoff::internal {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

TEST(WakeSignal, AnotherThreadWakesTheWaiter) {
  asio::io_context io;
  auto signal = std::make_shared<WakeSignal>();
  std::optional<bool> woken;
  asio::co_spawn(io, signal->Wait(), [&](std::exception_ptr e, bool r) {
    if (!e) woken = r;
  });
  std::thread waker([signal] {
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(signal->Signal());
    EXPECT_FALSE(signal->Signal());  // one-shot
  });
  io.run_for(5s);
  waker.join();
  EXPECT_EQ(woken, true);
  EXPECT_TRUE(signal->signalled());
}

TEST(WakeSignal, ASignalBeforeTheWaitReturnsAtOnce) {
  asio::io_context io;
  auto signal = std::make_shared<WakeSignal>();
  signal->Signal();
  std::optional<bool> woken;
  asio::co_spawn(io, signal->Wait(), [&](std::exception_ptr e, bool r) {
    if (!e) woken = r;
  });
  io.run_for(1s);
  EXPECT_EQ(woken, true);
}

TEST(WakeSignal, AnAsioCancellationEndsTheWaitWithFalse) {
  asio::io_context io;
  auto signal = std::make_shared<WakeSignal>();
  asio::cancellation_signal cancel;
  std::optional<bool> woken;
  asio::co_spawn(io, signal->Wait(), asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, bool r) {
                   if (!e) woken = r;
                 }));
  io.run_for(10ms);
  cancel.emit(asio::cancellation_type::terminal);
  io.run_for(1s);
  EXPECT_EQ(woken, false);
  // A signal after the waiter is gone touches nothing.
  EXPECT_TRUE(signal->Signal());
  io.restart();
  io.run_for(10ms);
}

}  // namespace
}  // namespace cutoff::internal
