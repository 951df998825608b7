// Microbenchmarks of the core model: what a deadline check, a child context, a stop
// callback and the waits (Mutex, Semaphore) cost. Run: build/bin/core_bench
// [--benchmark_format=json]
//
// Each benchmark also reports `allocs_per_iter` (counted operator new calls per iteration)
// and `asio_allocs_per_iter` (aligned_alloc calls: Asio's frame and handler memory when its
// per-thread cache misses).
#include <benchmark/benchmark.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <mutex>

#include "cutoff/core/cancel.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/mutex.hpp"
#include "cutoff/core/semaphore.hpp"
#include "tests/support/allocation_counter.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

class AllocationCounter {
 public:
  explicit AllocationCounter(benchmark::State& state)
      : state_(state),
        start_(cutoff::test_support::allocations_total()),
        aligned_start_(cutoff::test_support::aligned_allocations_total()) {}
  ~AllocationCounter() {
    const auto n = static_cast<double>(cutoff::test_support::allocations_total() - start_);
    const auto a = static_cast<double>(cutoff::test_support::aligned_allocations_total() - aligned_start_);
    const auto iterations = static_cast<double>(state_.iterations());
    state_.counters["allocs_per_iter"] = benchmark::Counter(iterations > 0 ? n / iterations : 0);
    state_.counters["asio_allocs_per_iter"] = benchmark::Counter(iterations > 0 ? a / iterations : 0);
  }

 private:
  benchmark::State& state_;
  long start_;
  long aligned_start_;
};

// Runs `body(state)`, a coroutine holding the benchmark loop, on a fresh io_context.
template <typename Body>
void RunOnIoContext(Body body) {
  asio::io_context io;
  asio::co_spawn(io, body(), asio::detached);
  io.run();
}

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

// ---- Waits (mutex.hpp, semaphore.hpp) against std::mutex, uncontended ----

// glibc drops the lock prefix of std::mutex while a process has a single thread, which no
// service has: start the deadline timer's thread first, as any bound context does.
void MakeProcessMultiThreaded() { static const auto ctx = cutoff::Context::background().with_timeout(24h); }

void BM_StdMutexLockUnlock(benchmark::State& state) {
  MakeProcessMultiThreaded();
  std::mutex mu;
  AllocationCounter allocs(state);
  for (auto _ : state) {
    std::lock_guard lock(mu);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_StdMutexLockUnlock);

// What any `co_await` of a coroutine costs here: a trivial awaitable<int> called and resumed.
asio::awaitable<int> Trivial(int v) { co_return v + 1; }
void BM_CoAwaitTrivialCoroutine(benchmark::State& state) {
  MakeProcessMultiThreaded();
  RunOnIoContext([&]() -> asio::awaitable<void> {
    int v = 0;
    for (int i = 0; i < 100; ++i) v = co_await Trivial(v);  // warms Asio's frame cache
    AllocationCounter allocs(state);
    for (auto _ : state) {
      v = co_await Trivial(v);
      benchmark::DoNotOptimize(v);
    }
  });
}
BENCHMARK(BM_CoAwaitTrivialCoroutine);

void BM_MutexTryLockUnlock(benchmark::State& state) {
  MakeProcessMultiThreaded();
  cutoff::Mutex mu;
  AllocationCounter allocs(state);
  for (auto _ : state) {
    cutoff::Mutex::Guard g = mu.try_lock();
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(BM_MutexTryLockUnlock);

// `co_await mu.lock(ctx)` and the guard's unlock, inside a coroutine on an io_context.
void MutexLockUnlock(benchmark::State& state, const cutoff::Context& ctx) {
  MakeProcessMultiThreaded();
  cutoff::Mutex mu;
  RunOnIoContext([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 100; ++i) {
      cutoff::Mutex::Guard g = co_await mu.lock(ctx);
    }
    AllocationCounter allocs(state);
    for (auto _ : state) {
      cutoff::Mutex::Guard g = co_await mu.lock(ctx);
      benchmark::DoNotOptimize(g);
    }
  });
}
void BM_MutexLockUnlock(benchmark::State& state) { MutexLockUnlock(state, cutoff::Context()); }
BENCHMARK(BM_MutexLockUnlock);
void BM_MutexLockUnlockBound(benchmark::State& state) {
  MutexLockUnlock(state, cutoff::Context::background().with_timeout(1h));
}
BENCHMARK(BM_MutexLockUnlockBound);

void BM_SemaphoreTryAcquireRelease(benchmark::State& state) {
  MakeProcessMultiThreaded();
  cutoff::Semaphore sem(4);
  AllocationCounter allocs(state);
  for (auto _ : state) {
    cutoff::Semaphore::Permit p = sem.try_acquire();
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_SemaphoreTryAcquireRelease);

void BM_SemaphoreAcquireRelease(benchmark::State& state) {
  cutoff::Semaphore sem(4);
  const auto ctx = cutoff::Context::background().with_timeout(1h);
  RunOnIoContext([&]() -> asio::awaitable<void> {
    for (int i = 0; i < 100; ++i) {
      cutoff::Semaphore::Permit p = co_await sem.acquire(ctx);
    }
    AllocationCounter allocs(state);
    for (auto _ : state) {
      cutoff::Semaphore::Permit p = co_await sem.acquire(ctx);
      benchmark::DoNotOptimize(p);
    }
  });
}
BENCHMARK(BM_SemaphoreAcquireRelease);

// Contended, for scale: two coroutines on one thread take turns, each holding the lock
// across a yield so that the other always queues. One iteration is two hand-overs, one each
// way (queue, grant, posted wake, resume), and two yields.
void BM_MutexHandOver(benchmark::State& state) {
  cutoff::Mutex mu;
  const auto ctx = cutoff::Context::background().with_timeout(1h);
  asio::io_context io;
  bool done = false;
  auto yield = [&]() { return asio::post(io.get_executor(), asio::use_awaitable); };
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        while (!done) {
          cutoff::Mutex::Guard g = co_await mu.lock(ctx);
          co_await yield();
        }
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await yield();  // the partner takes the lock first
        {
          AllocationCounter allocs(state);
          for (auto _ : state) {
            cutoff::Mutex::Guard g = co_await mu.lock(ctx);
            co_await yield();
          }
        }
        done = true;
      },
      asio::detached);
  io.run();
  state.SetItemsProcessed(state.iterations() * 2);  // both sides hand over once per iteration
}
BENCHMARK(BM_MutexHandOver);

}  // namespace

BENCHMARK_MAIN();
