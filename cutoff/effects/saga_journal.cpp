#include "cutoff/effects/saga_journal.hpp"

#include "cutoff/effects/internal/periodic.hpp"
#include "cutoff/sql/transaction.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>

#include <ctime>
#include <cstdio>

// g++ 12 reports Asio's coroutine frame delete as mismatched in large coroutines, as in
// effects.cpp (which says why this is the false positive and not the braced-aggregate miscompile).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace cutoff::effects {

namespace asio = boost::asio;
using sql::Value;

namespace {

constexpr std::string_view kSagaStates[] = {"running",     "completed",      "compensating",
                                            "compensated", "step_ambiguous", "compensation_failed"};
constexpr std::string_view kStepStates[] = {"sent",        "done",    "failed", "ambiguous",
                                            "compensated", "compensation_failed"};

SagaRecord ReadSaga(const sql::Row& row) {
  SagaRecord s;
  s.id = row.get<std::string>("id");
  s.name = row.get<std::string>("name");
  s.state = parse_saga_state(row.get<std::string>("state")).value_or(SagaState::running);
  s.input = row.get<std::string>("input");
  s.step_count = row.get<int>("step_count");
  s.next_step = row.get<int>("next_step");
  s.failed_step = row.get<std::optional<std::string>>("failed_step").value_or("");
  s.error_code = row.get<std::optional<std::string>>("error_code").value_or("");
  s.error_message = row.get<std::optional<std::string>>("error_message").value_or("");
  s.result = row.get<std::optional<std::string>>("result").value_or("");
  s.request_id = row.get<std::optional<std::string>>("request_id").value_or("");
  s.owner_until_ms = row.get<std::int64_t>("owner_until_ms");
  s.created_ms = row.get<std::int64_t>("created_ms");
  s.updated_ms = row.get<std::int64_t>("updated_ms");
  s.version = row.get<std::int64_t>("version");
  return s;
}

constexpr std::string_view kSagaColumns =
    "id, name, state, input, step_count, next_step, failed_step, error_code, error_message, result,"
    " request_id, owner_until_ms, created_ms, updated_ms, version";

std::string Iso(std::int64_t ms) {
  if (ms <= 0) return "";
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[40];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

}  // namespace

std::string_view to_string(SagaState state) noexcept { return kSagaStates[static_cast<int>(state)]; }
std::optional<SagaState> parse_saga_state(std::string_view name) noexcept {
  for (std::size_t i = 0; i < std::size(kSagaStates); ++i)
    if (kSagaStates[i] == name) return static_cast<SagaState>(i);
  return std::nullopt;
}
std::string_view to_string(SagaStepState state) noexcept { return kStepStates[static_cast<int>(state)]; }
std::optional<SagaStepState> parse_saga_step_state(std::string_view name) noexcept {
  for (std::size_t i = 0; i < std::size(kStepStates); ++i)
    if (kStepStates[i] == name) return static_cast<SagaStepState>(i);
  return std::nullopt;
}

bool SagaRecord::interrupted(std::int64_t now_ms) const noexcept {
  return (state == SagaState::running || state == SagaState::compensating) && owner_until_ms < now_ms;
}

SagaJournal::SagaJournal(sql::Pool& pool, std::string table_prefix)
    : pool_(pool), saga_table_(table_prefix + "saga"), step_table_(table_prefix + "saga_step") {}

asio::awaitable<void> SagaJournal::install(const Context& ctx) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  co_await conn->execute(ctx,
                         "create table if not exists " + saga_table_ +
                             " (id text primary key, name text not null, state text not null, input text not null,"
                             " step_count integer not null, next_step integer not null, failed_step text,"
                             " error_code text, error_message text, result text, request_id text,"
                             " owner_token text, owner_until_ms bigint not null, created_ms bigint not null,"
                             " updated_ms bigint not null, version bigint not null default 0)",
                         {});
  co_await conn->execute(ctx,
                         "create index if not exists " + saga_table_ + "_state on " + saga_table_ +
                             " (state, updated_ms)",
                         {});
  co_await conn->execute(ctx,
                         "create table if not exists " + step_table_ +
                             " (saga_id text not null, step_index integer not null, name text not null,"
                             " state text not null, result text, error_code text, error_message text,"
                             " attempts integer not null default 0, updated_ms bigint not null,"
                             " primary key (saga_id, step_index))",
                         {});
}

asio::awaitable<std::vector<SagaRecord>> SagaJournal::list(const Context& ctx, SagaListOptions options) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  std::string sql = "select " + std::string(kSagaColumns) + " from " + saga_table_;
  std::vector<Value> params;
  if (options.state) {
    params.emplace_back(std::string(to_string(*options.state)));
    sql += " where state = $1";
  } else if (options.only_unfinished) {
    sql += " where state not in ('completed', 'compensated')";
  }
  params.emplace_back(static_cast<std::int64_t>(std::clamp<std::size_t>(options.limit, 1, kMaxSagaListLimit)));
  sql += " order by created_ms desc, id limit $" + std::to_string(params.size());
  sql::Result r = co_await conn->execute(ctx, sql, params);
  std::vector<SagaRecord> out;
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back(ReadSaga(r[i]));
  co_return out;
}

asio::awaitable<std::optional<SagaRecord>> SagaJournal::find(const Context& ctx, const std::string& id) {
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  std::vector<Value> p{id};
  sql::Result r = co_await conn->execute(
      ctx, "select " + std::string(kSagaColumns) + " from " + saga_table_ + " where id = $1", p);
  if (r.size() == 0) co_return std::nullopt;
  SagaRecord saga = ReadSaga(r[0]);
  sql::Result steps = co_await conn->execute(ctx,
                                             "select step_index, name, state, result, error_code, error_message,"
                                             " attempts, updated_ms from " +
                                                 step_table_ + " where saga_id = $1 order by step_index",
                                             p);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const sql::Row& row = steps[i];
    SagaStepRecord s;
    s.index = row.get<int>("step_index");
    s.name = row.get<std::string>("name");
    s.state = parse_saga_step_state(row.get<std::string>("state")).value_or(SagaStepState::sent);
    s.result = row.get<std::optional<std::string>>("result").value_or("");
    s.error_code = row.get<std::optional<std::string>>("error_code").value_or("");
    s.error_message = row.get<std::optional<std::string>>("error_message").value_or("");
    s.attempts = row.get<int>("attempts");
    s.updated_ms = row.get<std::int64_t>("updated_ms");
    saga.steps.push_back(std::move(s));
  }
  co_return saga;
}

asio::awaitable<std::size_t> SagaJournal::sweep(const Context& ctx, std::chrono::milliseconds retention,
                                                std::size_t batch) {
  batch = std::max<std::size_t>(batch, 1);  // a batch of none would never end
  const std::int64_t before = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count() -
                              retention.count();
  // A transaction per batch: a sweep cut by its budget keeps the batches it finished. The
  // condition is repeated outside the subquery so a saga written again meanwhile is kept.
  const std::string forgettable = "state in ('completed', 'compensated') and updated_ms < $1";
  const std::string delete_sagas = "delete from " + saga_table_ + " where id in (select id from " + saga_table_ +
                                   " where " + forgettable + " limit " + std::to_string(batch) + ") and " +
                                   forgettable + " returning id";
  sql::Pool::Lease conn = co_await pool_.acquire(ctx);
  std::size_t total = 0;
  for (;;) {
    sql::Transaction tx = co_await sql::Transaction::begin(*conn, ctx, sql::AccessMode::read_write);
    std::vector<Value> p{before};
    sql::Result gone = co_await tx.execute(ctx, delete_sagas, p);
    if (!gone.empty()) {
      std::string steps = "delete from " + step_table_ + " where saga_id in (";
      std::vector<Value> ids;
      ids.reserve(gone.size());
      for (std::size_t i = 0; i < gone.size(); ++i) {
        steps += (i ? ", $" : "$") + std::to_string(i + 1);
        ids.emplace_back(gone[i].get<std::string>(0));
      }
      steps += ")";
      co_await tx.execute(ctx, steps, ids);
    }
    co_await tx.commit(ctx);
    total += gone.size();
    if (gone.size() < batch) co_return total;
  }
}

asio::awaitable<void> SagaJournal::run_sweeper(const Context& ctx, std::chrono::milliseconds interval,
                                               std::chrono::milliseconds retention) {
  co_await internal::run_every(ctx, interval,
                               [this, retention](const Context& round) -> asio::awaitable<void> {
                                 co_await sweep(round, retention);
                               });
}

std::string saga_summary_line(const SagaRecord& saga, std::int64_t now_ms) {
  std::string line = saga.id + "  " + saga.name + "  ";
  line += saga.interrupted(now_ms) ? std::string(to_string(saga.state)) + " (interrupted)"
                                   : std::string(to_string(saga.state));
  line += "  step " + std::to_string(saga.next_step) + "/" + std::to_string(saga.step_count);
  if (!saga.failed_step.empty()) line += "  at " + saga.failed_step;
  if (!saga.error_code.empty()) line += "  " + saga.error_code;
  line += "  " + Iso(saga.updated_ms);
  return line;
}

std::string saga_to_json(const SagaRecord& saga, std::int64_t now_ms) {
  boost::json::object o;
  o["id"] = saga.id;
  o["name"] = saga.name;
  o["state"] = to_string(saga.state);
  o["interrupted"] = saga.interrupted(now_ms);
  o["input"] = saga.input;
  o["step_count"] = saga.step_count;
  o["next_step"] = saga.next_step;
  if (!saga.failed_step.empty()) o["failed_step"] = saga.failed_step;
  if (!saga.error_code.empty()) {
    o["error"] = {{"code", saga.error_code}, {"message", saga.error_message}};
  }
  if (saga.state == SagaState::completed) o["result"] = saga.result;
  if (!saga.request_id.empty()) o["request_id"] = saga.request_id;
  o["created"] = Iso(saga.created_ms);
  o["updated"] = Iso(saga.updated_ms);
  o["owner_until"] = Iso(saga.owner_until_ms);
  boost::json::array steps;
  for (const SagaStepRecord& s : saga.steps) {
    boost::json::object j;
    j["index"] = s.index;
    j["name"] = s.name;
    j["state"] = to_string(s.state);
    if (!s.result.empty()) j["result"] = s.result;
    if (!s.error_code.empty()) j["error"] = {{"code", s.error_code}, {"message", s.error_message}};
    j["attempts"] = s.attempts;
    j["updated"] = Iso(s.updated_ms);
    steps.push_back(std::move(j));
  }
  o["steps"] = std::move(steps);
  return boost::json::serialize(o);
}

}  // namespace cutoff::effects
