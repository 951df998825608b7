// graphql_bench: resolved fields per second on the warehouse operation (8,003 fields), with
// synchronous resolvers, asynchronous ones, and synchronous ones under a live deadline. Each
// iteration executes the operation and serializes the response to JSON text.
//
//   build/bin/graphql_bench --benchmark_min_time=2
//   CUTOFF_BENCH_DEFAULT_MALLOC=1 build/bin/graphql_bench   # glibc's default trimming (see main)
//   bench/graphql-compare   # side by side with graphql-js 16 on the same machine
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "warehouse.hpp"

namespace {

namespace asio = boost::asio;
namespace gql = cutoff::graphql;

using cutoff::bench::kWarehouseQuery;
constexpr int kFieldsPerOperation = cutoff::bench::kWarehouseFields;

void Run(benchmark::State& state, bool async, bool deadline) {
  auto schema = cutoff::bench::BuildWarehouseSchema(async);
  auto parsed = gql::parse(kWarehouseQuery);
  gql::Request req;
  req.document = parsed.document.get();
  asio::io_context io;
  std::size_t bytes = 0;
  auto once = [&]() {
    cutoff::Context ctx = deadline ? cutoff::Context().with_timeout(std::chrono::seconds(30)) : cutoff::Context();
    auto future = asio::co_spawn(io, gql::execute(*schema, req, ctx), asio::use_future);
    io.restart();
    io.run();
    gql::Response r = future.get();
    if (!r.errors.empty()) state.SkipWithError(r.errors[0].message.c_str());
    std::string json = std::move(r).to_json();  // as the HTTP transport does
    bytes = json.size();
    benchmark::DoNotOptimize(json.data());
  };
  for (int i = 0; i < 20; ++i) once();  // a warm heap, as in a running server
  for (auto _ : state) once();
  state.SetItemsProcessed(state.iterations() * kFieldsPerOperation);
  state.counters["response_bytes"] = static_cast<double>(bytes);
}

void BM_WarehouseSync(benchmark::State& state) { Run(state, false, false); }
void BM_WarehouseAsync(benchmark::State& state) { Run(state, true, false); }
void BM_WarehouseSyncDeadline(benchmark::State& state) { Run(state, false, true); }

BENCHMARK(BM_WarehouseSync)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WarehouseAsync)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WarehouseSyncDeadline)->Unit(benchmark::kMillisecond);

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
