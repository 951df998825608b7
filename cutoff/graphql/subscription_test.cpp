// Subscriptions: source streams, one response per event, per-event deadlines, stops.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <thread>

#include "cutoff/core/error.hpp"
#include "cutoff/graphql/executor.hpp"
#include "cutoff/graphql/parser.hpp"
#include "cutoff/graphql/validation.hpp"
#include "fixture/fixture_resolvers.hpp"
#include "tests/support/run_sync.hpp"
#include "tests/support/sleep.hpp"
#include "tests/support/time_scale.hpp"

namespace cutoff::graphql {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using cutoff::test_support::Sleep;
using cutoff::test_support::TimeScale;
using Clock = std::chrono::steady_clock;

const char* kSchema = R"(
  type Query { a: Int }
  type Subscription {
    ticks(from: Int = 0, label: String): Tick
    numbers: Int
    noSource: Int
  }
  type Tick { n: Int label: String slow: Int capped: Int @budget(ms: 50) fails: Int }
)";

Data JsonEvent(const char* text) { return Data::json_value(json::parse(text)); }

// Everything a drained subscription produced, with when each next() returned.
struct Drained {
  bool started = false;
  Response start_errors;
  std::vector<Response> responses;
  std::vector<Clock::duration> at;  // since subscribe() was called
  Subscription::End end = Subscription::End::none;
  StopReason stop_reason = StopReason::none;
  Response failure;
  Clock::time_point start;
  Clock::time_point ended;  // when next() returned nullopt
};

class Subs : public ::testing::Test {
 protected:
  void SetUp() override {
    SchemaResult r = Schema::from_sdl(kSchema);
    ASSERT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].message);
    schema_ = std::move(r.schema);
    // Tick.slow sleeps for the event's "slow_ms" (0 when absent), then returns n.
    schema_->resolve_async("Tick", "slow", [](FieldContext& f) -> asio::awaitable<Data> {
      const json::object& o = f.parent.if_json()->as_object();
      const auto* ms = o.if_contains("slow_ms");
      co_await Sleep(std::chrono::milliseconds(ms ? ms->to_number<std::int64_t>() : 0));
      co_return Data::from(o.at("n").to_number<std::int64_t>());
    });
    schema_->resolve_async("Tick", "capped", [](FieldContext&) -> asio::awaitable<Data> {
      co_await Sleep(10s);
      co_return Data::from(1);
    });
    schema_->resolve("Tick", "fails", [](FieldContext& f) -> Data {
      const std::int64_t n = f.parent.if_json()->as_object().at("n").to_number<std::int64_t>();
      if (n == 2) throw FieldError("no value for 2", "NO_VALUE");
      return Data::from(n);
    });
  }

  // Sets the source of Subscription.ticks: the given events, `interval` apart.
  void TicksFrom(std::vector<Data> events, Clock::duration interval = Clock::duration::zero()) {
    auto shared = std::make_shared<std::vector<Data>>(std::move(events));
    schema_->subscribe("Subscription", "ticks",
                       [shared, interval](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
                         co_return events_from(*shared, interval);
                       });
  }

  // Subscribes to `query` under `ctx` and calls next() until the stream ends.
  Drained Drain(const std::string& query, Context ctx = Context(), SubscribeOptions options = {},
                const std::string& variables = "{}") {
    ParseResult parsed = parse(query);
    EXPECT_TRUE(parsed.ok()) << (parsed.error ? parsed.error->message : "");
    EXPECT_TRUE(validate(*schema_, *parsed.document).empty());
    Request req;
    req.document = parsed.document.get();
    req.variables = json::parse(variables).as_object();
    return cutoff::test_support::RunSync([&]() -> asio::awaitable<Drained> {
      Drained d;
      d.start = Clock::now();
      SubscribeResult s = co_await subscribe(*schema_, req, ctx, options);
      d.started = s.ok();
      if (!s.ok()) {
        d.start_errors = std::move(s.errors);
        co_return d;
      }
      while (std::optional<Response> r = co_await s.subscription->next()) {
        d.at.push_back(Clock::now() - d.start);
        d.responses.push_back(std::move(*r));
      }
      d.ended = Clock::now();
      d.end = s.subscription->end();
      d.stop_reason = s.subscription->stop_reason();
      d.failure = s.subscription->failure();
      // Once ended, next() keeps saying so.
      EXPECT_FALSE(co_await s.subscription->next());
      co_return d;
    });
  }

  // Requests a stop of `source` after `delay`, from another thread; `*when` gets the time.
  static std::thread StopAfter(CancelSource source, Clock::duration delay, Clock::time_point* when) {
    return std::thread([source, delay, when] {
      std::this_thread::sleep_for(delay);
      *when = Clock::now();
      source.request_stop(StopReason::cancelled);
    });
  }

  std::unique_ptr<Schema> schema_;
};

std::vector<std::string> Json(const std::vector<Response>& rs) {
  std::vector<std::string> out;
  for (const Response& r : rs) out.push_back(r.to_json());
  return out;
}

TEST_F(Subs, EventsAreDeliveredInOrder) {
  TicksFrom({JsonEvent(R"({"n": 1, "label": "a"})"), JsonEvent(R"({"n": 2})"), JsonEvent(R"({"n": 3})")}, 20ms);
  Drained d = Drain("subscription { ticks { n label } }");
  ASSERT_TRUE(d.started) << d.start_errors.to_json();
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"ticks":{"n":1,"label":"a"}}})",
                                                          R"({"data":{"ticks":{"n":2,"label":null}}})",
                                                          R"({"data":{"ticks":{"n":3,"label":null}}})"}));
  EXPECT_EQ(d.end, Subscription::End::completed);
  EXPECT_GE(d.at[2], 40ms);  // the interval is kept
}

TEST_F(Subs, TheEventIsTheRootFieldsValueUnlessItsResolverMapsIt) {
  schema_->subscribe("Subscription", "numbers", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    co_return events_from({Data::from(1), Data::from(2)});
  });
  Drained d = Drain("subscription { numbers }");
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"numbers":1}})", R"({"data":{"numbers":2}})"}));

  // A resolver receives the event as its parent (the spec's root value) and maps it.
  schema_->resolve("Subscription", "numbers", [](FieldContext& f) {
    return Data::from(std::get<std::int64_t>(f.parent.storage()) * 10);
  });
  d = Drain("subscription { numbers }");
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"numbers":10}})", R"({"data":{"numbers":20}})"}));
}

TEST_F(Subs, VariablesAndArgumentsReachTheSourceResolver) {
  schema_->subscribe("Subscription", "ticks", [](FieldContext& f) -> asio::awaitable<std::unique_ptr<EventStream>> {
    const std::int64_t from = f.arg("from")->as_int64();
    const std::string label = f.arg_string("label");
    co_await Sleep(1ms);  // a source resolver may wait (e.g. to register a listener)
    std::vector<Data> events;
    for (std::int64_t n = from; n < from + 2; ++n)
      events.push_back(Data::json_value(json::object{{"n", n}, {"label", label}}));
    co_return events_from(std::move(events));
  });
  Drained d = Drain("subscription S($start: Int!) { ticks(from: $start, label: \"x\") { n label } }", Context(), {},
                    R"({"start": 5})");
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"ticks":{"n":5,"label":"x"}}})",
                                                          R"({"data":{"ticks":{"n":6,"label":"x"}}})"}));
  // The argument's default applies too.
  d = Drain("subscription { ticks { n } }");
  EXPECT_EQ(Json(d.responses),
            (std::vector<std::string>{R"({"data":{"ticks":{"n":0}}})", R"({"data":{"ticks":{"n":1}}})"}));
}

TEST_F(Subs, AFieldErrorInOneEventDoesNotEndTheStream) {
  TicksFrom({JsonEvent(R"({"n": 1})"), JsonEvent(R"({"n": 2})"), JsonEvent(R"({"n": 3})")});
  Drained d = Drain("subscription { ticks { n fails } }");
  ASSERT_EQ(d.responses.size(), 3u);
  EXPECT_EQ(d.responses[1].to_json(),
            R"({"errors":[{"message":"no value for 2","locations":[{"line":1,"column":26}],)"
            R"("path":["ticks","fails"],"extensions":{"code":"NO_VALUE"}}],"data":{"ticks":{"n":2,"fails":null}}})");
  EXPECT_EQ(d.responses[2].to_json(), R"({"data":{"ticks":{"n":3,"fails":3}}})");
  EXPECT_EQ(d.end, Subscription::End::completed);
}

TEST_F(Subs, AnEventOverrunningItsBudgetIsCutAndTheNextArrivesOnTime) {
  const int s = TimeScale();
  const auto budget = 100ms * s;
  const auto interval = 400ms * s;
  TicksFrom({JsonEvent(R"({"n": 1, "slow_ms": 10000})"), JsonEvent(R"({"n": 2})")}, interval);
  SubscribeOptions options;
  options.event_budget = budget;
  Drained d = Drain("subscription { ticks { n slow } }", Context(), options);
  ASSERT_EQ(d.responses.size(), 2u);
  EXPECT_EQ(d.responses[0].data, R"({"ticks":{"n":1,"slow":null}})");
  ASSERT_EQ(d.responses[0].errors.size(), 1u);
  EXPECT_EQ(d.responses[0].errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(d.responses[0].errors[0].path, (std::vector<PathSegment>{"ticks", "slow"}));
  EXPECT_GE(d.at[0], budget);
  EXPECT_LT(d.at[0], budget + 200ms * s);  // cut at its budget, not after 10 s
  // The stream went on: the second event came on its schedule, with its own budget.
  EXPECT_EQ(d.responses[1].to_json(), R"({"data":{"ticks":{"n":2,"slow":2}}})");
  EXPECT_GE(d.at[1], interval - 5ms);
  EXPECT_LT(d.at[1], interval + 200ms * s);
  EXPECT_EQ(d.end, Subscription::End::completed);
}

TEST_F(Subs, BudgetDirectivesStillApplyInsideAnEvent) {
  TicksFrom({JsonEvent(R"({"n": 1})")});
  SubscribeOptions options;
  options.event_budget = 5s;
  Drained d = Drain("subscription { ticks { n capped } }", Context(), options);
  ASSERT_EQ(d.responses.size(), 1u);
  EXPECT_EQ(d.responses[0].data, R"({"ticks":{"n":1,"capped":null}})");
  ASSERT_EQ(d.responses[0].errors.size(), 1u);
  EXPECT_EQ(d.responses[0].errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_LT(d.at[0], 1s * TimeScale());  // @budget(ms: 50), not the 5 s event budget
}

class Recorder : public ExecutionRecorder {
 public:
  void field_stopped(std::string_view operation, std::string_view path, StopReason reason, Duration) override {
    entries.push_back(std::string(operation) + " " + std::string(path) + " " + std::string(to_string(reason)));
  }
  std::vector<std::string> entries;
};

TEST_F(Subs, EventsFollowTheExecutionOptions) {
  TicksFrom({JsonEvent(R"({"n": 1, "slow_ms": 10000})"), JsonEvent(R"({"n": 2})")});
  Recorder recorder;
  SubscribeOptions options;
  options.event_budget = 50ms;
  options.execution.policy = StopPolicy::whole_response;
  options.execution.recorder = &recorder;
  Drained d = Drain("subscription Ticks { ticks { n slow } }", Context(), options);
  ASSERT_EQ(d.responses.size(), 2u);
  EXPECT_EQ(d.responses[0].to_json(),
            R"({"errors":[{"message":"the time budget ran out","extensions":{"code":"DEADLINE_EXCEEDED"}}]})");
  EXPECT_EQ(d.responses[1].to_json(), R"({"data":{"ticks":{"n":2,"slow":2}}})");
  EXPECT_EQ(recorder.entries, (std::vector<std::string>{"Ticks ticks.slow deadline_exceeded"}));
}

TEST_F(Subs, StoppingTheStreamWhileAnEventExecutesCutsItAtOnce) {
  const int s = TimeScale();
  TicksFrom({JsonEvent(R"({"n": 1, "slow_ms": 10000})"), JsonEvent(R"({"n": 2})")});
  auto [ctx, source] = Context().with_cancel();
  SubscribeOptions options;
  options.event_budget = 30s;
  Clock::time_point stopped_at;
  std::thread stopper = StopAfter(source, 100ms * s, &stopped_at);
  Drained d = Drain("subscription { ticks { n slow } }", ctx, options);
  stopper.join();
  // The event being executed is cut with CANCELLED; it is the last response.
  ASSERT_EQ(d.responses.size(), 1u);
  EXPECT_EQ(d.responses[0].data, R"({"ticks":{"n":1,"slow":null}})");
  ASSERT_EQ(d.responses[0].errors.size(), 1u);
  EXPECT_EQ(d.responses[0].errors[0].code, "CANCELLED");
  EXPECT_EQ(d.responses[0].errors[0].path, (std::vector<PathSegment>{"ticks", "slow"}));
  EXPECT_LT(d.start + d.at[0] - stopped_at, 50ms * s);
  EXPECT_EQ(d.end, Subscription::End::stopped);
  EXPECT_EQ(d.stop_reason, StopReason::cancelled);
}

TEST_F(Subs, StoppingTheStreamWhileWaitingForAnEventEndsNextAtOnce) {
  const int s = TimeScale();
  TicksFrom({JsonEvent(R"({"n": 1})"), JsonEvent(R"({"n": 2})")}, 30s);
  auto [ctx, source] = Context().with_cancel();
  Clock::time_point stopped_at;
  std::thread stopper = StopAfter(source, 100ms * s, &stopped_at);
  Drained d = Drain("subscription { ticks { n } }", ctx);
  stopper.join();
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"ticks":{"n":1}}})"}));
  EXPECT_EQ(d.end, Subscription::End::stopped);
  EXPECT_EQ(d.stop_reason, StopReason::cancelled);
  EXPECT_LT(d.ended - stopped_at, 50ms * s);
}

// A source that waits on Asio without looking at its context.
class DeafStream : public EventStream {
 public:
  asio::awaitable<std::optional<Data>> next(const Context&) override {
    co_await Sleep(30s);
    co_return Data::from(1);
  }
};

TEST_F(Subs, AStreamThatIgnoresItsContextIsStillStopped) {
  const int s = TimeScale();
  schema_->subscribe("Subscription", "numbers", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    co_return std::make_unique<DeafStream>();
  });
  auto [ctx, source] = Context().with_cancel();
  Clock::time_point stopped_at;
  std::thread stopper = StopAfter(source, 100ms * s, &stopped_at);
  Drained d = Drain("subscription { numbers }", ctx);
  stopper.join();
  EXPECT_TRUE(d.responses.empty());
  EXPECT_EQ(d.end, Subscription::End::stopped);
  EXPECT_LT(d.ended - stopped_at, 50ms * s);
}

TEST_F(Subs, TheSubscriptionsDeadlineBoundsTheWholeStream) {
  const int s = TimeScale();
  TicksFrom({JsonEvent(R"({"n": 1})"), JsonEvent(R"({"n": 2})"), JsonEvent(R"({"n": 3})")}, 200ms * s);
  Drained d = Drain("subscription { ticks { n } }", Context().with_timeout(300ms * s));
  EXPECT_EQ(Json(d.responses),
            (std::vector<std::string>{R"({"data":{"ticks":{"n":1}}})", R"({"data":{"ticks":{"n":2}}})"}));
  EXPECT_EQ(d.end, Subscription::End::stopped);
  EXPECT_EQ(d.stop_reason, StopReason::deadline_exceeded);
}

TEST_F(Subs, SourceResolverErrorsAreAnErrorsResponse) {
  schema_->subscribe("Subscription", "ticks", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    throw FieldError("unknown feed", "NOT_FOUND");
    co_return nullptr;
  });
  Drained d = Drain("subscription {\n  ticks { n }\n}");
  EXPECT_FALSE(d.started);
  EXPECT_EQ(d.start_errors.to_json(),
            R"({"errors":[{"message":"unknown feed","locations":[{"line":2,"column":3}],"path":["ticks"],)"
            R"("extensions":{"code":"NOT_FOUND"}}]})");

  // After a wait, and with a cutoff::Error: its taxonomy code.
  schema_->subscribe("Subscription", "ticks", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    co_await Sleep(1ms);
    throw Error(ErrorCode::unavailable, "the feed is down");
  });
  auto [bound, source] = Context().with_cancel();  // a context that can stop, but does not
  d = Drain("subscription { t: ticks { n } }", bound);
  ASSERT_EQ(d.start_errors.errors.size(), 1u);
  EXPECT_EQ(d.start_errors.errors[0].message, "the feed is down");
  EXPECT_EQ(d.start_errors.errors[0].code, "UNAVAILABLE");
  EXPECT_EQ(d.start_errors.errors[0].path, (std::vector<PathSegment>{"t"}));
  EXPECT_FALSE(d.start_errors.has_data);
}

TEST_F(Subs, ARootFieldWithoutASourceIsAnError) {
  Drained d = Drain("subscription { noSource }");
  EXPECT_FALSE(d.started);
  EXPECT_EQ(d.start_errors.to_json(),
            R"({"errors":[{"message":"Subscription field Subscription.noSource has no event source.",)"
            R"("locations":[{"line":1,"column":16}],"path":["noSource"]}]})");
}

TEST_F(Subs, OnlySubscriptionOperationsSubscribe) {
  TicksFrom({});
  Drained d = Drain("query Q { a }");
  EXPECT_FALSE(d.started);
  EXPECT_EQ(d.start_errors.to_json(),
            R"({"errors":[{"message":"Expected a subscription operation, got a query.","locations":[{"line":1,"column":1}]}]})");
  SchemaResult with_mutation = Schema::from_sdl("type Query { a: Int } type Mutation { m: Int }");
  ParseResult parsed = parse("mutation { m }");
  Request req;
  req.document = parsed.document.get();
  SubscribeOptions options;
  SubscribeResult r = cutoff::test_support::RunSync([&]() -> asio::awaitable<SubscribeResult> {
    co_return co_await subscribe(*with_mutation.schema, req, Context(), options);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.errors.errors.at(0).message, "Expected a subscription operation, got a mutation.");
}

TEST_F(Subs, RequestErrorsComeFirst) {
  TicksFrom({});
  Drained d = Drain("subscription S($start: Int!) { ticks(from: $start) { n } }");
  EXPECT_FALSE(d.started);
  EXPECT_EQ(d.start_errors.errors.at(0).message, "Variable \"$start\" of required type \"Int!\" was not provided.");
}

TEST_F(Subs, AStoppedContextFailsFastWithoutCallingTheSource) {
  bool called = false;
  schema_->subscribe("Subscription", "ticks", [&](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    called = true;
    co_return events_from({});
  });
  Drained d = Drain("subscription { ticks { n } }", Context().with_timeout(0ms));
  EXPECT_FALSE(d.started);
  EXPECT_FALSE(called);
  ASSERT_EQ(d.start_errors.errors.size(), 1u);
  EXPECT_EQ(d.start_errors.errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(d.start_errors.errors[0].path, (std::vector<PathSegment>{"ticks"}));
}

TEST_F(Subs, ASourceStreamErrorEndsTheSubscriptionWithAFailure) {
  schema_->subscribe("Subscription", "ticks", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    std::vector<Data> events{JsonEvent(R"({"n": 1})")};
    co_return std::make_unique<ListEventStream>(std::move(events), Duration::zero(),
                                                std::make_exception_ptr(FieldError("feed lost", "UNAVAILABLE")));
  });
  auto [bound, source] = Context().with_cancel();  // a context that can stop, but does not
  Drained d = Drain("subscription { ticks { n } }", bound);
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"ticks":{"n":1}}})"}));
  EXPECT_EQ(d.end, Subscription::End::failed);
  EXPECT_EQ(d.failure.to_json(),
            R"({"errors":[{"message":"feed lost","locations":[{"line":1,"column":16}],"path":["ticks"],)"
            R"("extensions":{"code":"UNAVAILABLE"}}]})");
}

TEST_F(Subs, AsioCancellationOfTheCallerEndsTheSubscription) {
  TicksFrom({JsonEvent(R"({"n": 1})"), JsonEvent(R"({"n": 2})")}, 30s);
  ParseResult parsed = parse("subscription { ticks { n } }");
  Request req;
  req.document = parsed.document.get();
  SubscribeOptions options;
  Subscription::End end = cutoff::test_support::RunSync([&]() -> asio::awaitable<Subscription::End> {
    SubscribeResult s = co_await subscribe(*schema_, req, Context(), options);
    EXPECT_TRUE(co_await s.subscription->next());
    using namespace asio::experimental::awaitable_operators;
    auto winner = co_await (s.subscription->next() || Sleep(50ms));  // the sleep wins; next() is cancelled
    EXPECT_EQ(winner.index(), 1u);
    EXPECT_FALSE(co_await s.subscription->next());
    co_return s.subscription->end();
  });
  EXPECT_EQ(end, Subscription::End::stopped);
}

// ---- the fixture -----------------------------------------------------------------------------------

TEST_F(Subs, UnexpectedSourceAndStreamErrorsAreMasked) {
  schema_->subscribe("Subscription", "ticks", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    co_return std::make_unique<ListEventStream>(std::vector<Data>{JsonEvent(R"({"n": 1})")}, Duration::zero(),
                                                std::make_exception_ptr(std::runtime_error("feed password=x")));
  });
  schema_->subscribe("Subscription", "numbers", [](FieldContext&) -> asio::awaitable<std::unique_ptr<EventStream>> {
    throw std::runtime_error("source password=y");
    co_return nullptr;
  });
  Drained d = Drain("subscription { ticks { n } }", Context().with_request_id("req-9"));
  ASSERT_EQ(d.responses.size(), 1u);
  EXPECT_EQ(d.end, Subscription::End::failed);
  ASSERT_EQ(d.failure.errors.size(), 1u);
  EXPECT_EQ(d.failure.errors[0].message, "Internal server error (request id: req-9)");
  EXPECT_EQ(d.failure.errors[0].code, "INTERNAL_SERVER_ERROR");

  d = Drain("subscription { numbers }", Context().with_request_id("req-10"));
  EXPECT_FALSE(d.started);
  ASSERT_EQ(d.start_errors.errors.size(), 1u);
  EXPECT_EQ(d.start_errors.errors[0].message, "Internal server error (request id: req-10)");
}

class FixtureSubs : public ::testing::Test {
 protected:
  Drained Drain(const char* fixture_text, const std::string& query, SubscribeOptions options) {
    SchemaResult r = Schema::from_sdl(kSchema);
    EXPECT_TRUE(r.ok());
    install_fixture_resolvers(*r.schema);
    json::value fixture = json::parse(fixture_text);
    ParseResult parsed = parse(query);
    Request req;
    req.document = parsed.document.get();
    req.root_value = Data::json(&fixture);
    return cutoff::test_support::RunSync([&]() -> asio::awaitable<Drained> {
      Drained d;
      d.start = Clock::now();
      SubscribeResult s = co_await subscribe(*r.schema, req, Context(), options);
      d.started = s.ok();
      if (!s.ok()) {
        d.start_errors = std::move(s.errors);
        co_return d;
      }
      while (std::optional<Response> next = co_await s.subscription->next()) {
        d.at.push_back(Clock::now() - d.start);
        d.responses.push_back(std::move(*next));
      }
      d.end = s.subscription->end();
      d.failure = s.subscription->failure();
      co_return d;
    });
  }
};

TEST_F(FixtureSubs, EventsWithMarkersResolvedWhenEachEventExecutes) {
  const int s = TimeScale();
  SubscribeOptions options;
  options.event_budget = 100ms * s;
  const std::string fixture = R"({"ticks": {"$interval_ms": )" + std::to_string(50 * s) + R"(, "$events": [
      {"n": 1, "label": "a"},
      {"n": 2, "label": {"$error": "no label", "$code": "NO_LABEL"}},
      {"n": 3, "label": {"$delay_ms": 10000, "$value": "late"}},
      {"n": 4, "label": {"$delay_ms": 1, "$value": "d"}}]}})";
  Drained d = Drain(fixture.c_str(), "subscription { ticks { n label } }", options);
  ASSERT_TRUE(d.started) << d.start_errors.to_json();
  ASSERT_EQ(d.responses.size(), 4u);
  EXPECT_EQ(d.responses[0].to_json(), R"({"data":{"ticks":{"n":1,"label":"a"}}})");
  EXPECT_EQ(d.responses[1].data, R"({"ticks":{"n":2,"label":null}})");
  EXPECT_EQ(d.responses[1].errors.at(0).code, "NO_LABEL");
  EXPECT_EQ(d.responses[2].data, R"({"ticks":{"n":3,"label":null}})");
  EXPECT_EQ(d.responses[2].errors.at(0).code, "DEADLINE_EXCEEDED");
  EXPECT_EQ(d.responses[2].errors.at(0).path, (std::vector<PathSegment>{"ticks", "label"}));
  EXPECT_EQ(d.responses[3].to_json(), R"({"data":{"ticks":{"n":4,"label":"d"}}})");
  EXPECT_GE(d.at[3], 150ms * s - 5ms);  // event 4 was due at 3 intervals
  EXPECT_EQ(d.end, Subscription::End::completed);
}

TEST_F(FixtureSubs, BudgetCapsAPendingValueInsideAnEvent) {
  SubscribeOptions options;
  options.event_budget = 10s;
  Drained d = Drain(R"({"ticks": {"$events": [{"n": 1, "capped": {"$delay_ms": 10000, "$value": 2}}]}})",
                    "subscription { ticks { n capped } }", options);
  ASSERT_EQ(d.responses.size(), 1u);
  EXPECT_EQ(d.responses[0].data, R"({"ticks":{"n":1,"capped":null}})");
  ASSERT_EQ(d.responses[0].errors.size(), 1u);
  EXPECT_EQ(d.responses[0].errors[0].code, "DEADLINE_EXCEEDED");
  EXPECT_LT(d.at[0], 1s * TimeScale());  // @budget(ms: 50), not the 10 s event budget
}

TEST_F(FixtureSubs, SourceAndStreamErrors) {
  SubscribeOptions options;
  Drained d = Drain(R"({"numbers": {"$events": {"$error": "no feed", "$code": "NO_FEED"}}})",
                    "subscription { numbers }", options);
  EXPECT_FALSE(d.started);
  EXPECT_EQ(d.start_errors.errors.at(0).code, "NO_FEED");

  d = Drain(R"({"numbers": {"$events": [1, 2], "$error": "feed lost"}})", "subscription { numbers }", options);
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"numbers":1}})", R"({"data":{"numbers":2}})"}));
  EXPECT_EQ(d.end, Subscription::End::failed);
  EXPECT_EQ(d.failure.errors.at(0).message, "feed lost");
}

TEST_F(FixtureSubs, AnyOtherValueIsOneEvent) {
  SubscribeOptions options;
  Drained d = Drain(R"({"numbers": 7})", "subscription { numbers }", options);
  EXPECT_EQ(Json(d.responses), (std::vector<std::string>{R"({"data":{"numbers":7}})"}));
  d = Drain(R"({"numbers": {"$error": "no count", "$code": "NO_COUNT"}})", "subscription { numbers }", options);
  ASSERT_EQ(d.responses.size(), 1u);
  EXPECT_EQ(d.responses[0].to_json(),
            R"({"errors":[{"message":"no count","locations":[{"line":1,"column":16}],"path":["numbers"],)"
            R"("extensions":{"code":"NO_COUNT"}}],"data":{"numbers":null}})");
  EXPECT_EQ(d.end, Subscription::End::completed);
}

}  // namespace
}  // namespace cutoff::graphql
