// One connection's requests, from reading each to writing its answer: the session loop, the
// dispatch of a request to its route's handler (values, budget, stop and disconnect watch,
// metrics and log line) and the writing of responses.
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <chrono>
#include <exception>
#include <iterator>
#include <new>
#include <span>

#include "cutoff/core/commit_ledger.hpp"
#include "cutoff/http/error_document.hpp"
#include "cutoff/http/internal/beast_request.hpp"
#include "cutoff/http/internal/header_checks.hpp"
#include "cutoff/http/internal/request_id.hpp"
#include "cutoff/http/internal/request_reader.hpp"
#include "cutoff/http/internal/responses.hpp"
#include "cutoff/http/internal/server_impl.hpp"
#include "cutoff/http/internal/websocket_session.hpp"
#include "cutoff/observe/request_log.hpp"
#include "cutoff/observe/trace.hpp"

// g++ 12 reports Asio's coroutine frame delete as mismatched with its own operator new in
// large coroutines here (both are awaitable_frame_base's). Elsewhere the same warning was the
// sign of a real miscompile, a braced aggregate in a co_await expression (docs/architecture.md);
// this file has none of those, and its tests pass under ASan.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace cutoff::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
using asio::as_tuple;
using asio::use_awaitable;
using internal::Connection;
using internal::RouteEntry;
using SteadyClock = std::chrono::steady_clock;

namespace {

// Runs `f` when the scope it is declared in ends, however it ends.
template <typename F>
struct AtScopeEnd {
  F f;
  ~AtScopeEnd() { f(); }
};

// Views of a request's fields for parse_inbound_budget, on the stack: requests rarely carry
// more than 32. The slots are left unconstructed until used (initialising all 32 cost more
// than reading the headers).
class FieldViews {
 public:
  explicit FieldViews(const Headers& headers) {
    const auto& fields = headers.fields();
    if (fields.size() <= std::size(on_stack_.field)) {
      for (std::size_t i = 0; i < fields.size(); ++i)
        new (&on_stack_.field[i]) HeaderField{fields[i].name, fields[i].value};
      views_ = std::span<const HeaderField>(on_stack_.field, fields.size());
    } else {
      on_heap_ = headers.views();
      views_ = on_heap_;
    }
  }
  FieldViews(const FieldViews&) = delete;
  FieldViews& operator=(const FieldViews&) = delete;

  std::span<const HeaderField> get() const noexcept { return views_; }

 private:
  union Slots {
    Slots() noexcept {}
    HeaderField field[32];
  } on_stack_;
  std::vector<HeaderField> on_heap_;
  std::span<const HeaderField> views_;
};

// Continues the caller's W3C trace, if it sent one: our span is a child of the caller's, and
// outbound calls name it as their parent. Returns the trace id for the log (empty: none).
std::string ContinueTrace(const Request& req, TraceContext& trace) {
  const auto header = req.headers.get("traceparent");
  if (!header) return {};
  const auto parsed = observe::parse_traceparent(*header);
  if (!parsed) return {};
  const auto ours = parsed->child();
  trace.traceparent = ours.to_string();
  if (auto state = req.headers.get("tracestate")) trace.tracestate = std::string(*state);
  return ours.trace_id_hex();
}

// Gives `c` the values of the request to `route` it is about to run, and returns the trace id
// for the log. The values carry the mark set when the response is written (or abandoned):
// backends still working for the request after that record it as orphaned work.
std::string BindValues(Connection& c, const RouteEntry& route, const Request& req) {
  RequestValues& values = c.NextRequestValues();
  values.request_id = internal::RequestIdFor(req);
  values.operation = route.name;
  // A request that may write gets a ledger: whether its handler's work passed a commit point
  // (an effect region committed, a POST left for another service) decides whether a stop or
  // a failure that says nothing of the effect is answered commit_ambiguous (AnswerError).
  // Safe methods pay nothing.
  if (!safe_method(req.method)) values.commits = std::make_shared<CommitLedger>();
  values.response = c.NextResponseMark();
  return ContinueTrace(req, values.trace);
}

// What the context of request `gen` on `c` does when it stops (deadline, disconnect,
// shutdown): notes when, and cancels the handler through the session's cancellation signal,
// on the connection's executor, after the route's grace.
auto StopTheHandler(Connection& c, std::uint64_t gen, Duration grace, std::atomic<std::int64_t>& stopped_at) {
  return [&stopped_at, self = c.shared_from_this(), gen, grace](StopReason) noexcept {
    stopped_at.store(SteadyClock::now().time_since_epoch().count(), std::memory_order_relaxed);
    asio::post(self->executor, [self, gen, grace] { self->StopHandler(gen, grace); });
  };
}

// Arms the disconnect watch for request `gen` from the executor's queue: a handler that
// answers without ever suspending is done before it runs, and never pays for it (an
// epoll_ctl per request).
void WatchForDisconnect(Connection& c, std::uint64_t gen) {
  c.watching = false;
  asio::post(c.executor, [self = c.shared_from_this(), gen] {
    if (!self->busy || self->generation != gen) return;
    self->watching = true;
    self->WatchDisconnect(gen);
  });
}

// The handler of the current request returned: later stops and watch events are for nobody.
void EndHandlerPhase(Connection& c) {
  c.busy = false;
  ++c.generation;
  if (c.watching) {
    boost::system::error_code ignored;
    c.stream.socket().cancel(ignored);  // ends the disconnect watch
  }
}

// From the stop noted in `stopped_at` (0: none) to now.
Duration Overshoot(const std::atomic<std::int64_t>& stopped_at) {
  const auto stop_ns = stopped_at.load(std::memory_order_relaxed);
  if (stop_ns == 0) return Duration::zero();
  return SteadyClock::now().time_since_epoch() - SteadyClock::duration(stop_ns);
}

}  // namespace

asio::awaitable<void> Server::Impl::Session(std::shared_ptr<Impl> /*self*/, std::shared_ptr<Connection> c) {
  // The connection counts as open until the session ends, however it ends.
  const AtScopeEnd closed{[this, &connection = *c] { ConnectionClosed(connection); }};
  const auto& limits = options.limits;
  beast::flat_buffer buffer(limits.max_header_bytes + limits.max_body_bytes + 64 * 1024);
  // Cancelled reads complete with operation_aborted instead of throwing; the handler phase
  // turns throwing back on (see Dispatch).
  co_await asio::this_coro::throw_if_cancelled(false);
  try {
    if (c->stream.tls() && !co_await Handshake(*c)) {
      c->Close();
      co_return;
    }
    for (bool first = true;; first = false) {
      if (shutting_down.load()) break;
      co_await asio::this_coro::reset_cancellation_state();
      internal::BeastRequestParser parser;
      internal::configure_request_parser(parser, limits.max_header_bytes, limits.max_body_bytes);
      if (const auto failure = co_await internal::ReadRequest(*c, buffer, parser, limits, first)) {
        if (failure->status != 0) co_await AnswerUnreadable(*c, failure->status, failure->message);
        break;
      }
      const bool upgrade = beast::websocket::is_upgrade(parser.get());
      const bool keep_alive = parser.get().keep_alive();
      internal::BeastRequest beast_request = parser.release();
      Request req =
          internal::to_request(upgrade ? internal::BeastRequest(beast_request) : std::move(beast_request), c->remote);
      const internal::RouteMatch match = routes.Find(req.path(), req.method, upgrade);
      if (upgrade && match.route) {
        // Built apart from the co_await: g++ 12 miscompiles a braced aggregate in a full-expression
        // holding a co_await (docs/architecture.md, "Compilers").
        internal::WebSocketEnvironment env{.limits = limits, .background = Background(), .log = log};
        co_await internal::ServeWebSocket(*c, *match.route, std::move(beast_request), std::move(req), std::move(env));
        break;
      }

      const auto started = SteadyClock::now();
      std::optional<Response> res;
      if (match.route) {
        res = co_await Dispatch(*c, *match.route, req, started);
        metrics.CountRequest(match.route->series, match.route->name, res ? res->status : 499,
                             SteadyClock::now() - started);
      } else {
        res = internal::UnroutedResponse(match, req.path());
        metrics.CountUnmatched(res->status);
      }
      if (!res) {  // the client is gone: nothing to write
        c->MarkResponseSent();
        break;
      }
      const bool keep = keep_alive && !shutting_down.load() && !c->close_after;
      const bool written =
          co_await WriteResponse(*c, *res, req.version, keep, req.method == "HEAD", limits.write_timeout);
      c->MarkResponseSent();
      if (!written || !keep) break;
    }
  } catch (const std::exception& e) {
    log.ConnectionError(e.what());
  }
  c->Close();
}

asio::awaitable<bool> Server::Impl::Handshake(Connection& c) {
  c.SetIoDeadlineAt(c.accepted + options.limits.header_timeout);
  auto [ec] = co_await c.stream.async_handshake(asio::ssl::stream_base::server, as_tuple(use_awaitable));
  c.ClearIoDeadline();
  if (!ec) co_return true;
  // Scanners, plain HTTP sent to a TLS port, clients that distrust our certificate: common and
  // of no interest one by one, so counted, never logged.
  metrics.CountBadRequest(c.io_timed_out ? "tls_handshake_timeout" : "tls_handshake_failed");
  co_return false;
}

asio::awaitable<void> Server::Impl::AnswerUnreadable(Connection& c, int status, const std::string& message) {
  co_await asio::this_coro::reset_cancellation_state();
  const std::string_view code = internal::ReadErrorCode(status);
  metrics.CountBadRequest(code);
  const Response r = Response::json(status, error_document(code, message, {}));
  co_await WriteResponse(c, r, 11, /*keep_alive=*/false, false, std::chrono::seconds(2));
}

asio::awaitable<std::optional<Response>> Server::Impl::Dispatch(Connection& c, RouteEntry& route, const Request& req,
                                                                SteadyClock::time_point started) {
  const std::string trace_id = BindValues(c, route, req);
  const RequestValues& values = *c.values;
  internal::DispatchResult result;
  if (route.options.bind_deadline) result.budget = BindBudget(route, req, values.request_id);
  resilience::ServiceTimeAdmission::Ticket timing;  // the handler's service time, with admission
  if (!result.budget) {
    const Context ctx = Background().with_values(std::shared_ptr<const RequestValues>(c.values));
    result.response = co_await RunHandler(route, req, ctx, result.failed);
  } else if (*result.budget <= Duration::zero()) {
    // Entry fail-fast: the caller's budget is already spent; no handler runs.
    RefuseAtEntry(
        route,
        Error(ErrorCode::deadline_exceeded, "the request's budget was already spent on arrival", values.request_id),
        result);
  } else if (route.admission_key && !AdmitByServiceTime(route, *result.budget, values.request_id, timing, result)) {
    // Refused before starting: the budget is below the route's recent service time.
  } else {
    const Context base = Background().with_values(std::shared_ptr<const RequestValues>(c.values));
    auto [ctx, source] = base.with_cancel(Deadline::after(*result.budget, base.clock()));
    c.busy = true;
    c.stop_source = source;
    const std::uint64_t gen = ++c.generation;
    in_flight.fetch_add(1);
    metrics.HandlerStarted();
    std::atomic<std::int64_t> stopped_at{0};
    {
      CancelCallback on_stop(ctx.token(), StopTheHandler(c, gen, route.options.stop_grace, stopped_at));
      WatchForDisconnect(c, gen);
      co_await asio::this_coro::throw_if_cancelled(true);
      Response handled = co_await RunHandler(route, req, ctx, result.failed);
      co_await asio::this_coro::throw_if_cancelled(false);
      EndHandlerPhase(c);
      co_await asio::this_coro::reset_cancellation_state();
      result.stop = ctx.stop_reason();
      // A stopped run ran at least this long (censored); a failure says nothing of the work.
      if (result.stop != StopReason::none) timing.stopped();
      else if (!result.failed && handled.status < 400) timing.completed();
      // A client that went away gets nothing; otherwise the handler's answer (for a stopped
      // handler, RunHandler already turned the stop into the taxonomy's response).
      if (result.stop != StopReason::cancelled) result.response = std::move(handled);
    }
    if (result.stop != StopReason::none) metrics.HandlerStopped(route.name, result.stop, Overshoot(stopped_at));
    in_flight.fetch_sub(1);
    metrics.HandlerEnded();
    c.stop_source.reset();
  }
  if (result.response) result.response->headers.set("X-Request-Id", values.request_id);
  if (log.enabled()) LogRequest(values, result, started, trace_id);
  co_return std::move(result.response);
}

bool Server::Impl::AdmitByServiceTime(const RouteEntry& route, Duration budget, const std::string& request_id,
                                      resilience::ServiceTimeAdmission::Ticket& timing,
                                      internal::DispatchResult& result) {
  try {
    timing = route.options.admission->admit(budget, route.admission_key, request_id);
    return true;
  } catch (const Error& e) {
    RefuseAtEntry(route, e, result);
    return false;
  }
}

void Server::Impl::RefuseAtEntry(const RouteEntry& route, const Error& e, internal::DispatchResult& result) {
  metrics.RefusedAtEntry(route.name);
  result.failed = e.code();
  result.response = internal::ErrorResponse(e, e.request_id());
}

Duration Server::Impl::BindBudget(const RouteEntry& route, const Request& req, const std::string& request_id) {
  const FieldViews fields(req.headers);
  const InboundBudget inbound = parse_inbound_budget(fields.get(), options.budget, &std::chrono::system_clock::now);
  if (!inbound.rejected.empty()) {
    for (const auto& r : inbound.rejected) metrics.BudgetHeaderRejected(r.name, to_string(r.reason));
    log.RejectedBudgetHeader(inbound.rejected.front(), request_id);
  }
  Duration budget = inbound.budget;
  if (route.options.budget) budget = std::min(budget, *route.options.budget);
  if (inbound.from_caller) metrics.BudgetReceived(inbound.budget);
  return budget;
}

asio::awaitable<Response> Server::Impl::RunHandler(const RouteEntry& route, const Request& req, const Context& ctx,
                                                   std::optional<ErrorCode>& failed) {
  std::exception_ptr failure;
  try {
    co_return co_await route.handler(req, ctx);
  } catch (...) {
    failure = std::current_exception();
  }
  // A handler cancelled because its context stopped reports the stop, not the abort.
  const Error e = to_error(failure, ctx.stop_reason(), ctx.request_id());
  if (e.code() == ErrorCode::internal) log.HandlerError(ctx, e.message());
  co_return AnswerError(route, ctx, e, failed);
}

Response Server::Impl::AnswerError(const RouteEntry& route, const Context& ctx, const Error& raw,
                                   std::optional<ErrorCode>& failed) {
  const CommitLedger* ledger = ctx.commit_ledger();
  const Error e = ledger ? report_after_commit_point(raw, *ledger, "request " + route.name) : raw;
  failed = e.code();
  if (e.code() == ErrorCode::commit_ambiguous) metrics.CommitAmbiguous(route.name);
  return internal::ErrorResponse(e, ctx.request_id());
}

void Server::Impl::LogRequest(const RequestValues& values, const internal::DispatchResult& result,
                              SteadyClock::time_point started, const std::string& trace_id) const {
  observe::RequestLog entry;
  entry.request_id = values.request_id;
  entry.operation = values.operation;
  if (!result.response) {
    entry.outcome = "cancelled";
  } else if (result.stop != StopReason::none) {
    // The handler answered (e.g. a partial GraphQL result) but its context was stopped.
    entry.outcome = std::string(to_string(error_code_for(result.stop)));
  } else if (result.failed) {
    entry.outcome = std::string(to_string(*result.failed));
  } else {
    const int status = result.response->status;
    entry.outcome = status < 400 ? std::string("ok") : "http_" + std::to_string(status);
  }
  if (result.budget) entry.budget_received = std::chrono::ceil<std::chrono::milliseconds>(*result.budget);
  entry.time_used = SteadyClock::now() - started;
  entry.trace_id = trace_id;
  log.Request(entry);
}

asio::awaitable<bool> Server::Impl::WriteResponse(Connection& c, const Response& r, unsigned version, bool keep_alive,
                                                  bool head_only, Duration timeout) {
  bool dropped = false;
  const std::string head = internal::SerializeHead(r, version, keep_alive, &dropped);
  if (dropped) {
    metrics.CountBadRequest("invalid_response_header");
    log.ResponseHeaderDropped();
  }
  const bool bodiless = head_only || internal::Bodiless(r.status);
  const std::array<asio::const_buffer, 2> buffers{asio::buffer(head),
                                                  bodiless ? asio::const_buffer() : asio::buffer(r.body)};
  c.SetIoDeadline(timeout);
  auto [ec, n] = co_await asio::async_write(c.stream, buffers, as_tuple(use_awaitable));
  c.ClearIoDeadline();
  co_return !ec;
}

}  // namespace cutoff::http
