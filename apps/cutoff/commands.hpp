// Subcommands of the `cutoff` command line. Each file adds one to the application.
#ifndef CUTOFF_APPS_CUTOFF_COMMANDS_HPP_
#define CUTOFF_APPS_CUTOFF_COMMANDS_HPP_

#include <CLI/CLI.hpp>

namespace cutoff::cli {

// `cutoff demo`: one request fanning out to three concurrent branches, with and without
// deadline propagation, and what each left running after the caller gave up.
void AddDemoCommand(CLI::App& app);
// `cutoff demo serve`: the reference warehouse services (called by AddDemoCommand).
void AddDemoServeCommand(CLI::App& demo);

// `cutoff sql exec`: statements under a deadline, rows as JSON lines, exit codes from the
// error taxonomy.
void AddSqlCommand(CLI::App& app);

// `cutoff graphql exec`: one operation against a JSON fixture, under a deadline.
void AddGraphqlCommand(CLI::App& app);

// `cutoff graphql serve`: a JSON fixture served over HTTP at /graphql (and /graphiql).
// Call after AddGraphqlCommand.
void AddGraphqlServeCommand(CLI::App& app);

// `cutoff http relay`: one hop of a service chain, for watching a budget cross services.
void AddHttpCommand(CLI::App& app);

// `cutoff grpc relay` and `cutoff grpc call`: one hop of a gRPC service chain, and a unary
// call from the command line.
void AddGrpcCommand(CLI::App& app);

// `cutoff lab`: the lab; `cutoff lab report` renders its results as a self-contained HTML page.
void AddLabCommand(CLI::App& app);
// `cutoff ops list|call|serve` and `cutoff catalog`: the operation registry (the example
// operations of example_operations.hpp) listed, invoked in-process or over HTTP, and served.
void AddOpsCommand(CLI::App& app);

// `cutoff saga list|show|resume|resolve`: the saga journal, and sagas carried on.
void AddSagaCommand(CLI::App& app);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_COMMANDS_HPP_
