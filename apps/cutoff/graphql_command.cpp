// `cutoff graphql exec`: runs one GraphQL operation against a schema served from a JSON
// fixture and prints the response, under an optional deadline.
//
//   cutoff graphql exec --schema s.graphql --fixture f.json --query q.graphql --deadline-ms 150
//
// The fixture's markers ($error, $delay_ms, $hang, $arg) are described in
// cutoff/graphql/fixture.hpp. The response is printed as one JSON line with fields in
// selection order; the exit code is 0 whenever a response was produced (errors included).
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "cutoff/core/context.hpp"
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
  bool whole_response = false;
};

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "cutoff graphql exec: %s\n", message.c_str());
  return 2;
}

int RunExec(const ExecOptions& opts) {
  std::string sdl, fixture_text, query;
  if (!ReadFile(opts.schema_path, &sdl)) return Fail("cannot read schema file " + opts.schema_path);
  if (!ReadFile(opts.fixture_path, &fixture_text)) return Fail("cannot read fixture file " + opts.fixture_path);
  if (!ReadFile(opts.query_path, &query)) return Fail("cannot read query file " + opts.query_path);

  gql::SchemaResult built = gql::Schema::from_sdl(sdl);
  if (!built.ok()) return Fail("invalid schema: " + built.errors[0].message);
  gql::install_fixture_resolvers(*built.schema);

  boost::system::error_code ec;
  boost::json::value fixture = boost::json::parse(fixture_text, ec);
  if (ec || !fixture.is_object()) return Fail("the fixture must be a JSON object");
  boost::json::value variables = boost::json::parse(opts.variables, ec);
  if (ec || !variables.is_object()) return Fail("--variables must be a JSON object");

  gql::Response response;
  gql::ParseResult parsed = gql::parse(query);
  if (!parsed.ok()) {
    response.errors.push_back(*parsed.error);
  } else if (auto errors = gql::validate(*built.schema, *parsed.document); !errors.empty()) {
    response.errors = std::move(errors);
  } else {
    gql::Request req;
    req.document = parsed.document.get();
    req.operation_name = opts.operation;
    req.variables = variables.as_object();
    req.root_value = gql::Data::json(&fixture);
    gql::ExecutionOptions exec_options;
    if (opts.whole_response) exec_options.policy = gql::StopPolicy::whole_response;
    Context ctx = opts.deadline_ms >= 0 ? Context().with_timeout(std::chrono::milliseconds(opts.deadline_ms)) : Context();
    asio::io_context io;
    auto future = asio::co_spawn(io, gql::execute(*built.schema, req, ctx, exec_options), asio::use_future);
    io.run();
    response = future.get();
  }
  std::string out = response.to_json();
  out.push_back('\n');
  std::fwrite(out.data(), 1, out.size(), stdout);
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
      "{\"$arg\": name}; objects of abstract types carry \"__typename\".");
  static ExecOptions opts;
  exec->add_option("--schema", opts.schema_path, "Schema in SDL")->required();
  exec->add_option("--fixture", opts.fixture_path, "JSON object holding the root fields")->required();
  exec->add_option("--query", opts.query_path, "The document to execute")->required();
  exec->add_option("--variables", opts.variables, "Variables as a JSON object");
  exec->add_option("--operation", opts.operation, "Operation name (when the document has several)");
  exec->add_option("--deadline-ms", opts.deadline_ms, "The operation's time budget (0: already spent)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{86'400'000}));
  exec->add_flag("--whole-response", opts.whole_response, "Fail the whole response on a stop (default: partial)");
  exec->callback([] {
    const int code = RunExec(opts);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace cutoff::cli
