// graphql_bench: resolved fields per second on the warehouse operation (8,003 fields), with
// synchronous resolvers, asynchronous ones, and synchronous ones under a live deadline. Each
// iteration executes the operation and serializes the response to JSON text. BM_Parse* measure
// the parser alone: the warehouse operation, and a large document with every kind of token.
//
//   build/bin/graphql_bench --benchmark_min_time=2
//   build/bin/graphql_bench --benchmark_filter=BM_Parse --benchmark_repetitions=5
//   CUTOFF_BENCH_DEFAULT_MALLOC=1 build/bin/graphql_bench   # glibc's default trimming (see main)
//   bench/graphql-compare   # side by side with graphql-js 16 and graphql-jit on the same machine
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdint>
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

// Wall time, as the JavaScript side is timed (bench/graphql_js_bench.mjs): on a loaded machine
// CPU time would flatter this side.
BENCHMARK(BM_WarehouseSync)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseAsync)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_WarehouseSyncDeadline)->Unit(benchmark::kMillisecond)->UseRealTime();

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
