#include "cutoff/grpc/client.hpp"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <variant>

#include "cutoff/core/budget_headers.hpp"
#include "cutoff/core/cancel.hpp"
#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/core/error.hpp"
#include "cutoff/grpc/internal/byte_buffers.hpp"
#include "cutoff/grpc/internal/status.hpp"
#include "cutoff/observe/deadline_metrics.hpp"
#include "cutoff/observe/trace.hpp"
#include "cutoff/resilience/metrics.hpp"

namespace cutoff::grpc {
namespace {

namespace asio = boost::asio;

// One attempt's gRPC state, shared by the coroutine and gRPC's completion callback (which
// may outlive the coroutine's interest, never the state).
struct Pending {
  ::grpc::ClientContext context;
  std::string method;  // gRPC keeps a pointer to it for the call's life
  ::grpc::ByteBuffer request;
  ::grpc::ByteBuffer response;
};

// Starts the call and completes `token` with its status on the handler's own executor. The
// executor is kept busy meanwhile: a gRPC call is not Asio work, and an io_context with nothing
// else to do would otherwise return from run() under the waiting coroutine.
template <typename Token>
auto AsyncUnary(::grpc::GenericStub& stub, std::shared_ptr<Pending> pending, Token&& token) {
  return asio::async_initiate<Token, void(::grpc::Status)>(
      [&stub](auto handler, std::shared_ptr<Pending> p) {
        using Handler = decltype(handler);
        auto work = asio::prefer(asio::get_associated_executor(handler), asio::execution::outstanding_work.tracked);
        auto h = std::make_shared<Handler>(std::move(handler));
        Pending* raw = p.get();
        stub.UnaryCall(&raw->context, raw->method, ::grpc::StubOptions(), &raw->request, &raw->response,
                       [h, work, p](::grpc::Status status) mutable {
                         asio::post(work, [h, status = std::move(status)]() mutable { std::move (*h)(std::move(status)); });
                       });
      },
      token, std::move(pending));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) throw std::invalid_argument("gRPC TLS: cannot read the CA file '" + path + "'");
  return text.str();
}

std::shared_ptr<::grpc::Channel> MakeChannel(const std::string& target, const ClientOptions& options) {
  ::grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_response_bytes > 0x7fffffff ? 0x7fffffff
                                                                        : static_cast<int>(options.max_response_bytes));
  // Retries are the policy's, with its retry budget; gRPC's own would multiply them.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  std::shared_ptr<::grpc::ChannelCredentials> creds = ::grpc::InsecureChannelCredentials();
  if (options.tls) {
    ::grpc::SslCredentialsOptions ssl;
    if (!options.tls->ca_file.empty()) ssl.pem_root_certs = ReadFile(options.tls->ca_file);
    if (!options.tls->server_name.empty()) args.SetSslTargetNameOverride(options.tls->server_name);
    creds = ::grpc::SslCredentials(ssl);
  }
  return ::grpc::CreateCustomChannel(target, creds, args);
}

std::optional<std::string_view> Trailer(const ::grpc::ClientContext& context, std::string_view key) {
  const auto& md = context.GetServerTrailingMetadata();
  const auto it = md.find(::grpc::string_ref(key.data(), key.size()));
  if (it == md.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

// What one call, all its attempts together, has learnt so far (as http::Client's).
struct CallState {
  bool may_write = true;
  bool repeatable = false;
  CommitLedger* ledger = nullptr;
  bool retry_safe = false;     // the latest attempt's: another attempt after it is safe
  bool maybe_applied = false;  // some attempt may have taken effect
  bool sent = false;           // some attempt left and got no answer
  bool last_answered = false;  // the latest attempt's failure was the server's answer

  void NoAnswer() {
    sent = true;
    last_answered = false;
    retry_safe = repeatable;
    if (may_write) NotePossibleEffect();
  }
  void Answered(bool rules_out_effect) {
    last_answered = true;
    retry_safe = repeatable || rules_out_effect;
    if (may_write && !rules_out_effect) NotePossibleEffect();
  }
  void NotePossibleEffect() {
    maybe_applied = true;
    if (ledger) ledger->note_commit_point(false);
  }
};

// Whether a failed answer shows the call took no effect. A cutoff server names its code, and
// reports a stop or failure after its commit point as commit_ambiguous: any other code it
// names was reported before anything became durable (internal says nothing). Any other
// server: a refusal of the request, or UNAVAILABLE / RESOURCE_EXHAUSTED, which gRPC defines as
// not processed (Attempt first sets apart those gRPC itself made after the server had the call).
bool RulesOutEffect(ErrorCode code, bool named_by_cutoff) {
  if (named_by_cutoff) return code != ErrorCode::commit_ambiguous && code != ErrorCode::internal;
  return is_caller_error(code) || code == ErrorCode::unavailable || code == ErrorCode::overloaded;
}

}  // namespace

struct Client::Impl {
  Impl(asio::any_io_executor ex, std::string tgt, ClientOptions opts)
      : executor(std::move(ex)),
        target(std::move(tgt)),
        options(std::move(opts)),
        channel(MakeChannel(target, options)),
        stub(channel),
        resilience_metrics(options.metrics ? std::make_unique<resilience::ResilienceMetrics>(*options.metrics)
                                           : nullptr),
        policy(options.name.empty() ? target : options.name, options.policy, resilience_metrics.get()) {
    if (options.metrics) stops.emplace(*options.metrics, "grpc_client");
  }

  asio::awaitable<std::string> Attempt(const Context& ctx, const Context& attempt, const std::string& method,
                                       const std::string& request, const CallOptions& call_options, CallState& call) {
    call.retry_safe = false;
    if (attempt.stop_requested() || (!attempt.deadline().is_never() && attempt.remaining() <= Duration::zero())) {
      call.retry_safe = true;  // nothing is sent for a spent budget: the server could only fail it
      if (attempt.stop_requested() && attempt.stop_reason() != StopReason::deadline_exceeded)
        throw Error::stopped(attempt.stop_reason(), ctx.request_id());
      throw Error(ErrorCode::deadline_exceeded, "not sent: the budget was spent before the call", ctx.request_id());
    }
    auto pending = std::make_shared<Pending>();
    pending->method = method;
    if (!attempt.deadline().is_never())
      pending->context.set_deadline(std::chrono::system_clock::now() +
                                    std::chrono::duration_cast<std::chrono::system_clock::duration>(attempt.remaining()));
    if (!ctx.request_id().empty()) pending->context.AddMetadata(std::string(internal::kRequestIdKey), ctx.request_id());
    if (!ctx.values().trace.traceparent.empty()) {
      if (auto tp = observe::parse_traceparent(ctx.values().trace.traceparent)) {
        pending->context.AddMetadata("traceparent", tp->child().to_string());
        if (!ctx.values().trace.tracestate.empty())
          pending->context.AddMetadata("tracestate", ctx.values().trace.tracestate);
      }
    }
    std::optional<std::string> budget_ms;
    if (options.reply_margin > Duration::zero())
      budget_ms = format_budget_ms(attempt.deadline(), options.reply_margin, attempt.clock());
    for (const auto& [key, value] : call_options.metadata) {
      if (budget_ms && key == internal::kBudgetMetadataKey) {
        // The caller's own value is kept only when it is tighter: the server reads one.
        const auto theirs = parse_budget_ms(value);
        if (std::holds_alternative<Duration>(theirs) &&
            std::get<Duration>(theirs) < std::get<Duration>(parse_budget_ms(*budget_ms)))
          budget_ms = value;
        continue;
      }
      pending->context.AddMetadata(key, value);
    }
    if (budget_ms) pending->context.AddMetadata(std::string(internal::kBudgetMetadataKey), *budget_ms);
    pending->request = internal::ToByteBuffer(request);

    // A stop at any moment from here on reaches the call: TryCancel is thread-safe, and sends
    // RST_STREAM once the call started (or ends it before it does).
    CancelCallback on_stop(attempt.token(), [p = pending.get()](StopReason) noexcept { p->context.TryCancel(); });
    observe::StopStamp stamp;
    if (stops) stamp.arm(attempt.token());
    auto calling = AsyncUnary(stub, pending, asio::use_awaitable);
    const ::grpc::Status status = co_await std::move(calling);
    if (status.ok()) {
      call.Answered(true);
      co_return internal::Flatten(pending->response);
    }
    if (attempt.stop_requested()) {
      // Our own stop cancelled it (or gRPC's deadline, the same budget, got there first).
      call.NoAnswer();
      if (stops) {
        if (ctx.stop_requested()) stops->record(ctx.stop_reason(), stamp.since_stop());
        else if (attempt.stop_reason() == StopReason::deadline_exceeded) stops->record("attempt_timeout", stamp.since_stop());
        else stops->record(attempt.stop_reason(), stamp.since_stop());
      }
      throw Error::stopped(ctx.stop_requested() ? ctx.stop_reason() : attempt.stop_reason(), ctx.request_id());
    }
    const auto named = Trailer(pending->context, internal::kErrorCodeTrailer);
    ErrorCode code = internal::CodeFor(status, named);
    // The server's own shutdown stopped it: for us, that server is unavailable (another may not be).
    if (code == ErrorCode::shutdown) code = ErrorCode::unavailable;
    const bool by_cutoff = named && parse_error_code(*named).has_value();
    if (code == ErrorCode::deadline_exceeded && !by_cutoff) {
      // gRPC's deadline passed in transit, a hair before ours: the same stop.
      call.NoAnswer();
      throw Error::stopped(StopReason::deadline_exceeded, ctx.request_id());
    }
    // No server named this code: gRPC's own status for a reply over our size limit
    // (RESOURCE_EXHAUSTED), or for a connection that broke once the server had the call (it
    // sent its headers) is no answer on the request's merits: for a write, it may have run.
    // gRPC does not tell a connection that broke before the request left from one that broke
    // after it and before any header came back: that UNAVAILABLE is taken as not sent.
    const bool server_had_it = !pending->context.GetServerInitialMetadata().empty();
    Error failed(
        code,
        method + ": " + (status.error_message().empty() ? std::string(info(code).summary) : status.error_message()),
        ctx.request_id());
    // The server's pushback: the policy's retry waits at least this long, or not at all.
    if (const auto pushback = Trailer(pending->context, internal::kRetryPushbackTrailer))
      failed.set_retry_after(internal::ParsePushback(*pushback));
    if (!by_cutoff && call.may_write &&
        (code == ErrorCode::overloaded || (code == ErrorCode::unavailable && server_had_it))) {
      call.NoAnswer();
      throw failed;
    }
    call.Answered(RulesOutEffect(code, by_cutoff));
    throw failed;
  }

  asio::any_io_executor executor;
  std::string target;
  ClientOptions options;
  std::shared_ptr<::grpc::Channel> channel;
  ::grpc::GenericStub stub;
  std::unique_ptr<resilience::ResilienceMetrics> resilience_metrics;
  resilience::Policy policy;
  std::optional<observe::LayerStops> stops;
};

Client::Client(asio::any_io_executor executor, std::string target)
    : Client(std::move(executor), std::move(target), ClientOptions{}) {}

Client::Client(asio::any_io_executor executor, std::string target, ClientOptions options)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(target), std::move(options))) {}

Client::~Client() = default;

asio::awaitable<std::string> Client::call(const Context& ctx, std::string method, std::string request) {
  co_return co_await call(ctx, std::move(method), std::move(request), CallOptions());
}

asio::awaitable<std::string> Client::call(const Context& ctx, std::string method, std::string request,
                                          CallOptions options) {
  CallState call;
  call.may_write = options.may_write;
  call.repeatable = options.idempotent;
  call.ledger = ctx.commit_ledger();
  resilience::PipelineCall rules;
  rules.retryable = [state = &call](const Error& e) { return state->retry_safe && retry_may_help(e.code()); };
  rules.may_hedge = options.idempotent || !options.may_write;
  rules.honours_context = true;  // Attempt() cancels its call when its context stops

  Impl* impl = impl_.get();
  if (impl->policy.throttle()) rules.key = method;  // the throttle keeps an account per method
  std::exception_ptr failure;
  try {
    auto running = impl->policy.run(
        ctx, [&](const Context& attempt) { return impl->Attempt(ctx, attempt, method, request, options, call); },
        std::move(rules));
    co_return co_await std::move(running);
  } catch (...) {
    failure = std::current_exception();
  }
  // An Asio abort here is our coroutine cancelled by its caller: a cancellation.
  Error last = to_error(failure, ctx.stop_requested() ? ctx.stop_reason() : StopReason::cancelled, ctx.request_id());
  // Nothing may have taken effect, or the server answered (its answer stands; the ledger
  // already heard of a possible effect): the error is the truth.
  if (!call.maybe_applied || (call.last_answered && last.stop_reason() == StopReason::none)) throw last;
  // Sent, not answered: reporting the stop or the timeout would read as "did not happen" one
  // hop up.
  throw Error(ErrorCode::commit_ambiguous,
              method + " on " + impl->target + " was sent but not answered (" + last.what() +
                  "): it may have taken effect; reconcile before repeating it",
              ctx.request_id());
}

resilience::Policy& Client::policy() noexcept { return impl_->policy; }
const std::string& Client::target() const noexcept { return impl_->target; }

}  // namespace cutoff::grpc
