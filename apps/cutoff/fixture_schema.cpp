#include "fixture_schema.hpp"

#include <boost/json/parse.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "cutoff/graphql/fixture.hpp"

namespace cutoff::cli {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

std::optional<FixtureSchema> LoadFixtureSchema(const std::string& schema_path, const std::string& fixture_path,
                                               std::string* error) {
  std::string sdl, fixture_text;
  if (!ReadFile(schema_path, &sdl)) {
    *error = "cannot read schema file " + schema_path;
    return std::nullopt;
  }
  if (!ReadFile(fixture_path, &fixture_text)) {
    *error = "cannot read fixture file " + fixture_path;
    return std::nullopt;
  }
  graphql::SchemaResult built = graphql::Schema::from_sdl(sdl);
  if (!built.ok()) {
    // Every error, each where it is in the schema file (path:line:column, as compilers do).
    *error = "invalid schema:";
    for (const graphql::GraphQLError& e : built.errors) {
      *error += "\n  " + schema_path;
      if (!e.locations.empty())
        *error += ":" + std::to_string(e.locations[0].line) + ":" + std::to_string(e.locations[0].column);
      *error += ": " + e.message;
    }
    return std::nullopt;
  }
  graphql::install_fixture_resolvers(*built.schema);
  boost::system::error_code ec;
  FixtureSchema out{std::move(built.schema), boost::json::parse(fixture_text, ec)};
  if (ec || !out.fixture.is_object()) {
    *error = "the fixture must be a JSON object";
    return std::nullopt;
  }
  return out;
}

}  // namespace cutoff::cli
