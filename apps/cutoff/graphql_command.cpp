// `cutoff graphql exec`: runs one GraphQL operation against a schema served from a JSON
// fixture and prints the response, under an optional deadline.
//
//   cutoff graphql exec --schema s.graphql --fixture f.json --query q.graphql --deadline-ms 150
//   cutoff graphql exec --schema s.graphql --fixture f.json --query sub.graphql --event-budget-ms 100
//
// The fixture's markers ($error, $delay_ms, $hang, $arg, and $events for subscriptions) are
// described in cutoff/graphql/fixture.hpp. The response is printed as one JSON line with
// fields in selection order; the exit code is 0 whenever a response was produced (errors
// included). A subscription prints one line per event, as each arrives, and exits 0 at the
// end of its stream; --deadline-ms then bounds the whole stream (a stream it stops exits 6),
// --event-budget-ms each event, and SIGINT/SIGTERM stop it (exit 130/143).
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
#include "signal_stop.hpp"
#include "fixture_schema.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/fixture.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/validation.hpp"

namespace cutoff::cli {
namespace {

namespace asio = boost::asio;
namespace gql = cutoff::graphql;

struct ExecOptions {
  std::string schema_path;
  std::string fixture_path;
  std::string query_path;
  std::string variables = "{}";
  std::string operation;
  std::int64_t deadline_ms = -1;  // -1: no deadline; 0: already spent
  std::int64_t event_budget_ms = 5000;  // subscriptions: each event's budget
  bool whole_response = false;
};

int Fail(const std::string& message) {
  std::fprintf(stderr, "cutoff graphql exec: %s\n", message.c_str());
  return 2;
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
  if (opts.deadline_ms >= 0) base = base.with_timeout(std::chrono::milliseconds(opts.deadline_ms));
  auto [ctx, stop] = base.with_cancel();
  gql::SubscribeOptions options;
  options.event_budget = std::chrono::milliseconds(opts.event_budget_ms);
  if (opts.whole_response) options.execution.policy = gql::StopPolicy::whole_response;

  asio::io_context io;
  SignalStop signals(io, stop);
  int exit_code = 0;
  auto run = [&, ctx = ctx]() -> asio::awaitable<void> {
    gql::SubscribeResult started = co_await gql::subscribe(schema, req, ctx, options);
    if (!started.ok()) {
      PrintLine(started.errors);
    } else {
      gql::Subscription& sub = *started.subscription;
      while (std::optional<gql::Response> response = co_await sub.next()) PrintLine(*response);
      if (sub.end() == gql::Subscription::End::failed) {
        PrintLine(sub.failure());
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
  std::string error, query;
  std::optional<FixtureSchema> loaded = LoadFixtureSchema(opts.schema_path, opts.fixture_path, &error);
  if (!loaded) return Fail(error);
  if (!ReadFile(opts.query_path, &query)) return Fail("cannot read query file " + opts.query_path);
  const boost::json::value& fixture = loaded->fixture;
  gql::Schema* schema = loaded->schema.get();

  boost::system::error_code ec;
  boost::json::value variables = boost::json::parse(opts.variables, ec);
  if (ec || !variables.is_object()) return Fail("--variables must be a JSON object");

  gql::Response response;
  gql::ParseResult parsed = gql::parse(query);
  if (!parsed.ok()) {
    response.errors.push_back(*parsed.error);
  } else if (auto errors = gql::validate(*schema, *parsed.document); !errors.empty()) {
    response.errors = std::move(errors);
  } else {
    gql::Request req;
    req.document = parsed.document.get();
    req.operation_name = opts.operation;
    req.variables = variables.as_object();
    req.root_value = gql::Data::json(&fixture);
    if (IsSubscription(*parsed.document, opts.operation)) return RunSubscription(*schema, req, opts);
    gql::ExecutionOptions exec_options;
    if (opts.whole_response) exec_options.policy = gql::StopPolicy::whole_response;
    Context ctx = opts.deadline_ms >= 0 ? Context().with_timeout(std::chrono::milliseconds(opts.deadline_ms)) : Context();
    asio::io_context io;
    auto future = asio::co_spawn(io, gql::execute(*schema, req, ctx, exec_options), asio::use_future);
    io.run();
    response = future.get();
  }
  PrintLine(response);
  return 0;
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
      "(markers inside an event apply when it executes); any other value is one event. A subscription\n"
      "prints one line per event and exits 0 at the end of the stream (6 when --deadline-ms stops it,\n"
      "130/143 on SIGINT/SIGTERM).");
  static ExecOptions opts;
  exec->add_option("--schema", opts.schema_path, "Schema in SDL")->required();
  exec->add_option("--fixture", opts.fixture_path, "JSON object holding the root fields")->required();
  exec->add_option("--query", opts.query_path, "The document to execute")->required();
  exec->add_option("--variables", opts.variables, "Variables as a JSON object");
  exec->add_option("--operation", opts.operation, "Operation name (when the document has several)");
  exec->add_option("--deadline-ms", opts.deadline_ms,
                   "The operation's time budget (0: already spent); for a subscription, the whole stream's")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{86'400'000}));
  exec->add_option("--event-budget-ms", opts.event_budget_ms,
                   "Subscriptions: each event's time budget, within the stream's")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{86'400'000}));
  exec->add_flag("--whole-response", opts.whole_response, "Fail the whole response on a stop (default: partial)");
  exec->callback([] {
    const int code = RunExec(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
