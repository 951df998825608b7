#include "cutoff/graphql/internal/field_collection.hpp"

#include "cutoff/graphql/values.hpp"

namespace cutoff::graphql::internal {

FieldCollector::FieldCollector(const Schema& schema, const Document& document, const boost::json::object& variables)
    : schema_(schema), variables_(variables) {
  for (const auto& f : document.fragments) fragments_[f.name] = &f;
}

FieldGroup::Kind FieldCollector::KindOf(const Field* def) const {
  if (!def || def == &schema_.typename_meta_field() || !def->args.empty() || def->budget || def->async)
    return FieldGroup::Kind::general;
  if (def->read_member) return FieldGroup::Kind::member_leaf;
  const Type& t = def->type->nullable();
  if (def->sync && t.kind == TypeKind::scalar && t.builtin != BuiltinScalar::none) return FieldGroup::Kind::sync_leaf;
  return FieldGroup::Kind::general;
}

const Collected& FieldCollector::Collect(const Type& type, const void* key, std::span<const SelectionSet* const> sets) {
  auto [it, inserted] = cache_.try_emplace(CacheKey{&type, key});
  if (!inserted) return *it->second;
  auto c = std::make_unique<Collected>();
  std::unordered_map<std::string_view, std::size_t> index;
  std::unordered_set<std::string_view> visited;
  for (const SelectionSet* s : sets) CollectInto(type, *s, c->groups, index, visited);
  for (FieldGroup& g : c->groups) {
    const std::string_view name = g.nodes[0]->name;
    if (name == "__typename") g.def = &schema_.typename_meta_field();
    else if (&type == schema_.query_type() && name == "__schema") g.def = &schema_.schema_meta_field();
    else if (&type == schema_.query_type() && name == "__type") g.def = &schema_.type_meta_field();
    else g.def = type.find_field(name);
    g.member.push_back(',');
    append_json_string(g.member, g.key);
    g.member.push_back(':');
    g.kind = KindOf(g.def);
  }
  it->second = std::move(c);
  return *it->second;
}

const Collected& FieldCollector::CollectSubFields(const Type& object_type, const FieldGroup& group) {
  const Collected* c;
  if (group.nodes.size() == 1) {
    const SelectionSet* set = &group.nodes[0]->selection_set;
    c = &Collect(object_type, &group, {&set, 1});
  } else {
    std::vector<const SelectionSet*> sets;
    for (const Selection* n : group.nodes) sets.push_back(&n->selection_set);
    c = &Collect(object_type, &group, sets);
  }
  group.sub_type = &object_type;
  group.sub = c;
  return *c;
}

void FieldCollector::CollectInto(const Type& type, const SelectionSet& root, std::vector<FieldGroup>& groups,
                                 std::unordered_map<std::string_view, std::size_t>& index,
                                 std::unordered_set<std::string_view>& visited) const {
  // Depth first on an explicit stack: a chain of fragment spreads is as long as the
  // document, and the depth limit does not see spreads that select no field in between.
  std::vector<std::pair<const SelectionSet*, std::size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    auto& [set, next] = stack.back();
    if (next == set->size()) {
      stack.pop_back();
      continue;
    }
    const Selection& sel = (*set)[next++];
    if (!ShouldInclude(sel.directives)) continue;
    switch (sel.kind) {
      case Selection::Kind::field: {
        const std::string_view key = sel.response_key();
        auto [it, inserted] = index.try_emplace(key, groups.size());
        if (inserted) groups.push_back(FieldGroup{key, {}, nullptr});
        groups[it->second].nodes.push_back(&sel);
        break;
      }
      case Selection::Kind::fragment_spread: {
        if (!visited.insert(sel.name).second) break;
        auto it = fragments_.find(sel.name);
        if (it == fragments_.end() || !FragmentApplies(type, it->second->type_condition)) break;
        stack.emplace_back(&it->second->selection_set, 0);  // `set` and `next` dangle now
        break;
      }
      case Selection::Kind::inline_fragment:
        if (!FragmentApplies(type, sel.type_condition)) break;
        stack.emplace_back(&sel.selection_set, 0);
        break;
    }
  }
}

bool FieldCollector::ShouldInclude(const std::vector<Directive>& directives) const {
  for (const Directive& d : directives) {
    const bool skip = d.name == "skip";
    if (!skip && d.name != "include") continue;
    for (const Argument& a : d.arguments) {
      if (a.name != "if") continue;
      bool value = false;
      if (a.value.kind == Value::Kind::boolean) {
        value = a.value.boolean;
      } else if (a.value.kind == Value::Kind::variable) {
        auto it = variables_.find(a.value.raw);
        value = it != variables_.end() && it->value().is_bool() && it->value().get_bool();
      }
      if (skip && value) return false;
      if (!skip && !value) return false;
    }
  }
  return true;
}

bool FieldCollector::FragmentApplies(const Type& object_type, std::string_view condition) const {
  if (condition.empty()) return true;
  const Type* t = schema_.find_type(condition);
  if (!t) return false;
  if (t == &object_type) return true;
  return t->is_abstract() && schema_.is_possible_type(*t, object_type);
}

}  // namespace cutoff::graphql::internal
