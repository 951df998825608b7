// The `cutoff` command line.
#include <CLI/CLI.hpp>
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cutoff: request deadlines that stop the work at every layer.\n"};
  app.set_version_flag("--version", std::string("cutoff ") + CUTOFF_VERSION);
  app.require_subcommand(1);
  app.footer("Run 'cutoff COMMAND --help' for a command's options.");
  cutoff::cli::AddDemoCommand(app);
  cutoff::cli::AddSqlCommand(app);
  cutoff::cli::AddGraphqlCommand(app);
  cutoff::cli::AddGraphqlServeCommand(app);
  cutoff::cli::AddHttpCommand(app);
  cutoff::cli::AddLabCommand(app);
  cutoff::cli::AddOpsCommand(app);
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
