#include "cutoff/core/channel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cutoff/core/error.hpp"
#include "tests/support/allocation_counter.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test_support::RunSync;
using test_support::Sleep;
using test_support::TimeScale;

struct SendOutcome {
  std::optional<bool> sent;
  std::optional<ErrorCode> error;
  bool aborted = false;
  bool done = false;
  SteadyClock::time_point ended{};
};

struct ReceiveOutcome {
  std::optional<int> value;
  bool closed = false;
  std::optional<ErrorCode> error;
  bool aborted = false;
  bool done = false;
};

asio::awaitable<void> SendOne(Channel<int>& ch, Context ctx, int v, SendOutcome& out) {
  try {
    out.sent = co_await ch.send(ctx, v);
  } catch (const Error& e) {
    out.error = e.code();
  } catch (const boost::system::system_error& e) {
    out.aborted = e.code() == asio::error::operation_aborted;
  }
  out.ended = SteadyClock::now();
  out.done = true;
}

asio::awaitable<void> ReceiveOne(Channel<int>& ch, Context ctx, ReceiveOutcome& out) {
  try {
    std::optional<int> v = co_await ch.receive(ctx);
    if (v) out.value = *v;
    else out.closed = true;
  } catch (const Error& e) {
    out.error = e.code();
  } catch (const boost::system::system_error& e) {
    out.aborted = e.code() == asio::error::operation_aborted;
  }
  out.done = true;
}

TEST(Channel, BuffersUpToItsCapacityInOrder) {
  Channel<int> ch(3);
  EXPECT_EQ(ch.capacity(), 3u);
  EXPECT_TRUE(ch.try_send(1));
  EXPECT_TRUE(ch.try_send(2));
  int three = 3;
  EXPECT_TRUE(ch.try_send(three));
  EXPECT_FALSE(ch.try_send(4)) << "full";
  EXPECT_FALSE(ch.closed());
  EXPECT_EQ(ch.size(), 3u);
  EXPECT_EQ(ch.try_receive(), 1);
  EXPECT_TRUE(ch.try_send(4));
  EXPECT_EQ(ch.try_receive(), 2);
  EXPECT_EQ(ch.try_receive(), 3);
  EXPECT_EQ(ch.try_receive(), 4);
  EXPECT_EQ(ch.try_receive(), std::nullopt);
}

TEST(Channel, AFailedTrySendLeavesTheValueAlone) {
  Channel<std::unique_ptr<int>> ch(1);
  auto a = std::make_unique<int>(1);
  auto b = std::make_unique<int>(2);
  EXPECT_TRUE(ch.try_send(std::move(a)));
  EXPECT_EQ(a, nullptr);
  EXPECT_FALSE(ch.try_send(std::move(b)));
  ASSERT_NE(b, nullptr) << "a move-only value that was not sent is still the caller's";
  EXPECT_EQ(*b, 2);
  ch.close();
  EXPECT_FALSE(ch.try_send(std::move(b)));
  EXPECT_NE(b, nullptr);
  EXPECT_EQ(*ch.try_receive().value(), 1);
}

TEST(Channel, AReceiverWaitsForTheNextValue) {
  Channel<int> ch(2);
  ReceiveOutcome r;
  RunSync([&]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, ReceiveOne(ch, Context(), r), asio::detached);
    co_await Sleep(2ms);
    EXPECT_EQ(ch.waiting_receivers(), 1u);
    EXPECT_TRUE(co_await ch.send(Context(), 7));
    EXPECT_EQ(ch.size(), 0u) << "handed straight to the waiting receiver";
    co_await Sleep(2ms);
  });
  EXPECT_EQ(r.value, 7);
}

TEST(Channel, SendersWaitWhenFullAndAreServedInOrder) {
  Channel<int> ch(1);
  std::vector<SendOutcome> senders(4);
  std::vector<int> received;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    for (int i = 0; i < 4; ++i) {
      asio::co_spawn(ex, SendOne(ch, Context(), i, senders[i]), asio::detached);
      co_await Sleep(1ms);
    }
    EXPECT_EQ(ch.size(), 1u);
    EXPECT_EQ(ch.waiting_senders(), 3u);
    EXPECT_FALSE(ch.try_send(99)) << "no barging past waiting senders";
    for (int i = 0; i < 4; ++i) received.push_back(*co_await ch.receive(Context()));
    co_await Sleep(2ms);
  });
  EXPECT_EQ(received, (std::vector<int>{0, 1, 2, 3}));
  for (auto& s : senders) EXPECT_EQ(s.sent, true);
}

TEST(Channel, CapacityZeroIsARendezvous) {
  Channel<int> ch(0);
  EXPECT_FALSE(ch.try_send(1)) << "no receiver waits";
  SendOutcome sender;
  RunSync([&]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, SendOne(ch, Context(), 5, sender), asio::detached);
    co_await Sleep(2ms);
    EXPECT_FALSE(sender.done) << "waits for a receiver";
    EXPECT_EQ(ch.size(), 0u);
    EXPECT_EQ(co_await ch.receive(Context()), 5);
    co_await Sleep(2ms);
  });
  EXPECT_EQ(sender.sent, true);
}

// A sender waiting on a full channel leaves at its deadline; its value is never received.
TEST(Channel, AWaitingSenderLeavesAtItsDeadline) {
  const int s = TimeScale();
  Channel<int> ch(1);
  SendOutcome late;
  const Context ctx = Context().with_timeout(40ms * s);
  const TimePoint deadline = ctx.deadline().time_point();
  RunSync([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(ch.try_send(1));
    asio::co_spawn(co_await asio::this_coro::executor, SendOne(ch, ctx, 2, late), asio::detached);
    co_await Sleep(100ms * s);
  });
  EXPECT_EQ(late.error, ErrorCode::deadline_exceeded);
  EXPECT_GE(late.ended, deadline);
  EXPECT_LT(late.ended - deadline, 150ms * s);  // generous: a loaded 2-core machine
  EXPECT_EQ(ch.waiting_senders(), 0u);
  EXPECT_EQ(ch.try_receive(), 1);
  EXPECT_EQ(ch.try_receive(), std::nullopt) << "the stopped sender's value was not delivered";
}

class ChannelStop : public testing::TestWithParam<StopReason> {};

TEST_P(ChannelStop, AWaitingReceiverLeavesWithTheStopsReason) {
  const int s = TimeScale();
  Channel<int> ch(1);
  ReceiveOutcome stopped, other;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, ReceiveOne(ch, ctx, stopped), asio::detached);
    asio::co_spawn(ex, ReceiveOne(ch, Context(), other), asio::detached);
    co_await Sleep(5ms);
    std::thread([stop, reason = GetParam()] { stop.request_stop(reason); }).join();
    EXPECT_EQ(ch.waiting_receivers(), 1u);
    for (int i = 0; i < 100 * s && !stopped.done; ++i) co_await Sleep(1ms);
    EXPECT_TRUE(ch.try_send(3));
    co_await Sleep(5ms);
  });
  EXPECT_EQ(stopped.error, error_code_for(GetParam()));
  EXPECT_EQ(other.value, 3);
}

INSTANTIATE_TEST_SUITE_P(Reasons, ChannelStop,
                         testing::Values(StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown),
                         [](const auto& p) { return std::string(to_string(error_code_for(p.param))); });

TEST(Channel, AStoppedContextFailsBeforeTouchingTheChannel) {
  Channel<int> ch(1);
  EXPECT_TRUE(ch.try_send(1));
  auto [ctx, stop] = Context().with_cancel();
  stop.request_stop(StopReason::cancelled);
  for (int op = 0; op < 2; ++op) {
    try {
      RunSync([&, ctx = ctx]() -> asio::awaitable<void> {
        if (op == 0) co_await ch.receive(ctx);
        else co_await ch.send(ctx, 2);
      });
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::cancelled);
    }
  }
  EXPECT_EQ(ch.size(), 1u);
  EXPECT_EQ(ch.try_receive(), 1);
}

TEST(Channel, CloseLetsReceiversDrainThenReportsClosed) {
  Channel<int> ch(4);
  SendOutcome after;
  RunSync([&]() -> asio::awaitable<void> {
    EXPECT_TRUE(co_await ch.send(Context(), 1));
    EXPECT_TRUE(co_await ch.send(Context(), 2));
    ch.close();
    ch.close();  // idempotent
    EXPECT_TRUE(ch.closed());
    EXPECT_FALSE(co_await ch.send(Context(), 3)) << "a send after close fails";
    EXPECT_FALSE(ch.try_send(3));
    EXPECT_EQ(co_await ch.receive(Context()), 1);
    EXPECT_EQ(co_await ch.receive(Context()), 2);
    EXPECT_EQ(co_await ch.receive(Context()), std::nullopt);
    EXPECT_EQ(co_await ch.receive(Context()), std::nullopt);
    EXPECT_EQ(ch.try_receive(), std::nullopt);
  });
}

TEST(Channel, CloseReleasesEveryWaiter) {
  Channel<int> full(1), empty(1);
  SendOutcome sender;
  ReceiveOutcome receiver;
  RunSync([&]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    EXPECT_TRUE(full.try_send(1));
    asio::co_spawn(ex, SendOne(full, Context(), 2, sender), asio::detached);
    asio::co_spawn(ex, ReceiveOne(empty, Context(), receiver), asio::detached);
    co_await Sleep(2ms);
    full.close();
    empty.close();
    co_await Sleep(2ms);
  });
  EXPECT_EQ(sender.sent, false) << "a sender waiting at the close fails";
  EXPECT_TRUE(receiver.closed) << "a receiver waiting at the close gets the closed outcome";
  EXPECT_EQ(full.try_receive(), 1) << "what was buffered before the close is still received";
  EXPECT_EQ(full.try_receive(), std::nullopt);
}

// A value handed to a receiver whose context stops before it resumes goes to the next
// receiver: not lost, not reordered.
TEST(Channel, AValueHandedToAReceiverThatStopsGoesToTheNext) {
  Channel<int> ch(2);
  ReceiveOutcome leaving, next;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    auto ex = co_await asio::this_coro::executor;
    asio::co_spawn(ex, ReceiveOne(ch, ctx, leaving), asio::detached);
    asio::co_spawn(ex, ReceiveOne(ch, Context(), next), asio::detached);
    co_await Sleep(2ms);
    EXPECT_TRUE(ch.try_send(10));              // handed to `leaving`...
    stop.request_stop(StopReason::cancelled);  // ...which stops before it resumes
    co_await Sleep(5ms);
  });
  EXPECT_EQ(leaving.error, ErrorCode::cancelled);
  EXPECT_EQ(next.value, 10);
}

// With nobody else waiting, the value goes back to the front of the buffer.
TEST(Channel, AValueHandedToAReceiverThatStopsGoesBackToTheFront) {
  Channel<int> ch(1);
  ReceiveOutcome leaving;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, ReceiveOne(ch, ctx, leaving), asio::detached);
    co_await Sleep(2ms);
    EXPECT_TRUE(ch.try_send(10));  // handed over
    EXPECT_TRUE(ch.try_send(11));  // buffered
    stop.request_stop(StopReason::deadline_exceeded);
    co_await Sleep(5ms);
  });
  EXPECT_EQ(leaving.error, ErrorCode::deadline_exceeded);
  EXPECT_EQ(ch.size(), 2u) << "one over capacity for a moment";
  EXPECT_EQ(ch.try_receive(), 10);
  EXPECT_EQ(ch.try_receive(), 11);
}

// A sender whose value was taken in the same instant it stopped reports the delivery.
TEST(Channel, ASendTakenAsItsContextStopsReportsTheDelivery) {
  Channel<int> ch(0);
  SendOutcome sender;
  auto [ctx, stop] = Context().with_cancel();
  RunSync([&, ctx = ctx, stop = stop]() -> asio::awaitable<void> {
    asio::co_spawn(co_await asio::this_coro::executor, SendOne(ch, ctx, 4, sender), asio::detached);
    co_await Sleep(2ms);
    EXPECT_EQ(ch.try_receive(), 4);
    stop.request_stop(StopReason::cancelled);
    co_await Sleep(5ms);
  });
  EXPECT_EQ(sender.sent, true);
  EXPECT_FALSE(sender.error);
}

TEST(Channel, AnAsioCancellationLeavesTheQueue) {
  Channel<int> ch(0);
  RunSync([&]() -> asio::awaitable<void> {
    using namespace asio::experimental::awaitable_operators;
    auto r = co_await (ch.receive(Context()) || Sleep(5ms));
    EXPECT_EQ(r.index(), 1u);
    EXPECT_EQ(ch.waiting_receivers(), 0u);
    auto s = co_await (ch.send(Context(), 1) || Sleep(5ms));
    EXPECT_EQ(s.index(), 1u);
    EXPECT_EQ(ch.waiting_senders(), 0u);
  });
  EXPECT_FALSE(ch.try_send(2)) << "no receiver left behind";
  EXPECT_EQ(ch.try_receive(), std::nullopt) << "no sender left behind";
}

// A value handed to a receiver in the same handler that cancels it through Asio goes on.
TEST(Channel, AValueHandedToAReceiverCancelledThroughAsioGoesToTheNext) {
  Channel<int> ch(1);
  ReceiveOutcome leaving, next;
  asio::io_context io;
  asio::cancellation_signal cancel;
  asio::co_spawn(io, ReceiveOne(ch, Context(), leaving), asio::bind_cancellation_slot(cancel.slot(), asio::detached));
  asio::co_spawn(io, ReceiveOne(ch, Context(), next), asio::detached);
  io.run_for(5ms);
  asio::post(io, [&] {
    EXPECT_TRUE(ch.try_send(8));
    cancel.emit(asio::cancellation_type::terminal);
  });
  io.restart();
  io.run_for(50ms);
  EXPECT_TRUE(leaving.aborted);
  EXPECT_EQ(next.value, 8);
}

TEST(Channel, SendAndReceiveWithoutWaitingAllocateNothing) {
  Channel<int> ch(8);
  long news = -1, aligned = -1;
  asio::io_context io;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 100; ++i) {
          co_await ch.send(Context(), i);
          co_await ch.receive(Context());
        }
        const long news_before = test_support::allocations_on_this_thread();
        const long aligned_before = test_support::aligned_allocations_on_this_thread();
        for (int i = 0; i < 10000; ++i) {
          co_await ch.send(Context(), i);
          co_await ch.send(Context(), i);
          co_await ch.receive(Context());
          co_await ch.receive(Context());
        }
        news = test_support::allocations_on_this_thread() - news_before;
        aligned = test_support::aligned_allocations_on_this_thread() - aligned_before;
      },
      asio::detached);
  io.run();
  EXPECT_EQ(news, 0);
  EXPECT_EQ(aligned, 0);
}

// Producers and consumers on strands over three threads, some with short deadlines, then a
// close: every value sent is received exactly once. (Order is checked above, with one
// consumer: here consumers record what they got in a race with each other.)
TEST(Channel, StressEveryDeliveredValueIsReceivedOnce) {
  constexpr int kProducers = 8;
  constexpr int kPerProducer = 300;
  constexpr int kConsumers = 6;
  Channel<int> ch(4);
  asio::io_context io;
  std::mutex mu;
  std::vector<std::vector<int>> seen(kProducers);  // per producer, in receive order; guarded by mu
  std::atomic<int> sent{0}, stopped_senders{0}, producers_left{kProducers};
  for (int p = 0; p < kProducers; ++p) {
    const bool hurried = p % 2 == 1;
    asio::co_spawn(
        asio::make_strand(io),
        [&, p, hurried]() -> asio::awaitable<void> {
          for (int i = 0; i < kPerProducer; ++i) {
            const Context ctx = hurried ? Context().with_timeout(std::chrono::microseconds(100)) : Context();
            try {
              if (co_await ch.send(ctx, p * kPerProducer + i)) sent.fetch_add(1);
            } catch (const Error&) {
              stopped_senders.fetch_add(1);
            }
          }
          if (producers_left.fetch_sub(1) == 1) ch.close();
        },
        asio::detached);
  }
  std::atomic<int> received{0}, stopped_receivers{0};
  for (int c = 0; c < kConsumers; ++c) {
    const bool hurried = c % 3 == 0;
    asio::co_spawn(
        asio::make_strand(io),
        [&, hurried]() -> asio::awaitable<void> {
          for (;;) {
            const Context ctx = hurried ? Context().with_timeout(std::chrono::microseconds(100)) : Context();
            std::optional<int> v;
            try {
              v = co_await ch.receive(ctx);
            } catch (const Error&) {
              stopped_receivers.fetch_add(1);
              continue;
            }
            if (!v) co_return;
            {
              std::lock_guard lock(mu);
              seen[*v / kPerProducer].push_back(*v % kPerProducer);
            }
            if (received.fetch_add(1) % 4 == 0) co_await Sleep(std::chrono::microseconds(500));  // senders queue up
          }
        },
        asio::detached);
  }
  std::thread t1([&] { io.run(); });
  std::thread t2([&] { io.run(); });
  io.run();
  t1.join();
  t2.join();

  EXPECT_EQ(sent.load() + stopped_senders.load(), kProducers * kPerProducer);
  EXPECT_EQ(received.load(), sent.load()) << "every delivered value was received, once";
  EXPECT_GT(stopped_senders.load() + stopped_receivers.load(), 0) << "the deadlines did land";
  for (int p = 0; p < kProducers; p += 2) {  // a patient producer: each of its values, once
    std::vector<int> expected(kPerProducer);
    for (int i = 0; i < kPerProducer; ++i) expected[i] = i;
    std::sort(seen[p].begin(), seen[p].end());
    EXPECT_EQ(seen[p], expected) << "producer " << p;
  }
  EXPECT_EQ(ch.waiting_senders(), 0u);
  EXPECT_EQ(ch.waiting_receivers(), 0u);
}

}  // namespace
}  // namespace cutoff
