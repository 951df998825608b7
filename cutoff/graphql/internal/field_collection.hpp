// Field collection (spec 6.3.2 CollectFields): the fields a selection set selects on an object
// type, grouped by response key, with @skip/@include applied and fragments expanded. Each
// (type, selection) is collected once per execution; a field remembers the sub-selection it
// collected for the type it completed as last, so the objects of a list cost one comparison
// each, not a lookup.
//
//   FieldCollector fields(schema, document, variables);
//   const Collected& root = fields.collect(*schema.query_type(), operation.selection_set);
//   for (const FieldGroup& g : root.groups) ... fields.sub_fields(object_type, g) ...
#ifndef CUTOFF_GRAPHQL_INTERNAL_FIELD_COLLECTION_HPP_
#define CUTOFF_GRAPHQL_INTERNAL_FIELD_COLLECTION_HPP_

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cutoff/graphql/ast.hpp"
#include "cutoff/graphql/schema.hpp"

namespace cutoff::graphql::internal {

struct Collected;

// The selections of one response key.
struct FieldGroup {
  std::string_view key;
  std::vector<const Selection*> nodes;
  const Field* def = nullptr;  // null: not a field of the type (validation rejects these)
  std::string member;          // `,"key":`, written before the field's value (without the comma for the first)
  // How the executor can run the field without deciding each time what kind of field it is
  // (decided once, when the field is collected):
  // - general: any field;
  // - sync_leaf: a synchronous resolver, no arguments, no @budget, of a built-in scalar type;
  // - member_leaf: a data member (Schema::member), no arguments, no @budget.
  // Either fast kind falls back to the general way for a value it does not write itself.
  enum class Kind : std::uint8_t { general, sync_leaf, member_leaf };
  Kind kind = Kind::general;
  // The sub-selection collected for the object type the field completed as last (most
  // fields complete as one type: this saves a lookup per object).
  mutable const Type* sub_type = nullptr;
  mutable const Collected* sub = nullptr;

  // Where errors at this field point.
  std::vector<Location> locations() const { return {nodes[0]->loc}; }
};

struct Collected {
  std::vector<FieldGroup> groups;
};

// Collects for one execution: `document` and `variables` (which @skip/@include read) must
// outlive it.
class FieldCollector {
 public:
  FieldCollector(const Schema& schema, const Document& document, const boost::json::object& variables);
  FieldCollector(const FieldCollector&) = delete;
  FieldCollector& operator=(const FieldCollector&) = delete;

  // The fields `set` selects on the object type `type` (an operation's root fields).
  const Collected& collect(const Type& type, const SelectionSet& set) {
    const SelectionSet* sets[] = {&set};
    return Collect(type, &set, sets);
  }

  // The fields the selections of `group` select on `object_type`, the type its value
  // completed as.
  const Collected& sub_fields(const Type& object_type, const FieldGroup& group) {
    if (group.sub_type == &object_type) return *group.sub;
    return CollectSubFields(object_type, group);
  }

 private:
  struct CacheKey {
    const Type* type;
    const void* selection;
    friend bool operator==(const CacheKey&, const CacheKey&) = default;
  };
  struct CacheKeyHash {
    std::size_t operator()(const CacheKey& k) const noexcept {
      return std::hash<const void*>()(k.type) * 31 + std::hash<const void*>()(k.selection);
    }
  };

  // The fields of `sets` for `type`, cached per (type, key).
  const Collected& Collect(const Type& type, const void* key, std::span<const SelectionSet* const> sets);
  const Collected& CollectSubFields(const Type& object_type, const FieldGroup& group);
  void CollectInto(const Type& type, const SelectionSet& root, std::vector<FieldGroup>& groups,
                   std::unordered_map<std::string_view, std::size_t>& index,
                   std::unordered_set<std::string_view>& visited) const;
  bool ShouldInclude(const std::vector<Directive>& directives) const;
  FieldGroup::Kind KindOf(const Field* def) const;
  bool FragmentApplies(const Type& object_type, std::string_view condition) const;

  const Schema& schema_;
  const boost::json::object& variables_;
  std::unordered_map<std::string_view, const FragmentDefinition*> fragments_;
  std::unordered_map<CacheKey, std::unique_ptr<Collected>, CacheKeyHash> cache_;
};

}  // namespace cutoff::graphql::internal

#endif  // CUTOFF_GRAPHQL_INTERNAL_FIELD_COLLECTION_HPP_
