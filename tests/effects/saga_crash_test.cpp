// The crash column of the saga fault matrix: a process running a saga is killed (SIGKILL)
// before a step, during its body, at its commit and after it, on SQLite and PostgreSQL. The
// journal must say exactly what happened, and `resume` (once the dead owner's lease ran out)
// must carry the saga to completion without repeating or losing a step.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <csignal>
#include <thread>
#include <tuple>

#include "cutoff/effects/idempotency.hpp"
#include "cutoff/effects/saga.hpp"
#include "tests/support/effects_backend.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/saga_fixture.hpp"
#include "tests/support/time_scale.hpp"

extern char** environ;

namespace cutoff::effects {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test_support::Backend;
using test_support::RunSync;
using test_support::SagaFixture;
using test_support::TimeScale;

// Runs the helper to its death; the signal that ended it (0: it exited).
int RunHelper(const Backend& db, const std::string& driver, const std::string& point, int budget_ms) {
  std::string file = db.sqlite_path().empty() ? "-" : db.sqlite_path().string();
  std::string budget = std::to_string(budget_ms);
  std::vector<std::string> args{CUTOFF_SAGA_CRASH_HELPER, driver, db.prefix(), file, point, "crash", budget};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

std::vector<std::string> StepStates(const SagaRecord& saga) {
  std::vector<std::string> out;
  for (const SagaStepRecord& s : saga.steps) out.push_back(s.name + ":" + std::string(to_string(s.state)));
  return out;
}

using Cell = std::tuple<const char*, const char*>;
class SagaCrashMatrix : public ::testing::TestWithParam<Cell> {};

TEST_P(SagaCrashMatrix, TheJournalSaysWhatHappenedAndResumeFinishesIt) {
  const auto& [driver, point] = GetParam();
  Backend db(driver);
  if (!db.available()) GTEST_SKIP() << "no test PostgreSQL";
  SagaFixture fixture(db);
  EffectsOptions fx;
  fx.table_prefix = db.prefix() + "_";
  Effects effects(db.pool(), fx);
  Sagas sagas(effects);
  const int budget_ms = 800 * TimeScale();
  sagas.define(fixture.definition(std::chrono::milliseconds(budget_ms)));
  RunSync([&]() -> asio::awaitable<void> {
    co_await fixture.create_tables();
    co_await sagas.install(Context());
  });

  ASSERT_EQ(RunHelper(db, driver, point, budget_ms), SIGKILL);

  const std::string p = point;
  const bool ship_committed = p == "at_commit" || p == "after";
  std::optional<SagaRecord> journal;
  std::vector<int> items;
  RunSync([&]() -> asio::awaitable<void> {
    journal = co_await sagas.journal().find(Context(), "crash");
    items = co_await fixture.items();
  });
  ASSERT_TRUE(journal);
  EXPECT_EQ(journal->state, SagaState::running);
  EXPECT_EQ(journal->next_step, ship_committed ? 2 : 1);
  EXPECT_EQ(StepStates(*journal), ship_committed ? (std::vector<std::string>{"reserve:done", "ship:done"})
                                                 : (std::vector<std::string>{"reserve:done"}));
  EXPECT_EQ(items, ship_committed ? (std::vector<int>{1, 2}) : (std::vector<int>{1}));

  // While the dead owner's lease runs, nobody takes the saga over without being told to.
  const std::int64_t now = internal::NowMs();
  if (journal->owner_until_ms > now + 200) {
    std::optional<ErrorCode> early;
    RunSync([&]() -> asio::awaitable<void> {
      try {
        co_await sagas.resume(Context().with_timeout(5s), "crash");
      } catch (const Error& e) {
        early = e.code();
      }
    });
    EXPECT_EQ(early, ErrorCode::idempotency_conflict);
  }
  while (!journal->interrupted(internal::NowMs())) std::this_thread::sleep_for(20ms);

  SagaOutcome out;
  RunSync([&]() -> asio::awaitable<void> { out = co_await sagas.resume(Context().with_timeout(20s), "crash"); });
  EXPECT_EQ(out.state, SagaState::completed);
  std::vector<std::string> undone;
  RunSync([&]() -> asio::awaitable<void> {
    journal = co_await sagas.journal().find(Context(), "crash");
    items = co_await fixture.items();
    undone = co_await fixture.undone();
    co_await db.drop_all();
  });
  EXPECT_EQ(journal->state, SagaState::completed);
  EXPECT_EQ(StepStates(*journal), (std::vector<std::string>{"reserve:done", "ship:done", "confirm:done"}));
  // Each step happened once: a step the journal had as done was not run again.
  EXPECT_EQ(journal->steps[1].attempts, 1);
  EXPECT_EQ(items, (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(undone.empty());
}

const char* kDrivers[] = {"sqlite", "postgresql"};
const char* kPoints[] = {"before", "during", "at_commit", "after"};
INSTANTIATE_TEST_SUITE_P(Cells, SagaCrashMatrix,
                         ::testing::Combine(::testing::ValuesIn(kDrivers), ::testing::ValuesIn(kPoints)),
                         [](const auto& cell) {
                           return std::string(std::get<0>(cell.param)) + "_" + std::get<1>(cell.param) + "_crash";
                         });

}  // namespace
}  // namespace cutoff::effects
