// Sagas on both databases: order, compensation in reverse, the fault matrix (a deadline or a
// cancel before a step, during its body, at its commit and after it), ambiguous remote steps,
// compensation retries, takeover and repeats. The crash column of the matrix is in
// tests/effects/saga_crash_test.cpp (it kills a process).
#include "cutoff/effects/saga.hpp"

#include <gtest/gtest.h>

#include <boost/asio/this_coro.hpp>
#include <atomic>
#include <thread>
#include <tuple>

#include "cutoff/effects/idempotency.hpp"
#include "cutoff/effects/internal/fault_points.hpp"
#include "tests/support/effects_backend.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/saga_fixture.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::effects {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using cutoff::test_support::RunSync;
using cutoff::test_support::Sleep;
using cutoff::test_support::TimeScale;
using test_support::Backend;
using test_support::SagaFixture;

const char* kDrivers[] = {"sqlite", "postgresql"};

asio::awaitable<void> WaitUntilStopped(const Context& ctx) {
  for (int i = 0; i < 5000 && !ctx.stop_requested(); ++i) co_await Sleep(2ms);
}

std::vector<std::string> StepStates(const SagaRecord& saga) {
  std::vector<std::string> out;
  for (const SagaStepRecord& s : saga.steps) out.push_back(s.name + ":" + std::string(to_string(s.state)));
  return out;
}

// Everything one test needs on one backend.
struct World {
  explicit World(const char* driver) : db(driver), fixture(db) {}
  void Start(SagaOptions options = {}) {
    EffectsOptions fx;
    fx.table_prefix = db.prefix() + "_";
    fx.timeout = 30s;
    effects = std::make_unique<Effects>(db.pool(), fx);
    sagas = std::make_unique<Sagas>(*effects, options);
    RunSync([&]() -> asio::awaitable<void> {
      co_await fixture.create_tables();
      co_await sagas->install(Context());
    });
  }
  ~World() {
    sagas.reset();
    effects.reset();
    RunSync([&]() -> asio::awaitable<void> { co_await db.drop_all(); });
  }
  SagaRecord Journal(const std::string& id) {
    std::optional<SagaRecord> r;
    RunSync([&]() -> asio::awaitable<void> { r = co_await sagas->journal().find(Context(), id); });
    EXPECT_TRUE(r.has_value()) << id;
    return r.value_or(SagaRecord{});
  }
  std::vector<int> Items() {
    std::vector<int> r;
    RunSync([&]() -> asio::awaitable<void> { r = co_await fixture.items(); });
    return r;
  }
  std::vector<std::string> Undone() {
    std::vector<std::string> r;
    RunSync([&]() -> asio::awaitable<void> { r = co_await fixture.undone(); });
    return r;
  }
  SagaOutcome Run(const Context& ctx, const std::string& id, const std::string& name = "test.fulfil") {
    SagaOutcome out;
    RunSync([&]() -> asio::awaitable<void> { out = co_await sagas->run(ctx, name, "A-1", id); });
    return out;
  }

  Backend db;
  SagaFixture fixture;
  std::unique_ptr<Effects> effects;
  std::unique_ptr<Sagas> sagas;
};

class SagaTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    Backend probe(GetParam());
    if (!probe.available()) GTEST_SKIP() << "no test PostgreSQL";
  }
};

TEST_P(SagaTest, RunsEveryStepInOrderAndJournalsEach) {
  World w(GetParam());
  w.Start();
  w.sagas->define(w.fixture.definition());
  SagaOutcome out = w.Run(Context().with_timeout(20s), "order-1");
  EXPECT_EQ(out.state, SagaState::completed);
  EXPECT_EQ(out.result, R"({"confirm":3})");
  EXPECT_FALSE(out.replayed);
  EXPECT_EQ(w.Items(), (std::vector<int>{1, 2, 3}));
  SagaRecord j = w.Journal("order-1");
  EXPECT_EQ(j.state, SagaState::completed);
  EXPECT_EQ(j.next_step, 3);
  EXPECT_EQ(j.owner_until_ms, 0);
  EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:done", "ship:done", "confirm:done"}));
  EXPECT_EQ(j.steps[1].result, R"({"ship":2})");

  // The same id again: the first outcome, nothing run twice.
  SagaOutcome again = w.Run(Context().with_timeout(20s), "order-1");
  EXPECT_TRUE(again.replayed);
  EXPECT_EQ(again.state, SagaState::completed);
  EXPECT_EQ(again.result, R"({"confirm":3})");
  EXPECT_EQ(w.Items(), (std::vector<int>{1, 2, 3}));
}

TEST_P(SagaTest, ASafeFailureUndoesTheCompletedStepsInReverse) {
  World w(GetParam());
  w.Start();
  w.sagas->define(w.fixture.definition());
  w.fixture.ship_fails = true;
  auto ledger = std::make_shared<CommitLedger>();
  SagaOutcome out = w.Run(Context().with_timeout(20s).with_commit_ledger(ledger), "order-2");
  EXPECT_EQ(out.state, SagaState::compensated);
  EXPECT_EQ(out.failed_step, "ship");
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->code(), ErrorCode::invalid_argument);
  EXPECT_EQ(out.to_error().code(), ErrorCode::invalid_argument);  // a safe failure: all undone
  EXPECT_FALSE(ledger->may_have_written());
  EXPECT_TRUE(w.Items().empty());
  EXPECT_EQ(w.Undone(), (std::vector<std::string>{"reserve"}));
  SagaRecord j = w.Journal("order-2");
  EXPECT_EQ(j.state, SagaState::compensated);
  EXPECT_EQ(j.failed_step, "ship");
  EXPECT_EQ(j.error_code, "invalid_argument");
  EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:compensated"}));
}

// ---- The fault matrix: a deadline or a cancel before ship, during it, at its commit, after it. ----

enum class Where { before, during, at_commit, after };
std::string WhereName(Where w) {
  switch (w) {
    case Where::before: return "before";
    case Where::during: return "during";
    case Where::at_commit: return "at_commit";
    case Where::after: return "after";
  }
  return "?";
}

using Cell = std::tuple<const char*, Where, StopReason>;
class SagaFaultMatrix : public ::testing::TestWithParam<Cell> {};

TEST_P(SagaFaultMatrix, JournalEffectsAndCompensationsAgree) {
  const auto& [driver, where, how] = GetParam();
  World w(driver);
  if (!w.db.available()) GTEST_SKIP() << "no test PostgreSQL";
  w.Start();
  w.sagas->define(w.fixture.definition());
  const auto budget = std::chrono::milliseconds(400 * TimeScale());
  auto [caller, source] = Context().with_cancel(Deadline::after(budget));
  auto ledger = std::make_shared<CommitLedger>();
  caller = caller.with_commit_ledger(ledger);
  std::thread canceller;
  auto stop = [&]() -> asio::awaitable<void> {
    if (how == StopReason::cancelled) source.request_stop(StopReason::cancelled);
    else co_await WaitUntilStopped(caller);
  };

  cutoff::internal::ScopedFault step_fault(
      internal::kSagaStep, [&](std::string_view step, internal::SagaPoint point, const Context&) -> asio::awaitable<void> {
        if (step != "ship") co_return;
        if ((where == Where::before && point == internal::SagaPoint::before_step) ||
            (where == Where::after && point == internal::SagaPoint::after_step))
          co_await stop();
      });
  cutoff::internal::ScopedFault commit_fault(internal::kEffectStep, [&](Step s, const Context&) -> asio::awaitable<void> {
    if (where == Where::at_commit && s == Step::sending_commit && w.fixture.in_ship.exchange(false)) co_await stop();
  });
  if (where == Where::during) {
    w.fixture.ship_runs_until_stopped = true;
    if (how == StopReason::cancelled) {
      canceller = std::thread([&source, budget] {
        std::this_thread::sleep_for(budget / 4);
        source.request_stop(StopReason::cancelled);
      });
    }
  }

  const auto started = std::chrono::steady_clock::now();
  SagaOutcome out = w.Run(caller, "cell");
  const auto took = std::chrono::steady_clock::now() - started;
  if (canceller.joinable()) canceller.join();
  const ErrorCode stop_code = how == StopReason::cancelled ? ErrorCode::cancelled : ErrorCode::deadline_exceeded;
  SagaRecord j = w.Journal("cell");
  EXPECT_EQ(j.state, out.state);
  EXPECT_EQ(j.owner_until_ms, 0);  // the owner let go
  ASSERT_TRUE(out.error);

  switch (where) {
    case Where::before:
    case Where::during:
      // ship never committed: reserve is undone, and the caller hears the stop (a safe failure).
      EXPECT_EQ(out.state, SagaState::compensated);
      EXPECT_EQ(out.failed_step, "ship");
      EXPECT_EQ(out.error->code(), stop_code) << out.error->what();
      EXPECT_EQ(out.to_error().code(), stop_code);
      EXPECT_TRUE(w.Items().empty());
      EXPECT_EQ(w.Undone(), (std::vector<std::string>{"reserve"}));
      EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:compensated"}));
      EXPECT_EQ(j.next_step, 1);
      EXPECT_FALSE(ledger->may_have_written());
      break;
    case Where::at_commit:
      // Stopped at ship's commit point: step_ambiguous, nothing compensated. ship's journal row
      // committed with ship's effect, so the journal already knows what resume will find.
      EXPECT_EQ(out.state, SagaState::step_ambiguous);
      EXPECT_EQ(out.failed_step, "ship");
      EXPECT_EQ(out.error->code(), ErrorCode::commit_ambiguous);
      EXPECT_EQ(out.to_error().code(), ErrorCode::commit_ambiguous);
      EXPECT_NE(std::string(out.to_error().message()).find("step_ambiguous: step 'ship'"), std::string::npos);
      EXPECT_EQ(w.Items(), (std::vector<int>{1, 2}));
      EXPECT_TRUE(w.Undone().empty());
      EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:done", "ship:done"}));
      EXPECT_EQ(j.next_step, 2);
      EXPECT_TRUE(ledger->may_have_written());
      break;
    case Where::after:
      // ship happened; confirm never starts; ship then reserve are undone.
      EXPECT_EQ(out.state, SagaState::compensated);
      EXPECT_EQ(out.failed_step, "confirm");
      EXPECT_EQ(out.error->code(), stop_code);
      EXPECT_TRUE(w.Items().empty());
      EXPECT_EQ(w.Undone(), (std::vector<std::string>{"ship", "reserve"}));
      EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:compensated", "ship:compensated"}));
      EXPECT_FALSE(ledger->may_have_written());
      break;
  }
  // The stop ended the saga promptly (compensations ran on their own budget).
  EXPECT_LT(took, budget + std::chrono::milliseconds(3000 * TimeScale()));

  if (where == Where::at_commit) {
    // resume settles it from the journal: ship is done, so only confirm runs.
    SagaOutcome resumed;
    RunSync([&]() -> asio::awaitable<void> { resumed = co_await w.sagas->resume(Context().with_timeout(20s), "cell"); });
    EXPECT_EQ(resumed.state, SagaState::completed);
    EXPECT_EQ(w.Items(), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(StepStates(w.Journal("cell")),
              (std::vector<std::string>{"reserve:done", "ship:done", "confirm:done"}));
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, SagaFaultMatrix,
                         ::testing::Combine(::testing::ValuesIn(kDrivers),
                                            ::testing::Values(Where::before, Where::during, Where::at_commit,
                                                              Where::after),
                                            ::testing::Values(StopReason::deadline_exceeded, StopReason::cancelled)),
                         [](const auto& cell) {
                           return std::string(std::get<0>(cell.param)) + "_" + WhereName(std::get<1>(cell.param)) +
                                  "_" + (std::get<2>(cell.param) == StopReason::cancelled ? "cancel" : "deadline");
                         });

// ---- Remote steps. ----

// A saga whose middle step is a call to "another service": `answer` decides what it does.
struct RemoteWorld : World {
  explicit RemoteWorld(const char* driver) : World(driver) {}
  std::atomic<int> calls{0};
  std::atomic<int> compensations{0};
  std::vector<std::string> keys;
  std::mutex mu;
  std::function<asio::awaitable<std::string>(const Context&, const SagaCall&)> answer;

  SagaDefinition Definition(bool keyed, std::chrono::milliseconds budget = 30s,
                            std::chrono::milliseconds key_lifetime = std::chrono::hours(24)) {
    SagaDefinition def = fixture.definition(budget);
    def.name = keyed ? "test.remote_keyed" : "test.remote";
    auto remote = [this](const Context& ctx, const SagaCall& call) -> asio::awaitable<std::string> {
      calls.fetch_add(1);
      {
        std::lock_guard lock(mu);
        keys.push_back(call.idempotency_key);
      }
      co_return co_await answer(ctx, call);
    };
    auto undo = [this](const Context&, const SagaCall& call) -> asio::awaitable<std::string> {
      compensations.fetch_add(1);
      std::lock_guard lock(mu);
      keys.push_back(call.idempotency_key);
      co_return std::string();
    };
    SagaStepOptions o;
    o.keyed = keyed;
    o.key_lifetime = key_lifetime;
    def.steps[1] = SagaStep::remote_step("ship", remote, undo, o);
    return def;
  }
};

class SagaRemoteTest : public SagaTest {};

TEST_P(SagaRemoteTest, ACallSentAndNotAnsweredIsAmbiguousAndNothingIsCompensated) {
  RemoteWorld w(GetParam());
  w.Start();
  w.sagas->define(w.Definition(/*keyed=*/false));
  // The request left (a POST without a key): the client noted its commit point, then the
  // saga's budget ran out before an answer came.
  w.answer = [](const Context& ctx, const SagaCall&) -> asio::awaitable<std::string> {
    ctx.commit_ledger()->note_commit_point(false);
    co_await WaitUntilStopped(ctx);
    throw Error::stopped(ctx.stop_reason());
  };
  const auto budget = std::chrono::milliseconds(300 * TimeScale());
  SagaOutcome out = w.Run(Context().with_timeout(budget), "r1", "test.remote");
  EXPECT_EQ(out.state, SagaState::step_ambiguous);
  EXPECT_EQ(out.failed_step, "ship");
  EXPECT_EQ(out.to_error().code(), ErrorCode::commit_ambiguous);
  EXPECT_EQ(w.compensations.load(), 0);
  EXPECT_EQ(w.Items(), (std::vector<int>{1}));  // reserve stays: ship may have happened
  EXPECT_TRUE(w.Undone().empty());
  SagaRecord j = w.Journal("r1");
  EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:done", "ship:ambiguous"}));
  EXPECT_EQ(j.steps[1].error_code, "commit_ambiguous");

  // Unkeyed: resume cannot repeat it and says how to settle it.
  SagaOutcome resumed;
  RunSync([&]() -> asio::awaitable<void> { resumed = co_await w.sagas->resume(Context().with_timeout(20s), "r1"); });
  EXPECT_EQ(resumed.state, SagaState::step_ambiguous);
  EXPECT_EQ(w.calls.load(), 1);
  ASSERT_TRUE(resumed.error);
  EXPECT_NE(resumed.error->message().find("cutoff saga resolve r1 --step ship"), std::string::npos);

  // An operator found it happened: the saga carries on from there.
  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> { co_return "{}"; };
  SagaOutcome settled;
  RunSync([&]() -> asio::awaitable<void> {
    settled = co_await w.sagas->resolve(Context().with_timeout(20s), "r1", "ship", true, R"({"parcel":7})");
  });
  EXPECT_EQ(settled.state, SagaState::completed);
  EXPECT_EQ(w.calls.load(), 1);  // not sent again
  EXPECT_EQ(w.Items(), (std::vector<int>{1, 3}));
  EXPECT_EQ(w.Journal("r1").steps[1].result, R"({"parcel":7})");
}

TEST_P(SagaRemoteTest, AKeyedRemoteStepIsRepeatedWithTheSameKeyOnResume) {
  RemoteWorld w(GetParam());
  w.Start();
  w.sagas->define(w.Definition(/*keyed=*/true));
  w.answer = [](const Context& ctx, const SagaCall&) -> asio::awaitable<std::string> {
    ctx.commit_ledger()->note_commit_point(true);
    co_await WaitUntilStopped(ctx);
    throw Error::stopped(ctx.stop_reason());
  };
  auto [caller, source] = Context().with_cancel();
  std::thread canceller([&source] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100 * TimeScale()));
    source.request_stop(StopReason::cancelled);
  });
  SagaOutcome out = w.Run(caller, "r2", "test.remote_keyed");
  canceller.join();
  EXPECT_EQ(out.state, SagaState::step_ambiguous);
  EXPECT_NE(std::string(out.error->message()).find("same Idempotency-Key"), std::string::npos);

  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> { co_return R"({"parcel":8})"; };
  SagaOutcome resumed;
  RunSync([&]() -> asio::awaitable<void> { resumed = co_await w.sagas->resume(Context().with_timeout(20s), "r2"); });
  EXPECT_EQ(resumed.state, SagaState::completed);
  EXPECT_EQ(w.calls.load(), 2);
  std::lock_guard lock(w.mu);
  EXPECT_EQ(w.keys, (std::vector<std::string>{"r2/ship", "r2/ship"}));
  EXPECT_EQ(StepStates(w.Journal("r2")), (std::vector<std::string>{"reserve:done", "ship:done", "confirm:done"}));
  EXPECT_EQ(w.Journal("r2").steps[1].attempts, 2);
}

// Past the key's lifetime upstream (the service's idempotency retention) a repeat could be
// taken as a new call: resume leaves the step ambiguous and says how to settle it.
TEST_P(SagaRemoteTest, AKeyedStepIsNotRepeatedOnceItsServiceMayHaveForgottenTheKey) {
  RemoteWorld w(GetParam());
  w.Start();
  w.sagas->define(w.Definition(/*keyed=*/true, 30s, /*key_lifetime=*/50ms));
  w.answer = [](const Context& ctx, const SagaCall&) -> asio::awaitable<std::string> {
    ctx.commit_ledger()->note_commit_point(true);
    throw Error(ErrorCode::internal, "the handler failed after booking");
    co_return std::string();
  };
  EXPECT_EQ(w.Run(Context().with_timeout(20s), "r9", "test.remote_keyed").state, SagaState::step_ambiguous);
  std::this_thread::sleep_for(100ms);

  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> { co_return R"({"parcel":9})"; };
  SagaOutcome resumed;
  RunSync([&]() -> asio::awaitable<void> { resumed = co_await w.sagas->resume(Context().with_timeout(20s), "r9"); });
  EXPECT_EQ(resumed.state, SagaState::step_ambiguous);
  EXPECT_EQ(resumed.failed_step, "ship");
  EXPECT_EQ(w.calls.load(), 1);                 // not sent again
  EXPECT_EQ(w.Items(), (std::vector<int>{1}));  // reserve kept
  ASSERT_TRUE(resumed.error);
  EXPECT_NE(resumed.error->message().find("keeps idempotency keys"), std::string::npos) << resumed.error->message();
  EXPECT_NE(resumed.error->message().find("cutoff saga resolve r9 --step ship"), std::string::npos);

  // Settled by hand, it carries on without sending the step again.
  SagaOutcome settled;
  RunSync([&]() -> asio::awaitable<void> {
    settled = co_await w.sagas->resolve(Context().with_timeout(20s), "r9", "ship", true, R"({"parcel":9})");
  });
  EXPECT_EQ(settled.state, SagaState::completed);
  EXPECT_EQ(w.calls.load(), 1);
}

TEST_P(SagaRemoteTest, ARefusedCallIsASafeFailureAndIsCompensatedWithItsKey) {
  RemoteWorld w(GetParam());
  w.Start();
  w.sagas->define(w.Definition(/*keyed=*/true));
  // Refused before anything was applied (no commit point): reserve is undone.
  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> {
    throw Error(ErrorCode::invalid_argument, "no such address");
    co_return std::string();
  };
  auto ledger = std::make_shared<CommitLedger>();
  SagaOutcome out = w.Run(Context().with_timeout(20s).with_commit_ledger(ledger), "r3", "test.remote_keyed");
  EXPECT_EQ(out.state, SagaState::compensated);
  // Nothing remains, so the caller's ledger learns of no commit: its journal writes are the
  // saga's bookkeeping, not the caller's effects.
  EXPECT_FALSE(ledger->may_have_written());
  EXPECT_EQ(out.to_error().code(), ErrorCode::invalid_argument);
  EXPECT_EQ(w.compensations.load(), 0);  // ship failed: only reserve is undone
  EXPECT_EQ(w.Undone(), (std::vector<std::string>{"reserve"}));
  EXPECT_EQ(StepStates(w.Journal("r3")), (std::vector<std::string>{"reserve:compensated", "ship:failed"}));
}

TEST_P(SagaRemoteTest, AnUnexplainedFailureAfterTheCallLeftIsAmbiguous) {
  RemoteWorld w(GetParam());
  w.Start();
  w.sagas->define(w.Definition(/*keyed=*/true));
  // The other service applied it, then failed answering (a 500 with code internal): only a
  // refusal on the request's merits would rule the effect out.
  w.answer = [](const Context& ctx, const SagaCall&) -> asio::awaitable<std::string> {
    ctx.commit_ledger()->note_commit_point(true);
    throw Error(ErrorCode::internal, "the handler failed after booking");
    co_return std::string();
  };
  SagaOutcome out = w.Run(Context().with_timeout(20s), "r6", "test.remote_keyed");
  EXPECT_EQ(out.state, SagaState::step_ambiguous);
  EXPECT_EQ(w.Items(), (std::vector<int>{1}));  // reserve kept
  EXPECT_TRUE(w.Undone().empty());
}

TEST_P(SagaRemoteTest, ResumingAStepThatMayHaveHappenedWhileItsServiceIsDownUndoesNothing) {
  RemoteWorld w(GetParam());
  w.Start();
  w.sagas->define(w.Definition(/*keyed=*/true));
  w.answer = [](const Context& ctx, const SagaCall&) -> asio::awaitable<std::string> {
    ctx.commit_ledger()->note_commit_point(true);
    throw Error(ErrorCode::commit_ambiguous, "sent, not answered");
    co_return std::string();
  };
  EXPECT_EQ(w.Run(Context().with_timeout(20s), "r7", "test.remote_keyed").state, SagaState::step_ambiguous);
  // The service is down now: the repeat is refused before anything is sent (unavailable, no
  // commit point). The first call may still have been applied, so nothing is undone.
  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> {
    throw Error(ErrorCode::unavailable, "connection refused");
    co_return std::string();
  };
  SagaOutcome down;
  RunSync([&]() -> asio::awaitable<void> { down = co_await w.sagas->resume(Context().with_timeout(20s), "r7"); });
  EXPECT_EQ(down.state, SagaState::step_ambiguous);
  EXPECT_EQ(w.Items(), (std::vector<int>{1}));
  EXPECT_EQ(StepStates(w.Journal("r7")), (std::vector<std::string>{"reserve:done", "ship:ambiguous"}));
  // A budget spent before the repeat is sent leaves it ambiguous too.
  {
    cutoff::internal::ScopedFault spend(
        internal::kSagaStep, [](std::string_view step, internal::SagaPoint point, const Context& saga) -> asio::awaitable<void> {
          if (step == "ship" && point == internal::SagaPoint::before_step) co_await WaitUntilStopped(saga);
        });
    SagaOutcome spent;
    RunSync([&]() -> asio::awaitable<void> {
      spent = co_await w.sagas->resume(Context().with_timeout(std::chrono::milliseconds(200 * TimeScale())), "r7");
    });
    EXPECT_EQ(spent.state, SagaState::step_ambiguous);
    EXPECT_EQ(w.Items(), (std::vector<int>{1}));
    EXPECT_EQ(StepStates(w.Journal("r7")), (std::vector<std::string>{"reserve:done", "ship:ambiguous"}));
  }
  // Back up: the repeat completes the saga.
  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> { co_return "{}"; };
  SagaOutcome up;
  RunSync([&]() -> asio::awaitable<void> { up = co_await w.sagas->resume(Context().with_timeout(20s), "r7"); });
  EXPECT_EQ(up.state, SagaState::completed);
  EXPECT_EQ(w.Items(), (std::vector<int>{1, 3}));
}

TEST_P(SagaTest, TheSweepForgetsOnlyFinalSagas) {
  World w(GetParam());
  w.Start();
  w.sagas->define(w.fixture.definition());
  // An ambiguous saga: stopped at ship's commit.
  auto [caller, source] = Context().with_cancel(Deadline::after(20s));
  cutoff::internal::ScopedFault stop_at_commit(internal::kEffectStep,
                                               [&](Step s, const Context&) -> asio::awaitable<void> {
                                                 if (s == Step::sending_commit && w.fixture.in_ship.exchange(false))
                                                   source.request_stop(StopReason::cancelled);
                                                 co_return;
                                               });
  RunSync([&]() -> asio::awaitable<void> { co_await w.sagas->run(caller, "test.fulfil", "B-2", "s2"); });
  // A final one (its steps collide with s2's rows, so it is undone: compensated).
  EXPECT_EQ(w.Run(Context().with_timeout(20s), "s1").state, SagaState::compensated);
  std::size_t swept = 0;
  std::vector<SagaRecord> left;
  RunSync([&]() -> asio::awaitable<void> {
    swept = co_await w.sagas->journal().sweep(Context(), std::chrono::milliseconds(-1000));
    left = co_await w.sagas->journal().list(Context());
  });
  EXPECT_EQ(swept, 1u);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].id, "s2");
  EXPECT_EQ(left[0].state, SagaState::step_ambiguous);
}

TEST_P(SagaTest, TheSweepDeletesInBatchesUntilNothingIsLeft) {
  World w(GetParam());
  w.Start();
  w.sagas->define(w.fixture.definition());
  // Five final sagas (the first completes; the others collide with its items and are undone).
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(is_final(w.Run(Context().with_timeout(20s), "b" + std::to_string(i)).state));
  std::size_t swept = 0;
  std::vector<SagaRecord> left;
  std::int64_t steps_left = -1;
  RunSync([&]() -> asio::awaitable<void> {
    swept = co_await w.sagas->journal().sweep(Context(), std::chrono::milliseconds(-1000), /*batch=*/2);
    left = co_await w.sagas->journal().list(Context());
    steps_left = co_await w.db.count(w.sagas->journal().step_table());
  });
  EXPECT_EQ(swept, 5u);
  EXPECT_TRUE(left.empty());
  EXPECT_EQ(steps_left, 0);
}

// ---- Compensations: retried within their own budget, resumable when they run out. ----

TEST_P(SagaTest, ACompensationIsRetriedUntilItSucceedsAndRunsOnce) {
  RemoteWorld w(GetParam());
  w.Start();
  SagaDefinition def = w.Definition(/*keyed=*/true);
  std::atomic<int> tries{0};
  def.steps[1].compensate_remote = [&](const Context&, const SagaCall& call) -> asio::awaitable<std::string> {
    EXPECT_EQ(call.idempotency_key, "r4/ship/compensate");
    if (tries.fetch_add(1) < 2) throw Error(ErrorCode::unavailable, "shipping is restarting");
    co_return std::string();
  };
  def.steps[2].local = [](Effect&, const SagaCall&) -> asio::awaitable<std::string> {
    throw Error(ErrorCode::not_found, "no such order");
    co_return std::string();
  };
  w.sagas->define(std::move(def));
  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> { co_return "{}"; };
  SagaOutcome out = w.Run(Context().with_timeout(20s), "r4", "test.remote_keyed");
  EXPECT_EQ(out.state, SagaState::compensated);
  EXPECT_EQ(out.failed_step, "confirm");
  EXPECT_EQ(tries.load(), 3);
  EXPECT_EQ(w.Undone(), (std::vector<std::string>{"reserve"}));
  EXPECT_EQ(StepStates(w.Journal("r4")), (std::vector<std::string>{"reserve:compensated", "ship:compensated"}));
}

TEST_P(SagaTest, ACompensationOutOfBudgetStopsTheUndoAndResumeFinishesIt) {
  RemoteWorld w(GetParam());
  SagaOptions options;
  options.compensation_timeout = std::chrono::milliseconds(300 * TimeScale());
  w.Start(options);
  SagaDefinition def = w.Definition(/*keyed=*/true);
  std::atomic<bool> shipping_down{true};
  def.steps[1].compensate_remote = [&](const Context&, const SagaCall&) -> asio::awaitable<std::string> {
    if (shipping_down) throw Error(ErrorCode::unavailable, "shipping is down");
    co_return std::string();
  };
  def.steps[2].local = [](Effect&, const SagaCall&) -> asio::awaitable<std::string> {
    throw Error(ErrorCode::invalid_argument, "refused");
    co_return std::string();
  };
  w.sagas->define(std::move(def));
  w.answer = [](const Context&, const SagaCall&) -> asio::awaitable<std::string> { co_return "{}"; };
  SagaOutcome out = w.Run(Context().with_timeout(20s), "r5", "test.remote_keyed");
  EXPECT_EQ(out.state, SagaState::compensation_failed);
  EXPECT_EQ(out.failed_step, "ship");
  EXPECT_EQ(out.to_error().code(), ErrorCode::commit_ambiguous);  // reserve is still there
  EXPECT_EQ(w.Items(), (std::vector<int>{1}));                     // reserve was not undone before ship
  SagaRecord j = w.Journal("r5");
  EXPECT_EQ(StepStates(j), (std::vector<std::string>{"reserve:done", "ship:compensation_failed"}));
  EXPECT_GT(j.steps[1].attempts, 1);

  shipping_down = false;
  SagaOutcome resumed;
  RunSync([&]() -> asio::awaitable<void> { resumed = co_await w.sagas->resume(Context().with_timeout(20s), "r5"); });
  EXPECT_EQ(resumed.state, SagaState::compensated);
  EXPECT_TRUE(w.Items().empty());
  EXPECT_EQ(StepStates(w.Journal("r5")), (std::vector<std::string>{"reserve:compensated", "ship:compensated"}));
}

// ---- Ownership. ----

TEST_P(SagaTest, ARunningSagaIsNotTakenOverAndATakenOverOwnerCannotCommit) {
  World w(GetParam());
  w.Start();
  w.sagas->define(w.fixture.definition());
  std::atomic<bool> at_ship{false}, release{false};
  cutoff::internal::ScopedFault hold(
      internal::kSagaStep, [&](std::string_view step, internal::SagaPoint point, const Context&) -> asio::awaitable<void> {
        if (step != "ship" || point != internal::SagaPoint::before_step) co_return;
        at_ship = true;
        while (!release) co_await Sleep(2ms);
      });
  SagaOutcome first;
  std::optional<ErrorCode> first_error;
  std::thread owner([&] {
    try {
      first = w.Run(Context().with_timeout(20s), "own");
    } catch (const Error& e) {
      first_error = e.code();
    }
  });
  while (!at_ship) std::this_thread::sleep_for(2ms);

  // A second run with the same id, and a resume without force, are refused while it is owned.
  std::optional<ErrorCode> second, plain_resume;
  RunSync([&]() -> asio::awaitable<void> {
    try {
      co_await w.sagas->run(Context().with_timeout(5s), "test.fulfil", "A-1", "own");
    } catch (const Error& e) {
      second = e.code();
    }
    try {
      co_await w.sagas->resume(Context().with_timeout(5s), "own");
    } catch (const Error& e) {
      plain_resume = e.code();
    }
  });
  EXPECT_EQ(second, ErrorCode::idempotency_conflict);
  EXPECT_EQ(plain_resume, ErrorCode::idempotency_conflict);

  // Forced: the new owner finishes it; the old one finds its token gone and commits nothing.
  SagaOutcome forced;
  cutoff::internal::ScopedFault none(internal::kSagaStep,
                                     [](std::string_view, internal::SagaPoint, const Context&) -> asio::awaitable<void> {
                                       co_return;
                                     });
  RunSync([&]() -> asio::awaitable<void> { forced = co_await w.sagas->resume(Context().with_timeout(20s), "own", true); });
  EXPECT_EQ(forced.state, SagaState::completed);
  release = true;
  owner.join();
  // The old owner lost the saga at ship: it reports that steps may have happened, and undoes
  // nothing (its token no longer matches).
  EXPECT_EQ(first_error, ErrorCode::commit_ambiguous);
  EXPECT_EQ(w.Items(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(w.Journal("own").state, SagaState::completed);
}

TEST_P(SagaTest, RefusesBadDefinitionsIdsAndInputs) {
  World w(GetParam());
  w.Start();
  SagaDefinition empty;
  empty.name = "x";
  EXPECT_THROW(w.sagas->define(empty), Error);
  SagaDefinition twice = w.fixture.definition();
  twice.steps[2].name = "reserve";
  EXPECT_THROW(w.sagas->define(twice), Error);
  SagaDefinition slash = w.fixture.definition();
  slash.steps[0].name = "a/b";
  EXPECT_THROW(w.sagas->define(slash), Error);
  w.sagas->define(w.fixture.definition());
  EXPECT_THROW(w.sagas->define(w.fixture.definition()), Error);

  auto code_of = [&](std::string name, std::string input, std::string id) {
    std::optional<ErrorCode> code;
    RunSync([&]() -> asio::awaitable<void> {
      try {
        co_await w.sagas->run(Context().with_timeout(5s), name, input, id);
      } catch (const Error& e) {
        code = e.code();
      }
    });
    return code;
  };
  EXPECT_EQ(code_of("nope", "", "a"), ErrorCode::not_found);
  EXPECT_EQ(code_of("test.fulfil", std::string(70000, 'x'), "a"), ErrorCode::invalid_argument);
  EXPECT_EQ(code_of("test.fulfil", "", std::string(200, 'k')), ErrorCode::invalid_argument);
  EXPECT_EQ(code_of("test.fulfil", "", "bad\r\nid"), ErrorCode::invalid_argument);
  EXPECT_EQ(code_of("test.fulfil", "", " padded"), ErrorCode::invalid_argument);
  // A spent budget starts nothing, not even a journal row.
  std::optional<ErrorCode> expired;
  RunSync([&]() -> asio::awaitable<void> {
    try {
      co_await w.sagas->run(Context().with_deadline(Deadline::after(-1ms)), "test.fulfil", "", "late");
    } catch (const Error& e) {
      expired = e.code();
    }
    EXPECT_FALSE((co_await w.sagas->journal().find(Context(), "late")).has_value());
  });
  EXPECT_EQ(expired, ErrorCode::deadline_exceeded);
  // The same id for a different saga input is a conflict, not a replay.
  EXPECT_FALSE(code_of("test.fulfil", "A-1", "dup").has_value());
  EXPECT_EQ(code_of("test.fulfil", "B-2", "dup"), ErrorCode::idempotency_conflict);
}

TEST_P(SagaTest, ListsAndShowsTheJournal) {
  World w(GetParam());
  w.Start();
  w.sagas->define(w.fixture.definition());
  w.fixture.ship_fails = true;
  w.Run(Context().with_timeout(20s), "l2");
  w.fixture.ship_fails = false;
  w.Run(Context().with_timeout(20s), "l1");
  std::vector<SagaRecord> all, compensated;
  RunSync([&]() -> asio::awaitable<void> {
    all = co_await w.sagas->journal().list(Context());
    SagaListOptions o;
    o.state = SagaState::compensated;
    compensated = co_await w.sagas->journal().list(Context(), o);
  });
  EXPECT_EQ(all.size(), 2u);
  ASSERT_EQ(compensated.size(), 1u);
  EXPECT_EQ(compensated[0].id, "l2");
  const std::string line = saga_summary_line(compensated[0], internal::NowMs());
  EXPECT_NE(line.find("l2  test.fulfil  compensated  step 1/3  at ship  invalid_argument"), std::string::npos) << line;
  const std::string json = saga_to_json(w.Journal("l2"), internal::NowMs());
  EXPECT_NE(json.find(R"("state":"compensated")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("name":"reserve","state":"compensated")"), std::string::npos) << json;
}

INSTANTIATE_TEST_SUITE_P(Drivers, SagaTest, ::testing::ValuesIn(kDrivers));
INSTANTIATE_TEST_SUITE_P(Drivers, SagaRemoteTest, ::testing::ValuesIn(kDrivers));

}  // namespace
}  // namespace cutoff::effects
