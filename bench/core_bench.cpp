// Microbenchmarks of the core model: what a deadline check, a child context and a stop
// callback cost. Run: build/bin/core_bench [--benchmark_format=json]
//
// Each benchmark also reports `allocs_per_iter` (counted operator new calls per iteration).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"
#include "tests/support/allocation_counter.hpp"

namespace {

using namespace std::chrono_literals;

class AllocationCounter {
 public:
  explicit AllocationCounter(benchmark::State& state)
      : state_(state), start_(cutoff::test_support::allocations_total()) {}
  ~AllocationCounter() {
    const auto n = static_cast<double>(cutoff::test_support::allocations_total() - start_);
    state_.counters["allocs_per_iter"] =
        benchmark::Counter(state_.iterations() ? n / static_cast<double>(state_.iterations()) : 0);
  }

 private:
  benchmark::State& state_;
  long start_;
};

void BM_ClockNow(benchmark::State& state) {
  AllocationCounter allocs(state);
  for (auto _ : state) benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_ClockNow);

void BM_CheckUnbound(benchmark::State& state) {
  cutoff::Context ctx;
  benchmark::DoNotOptimize(ctx);
  AllocationCounter allocs(state);
  for (auto _ : state) benchmark::DoNotOptimize(ctx.stop_requested());
}
BENCHMARK(BM_CheckUnbound);

void BM_CheckBound(benchmark::State& state) {
  auto ctx = cutoff::Context::background().with_timeout(1h);
  benchmark::DoNotOptimize(ctx);
  AllocationCounter allocs(state);
  for (auto _ : state) benchmark::DoNotOptimize(ctx.stop_requested());
}
BENCHMARK(BM_CheckBound);

// check() is what handlers call: the same load plus a never-taken branch to the throw.
void BM_CheckBoundThrowing(benchmark::State& state) {
  auto ctx = cutoff::Context::background().with_timeout(1h);
  AllocationCounter allocs(state);
  for (auto _ : state) {
    ctx.check();
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_CheckBoundThrowing);

// Create and destroy a child whose deadline is tighter than its parent's (arms a timer).
void BM_ChildContext(benchmark::State& state) {
  auto parent = cutoff::Context::background().with_timeout(1h);
  AllocationCounter allocs(state);
  for (auto _ : state) {
    auto child = parent.with_timeout(30min);
    benchmark::DoNotOptimize(child);
  }
}
BENCHMARK(BM_ChildContext);

// A child that cannot tighten is a copy of its parent.
void BM_ChildContextNotTighter(benchmark::State& state) {
  auto parent = cutoff::Context::background().with_timeout(1s);
  AllocationCounter allocs(state);
  for (auto _ : state) {
    auto child = parent.with_timeout(1h);
    benchmark::DoNotOptimize(child);
  }
}
BENCHMARK(BM_ChildContextNotTighter);

void BM_CancelCallback(benchmark::State& state) {
  cutoff::CancelSource source;
  auto token = source.token();
  AllocationCounter allocs(state);
  for (auto _ : state) {
    cutoff::CancelCallback cb(token, [](cutoff::StopReason) noexcept {});
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_CancelCallback);

}  // namespace

BENCHMARK_MAIN();
