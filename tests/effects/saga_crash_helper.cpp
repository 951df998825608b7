// The process the saga crash tests kill: it runs the fixture saga on a database the test made
// and ends itself with SIGKILL at the point named on its command line.
//
//   saga_crash_helper sqlite|postgresql <table prefix> <sqlite file or -> <point> <saga id> <budget ms>
//
// Points: before (ship about to start), during (inside ship's transaction, after its write),
// at_commit (ship's COMMIT answered, nothing else done), after (ship journalled, confirm not
// started). Exits 3 if it reaches the end alive.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cutoff/effects/internal/fault_points.hpp"
#include "cutoff/effects/saga.hpp"
#include "tests/support/effects_backend.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/saga_fixture.hpp"

namespace {

namespace asio = boost::asio;
using namespace cutoff;

[[noreturn]] void Die() {
  std::raise(SIGKILL);
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s DRIVER PREFIX SQLITE_FILE POINT SAGA_ID BUDGET_MS\n", argv[0]);
    return 2;
  }
  const std::string driver = argv[1], prefix = argv[2], file = argv[3], point = argv[4], id = argv[5];
  const std::chrono::milliseconds budget(std::atoi(argv[6]));
  test_support::Backend db(driver, prefix, file == "-" ? std::filesystem::path() : std::filesystem::path(file));
  test_support::SagaFixture fixture(db);
  effects::EffectsOptions fx;
  fx.table_prefix = prefix + "_";
  effects::Effects effects(db.pool(), fx);
  effects::SagaOptions options;
  options.compensation_timeout = std::chrono::milliseconds(100);
  options.journal_timeout = std::chrono::milliseconds(100);
  options.lease_margin = std::chrono::milliseconds(100);
  effects::Sagas sagas(effects, options);
  sagas.define(fixture.definition(budget));

  cutoff::internal::ScopedFault step(
      effects::internal::kSagaStep,
      [&](std::string_view s, effects::internal::SagaPoint p, const Context&) -> asio::awaitable<void> {
        if (s == "ship" && p == effects::internal::SagaPoint::before_step && point == "before") Die();
        if (s == "ship" && p == effects::internal::SagaPoint::after_step && point == "after") Die();
        co_return;
      });
  cutoff::internal::ScopedFault commit(effects::internal::kEffectStep,
                                       [&](effects::Step s, const Context&) -> asio::awaitable<void> {
                                         if (s == effects::Step::after_commit && point == "at_commit" &&
                                             fixture.in_ship.exchange(false))
                                           Die();
                                         co_return;
                                       });
  if (point == "during") fixture.after_ship_insert = [] { Die(); };

  test_support::RunSync([&]() -> asio::awaitable<void> {
    co_await sagas.run(Context().with_timeout(budget), "test.fulfil", "A-1", id);
  });
  std::fprintf(stderr, "saga_crash_helper: the saga finished; the point '%s' was never reached\n", point.c_str());
  return 3;
}
