// Test support for sagas: one three-step saga over a Backend's tables, shared by the saga tests
// and the process that the crash tests kill.
//
// "test.fulfil" runs reserve → ship → confirm, all local. Each step inserts its row into the
// items table (1, 2, 3) and each compensation deletes it and appends the step's name to the
// undo table, so a test reads what happened and in which order it was undone. The knobs make
// `ship` run until it is stopped, or fail after its insert.
#ifndef CUTOFF_TESTS_SUPPORT_SAGA_FIXTURE_HPP_
#define CUTOFF_TESTS_SUPPORT_SAGA_FIXTURE_HPP_

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cutoff/effects/saga.hpp"
#include "tests/support/effects_backend.hpp"

namespace cutoff::test_support {

class SagaFixture {
 public:
  explicit SagaFixture(Backend& db) : db_(db) {}

  std::atomic<bool> ship_runs_until_stopped{false};
  std::atomic<bool> ship_fails{false};  // invalid_argument after its insert (rolled back)
  std::atomic<bool> in_ship{false};     // while ship's body runs (fault filters read it)
  std::function<void()> after_ship_insert;  // runs inside ship's transaction, after its insert

  std::string undo_table() const { return db_.prefix() + "_undo"; }

  effects::SagaDefinition definition(std::chrono::milliseconds budget = std::chrono::seconds(30)) {
    namespace asio = boost::asio;
    effects::SagaDefinition def;
    def.name = "test.fulfil";
    def.budget = budget;
    auto insert = [this](int id) {
      return [this, id](effects::Effect& fx, const effects::SagaCall& call) -> asio::awaitable<std::string> {
        std::vector<sql::Value> p{id, call.step};
        co_await fx.execute("insert into " + db_.items() + " (id, note) values ($1, $2)", p);
        co_return "{\"" + call.step + "\":" + std::to_string(id) + "}";
      };
    };
    auto undo = [this](int id) {
      return [this, id](effects::Effect& fx, const effects::SagaCall& call) -> asio::awaitable<std::string> {
        std::vector<sql::Value> p{id};
        co_await fx.execute("delete from " + db_.items() + " where id = $1", p);
        std::vector<sql::Value> q{call.step};
        co_await fx.execute("insert into " + undo_table() + " (n, step) select count(*) + 1, $1 from " + undo_table(),
                            q);
        co_return std::string("{}");
      };
    };
    def.steps.push_back(effects::SagaStep::local_step("reserve", insert(1), undo(1)));
    auto ship = [this](effects::Effect& fx, const effects::SagaCall& call) -> asio::awaitable<std::string> {
      in_ship = true;
      std::vector<sql::Value> p{2, call.step};
      co_await fx.execute("insert into " + db_.items() + " (id, note) values ($1, $2)", p);
      if (after_ship_insert) after_ship_insert();
      if (ship_runs_until_stopped) co_await fx.execute(db_.endless_statement());
      if (ship_fails) throw Error(ErrorCode::invalid_argument, "the carrier refused the parcel");
      co_return std::string("{\"ship\":2}");
    };
    def.steps.push_back(effects::SagaStep::local_step("ship", ship, undo(2)));
    def.steps.push_back(effects::SagaStep::local_step("confirm", insert(3), undo(3)));
    return def;
  }

  boost::asio::awaitable<void> create_tables() {
    co_await db_.create_items();
    sql::Pool::Lease conn = co_await db_.pool().acquire(Context());
    co_await conn->execute(Context(), "create table " + undo_table() + " (n integer primary key, step text)", {});
  }

  // The items that exist, by id.
  boost::asio::awaitable<std::vector<int>> items() {
    sql::Pool::Lease conn = co_await db_.pool().acquire(Context());
    sql::Result r = co_await conn->execute(Context(), "select id from " + db_.items() + " order by id", {});
    std::vector<int> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(r[i].get<int>(0));
    co_return out;
  }

  // The steps undone, in the order they were undone.
  boost::asio::awaitable<std::vector<std::string>> undone() {
    sql::Pool::Lease conn = co_await db_.pool().acquire(Context());
    sql::Result r = co_await conn->execute(Context(), "select step from " + undo_table() + " order by n", {});
    std::vector<std::string> out;
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(r[i].get<std::string>(0));
    co_return out;
  }

 private:
  Backend& db_;
};

}  // namespace cutoff::test_support

#endif  // CUTOFF_TESTS_SUPPORT_SAGA_FIXTURE_HPP_
