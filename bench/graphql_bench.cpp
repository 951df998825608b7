// graphql_bench: resolved fields per second on the warehouse operation (8,003 fields), with
// synchronous resolvers, asynchronous ones, and synchronous ones under a live deadline; and
// with the fields read as data members or by plain functions of the parent (Schema::member). Each
// iteration executes the operation and serializes the response to JSON text. BM_Growth runs
// the same operation over 100 to 100,000 bins: fields per second should stay flat, and the
// heap an operation holds at its peak (`peak_heap_bytes`, counted by this binary's operator
// new) should grow in proportion to the response (`heap_per_response_byte` steady).
// BM_Parse* measure the parser alone: the warehouse operation, and a large document with
// every kind of token.
//
//   build/bin/graphql_bench --benchmark_min_time=2
//   build/bin/graphql_bench --benchmark_filter=BM_Parse --benchmark_repetitions=5
//   build/bin/graphql_bench --benchmark_filter=BM_Growth
//   CUTOFF_BENCH_DEFAULT_MALLOC=1 build/bin/graphql_bench   # glibc's default trimming (see main)
//   CUTOFF_BENCH_NO_YIELD=1 valgrind --tool=callgrind build/bin/graphql_bench ...
//       # under callgrind an operation runs some 50 times slower and would yield every 2 ms
//       # (ExecutionOptions::yield_after), which a native run of the warehouse operation never
//       # does: this keeps the instruction counts those of a native run
//   bench/graphql-compare   # side by side with graphql-js 16 and graphql-jit on the same machine
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "warehouse.hpp"

// The heap in use while `g_counting` is set, and its peak: counted by the operator new and
// delete below (usable sizes, as malloc hands them out). Off, they cost one relaxed load.
namespace heap {
std::atomic<bool> counting{false};
std::atomic<std::int64_t> live{0};
std::atomic<std::int64_t> peak{0};

void Allocated(void* p) {
  const auto n = static_cast<std::int64_t>(malloc_usable_size(p));
  const std::int64_t now = live.fetch_add(n, std::memory_order_relaxed) + n;
  std::int64_t seen = peak.load(std::memory_order_relaxed);
  while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
}
}  // namespace heap

void* operator new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (heap::counting.load(std::memory_order_relaxed)) heap::Allocated(p);
  return p;
}
void operator delete(void* p) noexcept {
  if (p != nullptr && heap::counting.load(std::memory_order_relaxed))
    heap::live.fetch_sub(static_cast<std::int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace {

namespace asio = boost::asio;
namespace gql = cutoff::graphql;

using cutoff::bench::kWarehouseQuery;
constexpr int kFieldsPerOperation = cutoff::bench::kWarehouseFields;

void Run(benchmark::State& state, std::unique_ptr<gql::Schema> schema, bool deadline,
         const std::string& query = kWarehouseQuery, std::int64_t fields = kFieldsPerOperation) {
  auto parsed = gql::parse(query);
  gql::Request req;
  req.document = parsed.document.get();
  asio::io_context io;
  std::size_t bytes = 0;
  gql::ExecutionOptions options;
  if (std::getenv("CUTOFF_BENCH_NO_YIELD")) options.yield_after = cutoff::Duration::zero();
  auto once = [&]() {
    cutoff::Context ctx = deadline ? cutoff::Context().with_timeout(std::chrono::seconds(30)) : cutoff::Context();
    auto future = asio::co_spawn(io, gql::execute(*schema, req, ctx, options), asio::use_future);
    io.restart();
    io.run();
    gql::Response r = future.get();
    if (!r.errors.empty()) state.SkipWithError(r.errors[0].message.c_str());
    std::string json = std::move(r).to_json();  // as the HTTP transport does
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  };
  const int warm = static_cast<int>(std::clamp<std::int64_t>(160'000 / fields, 1, 20));
  for (int i = 0; i < warm; ++i) once();  // a warm heap, as in a running server
  for (auto _ : state) once();
  state.SetItemsProcessed(state.iterations() * fields);
  state.counters["response_bytes"] = static_cast<double>(bytes);

  // One more operation, its heap counted from before the execution to after the text.
  heap::live = 0;
  heap::peak = 0;
  heap::counting = true;
  once();
  heap::counting = false;
  state.counters["peak_heap_bytes"] = static_cast<double>(heap::peak.load());
  state.counters["heap_per_response_byte"] = static_cast<double>(heap::peak.load()) / static_cast<double>(bytes);
}

using cutoff::bench::BuildWarehouseSchema;
void BM_WarehouseSync(benchmark::State& state) { Run(state, BuildWarehouseSchema(false), false); }
void BM_WarehouseAsync(benchmark::State& state) { Run(state, BuildWarehouseSchema(true), false); }
void BM_WarehouseSyncDeadline(benchmark::State& state) { Run(state, BuildWarehouseSchema(false), true); }
// The plain fields as data members (Schema::member): no resolver is called for them.
void BM_WarehouseMembers(benchmark::State& state) {
  Run(state, cutoff::bench::BuildWarehouseSchemaWithMembers(), false);
}
void BM_WarehouseMembersDeadline(benchmark::State& state) {
  Run(state, cutoff::bench::BuildWarehouseSchemaWithMembers(), true);
}
// The fields as plain functions of their parent (Schema::member<&F>), called directly.
void BM_WarehouseFunctions(benchmark::State& state) {
  Run(state, cutoff::bench::BuildWarehouseSchemaWithFunctions(), false);
}

// Wall time, as the JavaScript side is timed (bench/graphql_js_bench.mjs): on a loaded machine
// CPU time would flatter this side.
BENCHMARK(BM_WarehouseSync)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseAsync)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseSyncDeadline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseMembers)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseMembersDeadline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseFunctions)->Unit(benchmark::kMillisecond)->UseRealTime();

// The warehouse operation over state.range(0) bins, synchronous resolvers.
void BM_Growth(benchmark::State& state) {
  const int bins = static_cast<int>(state.range(0));
  Run(state, BuildWarehouseSchema(false), false, cutoff::bench::WarehouseQuery(bins),
      cutoff::bench::WarehouseFields(bins));
}
BENCHMARK(BM_Growth)
    ->Arg(100)
    ->Arg(1'000)
    ->Arg(10'000)
    ->Arg(cutoff::bench::kWarehouseMaxBins)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// About 180 KB: operations with variables and directives, aliased fields with arguments of
// every value kind (escaped and block strings among them), fragments, and comments.
std::string LargeDocument() {
  std::string doc = "# a large document\n";
  for (int i = 0; i < 400; ++i) {
    const std::string n = std::to_string(i);
    doc += "query Q" + n + "($id: ID!, $first: Int = 10, $tags: [String!] = [\"a\", \"b\"]) @cached(ttl: 30) {\n";
    doc += "  w" + n + ": warehouse(id: $id) {\n    id name\n";
    doc += "    bins(first: $first, after: \"cursor-" + n + "\\u00e9\\n\", order: {by: QTY, desc: true}, " +
           "ratio: -1.5e3, tags: $tags) @include(if: true) {\n";
    doc += "      ...BinFields" + n + "\n";
    doc += "      ... on Bin { note(text: \"\"\"\n        a block\n        string\n      \"\"\") }\n";
    doc += "    }\n  }\n}\n";
    doc += "fragment BinFields" + n + " on Bin { id sku qty location stock { onHand reserved valuation } }  # done\n";
  }
  return doc;
}

void ParseBench(benchmark::State& state, const std::string& document) {
  for (auto _ : state) {
    gql::ParseResult r = gql::parse(document);
    if (!r.ok()) state.SkipWithError(r.error->message.c_str());
    benchmark::DoNotOptimize(r.document.get());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(document.size()));
}

void BM_ParseWarehouse(benchmark::State& state) { ParseBench(state, kWarehouseQuery); }
void BM_ParseLarge(benchmark::State& state) { ParseBench(state, LargeDocument()); }

BENCHMARK(BM_ParseWarehouse)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ParseLarge)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  // A steady heap, as a long-running server has (or any process with jemalloc or tcmalloc):
  // with its defaults, glibc hands the pages of a freed ~110 KB response back to the kernel
  // and faults them in again for the next operation, at times and not at others, which makes
  // repetitions bimodal (0.36 or 0.6 ms). CUTOFF_BENCH_DEFAULT_MALLOC=1 keeps the defaults.
  const char* default_malloc = std::getenv("CUTOFF_BENCH_DEFAULT_MALLOC");
  if (!default_malloc || std::string_view(default_malloc) != "1") {
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 16 << 20);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
