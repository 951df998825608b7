#include "cutoff/core/context.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cutoff/core/deadline_timer_service.hpp"
#include "cutoff/core/error.hpp"
#include "tests/support/allocation_counter.hpp"

namespace cutoff {
namespace {

using namespace std::chrono_literals;

class ContextTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  DeadlineTimerService timers_{clock_, DeadlineTimerService::Mode::kManual};
  Context root_ = Context::background(timers_);

  void Advance(Duration d) {
    clock_.advance(d);
    timers_.fire_due();
  }
};

TEST_F(ContextTest, UnboundByDefault) {
  Context ctx;
  EXPECT_FALSE(ctx.bound());
  EXPECT_FALSE(ctx.stop_requested());
  EXPECT_EQ(ctx.stop_reason(), StopReason::none);
  EXPECT_TRUE(ctx.deadline().is_never());
  EXPECT_EQ(ctx.remaining(), Duration::max());
  EXPECT_NO_THROW(ctx.check());
  EXPECT_FALSE(ctx.token().stop_possible());
  EXPECT_EQ(ctx.request_id(), "");
  EXPECT_EQ(&ctx.timers(), &DeadlineTimerService::global());
}

TEST_F(ContextTest, WithTimeoutBindsADeadline) {
  auto ctx = root_.with_timeout(100ms);
  EXPECT_TRUE(ctx.bound());
  EXPECT_EQ(ctx.remaining(), 100ms);
  EXPECT_EQ(timers_.armed(), 1u);
  Advance(30ms);
  EXPECT_EQ(ctx.remaining(), 70ms);
  EXPECT_FALSE(ctx.stop_requested());
}

TEST_F(ContextTest, NestedContextsTightenAndNeverExtend) {
  auto outer = root_.with_timeout(100ms);
  auto tighter = outer.with_timeout(40ms);
  EXPECT_EQ(tighter.remaining(), 40ms);
  auto looser = outer.with_timeout(10s);
  EXPECT_EQ(looser.deadline(), outer.deadline());
  EXPECT_EQ(looser.remaining(), 100ms);
  auto from_tight = tighter.with_timeout(1h);
  EXPECT_EQ(from_tight.remaining(), 40ms);
  auto never = outer.with_deadline(Deadline::never());
  EXPECT_EQ(never.deadline(), outer.deadline());
}

TEST_F(ContextTest, ExpiredRemainingClampsToZero) {
  auto ctx = root_.with_timeout(10ms);
  Advance(25ms);
  EXPECT_EQ(ctx.remaining(), Duration::zero());
  EXPECT_TRUE(ctx.stop_requested());
}

TEST_F(ContextTest, DeadlineStopsWithDeadlineExceeded) {
  auto ctx = root_.with_timeout(50ms);
  Advance(49ms);
  EXPECT_FALSE(ctx.stop_requested());
  Advance(1ms);
  EXPECT_TRUE(ctx.stop_requested());
  EXPECT_EQ(ctx.stop_reason(), StopReason::deadline_exceeded);
  EXPECT_EQ(timers_.armed(), 0u);
}

TEST_F(ContextTest, AlreadyExpiredBudgetFailsFastWithoutArmingATimer) {
  auto ctx = root_.with_timeout(0ms);
  EXPECT_TRUE(ctx.stop_requested());
  EXPECT_EQ(ctx.stop_reason(), StopReason::deadline_exceeded);
  EXPECT_EQ(timers_.armed(), 0u);
  bool handler_ran = false;
  auto invoke = [&](const Context& c) {
    c.check();  // entry fail-fast: nothing below runs
    handler_ran = true;
  };
  EXPECT_THROW(invoke(ctx), Error);
  EXPECT_FALSE(handler_ran);
}

TEST_F(ContextTest, CheckThrowsAnErrorWithReasonAndRequestId) {
  auto ctx = root_.with_request_id("req-7").with_timeout(5ms);
  Advance(5ms);
  try {
    ctx.check();
    FAIL() << "check() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
    EXPECT_EQ(e.stop_reason(), StopReason::deadline_exceeded);
    EXPECT_EQ(e.request_id(), "req-7");
  }
}

TEST_F(ContextTest, DeadlineAndCancelAreDistinguishable) {
  auto [cancelled, source] = root_.with_cancel(Deadline::after(50ms, clock_));
  auto timed = root_.with_timeout(50ms);
  source.request_stop(StopReason::cancelled);
  Advance(60ms);  // the deadline passes too, but the first reason wins
  EXPECT_EQ(cancelled.stop_reason(), StopReason::cancelled);
  EXPECT_EQ(timed.stop_reason(), StopReason::deadline_exceeded);
  try {
    cancelled.check();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::cancelled);
  }
  try {
    timed.check();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::deadline_exceeded);
  }
}

TEST_F(ContextTest, ChildStopsWithItsParentsReason) {
  auto [parent, source] = root_.with_cancel();
  auto child = parent.with_timeout(1s);
  auto grandchild = child.with_timeout(500ms);
  source.request_stop(StopReason::shutdown);
  EXPECT_EQ(child.stop_reason(), StopReason::shutdown);
  EXPECT_EQ(grandchild.stop_reason(), StopReason::shutdown);
}

TEST_F(ContextTest, ChildStopsWhenTheParentsDeadlinePasses) {
  auto parent = root_.with_timeout(100ms);
  auto [child, source] = parent.with_cancel();
  Advance(100ms);
  EXPECT_EQ(child.stop_reason(), StopReason::deadline_exceeded);
  EXPECT_FALSE(source.request_stop(StopReason::cancelled));
}

TEST_F(ContextTest, StoppingAChildLeavesTheParentRunning) {
  auto parent = root_.with_timeout(100ms);
  auto [child, source] = parent.with_cancel();
  source.request_stop(StopReason::cancelled);
  EXPECT_TRUE(child.stop_requested());
  EXPECT_FALSE(parent.stop_requested());
}

TEST_F(ContextTest, ChildOfAStoppedParentStartsStopped) {
  auto [parent, source] = root_.with_cancel();
  source.request_stop(StopReason::cancelled);
  auto child = parent.with_timeout(1s);
  EXPECT_TRUE(child.stop_requested());
  EXPECT_EQ(child.stop_reason(), StopReason::cancelled);
  EXPECT_EQ(timers_.armed(), 0u);
}

TEST_F(ContextTest, ChildWithTheParentsDeadlineNeedsNoTimerOfItsOwn) {
  auto parent = root_.with_timeout(100ms);
  EXPECT_EQ(timers_.armed(), 1u);
  auto [child, source] = parent.with_cancel();
  EXPECT_EQ(timers_.armed(), 1u);
  Advance(100ms);
  EXPECT_EQ(child.stop_reason(), StopReason::deadline_exceeded);
}

TEST_F(ContextTest, DetachedKeepsValuesButNotCancellation) {
  auto [request, source] = root_.with_request_id("req-9").with_operation("orders.create").with_cancel(
      Deadline::after(100ms, clock_));
  auto effect = request.detached(2s);
  EXPECT_EQ(effect.request_id(), "req-9");
  EXPECT_EQ(effect.operation(), "orders.create");
  EXPECT_EQ(effect.remaining(), 2s);  // its own bound, longer than the parent's
  source.request_stop(StopReason::cancelled);
  Advance(150ms);
  EXPECT_TRUE(request.stop_requested());
  EXPECT_FALSE(effect.stop_requested());
  Advance(2s);
  EXPECT_EQ(effect.stop_reason(), StopReason::deadline_exceeded);
}

TEST_F(ContextTest, DetachedFromAStoppedContextStillRuns) {
  auto [request, source] = root_.with_cancel();
  source.request_stop(StopReason::cancelled);
  auto effect = request.detached(1s);
  EXPECT_FALSE(effect.stop_requested());
  EXPECT_NO_THROW(effect.check());
}

TEST_F(ContextTest, CommitLedgerIsSharedByChildrenAndDetachedRegions) {
  EXPECT_EQ(root_.commit_ledger(), nullptr);
  auto ledger = std::make_shared<CommitLedger>();
  Context inv = root_.with_commit_ledger(ledger);
  Context child = inv.with_timeout(10ms).with_request_id("r");
  Context effect = child.detached(5ms);
  ASSERT_EQ(effect.commit_ledger(), ledger.get());
  EXPECT_FALSE(ledger->may_have_written());
  effect.commit_ledger()->note_after_commit_queued();
  EXPECT_TRUE(child.commit_ledger()->may_have_written());
  effect.commit_ledger()->note_after_commit_done();
  EXPECT_FALSE(ledger->may_have_written());
  effect.commit_ledger()->note_commit_point();
  EXPECT_EQ(inv.commit_ledger()->commit_points(), 1u);
  EXPECT_TRUE(ledger->may_have_written());
}

TEST_F(ContextTest, AChildLedgerReportsToItsParentButNotToItsSiblings) {
  auto request = std::make_shared<CommitLedger>();
  auto first = std::make_shared<CommitLedger>(request);
  auto second = std::make_shared<CommitLedger>(request);
  first->note_commit_point(/*idempotency_keyed=*/true);
  EXPECT_TRUE(first->may_have_written());
  EXPECT_TRUE(first->retry_with_same_key_safe());
  EXPECT_TRUE(request->may_have_written());
  EXPECT_FALSE(second->may_have_written());
  EXPECT_FALSE(second->retry_with_same_key_safe());  // nothing to retry
  second->note_after_commit_queued();
  EXPECT_TRUE(second->may_have_written());
  EXPECT_TRUE(request->after_commit_pending());
  second->note_after_commit_done();
  EXPECT_FALSE(request->after_commit_pending());
  // One unkeyed commit point anywhere under the request makes a blind retry unsafe there.
  second->note_commit_point();
  EXPECT_FALSE(second->retry_with_same_key_safe());
  EXPECT_FALSE(request->retry_with_same_key_safe());
  EXPECT_TRUE(first->retry_with_same_key_safe());
  EXPECT_EQ(request->commit_points(), 2u);
}

TEST_F(ContextTest, ValuesAreSharedAndCopyOnWrite) {
  auto a = root_.with_request_id("r1").with_trace({"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ""});
  auto b = a.with_operation("op");
  auto timed = b.with_timeout(10ms);
  EXPECT_EQ(a.operation(), "");
  EXPECT_EQ(b.request_id(), "r1");
  EXPECT_EQ(timed.operation(), "op");
  EXPECT_EQ(&timed.values(), &b.values());
  EXPECT_EQ(timed.values().trace.traceparent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
  // Changing values keeps the stop state.
  auto relabeled = timed.with_request_id("r2");
  Advance(10ms);
  EXPECT_TRUE(relabeled.stop_requested());
}

TEST_F(ContextTest, ValuesAllocatedByTheCallerAreSharedNotCopied) {
  auto values = std::make_shared<RequestValues>();
  values->request_id = "r7";
  auto timed = root_.with_timeout(10ms);
  auto ctx = timed.with_values(std::shared_ptr<const RequestValues>(values));
  EXPECT_EQ(&ctx.values(), values.get());
  EXPECT_EQ(ctx.request_id(), "r7");
  EXPECT_EQ(values.use_count(), 2);  // the caller can tell when nobody else holds them
  Advance(10ms);
  EXPECT_TRUE(ctx.stop_requested());  // the stop state is still the parent's
  EXPECT_EQ(root_.with_values(std::shared_ptr<const RequestValues>()).request_id(), "");
}

TEST_F(ContextTest, DestroyedContextsDisarmTheirTimers) {
  {
    auto a = root_.with_timeout(10ms);
    auto b = a.with_timeout(5ms);
    EXPECT_EQ(timers_.armed(), 2u);
  }
  EXPECT_EQ(timers_.armed(), 0u);
  Advance(1s);  // nothing to fire, nothing freed is touched
}

TEST_F(ContextTest, DeepChainsStopEveryLevel) {
  auto [root, source] = root_.with_cancel();
  std::vector<Context> chain{root};
  for (int i = 0; i < 1000; ++i) chain.push_back(chain.back().with_cancel().first);
  source.request_stop(StopReason::cancelled);
  for (const auto& c : chain) EXPECT_EQ(c.stop_reason(), StopReason::cancelled);
}

TEST_F(ContextTest, ATightenedChildCostsAtMostOneAllocation) {
  auto parent = root_.with_timeout(1s);
  Context child;
  const long before = test_support::allocations_on_this_thread();
  child = parent.with_timeout(500ms);
  const long after = test_support::allocations_on_this_thread();
  EXPECT_LE(after - before, 1);
  EXPECT_TRUE(child.bound());
  const long before_copy = test_support::allocations_on_this_thread();
  Context copy = child;
  EXPECT_EQ(test_support::allocations_on_this_thread(), before_copy);
}

TEST(ContextRealClock, GlobalTimerFiresOnTime) {
  const auto start = SteadyClock::now();
  auto ctx = Context::background().with_timeout(20ms);
  while (!ctx.stop_requested() && SteadyClock::now() - start < 5s) std::this_thread::sleep_for(100us);
  const auto took = SteadyClock::now() - start;
  EXPECT_EQ(ctx.stop_reason(), StopReason::deadline_exceeded);
  EXPECT_GE(took, 20ms);
  EXPECT_LT(took, 500ms);  // generous: a shared 2-core machine
}

TEST(ContextRealClock, ManyContextsFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> stopped{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto parent = Context::background().with_timeout(std::chrono::milliseconds(5 + t));
      std::vector<Context> children;
      for (int i = 0; i < 200; ++i) children.push_back(parent.with_timeout(std::chrono::milliseconds(i % 7)));
      const auto start = SteadyClock::now();
      while (!parent.stop_requested() && SteadyClock::now() - start < 5s) std::this_thread::yield();
      for (const auto& c : children) stopped += c.stop_requested();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(stopped.load(), 800);
}

}  // namespace
}  // namespace cutoff
