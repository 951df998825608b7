#include "cutoff/effects/idempotency.hpp"

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "cutoff/core/error.hpp"
#include "cutoff/effects/internal/batched_delete.hpp"

namespace cutoff::effects::internal {

namespace asio = boost::asio;
using sql::Value;

std::string NewToken() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

std::int64_t NowMs() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

asio::awaitable<void> CreateIdempotencyTable(sql::Connection& conn, const Context& ctx, const std::string& table) {
  co_await conn.execute(ctx,
                        "create table if not exists " + table +
                            " (operation text not null, idem_key text not null, fingerprint text not null,"
                            " state text not null, claim_token text, claimed_until_ms bigint not null,"
                            " response text, created_ms bigint not null, completed_ms bigint,"
                            " primary key (operation, idem_key))",
                        {});
}

asio::awaitable<Claim> ClaimKey(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                const std::string& fingerprint, std::chrono::milliseconds claim_for) {
  // A record can disappear between the insert and the read (released or swept): look again,
  // a bounded number of times.
  for (int round = 0; round < 8; ++round) {
    const std::int64_t now = NowMs();
    std::string token = NewToken();
    // Read first: on SQLite an insert would wait for the writer that holds the claim's
    // transaction open, where a read sees the claim at once (WAL readers never wait).
    std::vector<Value> p{key.operation, key.key};
    sql::Result r = co_await conn.execute(ctx,
                                          "select fingerprint, state, claim_token, claimed_until_ms, response from " +
                                              key.table + " where operation = $1 and idem_key = $2",
                                          p);
    if (r.size() == 0) {
      const std::int64_t at = NowMs();  // the claim runs from its insert
      std::vector<Value> q{key.operation, key.key, fingerprint, token, at + claim_for.count(), at};
      sql::Result inserted = co_await conn.execute(
          ctx,
          "insert into " + key.table +
              " (operation, idem_key, fingerprint, state, claim_token, claimed_until_ms, created_ms)"
              " values ($1, $2, $3, 'claimed', $4, $5, $6) on conflict (operation, idem_key) do nothing"
              " returning claim_token",
          q);
      if (inserted.size() == 1) co_return Claim{Claim::Kind::claimed, std::move(token), {}};
      continue;  // somebody else claimed it in between: look at their claim
    }
    const sql::Row& row = r[0];
    if (row.get<std::string>("fingerprint") != fingerprint) co_return Claim{Claim::Kind::different_request, {}, {}};
    if (row.get<std::string>("state") == "done")
      co_return Claim{Claim::Kind::replay, {}, row.get<std::optional<std::string>>("response").value_or("")};
    if (row.get<std::int64_t>("claimed_until_ms") >= now) co_return Claim{Claim::Kind::in_progress, {}, {}};
    // The claim expired: its owner died or outlived its own timeout. Take it over; its
    // transaction, if it is still alive, fails the token check.
    std::string old = row.get<std::optional<std::string>>("claim_token").value_or("");
    std::vector<Value> q{token, now + claim_for.count(), key.operation, key.key, old, now};
    sql::Result t = co_await conn.execute(ctx,
                                          "update " + key.table +
                                              " set claim_token = $1, claimed_until_ms = $2"
                                              " where operation = $3 and idem_key = $4 and state = 'claimed'"
                                              " and claim_token = $5 and claimed_until_ms < $6 returning claim_token",
                                          q);
    if (t.size() == 1) co_return Claim{Claim::Kind::claimed, std::move(token), {}};
  }
  throw Error(ErrorCode::idempotency_conflict, "the idempotency key keeps changing hands; try again",
              ctx.request_id());
}

asio::awaitable<bool> LockClaim(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                const std::string& token) {
  std::vector<Value> p{key.operation, key.key, token};
  sql::Result r = co_await conn.execute(ctx,
                                        "update " + key.table +
                                            " set claimed_until_ms = claimed_until_ms where operation = $1"
                                            " and idem_key = $2 and claim_token = $3 and state = 'claimed'"
                                            " returning claim_token",
                                        p);
  co_return r.size() == 1;
}

asio::awaitable<bool> FinishClaim(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                  const std::string& token, const std::string& response) {
  std::vector<Value> p{response, NowMs(), key.operation, key.key, token};
  sql::Result r = co_await conn.execute(ctx,
                                        "update " + key.table +
                                            " set state = 'done', response = $1, completed_ms = $2,"
                                            " claim_token = null where operation = $3 and idem_key = $4"
                                            " and claim_token = $5 returning state",
                                        p);
  co_return r.size() == 1;
}

asio::awaitable<void> ReleaseClaim(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                   const std::string& token) {
  std::vector<Value> p{key.operation, key.key, token};
  co_await conn.execute(ctx,
                        "delete from " + key.table +
                            " where operation = $1 and idem_key = $2 and claim_token = $3 and state = 'claimed'",
                        p);
}

asio::awaitable<std::size_t> SweepRecords(sql::Connection& conn, const Context& ctx, const std::string& table,
                                          std::int64_t done_before_ms, std::int64_t now_ms, std::size_t batch) {
  const std::vector<Value> p{done_before_ms, now_ms};
  co_return co_await DeleteInBatches(
      conn, ctx, table, "operation, idem_key",
      "(state = 'done' and completed_ms < $1) or (state = 'claimed' and claimed_until_ms < $2)", p, batch);
}

}  // namespace cutoff::effects::internal
