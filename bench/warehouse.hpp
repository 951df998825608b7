// The warehouse benchmark's schema, data and operation (8,003 fields), shared by graphql_bench
// and http_bench_server so both measure the same work.
//
//   auto schema = cutoff::bench::BuildWarehouseSchema(/*async=*/false);
//   auto parsed = cutoff::graphql::parse(cutoff::bench::kWarehouseQuery);
#ifndef CUTOFF_BENCH_WAREHOUSE_HPP_
#define CUTOFF_BENCH_WAREHOUSE_HPP_

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cutoff/graphql/schema.hpp"

namespace cutoff::bench {

namespace warehouse_detail {
namespace asio = boost::asio;
namespace gql = cutoff::graphql;
using gql::Data;
using gql::FieldContext;
inline constexpr const char* kSchema = R"(
  type Query { warehouse(id: ID!): Warehouse }
  type Warehouse { id: ID! name: String! bins(first: Int!): [Bin!]! }
  type Bin { id: ID! sku: String! qty: Int! location: String stock: Stock }
  type Stock { onHand: Int! reserved: Int! valuation: Float }
)";
inline constexpr const char* kQuery =
    R"({ warehouse(id: "w1") { id name bins(first: 1000) { id sku qty location stock { onHand reserved valuation } } } })";
inline constexpr int kFieldsPerOperation = 8003;

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

// The largest list the benchmarks ask for (the growth benchmark's); the warehouse operation
// asks for the first 1,000 bins.
inline constexpr int kMaxBins = 100'000;

inline const Warehouse& WarehouseData() {
  static const Warehouse w = [] {
    Warehouse built{"w1", "Main warehouse", {}};
    built.bins.reserve(kMaxBins);
    for (int i = 0; i < kMaxBins; ++i)
      built.bins.push_back(Bin{"b" + std::to_string(i), "SKU-" + std::to_string(i), "A" + std::to_string(i % 40), i,
                           Stock{i, i >> 1, i * 1.5}});
    return built;
  }();
  return w;
}

inline std::unique_ptr<gql::Schema> BuildSchema(bool async) {
  auto built = gql::Schema::from_sdl(kSchema);
  auto& s = *built.schema;
  s.resolve("Query", "warehouse", [](FieldContext&) { return Data::object(&WarehouseData()); });
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

// Synchronous, with the plain fields read as data members (Schema::member) rather than by
// resolvers: what graphql-jit's benchmark does with plain properties.
inline std::unique_ptr<gql::Schema> BuildSchemaWithMembers() {
  auto schema = BuildSchema(false);
  auto& s = *schema;
  s.member<&Warehouse::id>("Warehouse", "id");
  s.member<&Warehouse::name>("Warehouse", "name");
  s.member<&Bin::id>("Bin", "id");
  s.member<&Bin::sku>("Bin", "sku");
  s.member<&Bin::qty>("Bin", "qty");
  s.member<&Bin::location>("Bin", "location");
  s.member<&Bin::stock>("Bin", "stock");
  s.member<&Stock::on_hand>("Stock", "onHand");
  s.member<&Stock::reserved>("Stock", "reserved");
  s.member<&Stock::valuation>("Stock", "valuation");
  return schema;
}

// Synchronous, with every field but the list read by a plain function of its parent
// (Schema::member<&F>): resolvers called directly rather than through std::function and Data,
// what a JavaScript resolver `(bin) => bin.qty` is.
inline const std::string& WarehouseId(const Warehouse& w) { return w.id; }
inline const std::string& WarehouseName(const Warehouse& w) { return w.name; }
inline const std::string& BinId(const Bin& b) { return b.id; }
inline const std::string& BinSku(const Bin& b) { return b.sku; }
inline int BinQty(const Bin& b) { return b.qty; }
inline const std::string& BinLocation(const Bin& b) { return b.location; }
inline const Stock* BinStock(const Bin& b) { return &b.stock; }
inline int StockOnHand(const Stock& s) { return s.on_hand; }
inline int StockReserved(const Stock& s) { return s.reserved; }
inline double StockValuation(const Stock& s) { return s.valuation; }

inline std::unique_ptr<gql::Schema> BuildSchemaWithFunctions() {
  auto schema = BuildSchema(false);
  auto& s = *schema;
  s.member<&WarehouseId>("Warehouse", "id");
  s.member<&WarehouseName>("Warehouse", "name");
  s.member<&BinId>("Bin", "id");
  s.member<&BinSku>("Bin", "sku");
  s.member<&BinQty>("Bin", "qty");
  s.member<&BinLocation>("Bin", "location");
  s.member<&BinStock>("Bin", "stock");
  s.member<&StockOnHand>("Stock", "onHand");
  s.member<&StockReserved>("Stock", "reserved");
  s.member<&StockValuation>("Stock", "valuation");
  return schema;
}

}  // namespace warehouse_detail

inline constexpr const char* kWarehouseSchema = warehouse_detail::kSchema;
inline constexpr const char* kWarehouseQuery = warehouse_detail::kQuery;
inline constexpr int kWarehouseFields = warehouse_detail::kFieldsPerOperation;
inline constexpr int kWarehouseMaxBins = warehouse_detail::kMaxBins;
// The warehouse operation over the first `bins` bins (at most kWarehouseMaxBins), and its
// field count: 3 on the warehouse, 8 per bin.
inline std::string WarehouseQuery(int bins) {
  return "{ warehouse(id: \"w1\") { id name bins(first: " + std::to_string(bins) +
         ") { id sku qty location stock { onHand reserved valuation } } } }";
}
inline constexpr std::int64_t WarehouseFields(int bins) { return 3 + 8 * static_cast<std::int64_t>(bins); }
// Synchronous resolvers, or asynchronous ones for Bin.stock and Stock.valuation.
inline std::unique_ptr<graphql::Schema> BuildWarehouseSchema(bool async) { return warehouse_detail::BuildSchema(async); }
// Synchronous, the plain fields as data members (no resolver calls).
inline std::unique_ptr<graphql::Schema> BuildWarehouseSchemaWithMembers() {
  return warehouse_detail::BuildSchemaWithMembers();
}
// Synchronous, every field but the list a plain function of its parent (no std::function, no
// Data for a leaf).
inline std::unique_ptr<graphql::Schema> BuildWarehouseSchemaWithFunctions() {
  return warehouse_detail::BuildSchemaWithFunctions();
}

}  // namespace cutoff::bench

#endif  // CUTOFF_BENCH_WAREHOUSE_HPP_
