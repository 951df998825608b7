// The `cutoff` command line.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "conventions.hpp"
#include "cutoff/core/heap_tuning.hpp"

int main(int argc, char** argv) {
  // The servers it runs keep freed heap for the next request (see heap_tuning.hpp).
  cutoff::tune_heap_for_serving();
  // Named, so usage lines say `cutoff ...` rather than the path the binary was started by.
  CLI::App app{"cutoff: request deadlines that stop the work at every layer.\n", "cutoff"};
  app.formatter(std::make_shared<cutoff::cli::HelpFormatter>());  // before the commands: they inherit it
  app.set_version_flag("--version", std::string("cutoff ") + CUTOFF_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Run 'cutoff COMMAND --help' for a command's options.\n"
      "Documents and JSON are given inline, as @FILE, or as - for standard input; --budget-ms is the\n"
      "caller's time budget. Exit codes: 0 ok, 2 invalid input or usage, 6 deadline_exceeded,\n"
      "130/143 stopped by SIGINT/SIGTERM, 1 any other failure, a port in use too (docs/cli.md).\n");
  cutoff::cli::AddDemoCommand(app);
  cutoff::cli::AddSqlCommand(app);
  cutoff::cli::AddGraphqlCommand(app);
  cutoff::cli::AddGraphqlServeCommand(app);
  cutoff::cli::AddHttpCommand(app);
  cutoff::cli::AddGrpcCommand(app);
  cutoff::cli::AddLabCommand(app);
  cutoff::cli::AddOpsCommand(app);
  cutoff::cli::AddSagaCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command failed; it already said why
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // usage error
  }
  return 0;
}
