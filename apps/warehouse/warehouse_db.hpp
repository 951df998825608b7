// The warehouse database: its tables, generated data and the statements the services run.
//
//   WarehouseDataOptions data;               // 8 warehouses x 500 bins x 25 movements
//   co_await create_warehouse_data(conn, ctx, data);  // no-op when already there
//   std::int64_t steps = co_await calibrate_valuation(conn, ctx, 800ms);
//   auto v = co_await stock_valuation(conn, ctx, warehouse_id, steps);
//
// The same SQL runs on SQLite and PostgreSQL. The valuation is the expensive statement: it
// sums every movement of a warehouse and runs a risk simulation whose length is calibrated at
// start, so the statement really keeps the database busy for a known time on this machine (warehouse 1
// takes that long, smaller warehouses a share of it).
#ifndef CUTOFF_APPS_WAREHOUSE_WAREHOUSE_DB_HPP_
#define CUTOFF_APPS_WAREHOUSE_WAREHOUSE_DB_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/connection.hpp"

namespace cutoff::warehouse {

struct WarehouseDataOptions {
  int warehouses = 8;
  int bins_per_warehouse = 500;
  int movements_per_bin = 25;
};

// Creates the tables and fills them when they are empty. Deterministic: the same options give
// the same rows.
boost::asio::awaitable<void> create_warehouse_data(sql::Connection& conn, const Context& ctx,
                                                   WarehouseDataOptions options);

// How many simulation steps make the valuation statement take about `target` here.
boost::asio::awaitable<std::int64_t> calibrate_valuation(sql::Connection& conn, const Context& ctx,
                                                         std::chrono::milliseconds target);

// Warehouses differ in size: the share of the full simulation a warehouse's valuation runs,
// in (0, 1]. Warehouse 1 is the largest (1.0), the one the calibration times.
double valuation_weight(std::int64_t warehouse_id) noexcept;

// {"warehouse":1,"value":123.4,"steps":N}, running steps x valuation_weight(warehouse_id).
boost::asio::awaitable<std::string> stock_valuation(sql::Connection& conn, const Context& ctx,
                                                    std::int64_t warehouse_id, std::int64_t steps);
// [{"id":1,"name":"..","city":".."},...]
boost::asio::awaitable<std::string> list_warehouses(sql::Connection& conn, const Context& ctx);
// [{"id":..,"warehouse_id":..,"code":..,"sku":..,"qty":..,"reserved":..},...]
boost::asio::awaitable<std::string> list_bins(sql::Connection& conn, const Context& ctx, std::int64_t warehouse_id,
                                              std::int64_t first);
// {"id":..,...}, or "" when there is no such bin.
boost::asio::awaitable<std::string> get_bin(sql::Connection& conn, const Context& ctx, std::int64_t bin_id);

}  // namespace cutoff::warehouse

#endif  // CUTOFF_APPS_WAREHOUSE_WAREHOUSE_DB_HPP_
