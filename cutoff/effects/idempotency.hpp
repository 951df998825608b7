// The idempotency store's statements, shared by SQLite and PostgreSQL (internal to effects).
//
// A key is claimed by an autocommitted insert before the effect's transaction begins, so a
// concurrent request with the same key sees the claim at once instead of waiting on a lock.
// The effect's transaction locks the claim row first and records the result last: the record
// and the effect commit together, or neither does. A claim carries a random token and an
// expiry; a claim whose process died is taken over after the expiry, and the token check
// makes sure the former owner's transaction can no longer finish.
#ifndef CUTOFF_EFFECTS_IDEMPOTENCY_HPP_
#define CUTOFF_EFFECTS_IDEMPOTENCY_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/connection.hpp"

namespace cutoff::effects::internal {

struct IdempotencyKey {
  const std::string& table;
  const std::string& operation;
  const std::string& key;
};

struct Claim {
  enum class Kind { claimed, replay, in_progress, different_request } kind = Kind::claimed;
  std::string token;     // claimed: ours
  std::string response;  // replay: the stored result
};

// 128 random bits as 32 hex digits: claim tokens, saga owner tokens and saga ids.
std::string NewToken();

// Wall-clock milliseconds (records are shared between processes).
std::int64_t NowMs() noexcept;

boost::asio::awaitable<void> CreateIdempotencyTable(sql::Connection& conn, const Context& ctx, const std::string& table);

// Claims `key` for `claim_for` (autocommit; `conn` must not be in a transaction).
boost::asio::awaitable<Claim> ClaimKey(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                       const std::string& fingerprint, std::chrono::milliseconds claim_for);
// Inside the effect's transaction: locks our claim row. False when the claim is no longer ours.
boost::asio::awaitable<bool> LockClaim(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                       const std::string& token);
// Inside the effect's transaction: stores the result. False when the claim is no longer ours.
boost::asio::awaitable<bool> FinishClaim(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                         const std::string& token, const std::string& response);
// Autocommit: gives up our unfinished claim so a retry need not wait for it to expire.
boost::asio::awaitable<void> ReleaseClaim(sql::Connection& conn, const Context& ctx, IdempotencyKey key,
                                          const std::string& token);
// Autocommit: deletes records finished before `done_before_ms` and claims that expired before
// `now_ms`, `batch` rows per statement; returns how many.
inline constexpr std::size_t kSweepBatch = 1000;
boost::asio::awaitable<std::size_t> SweepRecords(sql::Connection& conn, const Context& ctx, const std::string& table,
                                                 std::int64_t done_before_ms, std::int64_t now_ms,
                                                 std::size_t batch = kSweepBatch);

}  // namespace cutoff::effects::internal

#endif  // CUTOFF_EFFECTS_IDEMPOTENCY_HPP_
