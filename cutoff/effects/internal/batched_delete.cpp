#include "cutoff/effects/internal/batched_delete.hpp"

#include <algorithm>

namespace cutoff::effects::internal {

boost::asio::awaitable<std::size_t> DeleteInBatches(sql::Connection& conn, const Context& ctx, const std::string& table,
                                                    std::string_view key, std::string_view condition,
                                                    std::span<const sql::Value> params, std::size_t batch) {
  batch = std::max<std::size_t>(batch, 1);  // a batch of none would never end
  std::string statement = "delete from " + table + " where (";
  statement.append(key).append(") in (select ").append(key).append(" from ").append(table).append(" where ");
  statement.append(condition).append(" limit ").append(std::to_string(batch)).append(") and (");
  statement.append(condition).append(") returning 1");
  std::size_t total = 0;
  for (;;) {
    sql::Result r = co_await conn.execute(ctx, statement, params);
    total += r.size();
    if (r.size() < batch) co_return total;
  }
}

}  // namespace cutoff::effects::internal
