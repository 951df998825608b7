// `cutoff graphql exec`: runs one GraphQL operation against a schema served from a JSON
// fixture and prints the response, under an optional time budget.
//
//   cutoff graphql exec --schema s.graphql --fixture f.json --query '{ hello }' --budget-ms 150
//   cutoff graphql exec --schema s.graphql --fixture f.json --query @sub.graphql --event-budget-ms 100
//   echo '{ hello }' | cutoff graphql exec --schema s.graphql --fixture f.json --query -
//
// --query and --variables are inline text, @FILE or - (standard input); --schema and
// --fixture are files (PATH or @PATH, or -). The fixture's markers ($error, $delay_ms, $hang,
// $arg, and $events for subscriptions) are described in fixture/fixture_resolvers.hpp.
//
// The response is printed as one JSON line with fields in selection order, on stdout, errors
// included. The exit code is 0 for a response without errors; otherwise it is the first
// error's, its extensions.code mapped back through the error table (6 DEADLINE_EXCEEDED, 1
// COMMIT_AMBIGUOUS and the other codes, 2 BAD_USER_INPUT, 130/143 CANCELLED by
// SIGINT/SIGTERM). A request error outside the table (parse or validation failure, an operation
// limit) exits 2; a field error outside it (an application's own code, or none) exits 1. So a
// partial response, some fields cut at the deadline, exits 6: any cut is non-zero.
// A subscription prints one line per event, as each arrives; it exits with the first error any
// line carried (0 when none did), 6 when --budget-ms stops the whole stream, 130/143 when
// SIGINT/SIGTERM does. --event-budget-ms bounds each event.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/graphql/document_cache.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/validation.hpp"
#include "fixture/fixture_resolvers.hpp"
#include "fixture_schema.hpp"
#include "signal_stop.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
namespace gql = cutoff::graphql;

struct ExecOptions {
  std::string schema;
  std::string fixture;
  std::string query;            // inline, @FILE or -
  std::string variables = "{}";  // inline, @FILE or -
  std::string operation;
  std::int64_t budget_ms = -1;  // -1: no deadline; 0: already spent
  std::int64_t event_budget_ms = 5000;  // subscriptions: each event's budget
  bool whole_response = false;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "cutoff graphql exec: %s\n", message.c_str());
  return 2;
}

// The exit code for a response: 0 without errors, else its first error's (see the top).
int ExitCode(const gql::Response& response, int signal) {
  if (response.errors.empty()) return 0;
  if (std::optional<ErrorCode> code = parse_graphql_error_code(response.errors.front().code))
    return cli_exit_code(*code, signal);
  return response.has_data ? cli_exit_code(ErrorCode::internal) : cli_exit_code(ErrorCode::invalid_argument);
}

void PrintLine(const gql::Response& response) {
  std::string out = response.to_json();
  out.push_back('\n');
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);  // a subscription's consumer reads each event as it comes
}

// The operation `name` selects (or the only one), if it is a subscription. Anything else,
// including a name that matches nothing, goes through execute(), which reports it.
bool IsSubscription(const gql::Document& doc, const std::string& name) {
  const gql::OperationDefinition* op = gql::select_operation(doc, name);
  return op && op->type == gql::OperationType::subscription;
}

// Prints one line per event until the stream ends; returns the exit code.
int RunSubscription(const gql::Schema& schema, const gql::Request& req, const ExecOptions& opts) {
  Context base;
  if (opts.budget_ms >= 0) base = base.with_timeout(std::chrono::milliseconds(opts.budget_ms));
  auto [ctx, stop] = base.with_cancel();
  gql::SubscribeOptions options;
  options.event_budget = std::chrono::milliseconds(opts.event_budget_ms);
  if (opts.whole_response) options.execution.policy = gql::StopPolicy::whole_response;

  asio::io_context io;
  SignalStop signals(io, stop);
  int exit_code = 0;
  // The first error printed decides the exit code, unless a stop of the whole stream does.
  auto print = [&](const gql::Response& response) {
    PrintLine(response);
    if (exit_code == 0) exit_code = ExitCode(response, signals.signal());
  };
  auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
    gql::SubscribeResult started = co_await gql::subscribe(schema, req, ctx, options);
    if (!started.ok()) {
      print(started.errors);
    } else {
      gql::Subscription& sub = *started.subscription;
      while (std::optional<gql::Response> response = co_await sub.next()) print(*response);
      if (sub.end() == gql::Subscription::End::failed) {
        print(sub.failure());
      } else if (sub.end() == gql::Subscription::End::stopped) {
        const ErrorCode code = error_code_for(sub.stop_reason());
        std::fprintf(stderr, "cutoff graphql exec: the subscription was stopped: %s\n",
                     std::string(to_string(code)).c_str());
        exit_code = cli_exit_code(code, signals.signal());
      }
    }
    signals.cancel();
  };
  auto future = asio::co_spawn(io, run(), asio::use_future);
  io.run();
  future.get();
  return exit_code;
}

int RunExec(const ExecOptions& opts) {
  std::string error;
  std::optional<FixtureSchema> loaded = LoadFixtureSchema(opts.schema, opts.fixture, &error);
  if (!loaded) return Fail(error);
  std::optional<Input> query = ReadInput("--query", opts.query, &error);
  if (!query) return Fail(error);
  std::optional<Input> variables_text = ReadInput("--variables", opts.variables, &error);
  if (!variables_text) return Fail(error);
  std::optional<boost::json::object> variables = ParseJsonObject(*variables_text, "--variables", &error);
  if (!variables) {
    if (std::string hint = FileHint("--variables", opts.variables); !hint.empty()) error += "\n  " + hint;
    return Fail(error);
  }
  const boost::json::value& fixture = loaded->fixture;
  gql::Schema* schema = loaded->schema.get();

  gql::Response response;
  int signal = 0;
  const std::shared_ptr<const gql::PreparedDocument> prepared =
      gql::prepare_document(*schema, query->text, gql::ParseOptions{}, gql::ValidationOptions{});
  if (!prepared->ok()) {
    response.errors = prepared->errors;
    // `--query q.graphql` used to name a file: say how to write that now.
    if (std::string hint = FileHint("--query", opts.query);
        !hint.empty() && prepared->errors.front().code == gql::graphql_codes::kParseFailed)
      std::fprintf(stderr, "cutoff graphql exec: %s\n", hint.c_str());
  } else {
    gql::Request req;
    req.document = prepared->document.get();
    req.operation_name = opts.operation;
    req.variables = std::move(*variables);
    req.root_value = gql::Data::json(&fixture);
    if (IsSubscription(*prepared->document, opts.operation)) return RunSubscription(*schema, req, opts);
    gql::ExecutionOptions exec_options;
    if (opts.whole_response) exec_options.policy = gql::StopPolicy::whole_response;
    Context base;
    if (opts.budget_ms >= 0) base = base.with_timeout(std::chrono::milliseconds(opts.budget_ms));
    auto [ctx, stop] = base.with_cancel();
    asio::io_context io;
    SignalStop signals(io, stop);
    auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
      auto executed = gql::execute(*schema, req, ctx, exec_options);
      response = co_await std::move(executed);
      signals.cancel();
    };
    auto future = asio::co_spawn(io, run(), asio::use_future);
    io.run();
    future.get();
    signal = signals.signal();
  }
  PrintLine(response);
  return ExitCode(response, signal);
}

}  // namespace

void AddGraphqlCommand(CLI::App& app) {
  CLI::App* graphql = app.add_subcommand("graphql", "GraphQL tools");
  graphql->require_subcommand(1);
  CLI::App* exec = graphql->add_subcommand(
      "exec",
      "Run one operation against a schema served from a JSON fixture and print the response.\n"
      "Fixture markers: {\"$error\": msg, \"$code\": C}, {\"$delay_ms\": N, \"$value\": V}, {\"$hang\": true},\n"
      "{\"$arg\": name}; objects of abstract types carry \"__typename\".\n"
      "A subscription root field's {\"$events\": [E1, ...], \"$interval_ms\": N} is a stream of events\n"
      "(markers inside an event apply when it executes); any other value is one event; a subscription\n"
      "prints one line per event.");
  exec->footer(
      "The response goes to stdout, errors included. Exit codes: 0 no errors; otherwise the first error's\n"
      "extensions.code through the error table: 6 DEADLINE_EXCEEDED (a partial response cut at the deadline\n"
      "too), 2 a parse or validation error, an operation limit or BAD_USER_INPUT, 130/143 stopped by\n"
      "SIGINT/SIGTERM, 1 any other error. A stream stopped by --budget-ms exits 6.\n");
  static ExecOptions opts;
  exec->add_option("--schema", opts.schema, std::string("Schema in SDL: ") + kFileHelp)->required();
  exec->add_option("--fixture", opts.fixture, std::string("JSON object holding the root fields: ") + kFileHelp)
      ->required();
  exec->add_option("--query", opts.query, std::string("The GraphQL document: ") + kInputHelp)->required();
  exec->add_option("--variables", opts.variables, std::string("Variables, a JSON object: ") + kInputHelp)
      ->capture_default_str();
  exec->add_option("--operation", opts.operation,
                   "Operation name, when the document has several (default: its only operation)");
  AddBudgetOption(exec, opts.budget_ms,
                  "The operation's time budget (0: already spent; default: none); for a subscription, "
                  "the whole stream's",
                  {"--deadline-ms"});
  exec->add_option("--event-budget-ms", opts.event_budget_ms,
                   "Subscriptions: each event's time budget, within the stream's")
      ->capture_default_str()
      ->check(Number<std::int64_t>(0, 86'400'000));
  exec->add_flag("--whole-response", opts.whole_response, "Fail the whole response on a stop (default: partial)");
  exec->callback([] {
    const int code = RunExec(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
