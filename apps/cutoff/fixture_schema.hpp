// Loading a schema served from a JSON fixture, for `cutoff graphql exec` and `graphql serve`.
//
//   std::string error;
//   auto loaded = LoadFixtureSchema("s.graphql", "f.json", &error);
//   if (!loaded) return Fail(error);
//   request.root_value = graphql::Data::json(&loaded->fixture);
#ifndef CUTOFF_APPS_CUTOFF_FIXTURE_SCHEMA_HPP_
#define CUTOFF_APPS_CUTOFF_FIXTURE_SCHEMA_HPP_

#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>

#include "cutoff/graphql/schema.hpp"

namespace cutoff::cli {

// The whole file, or false when it cannot be read.
bool ReadFile(const std::string& path, std::string* out);

struct FixtureSchema {
  std::unique_ptr<graphql::Schema> schema;  // with the fixture resolvers installed
  boost::json::value fixture;               // a JSON object; the root value
};

// Reads the SDL and the fixture; nullopt with a message for the user on any failure.
std::optional<FixtureSchema> LoadFixtureSchema(const std::string& schema_path, const std::string& fixture_path,
                                               std::string* error);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_FIXTURE_SCHEMA_HPP_
