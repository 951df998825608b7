// The saga journal: what every saga and each of its steps went through, in the effects store.
//
// Two tables beside the idempotency and outbox tables, under the same prefix:
// <prefix>saga (one row per saga) and <prefix>saga_step (one row per step that started). A
// local step's row is written in the same transaction as the step's effect, so the journal
// and the data can never disagree about it; a remote step's row is written before the call
// is sent and again when its answer arrives.
//
// Reading the journal needs no saga definitions, so `cutoff saga list/show` work against any
// store:
//
//   cutoff::effects::SagaJournal journal(pool, "cutoff_");
//   for (const cutoff::effects::SagaRecord& s : co_await journal.list(ctx, {.only_unfinished = true}))
//     std::cout << s.id << " " << to_string(s.state) << "\n";
//   std::optional<cutoff::effects::SagaRecord> one = co_await journal.find(ctx, "order-42");
#ifndef CUTOFF_EFFECTS_SAGA_JOURNAL_HPP_
#define CUTOFF_EFFECTS_SAGA_JOURNAL_HPP_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cutoff/core/context.hpp"
#include "cutoff/sql/pool.hpp"

namespace cutoff::effects {

enum class SagaState : std::uint8_t {
  running,              // a process owns it and is running steps (or died doing so: see owner_until_ms)
  completed,            // every step is done
  compensating,         // a step failed safely; the completed steps are being undone
  compensated,          // every completed step was undone
  step_ambiguous,       // a step may or may not have happened: nothing was compensated
  compensation_failed,  // a compensation ran out of its budget; `resume` tries again
};
std::string_view to_string(SagaState state) noexcept;
std::optional<SagaState> parse_saga_state(std::string_view name) noexcept;
// completed and compensated: nothing is left to do.
constexpr bool is_final(SagaState state) noexcept {
  return state == SagaState::completed || state == SagaState::compensated;
}

enum class SagaStepState : std::uint8_t {
  sent,                 // a remote step's call left; no answer recorded yet
  done,                 // it happened (a local step: committed with this row)
  failed,               // it failed and nothing of it remains
  ambiguous,            // it may or may not have happened
  compensated,          // its compensation happened (a local one: committed with this row)
  compensation_failed,  // its compensation ran out of budget
};
std::string_view to_string(SagaStepState state) noexcept;
std::optional<SagaStepState> parse_saga_step_state(std::string_view name) noexcept;

struct SagaStepRecord {
  int index = 0;
  std::string name;
  SagaStepState state = SagaStepState::sent;
  std::string result;         // done: what the step returned
  std::string error_code;     // failed, ambiguous, compensation_failed
  std::string error_message;
  int attempts = 0;           // calls sent (remote) or compensations tried
  std::int64_t updated_ms = 0;
};

struct SagaRecord {
  std::string id;
  std::string name;           // the definition
  SagaState state = SagaState::running;
  std::string input;
  int step_count = 0;
  int next_step = 0;          // the first step not known to be done
  std::string failed_step;    // the step that failed or is ambiguous
  std::string error_code;
  std::string error_message;
  std::string result;         // completed: the last step's result
  std::string request_id;     // of the request that started it
  std::int64_t owner_until_ms = 0;  // its owner may be working on it until then
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
  std::int64_t version = 0;   // bumped by every write to the saga's row
  std::vector<SagaStepRecord> steps;  // find() only; in step order

  // Running or compensating and past its owner's lease: the process that ran it is gone.
  bool interrupted(std::int64_t now_ms) const noexcept;
};

inline constexpr std::size_t kMaxSagaListLimit = 10'000;

struct SagaListOptions {
  bool only_unfinished = false;  // everything but completed and compensated
  std::optional<SagaState> state;
  std::size_t limit = 100;       // newest first; 1 to kMaxSagaListLimit
};

class SagaJournal {
 public:
  // `table_prefix` as in EffectsOptions: the tables are <prefix>saga and <prefix>saga_step.
  SagaJournal(sql::Pool& pool, std::string table_prefix = "cutoff_");

  // Creates the tables if they do not exist.
  boost::asio::awaitable<void> install(const Context& ctx);
  boost::asio::awaitable<std::vector<SagaRecord>> list(const Context& ctx, SagaListOptions options = {});
  // The saga with its steps; nullopt when there is none with that id.
  boost::asio::awaitable<std::optional<SagaRecord>> find(const Context& ctx, const std::string& id);
  // Forgets completed and compensated sagas last written more than `retention` ago, with their
  // steps; returns how many. Keep `retention` at least as long as the effects store's (the
  // compensations' idempotency records), and ambiguous or unfinished sagas are never swept.
  // Deletes `batch` sagas per transaction, so a sweep cut short keeps what it finished.
  boost::asio::awaitable<std::size_t> sweep(const Context& ctx, std::chrono::milliseconds retention,
                                            std::size_t batch = 500);
  // Sweeps every `interval` until `ctx` stops (a background task; `ctx` must outlive it), each
  // round under a budget of `interval` (1 s to 30 s).
  boost::asio::awaitable<void> run_sweeper(const Context& ctx, std::chrono::milliseconds interval,
                                           std::chrono::milliseconds retention);

  const std::string& saga_table() const noexcept { return saga_table_; }
  const std::string& step_table() const noexcept { return step_table_; }

 private:
  sql::Pool& pool_;
  std::string saga_table_;
  std::string step_table_;
};

// One line per saga for a terminal, and the whole record as JSON (for `--json` and the HTTP
// surfaces).
std::string saga_summary_line(const SagaRecord& saga, std::int64_t now_ms);
std::string saga_to_json(const SagaRecord& saga, std::int64_t now_ms);

}  // namespace cutoff::effects

#endif  // CUTOFF_EFFECTS_SAGA_JOURNAL_HPP_
