#include "cutoff/grpc/internal/server_call.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <vector>

#include "cutoff/core/asio.hpp"
#include "cutoff/core/budget_headers.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/core/json_text.hpp"
#include "cutoff/grpc/internal/byte_buffers.hpp"
#include "cutoff/grpc/internal/call_deadline.hpp"
#include "cutoff/grpc/internal/status.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/request_id.hpp"
#include "cutoff/observe/request_log.hpp"
#include "cutoff/observe/trace.hpp"

namespace cutoff::grpc::internal {
namespace {

namespace asio = boost::asio;
using SystemClock = std::chrono::system_clock;

std::string_view View(const ::grpc::string_ref& s) { return std::string_view(s.data(), s.size()); }

std::optional<std::string_view> Metadata(const ::grpc::GenericCallbackServerContext& call, std::string_view key) {
  const auto& md = call.client_metadata();
  const auto it = md.find(::grpc::string_ref(key.data(), key.size()));
  if (it == md.end()) return std::nullopt;
  return View(it->second);
}

}  // namespace

ServerCall::ServerCall(Server::Impl& server, ::grpc::GenericCallbackServerContext& call, MethodEntry& method)
    : server_(server), call_(call), method_(method), arrived_(SteadyClock::now()) {
  auto values = std::make_shared<RequestValues>();
  const auto id = Metadata(call, kRequestIdKey);
  values->request_id = id && observe::valid_request_id(*id) ? std::string(*id) : observe::new_request_id();
  values->operation = method.name;
  values->commits = std::make_shared<CommitLedger>();
  values->response = std::make_shared<ResponseMark>();
  if (const auto header = Metadata(call, "traceparent")) {
    if (const auto parsed = observe::parse_traceparent(*header)) {
      const auto ours = parsed->child();
      values->trace.traceparent = ours.to_string();
      if (const auto state = Metadata(call, "tracestate")) values->trace.tracestate = std::string(*state);
      trace_id_ = ours.trace_id_hex();
    }
  }

  // The budget: every budget header sent as metadata, the service maximum, the gRPC deadline
  // (grpc-timeout, which gRPC has already turned into `deadline()`), the method's own.
  std::vector<HeaderField> fields;
  for (const auto& [key, value] : call.client_metadata()) {
    const std::string_view k = View(key);
    if (k.size() < 4 || k.substr(k.size() - 4) != "-bin") fields.push_back({k, View(value)});
  }
  const InboundBudget inbound = parse_inbound_budget(fields, server.options.budget, &SystemClock::now);
  for (const auto& r : inbound.rejected) server.metrics.BudgetHeaderRejected(r.name, to_string(r.reason));
  budget_ = inbound.budget;
  budget_from_caller_ = inbound.from_caller;
  // From the raw deadline: deadline() overflows for the far ones grpc-timeout allows.
  if (const Duration left = RemainingUntil(call.raw_deadline()); left != Duration::max()) {
    budget_ = std::min(budget_, left);
    budget_from_caller_ = true;
  }
  if (method.options.budget) budget_ = std::min(budget_, *method.options.budget);
  if (budget_from_caller_) server.metrics.BudgetReceived(std::max(budget_, Duration::zero()));

  const Context base = server.Background().with_values(std::shared_ptr<const RequestValues>(std::move(values)));
  auto [ctx, source] = base.with_cancel(Deadline::after(std::max(budget_, Duration::zero()), base.clock()));
  ctx_ = std::move(ctx);
  source_ = std::move(source);

  call.AddInitialMetadata(std::string(kRequestIdKey), ctx_.request_id());
  server.Track(this);
  if (budget_ <= Duration::zero()) {
    // Entry fail-fast: the caller's budget is already spent; no handler runs, and the call
    // does not wait for a request message it would not use.
    waiting_on_client_ = false;
    server.metrics.RefusedAtEntry(method_.name);
    Answer(Failed(
        Error(ErrorCode::deadline_exceeded, "the call's budget was already spent on arrival", ctx_.request_id())));
    return;
  }
  stall_guard_.emplace(ctx_.token(), StallGuard{this});
  StartRead(&request_);
}

void ServerCall::WaitOnClient() noexcept {
  waiting_on_client_ = true;
  if (ctx_.stop_requested()) call_.TryCancel();  // the guard ran before this wait began
}

void ServerCall::OnReadDone(bool ok) {
  if (!ok) {  // the client half-closed without a message, or the call is already over
    Answer(Failed(source_.stop_requested()
                      ? Error::stopped(source_.reason(), ctx_.request_id())
                      : Error(ErrorCode::invalid_argument, "the call carried no request message", ctx_.request_id())));
    return;
  }
  waiting_on_client_ = false;
  if (method_.inline_handler) {
    Answer(HandleInline());  // the last thing: OnDone may delete the call right after
    return;
  }
  strand_ = asio::make_strand(server_.executor);
  bridge_ = std::make_shared<StopBridge>();
  asio::co_spawn(strand_, Run(),
                 asio::bind_cancellation_slot(bridge_->signal.slot(), [bridge = bridge_](const std::exception_ptr&) {}));
}

template <typename T>
asio::awaitable<T> ServerCall::StoppedBy(const Context& ctx, asio::awaitable<T> handler) {
  ctx.check();  // a context already stopped runs nothing
  const std::uint64_t run = ++bridge_->run;
  std::exception_ptr failure;
  std::optional<T> value;
  {
    CancelCallback on_stop(ctx.token(), [bridge = bridge_, strand = strand_, run](StopReason) noexcept {
      asio::post(strand, [bridge, run] {
        if (bridge->run == run) bridge->signal.emit(asio::cancellation_type::terminal);
      });
    });
    try {
      value.emplace(co_await std::move(handler));
    } catch (...) {
      failure = std::current_exception();
    }
  }
  ++bridge_->run;  // a stop emitted late for this run is ignored
  co_await asio::this_coro::reset_cancellation_state();
  if (failure) std::rethrow_exception(failure);
  co_return std::move(*value);
}

void ServerCall::OnWriteDone(bool ok) {
  waiting_on_client_ = false;
  std::function<void(bool)> done;
  {
    std::lock_guard lock(write_mu_);
    done = std::move(write_done_);
  }
  if (done) asio::post(strand_, [done = std::move(done), ok] { done(ok); });
}

asio::awaitable<bool> ServerCall::Write(std::string message) {
  response_ = ToByteBuffer(std::move(message));
  return asio::async_initiate<decltype(asio::use_awaitable), void(bool)>(
      [this](auto handler) {
        auto shared = std::make_shared<decltype(handler)>(std::move(handler));
        {
          std::lock_guard lock(write_mu_);
          write_done_ = [shared](bool ok) { std::move (*shared)(ok); };
        }
        WaitOnClient();
        StartWrite(&response_);
      },
      asio::use_awaitable);
}

void ServerCall::OnCancel() {
  // gRPC says only that the call is over for its client: the reason is ours to tell.
  // gRPC's own deadline timer may fire a hair before our context's (each read the clock at
  // its own moment): a cancel within a few milliseconds of either deadline is that deadline.
  constexpr auto kSameMoment = std::chrono::milliseconds(5);
  StopReason why = StopReason::cancelled;
  if (server_.shutting_down.load()) why = StopReason::shutdown;
  else if (ctx_.remaining() <= kSameMoment || RemainingUntil(call_.raw_deadline()) <= kSameMoment)
    why = StopReason::deadline_exceeded;
  source_.request_stop(why);
}

void ServerCall::OnDone() {
  server_.Untrack(this);
  delete this;
}

asio::awaitable<void> ServerCall::Run() {
  Outcome outcome;
  try {
    outcome = co_await Handle();
  } catch (...) {
    // Outside the handler (a request copy that could not be made): the call still ends, or
    // its slot and the server's shutdown would wait for it forever.
    outcome = Outcome();
    outcome.error = Error(ErrorCode::internal, "the call could not be handled", ctx_.request_id());
  }
  Answer(std::move(outcome));  // the last thing: OnDone may delete the call right after
}

asio::awaitable<ServerCall::Outcome> ServerCall::Handle() {
  if (source_.stop_requested()) co_return Failed(Error::stopped(source_.reason(), ctx_.request_id()));

  std::string request = Flatten(request_);
  request_.Clear();  // the handler has its copy: a big request is not held twice
  if (method_.stream) co_return co_await Stream(std::move(request));
  observe::StopStamp stamp;
  stamp.arm(ctx_.token());
  std::optional<std::string> response;
  std::exception_ptr failure;
  try {
    // Named, not a temporary of the co_await (g++ 12, docs/architecture.md).
    auto running = StoppedBy(ctx_, method_.handler(std::move(request), ctx_));
    response = co_await std::move(running);
  } catch (...) {
    failure = std::current_exception();
  }
  co_return Ran(std::move(response), failure, stamp);
}

ServerCall::Outcome ServerCall::HandleInline() {
  if (source_.stop_requested()) return Failed(Error::stopped(source_.reason(), ctx_.request_id()));
  std::string request;
  std::optional<std::string> response;
  std::exception_ptr failure;
  observe::StopStamp stamp;
  stamp.arm(ctx_.token());
  try {
    request = Flatten(request_);
    request_.Clear();
    ctx_.check();  // a context already stopped runs nothing
    response = method_.inline_handler(std::move(request), ctx_);
  } catch (...) {
    failure = std::current_exception();
  }
  return Ran(std::move(response), failure, stamp);
}

ServerCall::Outcome ServerCall::Ran(std::optional<std::string> response, const std::exception_ptr& failure,
                                    const observe::StopStamp& stamp) {
  Outcome outcome;
  outcome.response = std::move(response);
  outcome.stop = ctx_.stop_reason();
  if (outcome.stop != StopReason::none) server_.metrics.HandlerStopped(method_.name, outcome.stop, stamp.since_stop());
  if (!failure) return outcome;
  return Failure(failure, outcome.stop);
}

asio::awaitable<ServerCall::Outcome> ServerCall::Stream(std::string request) {
  observe::StopStamp stamp;
  stamp.arm(ctx_.token());
  for (std::size_t index = 0;; ++index) {
    const Context message = method_.options.message_budget ? ctx_.with_timeout(*method_.options.message_budget) : ctx_;
    std::optional<std::string> next;
    std::exception_ptr failure;
    try {
      auto producing = StoppedBy(message, method_.stream(request, index, message));
      next = co_await std::move(producing);
    } catch (...) {
      failure = std::current_exception();
    }
    const StopReason stop = ctx_.stop_reason();
    if (failure && stop == StopReason::none && message.stop_requested()) {
      // This message's own budget ran out: skip it, the stream goes on.
      server_.metrics.MessageCut(method_.name);
      continue;
    }
    if (stop != StopReason::none) server_.metrics.HandlerStopped(method_.name, stop, stamp.since_stop());
    if (failure) co_return Failure(failure, stop);
    if (stop != StopReason::none) co_return Failure(nullptr, stop);
    if (!next) co_return Outcome();  // the end of the stream: OK
    auto writing = Write(std::move(*next));
    if (!co_await std::move(writing)) {
      // The call is over for the client (it cancelled or went away) while this message was
      // being written, between two runs of the handler: the stream stops here, counted as any
      // other stop.
      const StopReason why = source_.stop_requested() ? source_.reason() : StopReason::cancelled;
      server_.metrics.HandlerStopped(method_.name, why, stamp.since_stop());
      co_return Failure(nullptr, why);
    }
    server_.metrics.MessageSent(method_.name);
  }
}

ServerCall::Outcome ServerCall::Failure(const std::exception_ptr& failure, StopReason stop) {
  const Error raw = failure ? to_error(failure, stop, ctx_.request_id()) : Error::stopped(stop, ctx_.request_id());
  if (raw.code() == ErrorCode::internal && server_.options.log) {  // the same line as the HTTP server's
    std::string line = "{\"event\":\"handler_error\",\"request_id\":";
    append_json_string(line, ctx_.request_id());
    line += ",\"operation\":";
    append_json_string(line, method_.name);
    line += ",\"message\":";
    append_json_string(line, raw.message());
    line += "}";
    server_.Log(line);
  }
  Outcome failed = Failed(raw);
  failed.stop = stop;
  return failed;
}

ServerCall::Outcome ServerCall::Failed(const Error& raw) {
  Outcome out;
  // A call whose work passed a commit point and then failed or stopped may have taken effect.
  const CommitLedger* ledger = ctx_.commit_ledger();
  out.error = ledger ? report_after_commit_point(raw, *ledger, "call " + method_.name) : raw;
  if (out.error->code() == ErrorCode::commit_ambiguous) server_.metrics.CommitAmbiguous(method_.name);
  return out;
}

void ServerCall::Answer(Outcome outcome) {
  const ::grpc::Status status = outcome.error ? StatusFor(*outcome.error) : ::grpc::Status::OK;
  const Duration took = SteadyClock::now() - arrived_;
  server_.metrics.CountCall(method_.series, static_cast<int>(status.error_code()), took);
  if (server_.options.log) {
    try {
      observe::RequestLog line;
      line.request_id = ctx_.request_id();
      line.operation = method_.name;
      line.outcome = outcome.error ? std::string(to_string(outcome.error->code())) : "ok";
      if (budget_from_caller_)
        line.budget_received = std::chrono::duration_cast<std::chrono::milliseconds>(std::max(budget_, Duration::zero()));
      line.time_used = took;
      line.trace_id = trace_id_;
      server_.Log(line.to_json());
    } catch (...) {
      // A log line that could not be written never keeps the call from finishing.
    }
  }
  if (const auto& mark = ctx_.values().response) mark->mark_sent(SteadyClock::now());
  if (outcome.error) {
    call_.AddTrailingMetadata(std::string(kErrorCodeTrailer), std::string(to_string(outcome.error->code())));
    if (outcome.error->retry_after() && retry_may_help(outcome.error->code()))
      call_.AddTrailingMetadata(std::string(kRetryPushbackTrailer), FormatPushback(*outcome.error->retry_after()));
    Finish(status);
    return;
  }
  if (!outcome.response) {  // a stream's end: its messages are written
    Finish(status);
    return;
  }
  response_ = ToByteBuffer(std::move(*outcome.response));
  // An answer that came in time waits for the client to take it only until the deadline; one
  // that came after its deadline has its chance (the guard has already run). Set before the
  // write: OnDone may delete the call as soon as it is finished.
  waiting_on_client_ = true;
  StartWriteAndFinish(&response_, ::grpc::WriteOptions(), status);
}

}  // namespace cutoff::grpc::internal
