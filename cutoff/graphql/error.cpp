#include "cutoff/graphql/error.hpp"

#include <cstdio>

namespace cutoff::graphql {

void GraphQLError::append_json(std::string& out) const {
  out += "{\"message\":";
  append_json_string(out, message);
  if (!locations.empty()) {
    out += ",\"locations\":[";
    for (std::size_t i = 0; i < locations.size(); ++i) {
      if (i) out.push_back(',');
      out += "{\"line\":" + std::to_string(locations[i].line) + ",\"column\":" + std::to_string(locations[i].column) + "}";
    }
    out.push_back(']');
  }
  if (!path.empty()) {
    out += ",\"path\":[";
    for (std::size_t i = 0; i < path.size(); ++i) {
      if (i) out.push_back(',');
      if (auto* key = std::get_if<std::string>(&path[i]))
        append_json_string(out, *key);
      else
        out += std::to_string(std::get<std::int64_t>(path[i]));
    }
    out.push_back(']');
  }
  if (!code.empty()) {
    out += ",\"extensions\":{\"code\":";
    append_json_string(out, code);
    out.push_back('}');
  }
  out.push_back('}');
}

GraphQLError GraphQLError::of(ErrorCode c, std::string message, std::vector<Location> locations,
                              std::vector<PathSegment> path) {
  const ErrorCodeInfo& row = info(c);
  if (message.empty()) message = std::string(row.summary);
  return GraphQLError{std::move(message), std::move(locations), std::move(path), std::string(row.graphql_code), c};
}

std::string GraphQLError::to_json() const {
  std::string out;
  append_json(out);
  return out;
}

}  // namespace cutoff::graphql
