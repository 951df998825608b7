#include "cutoff/ops/registry.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace cutoff::ops {

struct OpSpec {
  std::string name;
  Handler handler;
  std::optional<Duration> deadline;
  DeadlineSource source;  // of `deadline`: plan, or a patch settled by materialize_patches()
  std::string description;
  std::optional<std::string> tag;
  std::optional<boost::json::value> request_schema;
  std::optional<boost::json::value> response_schema;
  bool takes_idempotency_key = false;
  std::vector<BeforeHook> before;
  std::vector<AfterHook> after;
};

struct PatchSpec {
  Selector selector;
  std::optional<Duration> deadline;
  std::optional<std::string> tag;
  std::vector<BeforeHook> before;
  std::vector<AfterHook> after;
};

struct Registry::Impl {
  std::vector<OpSpec> ops;
  std::vector<PatchSpec> patches;  // in registration order
  bool frozen = false;
  std::map<std::string, ResolvedOperation, std::less<>> resolved;

  void CheckMutable() const {
    if (frozen) throw ConfigError(ConfigError::Kind::frozen, "the operation registry is frozen; it cannot be changed");
  }
  void CheckFrozen() const {
    if (!frozen) throw ConfigError(ConfigError::Kind::not_frozen, "freeze() the operation registry before using it");
  }
  bool Has(std::string_view name) const {
    return std::any_of(ops.begin(), ops.end(), [&](const OpSpec& op) { return op.name == name; });
  }
  void CheckOrphans() const {
    for (const PatchSpec& p : patches) {
      const bool used = std::any_of(ops.begin(), ops.end(), [&](const OpSpec& op) { return p.selector.matches(op.name); });
      if (!used)
        throw ConfigError(ConfigError::Kind::orphan_patch,
                          "patch \"" + p.selector.to_string() + "\" matches no operation");
    }
  }
  ResolvedOperation Resolve(const OpSpec& op) const;
};

namespace {

void CheckBudget(Duration d, std::string_view what) {
  if (d <= Duration::zero())
    throw ConfigError(ConfigError::Kind::non_positive_budget,
                      std::string(what) + ": a deadline must be positive");
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

std::string DeadlineSource::to_string() const {
  switch (kind) {
    case Kind::none: return "none";
    case Kind::plan: return "plan";
    case Kind::patch: return "patch " + selector;
  }
  return "none";
}

ResolvedOperation Registry::Impl::Resolve(const OpSpec& op) const {
  // The matching patches, least specific first, ties in registration order.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < patches.size(); ++i)
    if (patches[i].selector.matches(op.name)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return patches[a].selector.specificity() < patches[b].selector.specificity();
  });
  // Most specific first, ties in registration order: who wins a tie.
  std::vector<std::size_t> precedence = order;
  std::stable_sort(precedence.begin(), precedence.end(), [&](std::size_t a, std::size_t b) {
    return patches[b].selector.specificity() < patches[a].selector.specificity();
  });

  ResolvedOperation r;
  r.info.name = op.name;
  r.info.description = op.description;
  r.info.request_schema = op.request_schema;
  r.info.response_schema = op.response_schema;
  r.info.takes_idempotency_key = op.takes_idempotency_key;
  r.handler = op.handler;

  // Deadline: the minimum of all; on equal budgets the plan, then the more specific patch,
  // then the earlier one is named as the source.
  r.info.deadline = op.deadline;
  if (op.deadline) r.info.deadline_source = op.source;
  for (std::size_t i : precedence) {
    const PatchSpec& p = patches[i];
    if (p.deadline && (!r.info.deadline || *p.deadline < *r.info.deadline)) {
      r.info.deadline = p.deadline;
      r.info.deadline_source = {DeadlineSource::Kind::patch, p.selector.to_string()};
    }
  }

  // Tag: the operation's own, else the most specific patch's; equally specific patches must agree.
  if (op.tag) {
    r.info.tag = *op.tag;
  } else {
    const PatchSpec* chosen = nullptr;
    for (std::size_t i : precedence) {
      const PatchSpec& p = patches[i];
      if (!p.tag) continue;
      if (!chosen) {
        chosen = &p;
      } else if (p.selector.specificity() == chosen->selector.specificity()) {
        if (*p.tag != *chosen->tag)
          throw ConfigError(ConfigError::Kind::ambiguous_patches,
                            "operation " + Quoted(op.name) + ": patches " + Quoted(chosen->selector.to_string()) +
                                " and " + Quoted(p.selector.to_string()) +
                                " are equally specific and set different tags (" + Quoted(*chosen->tag) + ", " +
                                Quoted(*p.tag) + "); make one selector more specific or tag the operation itself");
      } else {
        break;  // less specific than the chosen one
      }
    }
    if (chosen) r.info.tag = *chosen->tag;
  }

  // Hooks: an onion, broadest patch outermost, the operation's own innermost.
  for (std::size_t i : order)
    for (const BeforeHook& h : patches[i].before) r.before.push_back(h);
  for (const BeforeHook& h : op.before) r.before.push_back(h);
  for (const AfterHook& h : op.after) r.after.push_back(h);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const auto& hooks = patches[*it].after;
    for (auto h = hooks.rbegin(); h != hooks.rend(); ++h) r.after.push_back(*h);
  }
  return r;
}

// OperationBuilder

OpSpec& Registry::OperationBuilder::spec() const {
  registry_->impl_->CheckMutable();
  return registry_->impl_->ops[index_];
}

Registry::OperationBuilder& Registry::OperationBuilder::deadline(Duration budget) {
  OpSpec& op = spec();
  CheckBudget(budget, "operation " + Quoted(op.name));
  op.deadline = budget;
  op.source = {DeadlineSource::Kind::plan, {}};
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::handler(Handler h) {
  spec().handler = std::move(h);
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::before(BeforeHook hook) {
  spec().before.push_back(std::move(hook));
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::after(AfterHook hook) {
  spec().after.push_back(std::move(hook));
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::describe(std::string description) {
  spec().description = std::move(description);
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::tag(std::string tag) {
  spec().tag = std::move(tag);
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::request_schema(boost::json::value schema) {
  spec().request_schema = std::move(schema);
  return *this;
}
Registry::OperationBuilder& Registry::OperationBuilder::response_schema(boost::json::value schema) {
  spec().response_schema = std::move(schema);
  return *this;
}

Registry::OperationBuilder& Registry::OperationBuilder::takes_idempotency_key() {
  spec().takes_idempotency_key = true;
  return *this;
}

// PatchBuilder

PatchSpec& Registry::PatchBuilder::spec() const {
  registry_->impl_->CheckMutable();
  return registry_->impl_->patches[index_];
}

Registry::PatchBuilder& Registry::PatchBuilder::deadline(Duration budget) {
  PatchSpec& p = spec();
  CheckBudget(budget, "patch " + Quoted(p.selector.to_string()));
  p.deadline = budget;
  return *this;
}
Registry::PatchBuilder& Registry::PatchBuilder::tag(std::string tag) {
  spec().tag = std::move(tag);
  return *this;
}
Registry::PatchBuilder& Registry::PatchBuilder::before(BeforeHook hook) {
  spec().before.push_back(std::move(hook));
  return *this;
}
Registry::PatchBuilder& Registry::PatchBuilder::after(AfterHook hook) {
  spec().after.push_back(std::move(hook));
  return *this;
}

// Registry

Registry::Registry() : impl_(std::make_unique<Impl>()) {}
Registry::~Registry() = default;
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;

Registry::OperationBuilder Registry::bind(std::string name) {
  impl_->CheckMutable();
  if (!valid_operation_name(name))
    throw ConfigError(ConfigError::Kind::invalid_name,
                      "invalid operation name " + Quoted(name.substr(0, kMaxNameLength)) +
                          ": use dot-separated segments of letters, digits, '_' and '-'");
  if (impl_->Has(name))
    throw ConfigError(ConfigError::Kind::duplicate_operation, "operation " + Quoted(name) + " is bound twice");
  impl_->ops.push_back(OpSpec{.name = std::move(name)});
  return OperationBuilder(this, impl_->ops.size() - 1);
}

Registry::PatchBuilder Registry::patch(std::string_view selector) { return patch(Selector::parse(selector)); }

Registry::PatchBuilder Registry::patch(Selector selector) {
  impl_->CheckMutable();
  impl_->patches.push_back(PatchSpec{.selector = std::move(selector)});
  return PatchBuilder(this, impl_->patches.size() - 1);
}

Registry& Registry::merge(const Registry& other) {
  impl_->CheckMutable();
  for (const OpSpec& op : other.impl_->ops)
    if (impl_->Has(op.name))
      throw ConfigError(ConfigError::Kind::duplicate_operation,
                        "operation " + Quoted(op.name) + " is bound in both merged registries");
  for (const OpSpec& op : other.impl_->ops) impl_->ops.push_back(op);
  for (const PatchSpec& p : other.impl_->patches) impl_->patches.push_back(p);
  return *this;
}

Registry& Registry::materialize_patches() {
  impl_->CheckMutable();
  impl_->CheckOrphans();
  std::vector<ResolvedOperation> resolved;
  resolved.reserve(impl_->ops.size());
  for (const OpSpec& op : impl_->ops) resolved.push_back(impl_->Resolve(op));
  for (std::size_t i = 0; i < impl_->ops.size(); ++i) {
    OpSpec& op = impl_->ops[i];
    ResolvedOperation& r = resolved[i];
    op.deadline = r.info.deadline;
    op.source = r.info.deadline_source;
    if (!r.info.tag.empty()) op.tag = r.info.tag;
    op.before = std::move(r.before);
    op.after = std::move(r.after);
  }
  impl_->patches.clear();
  return *this;
}

Registry& Registry::freeze() {
  if (impl_->frozen) return *this;
  for (const OpSpec& op : impl_->ops)
    if (!op.handler)
      throw ConfigError(ConfigError::Kind::missing_handler, "operation " + Quoted(op.name) + " has no handler");
  impl_->CheckOrphans();
  std::map<std::string, ResolvedOperation, std::less<>> resolved;
  for (const OpSpec& op : impl_->ops) resolved.emplace(op.name, impl_->Resolve(op));
  impl_->resolved = std::move(resolved);
  impl_->frozen = true;
  return *this;
}

bool Registry::frozen() const noexcept { return impl_->frozen; }

const ResolvedOperation* Registry::find(std::string_view name) const {
  impl_->CheckFrozen();
  auto it = impl_->resolved.find(name);
  return it == impl_->resolved.end() ? nullptr : &it->second;
}

std::vector<const ResolvedOperation*> Registry::operations() const {
  impl_->CheckFrozen();
  std::vector<const ResolvedOperation*> out;
  out.reserve(impl_->resolved.size());
  for (const auto& [name, op] : impl_->resolved) out.push_back(&op);
  return out;
}

std::size_t Registry::operation_count() const noexcept { return impl_->ops.size(); }
std::size_t Registry::patch_count() const noexcept { return impl_->patches.size(); }

}  // namespace cutoff::ops
