// graphql_bench: resolved fields per second on the warehouse operation (8,003 fields), with
// synchronous resolvers, asynchronous ones, and synchronous ones under a live deadline. Each
// iteration executes the operation and serializes the response to JSON text.
//
//   build/bin/graphql_bench --benchmark_min_time=2
//   bench/graphql-compare   # side by side with graphql-js 16 on the same machine
#include <benchmark/benchmark.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <string>
#include <vector>

#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"

namespace {

namespace asio = boost::asio;
namespace gql = cutoff::graphql;
using gql::Data;
using gql::FieldContext;

constexpr const char* kSchema = R"(
  type Query { warehouse(id: ID!): Warehouse }
  type Warehouse { id: ID! name: String! bins(first: Int!): [Bin!]! }
  type Bin { id: ID! sku: String! qty: Int! location: String stock: Stock }
  type Stock { onHand: Int! reserved: Int! valuation: Float }
)";
constexpr const char* kQuery =
    R"({ warehouse(id: "w1") { id name bins(first: 1000) { id sku qty location stock { onHand reserved valuation } } } })";
constexpr int kFieldsPerOperation = 8003;

struct Stock {
  int on_hand, reserved;
  double valuation;
};
struct Bin {
  std::string id, sku, location;
  int qty;
  Stock stock;
};
struct Warehouse {
  std::string id, name;
  std::vector<Bin> bins;
};

const Warehouse& Data1000() {
  static const Warehouse w = [] {
    Warehouse built{"w1", "Main warehouse", {}};
    for (int i = 0; i < 1000; ++i)
      built.bins.push_back(Bin{"b" + std::to_string(i), "SKU-" + std::to_string(i), "A" + std::to_string(i % 40), i,
                           Stock{i, i >> 1, i * 1.5}});
    return built;
  }();
  return w;
}

std::unique_ptr<gql::Schema> BuildSchema(bool async) {
  auto built = gql::Schema::from_sdl(kSchema);
  auto& s = *built.schema;
  s.resolve("Query", "warehouse", [](FieldContext&) { return Data::object(&Data1000()); });
  s.resolve("Warehouse", "id", [](FieldContext& f) { return Data::borrow(f.parent.as<Warehouse>()->id); });
  s.resolve("Warehouse", "name", [](FieldContext& f) { return Data::borrow(f.parent.as<Warehouse>()->name); });
  s.resolve("Warehouse", "bins", [](FieldContext& f) {
    const auto& bins = f.parent.as<Warehouse>()->bins;
    const auto n = std::min<std::size_t>(bins.size(), static_cast<std::size_t>(f.arg("first")->as_int64()));
    Data::List out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(Data::object(&bins[i]));
    return Data::list(std::move(out));
  });
  s.resolve("Bin", "id", [](FieldContext& f) { return Data::borrow(f.parent.as<Bin>()->id); });
  s.resolve("Bin", "sku", [](FieldContext& f) { return Data::borrow(f.parent.as<Bin>()->sku); });
  s.resolve("Bin", "qty", [](FieldContext& f) { return Data::from(f.parent.as<Bin>()->qty); });
  s.resolve("Bin", "location", [](FieldContext& f) { return Data::borrow(f.parent.as<Bin>()->location); });
  s.resolve("Stock", "onHand", [](FieldContext& f) { return Data::from(f.parent.as<Stock>()->on_hand); });
  s.resolve("Stock", "reserved", [](FieldContext& f) { return Data::from(f.parent.as<Stock>()->reserved); });
  if (async) {
    s.resolve_async("Bin", "stock", [](FieldContext& f) -> asio::awaitable<Data> {
      co_return Data::object(&f.parent.as<Bin>()->stock);
    });
    s.resolve_async("Stock", "valuation", [](FieldContext& f) -> asio::awaitable<Data> {
      co_return Data::from(f.parent.as<Stock>()->valuation);
    });
  } else {
    s.resolve("Bin", "stock", [](FieldContext& f) { return Data::object(&f.parent.as<Bin>()->stock); });
    s.resolve("Stock", "valuation", [](FieldContext& f) { return Data::from(f.parent.as<Stock>()->valuation); });
  }
  return std::move(built.schema);
}

void Run(benchmark::State& state, bool async, bool deadline) {
  auto schema = BuildSchema(async);
  auto parsed = gql::parse(kQuery);
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
    std::string json = r.to_json();
    if (!r.errors.empty()) state.SkipWithError(r.errors[0].message.c_str());
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

BENCHMARK_MAIN();
