// Loading a schema served from a JSON fixture, for `cutoff graphql exec` and `graphql serve`.
//
//   std::string error;
//   auto loaded = LoadFixtureSchema(opts.schema, opts.fixture, &error);  // PATH, @PATH or -
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

struct FixtureSchema {
  std::unique_ptr<graphql::Schema> schema;  // with the fixture resolvers installed
  boost::json::value fixture;               // a JSON object; the root value
};

// Reads the SDL (--schema) and the fixture (--fixture), each named as ReadFileInput takes it;
// nullopt with a message for the user on any failure, naming the file and, for a schema or
// JSON error, where in it (path:line:column: message).
std::optional<FixtureSchema> LoadFixtureSchema(const std::string& schema_arg, const std::string& fixture_arg,
                                               std::string* error);

}  // namespace cutoff::cli

#endif  // CUTOFF_APPS_CUTOFF_FIXTURE_SCHEMA_HPP_
