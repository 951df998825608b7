#include "cutoff/graphql/operation_limits.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cutoff::graphql {

namespace json = boost::json;

namespace {

constexpr double kCostCap = 1e18;
// Selection sets nested inside one definition are bounded by the parser's depth limit; this
// only guards against a parser configured without one.
constexpr std::size_t kMaxNesting = 4096;

double Saturate(double x) { return x > kCostCap ? kCostCap : x; }

struct Measure {
  double cost = 0;
  std::size_t depth = 0;
  void add(const Measure& m) {
    cost = Saturate(cost + m.cost);
    depth = std::max(depth, m.depth);
  }
};

// The size a `sizedFields` parent hands to the child fields it names.
struct Sized {
  const ListSize* list_size;
  double size;
};

std::optional<double> NumberOf(const json::value& v) {
  if (v.is_int64()) return static_cast<double>(v.get_int64());
  if (v.is_uint64()) return static_cast<double>(v.get_uint64());
  if (v.is_double()) return v.get_double();
  return std::nullopt;
}

class Analyzer {
 public:
  Analyzer(const Schema& schema, const Document& document, const json::object& variables,
           const OperationLimits& limits)
      : schema_(schema), variables_(variables), limits_(limits) {
    for (const FragmentDefinition& f : document.fragments) fragments_.emplace(f.name, &f);
  }

  OperationMeasure Run(const OperationDefinition& op) {
    OperationMeasure out;
    if (!MeasureFragments(op)) {
      out.error = GraphQLError{"The operation's fragments form a cycle.", {op.loc}, {}, graphql_codes::kValidationFailed};
      return out;
    }
    const Measure m = Set(op.selection_set, schema_.root_type(op.type), nullptr, 0);
    out.cost = m.cost;
    out.depth = too_nested_ ? std::max(m.depth, kMaxNesting + 1) : m.depth;
    out.error = std::move(error_);
    return out;
  }

 private:
  // Measures every fragment the operation reaches, each once, in an order where a fragment
  // comes after every fragment it spreads (an explicit stack: spread chains are as long as
  // the document allows). False on a cycle.
  bool MeasureFragments(const OperationDefinition& op) {
    enum class State : std::uint8_t { open, done };
    std::unordered_map<const FragmentDefinition*, State> state;
    struct Frame {
      const FragmentDefinition* fragment;
      std::vector<std::string_view> spreads;
      std::size_t next = 0;
    };
    std::vector<Frame> stack;
    // Pushes the fragment `name`; false when that closes a cycle.
    auto push = [&](std::string_view name) {
      auto it = fragments_.find(name);
      if (it == fragments_.end()) return true;
      auto [s, inserted] = state.try_emplace(it->second, State::open);
      if (!inserted) return s->second == State::done;
      Frame frame{it->second, {}, 0};
      Spreads(it->second->selection_set, frame.spreads, 0);
      stack.push_back(std::move(frame));
      return true;
    };
    std::vector<std::string_view> roots;
    Spreads(op.selection_set, roots, 0);
    for (std::string_view root : roots) {
      if (!push(root)) return false;
      while (!stack.empty()) {
        Frame& top = stack.back();
        if (top.next < top.spreads.size()) {
          const std::string_view name = top.spreads[top.next++];
          if (!push(name)) return false;  // `top` may dangle from here on
          continue;
        }
        const FragmentDefinition* f = top.fragment;
        stack.pop_back();
        state[f] = State::done;
        measured_[f] = Set(f->selection_set, schema_.find_type(f->type_condition), nullptr, 0);
      }
    }
    return true;
  }

  // The names of the fragments spread in `set` (within this definition).
  void Spreads(const SelectionSet& set, std::vector<std::string_view>& out, std::size_t nesting) {
    if (nesting > kMaxNesting) {
      too_nested_ = true;
      return;
    }
    for (const Selection& sel : set) {
      if (sel.kind == Selection::Kind::fragment_spread) out.push_back(sel.name);
      else Spreads(sel.selection_set, out, nesting + 1);
    }
  }

  Measure Set(const SelectionSet& set, const Type* parent, const Sized* sized, std::size_t nesting) {
    Measure total;
    if (nesting > kMaxNesting) {
      too_nested_ = true;
      return total;
    }
    for (const Selection& sel : set) {
      switch (sel.kind) {
        case Selection::Kind::field:
          total.add(FieldMeasure(sel, parent, sized, nesting));
          break;
        case Selection::Kind::fragment_spread: {
          auto f = fragments_.find(sel.name);
          if (f == fragments_.end()) break;
          auto m = measured_.find(f->second);
          if (m != measured_.end()) total.add(m->second);
          break;
        }
        case Selection::Kind::inline_fragment: {
          const Type* t = sel.type_condition.empty() ? parent : schema_.find_type(sel.type_condition);
          total.add(Set(sel.selection_set, t, sized, nesting + 1));
          break;
        }
      }
    }
    return total;
  }

  const Field* Definition(const Selection& sel, const Type* parent) const {
    if (parent == schema_.query_type()) {
      if (sel.name == "__schema") return &schema_.schema_meta_field();
      if (sel.name == "__type") return &schema_.type_meta_field();
    }
    return parent ? parent->find_field(sel.name) : nullptr;
  }

  Measure FieldMeasure(const Selection& sel, const Type* parent, const Sized* sized, std::size_t nesting) {
    if (sel.name == "__typename") return Measure{0, 1};
    const Field* def = Definition(sel, parent);
    if (!def || !def->type) return Measure{0, 1};  // validation reports it
    const Type& named = def->type->named();
    const double weight = def->cost ? *def->cost : named.cost ? *named.cost : named.is_composite() ? 1 : 0;
    double arguments = 0;
    for (const Argument& a : sel.arguments)
      if (const InputValue* iv = def->find_arg(a.name); iv && iv->cost) arguments += *iv->cost;

    const ListSize* ls = def->list_size ? &*def->list_size : nullptr;
    const std::optional<double> slicing = SlicingSize(*def, sel, parent);
    const double assumed = ls && ls->assumed_size ? *ls->assumed_size : limits_.default_list_size;
    const bool sizes_children = ls && !ls->sized_fields.empty();
    // A child its parent sizes (a connection's `edges`) takes the parent's slicing size.
    const bool sized_by_parent =
        sized && std::find(sized->list_size->sized_fields.begin(), sized->list_size->sized_fields.end(), sel.name) !=
                     sized->list_size->sized_fields.end();
    const double per_level = sized_by_parent ? sized->size : slicing && !sizes_children ? *slicing : assumed;
    double size = 1;
    for (const Type* t = def->type; t; t = t->of_type)
      if (t->is_list()) size = Saturate(size * per_level);

    Measure sub;
    if (!sel.selection_set.empty()) {
      const Sized children{ls, slicing.value_or(assumed)};
      sub = Set(sel.selection_set, &named, sizes_children ? &children : nullptr, nesting + 1);
    }
    return Measure{Saturate(arguments + Saturate(size * Saturate(weight + sub.cost))), sub.depth + 1};
  }

  // The largest slicing argument given (or defaulted), or nullopt when none is.
  std::optional<double> SlicingSize(const Field& def, const Selection& sel, const Type* parent) {
    if (!def.list_size || def.list_size->slicing_arguments.empty()) return std::nullopt;
    std::optional<double> largest;
    std::size_t given = 0;
    for (const std::string& name : def.list_size->slicing_arguments) {
      std::optional<double> value;
      bool present = false;
      const Argument* arg = nullptr;
      for (const Argument& a : sel.arguments)
        if (a.name == name) arg = &a;
      if (arg && arg->value.kind == Value::Kind::int_) {
        present = true;
        double v = 0;
        const std::string_view raw = arg->value.raw;
        std::from_chars(raw.data(), raw.data() + raw.size(), v);
        value = v;
      } else if (arg && arg->value.kind == Value::Kind::variable) {
        auto it = variables_.find(arg->value.raw);
        if (it != variables_.end() && !it->value().is_null()) {
          present = true;
          value = NumberOf(it->value());
        }
      } else if (!arg) {
        const InputValue* iv = def.find_arg(name);
        if (iv && iv->default_value && !iv->default_value->is_null()) {
          present = true;
          value = NumberOf(*iv->default_value);
        }
      }
      if (!present) continue;
      ++given;
      if (value) largest = std::max(largest.value_or(0), std::max(*value, 0.0));
    }
    if (def.list_size->require_one_slicing_argument && given != 1 && !error_) {
      std::string names;
      for (const std::string& n : def.list_size->slicing_arguments) names += (names.empty() ? "" : ", ") + n;
      error_ = GraphQLError::of(ErrorCode::invalid_argument,
                                "Field \"" + (parent ? parent->name : std::string("?")) + "." + def.name +
                                    "\" must be given exactly one of its slicing arguments (" + names + "); it got " +
                                    std::to_string(given) + ".",
                                {sel.loc});
    }
    return largest;
  }

  const Schema& schema_;
  const json::object& variables_;
  const OperationLimits& limits_;
  std::unordered_map<std::string_view, const FragmentDefinition*> fragments_;
  std::unordered_map<const FragmentDefinition*, Measure> measured_;
  std::optional<GraphQLError> error_;
  bool too_nested_ = false;
};

std::string CostText(double cost) {
  if (cost >= kCostCap) return "more than 10^18";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::llround(cost));
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

}  // namespace

OperationMeasure measure_operation(const Schema& schema, const Document& document,
                                   const OperationDefinition& operation, const json::object& variables,
                                   const OperationLimits& limits) {
  return Analyzer(schema, document, variables, limits).Run(operation);
}

std::optional<GraphQLError> check_operation_limits(const OperationMeasure& measure, const OperationLimits& limits) {
  if (measure.error) return measure.error;
  if (limits.max_depth > 0 && measure.depth > limits.max_depth)
    return GraphQLError{"The operation nests fields " + std::to_string(measure.depth) +
                            " levels deep with its fragments expanded; the limit is " +
                            std::to_string(limits.max_depth) + ".",
                        {},
                        {},
                        "DEPTH_LIMIT_EXCEEDED"};
  if (limits.max_cost > 0 && measure.cost > limits.max_cost)
    return GraphQLError{"The operation's estimated cost is " + CostText(measure.cost) + "; the limit is " +
                            CostText(limits.max_cost) + ".",
                        {},
                        {},
                        graphql_codes::kCostLimitExceeded};
  return std::nullopt;
}

}  // namespace cutoff::graphql
