#include "cutoff/core/cancel.hpp"

namespace cutoff {

CancelSource::CancelSource() : state_(internal::RefPtr<internal::StopState>::adopt(new internal::StopState)) {}

struct CancelRegistration::Node : internal::CallbackNode {
  Node(internal::RefPtr<internal::StopState> s, std::function<void(StopReason)> fn)
      : CallbackNode(&Invoke), f(std::move(fn)), state(std::move(s)) {}

  static void Invoke(CallbackNode* self, StopReason reason) noexcept {
    static_cast<Node*>(self)->f(reason);
  }

  std::function<void(StopReason)> f;
  internal::RefPtr<internal::StopState> state;
};

void CancelRegistration::NodeDeleter::operator()(Node* n) const noexcept {
  if (n->state) n->state->remove(n);
  delete n;
}

CancelRegistration::CancelRegistration(const CancelToken& token, std::function<void(StopReason)> f) {
  if (!token.state_) return;
  node_.reset(new Node(token.state_, std::move(f)));
  if (!node_->state->add(node_.get())) node_->state = {};
}

}  // namespace cutoff
