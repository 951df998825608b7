// `cutoff saga list|show|resume|resolve`: the saga journal (effects/saga_journal.hpp) read from a
// database, and interrupted or ambiguous sagas carried on.
//
//   cutoff saga list --db sqlite:/tmp/cutoff-warehouse-demo.db --unfinished
//   cutoff saga show o-42 --json
//   cutoff saga resume o-42 --shipping-url http://127.0.0.1:8083
//   cutoff saga resolve o-42 --step ship --happened no
//
// list and show need nothing but the database. resume and resolve run steps, so they know the
// sagas this program defines: the warehouse's order saga (warehouse/order_saga.hpp), which
// books with the shipping service at --shipping-url. Exit codes follow the error table: 0 the
// saga is final (completed or compensated), 6 its budget ran out, 1 it still needs attention
// (step_ambiguous, compensation_failed: the message says what to do) or does not exist, 2 usage
// or a step that is not the one waiting, 130/143 stopped by a signal.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/effects/effects.hpp"
#include "cutoff/effects/saga.hpp"
#include "cutoff/http/client.hpp"
#include "cutoff/sql/connect.hpp"
#include "signal_stop.hpp"
#include "warehouse/order_saga.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;

struct SagaOptions {
  std::string db;  // empty: the demo's SQLite file
  std::string table_prefix = "cutoff_";
  std::string id;
  std::string state;
  bool unfinished = false;
  std::size_t limit = 50;
  bool json = false;
  std::string shipping_url = "http://127.0.0.1:8083";
  std::int64_t budget_ms = 10'000;
  std::int64_t shipping_retention_s = 24 * 3600;
  bool force = false;
  std::string step;
  std::string happened;
  std::string result;
};

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string DefaultDb() {
  return "sqlite:" + (std::filesystem::temp_directory_path() / "cutoff-warehouse-demo.db").string();
}

int Fail(const char* verb, const Error& e, int signal = 0) {
  std::fprintf(stderr, "cutoff saga %s: %s: %s\n", verb, std::string(e.info().name).c_str(), e.message().c_str());
  return cli_exit_code(e.code(), signal);
}

void PrintSaga(const effects::SagaRecord& s) {
  const std::int64_t now = NowMs();
  std::printf("saga %s (%s): %s%s\n", s.id.c_str(), s.name.c_str(), std::string(to_string(s.state)).c_str(),
              s.interrupted(now) ? " (interrupted: its process is gone)" : "");
  std::printf("  input     %s\n", s.input.c_str());
  std::printf("  progress  %d of %d steps done\n", s.next_step, s.step_count);
  if (!s.failed_step.empty()) std::printf("  at step   %s\n", s.failed_step.c_str());
  if (!s.error_code.empty()) std::printf("  error     %s: %s\n", s.error_code.c_str(), s.error_message.c_str());
  if (s.state == effects::SagaState::completed) std::printf("  result    %s\n", s.result.c_str());
  for (const effects::SagaStepRecord& step : s.steps) {
    std::string detail = step.state == effects::SagaStepState::done ? step.result : step.error_code;
    if (!step.error_message.empty()) detail += ": " + step.error_message;
    std::printf("  step %d  %-12s %-20s attempts %d  %s\n", step.index, step.name.c_str(),
                std::string(to_string(step.state)).c_str(), step.attempts, detail.c_str());
  }
  switch (s.state) {
    case effects::SagaState::step_ambiguous:
    case effects::SagaState::compensation_failed:
      std::printf("  next      cutoff saga resume %s\n", s.id.c_str());
      break;
    case effects::SagaState::running:
    case effects::SagaState::compensating:
      if (s.interrupted(now)) std::printf("  next      cutoff saga resume %s\n", s.id.c_str());
      break;
    default:
      break;
  }
}

// Runs `work` with the database open, under `budget` (none: unbounded) and Ctrl-C.
template <typename Work>
int WithStore(const char* verb, const SagaOptions& o, std::optional<std::chrono::milliseconds> budget, Work work) {
  asio::io_context io(1);
  sql::DatabaseOptions db;
  db.url = o.db.empty() ? DefaultDb() : o.db;
  std::unique_ptr<sql::Pool> pool;
  try {
    pool = std::make_unique<sql::Pool>(sql::connection_factory(db), sql::PoolOptions{});
  } catch (const Error& e) {
    return Fail(verb, e);
  }
  auto [ctx, stop] = (budget ? Context().with_timeout(*budget) : Context()).with_cancel();
  SignalStop signals(io, stop);
  int code = 0;
  auto done = asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        try {
          code = co_await work(*pool, ctx);
        } catch (const Error& e) {
          code = Fail(verb, e, signals.signal());
        }
        signals.cancel();
      },
      asio::use_future);
  io.run();
  done.get();
  return code;
}

int RunList(const SagaOptions& o) {
  effects::SagaListOptions list;
  list.only_unfinished = o.unfinished;
  list.limit = o.limit;
  if (!o.state.empty()) list.state = effects::parse_saga_state(o.state);  // CLI11 checked the name
  return WithStore("list", o, std::chrono::milliseconds(10'000),
                   [&](sql::Pool& pool, const Context& ctx) -> asio::awaitable<int> {
                     effects::SagaJournal journal(pool, o.table_prefix);
                     std::vector<effects::SagaRecord> sagas = co_await journal.list(ctx, list);
                     const std::int64_t now = NowMs();
                     for (const effects::SagaRecord& s : sagas) {
                       const std::string line = o.json ? effects::saga_to_json(s, now) : effects::saga_summary_line(s, now);
                       std::printf("%s\n", line.c_str());
                     }
                     if (sagas.empty() && !o.json) std::fprintf(stderr, "no sagas\n");
                     co_return 0;
                   });
}

int RunShow(const SagaOptions& o) {
  return WithStore("show", o, std::chrono::milliseconds(10'000),
                   [&](sql::Pool& pool, const Context& ctx) -> asio::awaitable<int> {
                     effects::SagaJournal journal(pool, o.table_prefix);
                     std::optional<effects::SagaRecord> s = co_await journal.find(ctx, o.id);
                     if (!s) throw Error(ErrorCode::not_found, "no saga with id " + o.id);
                     if (o.json) std::printf("%s\n", effects::saga_to_json(*s, NowMs()).c_str());
                     else PrintSaga(*s);
                     co_return 0;
                   });
}

// resume and resolve: the sagas this program defines, then `act`.
template <typename Act>
int RunDriving(const char* verb, const SagaOptions& o, Act act) {
  return WithStore(verb, o, std::chrono::milliseconds(o.budget_ms),
                   [&](sql::Pool& pool, const Context& ctx) -> asio::awaitable<int> {
                     effects::EffectsOptions fx;
                     fx.table_prefix = o.table_prefix;
                     effects::Effects effects(pool, fx);
                     const asio::any_io_executor executor = co_await asio::this_coro::executor;
                     http::Client client(executor);
                     effects::Sagas sagas(effects);
                     warehouse::OrderSagaOptions order;
                     order.client = &client;
                     order.shipping_url = o.shipping_url;
                     order.shipping_key_lifetime = std::chrono::seconds(o.shipping_retention_s);
                     sagas.define(warehouse::order_saga(order));
                     effects::SagaOutcome out = co_await act(sagas, ctx);
                     std::optional<effects::SagaRecord> s = co_await sagas.journal().find(ctx, out.saga_id);
                     if (s) PrintSaga(*s);
                     if (out.state == effects::SagaState::completed || out.state == effects::SagaState::compensated)
                       co_return 0;
                     const Error e = out.to_error();
                     std::fprintf(stderr, "cutoff saga %s: %s\n", verb, e.message().c_str());
                     co_return cli_exit_code(e.code());
                   });
}

// A command's exit code, the way main() takes it.
void Finish(int code) {
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace

void AddSagaCommand(CLI::App& app) {
  CLI::App* saga =
      app.add_subcommand("saga",
                         "The saga journal: list and show sagas, resume an interrupted or ambiguous one, resolve an\n"
                         "ambiguous step by hand. Reads the journal tables of an effects store (--db).");
  saga->require_subcommand(1);
  static SagaOptions opts;
  auto common = [](CLI::App* sub) {
    sub->add_option("--db", opts.db, "Database URL: sqlite:PATH or postgresql://... (default: the demo's SQLite file)");
    sub->add_option("--table-prefix", opts.table_prefix, "Prefix of the effects store's tables")->capture_default_str();
  };
  CLI::App* list = saga->add_subcommand("list", "One line per saga, newest first");
  common(list);
  list->add_option("--state", opts.state, "Only sagas in this state (default: every state)")
      ->check(CLI::IsMember({"running", "completed", "compensating", "compensated", "step_ambiguous",
                             "compensation_failed"}));
  list->add_flag("--unfinished", opts.unfinished, "Only sagas that are not completed or compensated");
  list->add_option("--limit", opts.limit, "At most this many")->check(Number<std::size_t>(1, 10'000))->capture_default_str();
  list->add_flag("--json", opts.json, "One JSON document per line");
  list->callback([] { Finish(RunList(opts)); });

  CLI::App* show = saga->add_subcommand("show", "A saga with each step's state, result or error");
  common(show);
  show->add_option("id", opts.id, "The saga's id")->required();
  show->add_flag("--json", opts.json, "As one JSON document");
  show->callback([] { Finish(RunShow(opts)); });

  auto driving = [&common](CLI::App* sub) {
    common(sub);
    sub->add_option("id", opts.id, "The saga's id")->required();
    sub->add_option("--shipping-url", opts.shipping_url, "The shipping service the order saga books with")
        ->capture_default_str();
    sub->add_option("--budget-ms", opts.budget_ms, "The time budget for carrying the saga on")
        ->check(Number(std::int64_t{1}, std::int64_t{3'600'000}))
        ->capture_default_str();
    sub->add_option("--shipping-retention-s", opts.shipping_retention_s,
                    "How long the shipping service keeps idempotency keys (its --retention-s): a booking\n"
                    "left ambiguous is repeated with its key only by a saga younger than this")
        ->check(Number(std::int64_t{1}, std::int64_t{10LL * 365 * 24 * 3600}))
        ->capture_default_str();
  };
  CLI::App* resume = saga->add_subcommand(
      "resume",
      "Take over an interrupted, ambiguous or half-undone saga and carry it to a final state: a step\n"
      "the journal has as done is not run again, a keyed remote step is repeated with its key (while\n"
      "its service still keeps keys; an older one is left for resolve)");
  driving(resume);
  resume->add_flag("--force", opts.force, "Take it over even while its owner's lease runs");
  resume->callback([] {
    Finish(RunDriving("resume", opts, [](effects::Sagas& sagas, const Context& ctx) {
      return sagas.resume(ctx, opts.id, opts.force);
    }));
  });

  CLI::App* resolve = saga->add_subcommand(
      "resolve",
      "Settle a remote step left ambiguous that resume cannot repeat (unkeyed, or its key past its\n"
      "service's retention) from what you found out, then resume");
  driving(resolve);
  resolve->add_option("--step", opts.step, "The ambiguous step")->required();
  resolve->add_option("--happened", opts.happened, "Whether it took effect")
      ->required()
      ->check(CLI::IsMember({"yes", "no"}));
  resolve->add_option("--result", opts.result, "What it returned, when it happened (JSON; default: empty)");
  resolve->callback([] {
    Finish(RunDriving("resolve", opts, [](effects::Sagas& sagas, const Context& ctx) {
      return sagas.resolve(ctx, opts.id, opts.step, opts.happened == "yes", opts.result);
    }));
  });
}

}  // namespace cutoff::cli
