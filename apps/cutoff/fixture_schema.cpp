#include "fixture_schema.hpp"

#include <string>

#include "conventions.hpp"
#include "fixture/fixture_resolvers.hpp"

namespace cutoff::cli {

std::optional<FixtureSchema> LoadFixtureSchema(const std::string& schema_arg, const std::string& fixture_arg,
                                               std::string* error) {
  std::optional<Input> sdl = ReadFileInput("--schema", schema_arg, error);
  if (!sdl) return std::nullopt;
  std::optional<Input> fixture_text = ReadFileInput("--fixture", fixture_arg, error);
  if (!fixture_text) return std::nullopt;
  graphql::SchemaResult built = graphql::Schema::from_sdl(sdl->text);
  if (!built.ok()) {
    // Every error, each where it is in the schema file (path:line:column, as compilers do).
    *error = "invalid schema:";
    for (const graphql::GraphQLError& e : built.errors) {
      *error += "\n  " + sdl->source;
      if (!e.locations.empty())
        *error += ":" + std::to_string(e.locations[0].line) + ":" + std::to_string(e.locations[0].column);
      *error += ": " + e.message;
    }
    return std::nullopt;
  }
  graphql::install_fixture_resolvers(*built.schema);
  std::optional<boost::json::object> fixture = ParseJsonObject(*fixture_text, "the fixture", error);
  if (!fixture) return std::nullopt;
  return FixtureSchema{std::move(built.schema), boost::json::value(std::move(*fixture))};
}

}  // namespace cutoff::cli
