// Event streams: where a GraphQL subscription's events come from (the spec's "source
// stream"). A subscription root field gets a source resolver (Schema::subscribe) that returns
// an EventStream; the executor pulls events from it one at a time and executes the
// subscription's selection set for each (see executor.hpp, `subscribe`).
//
//   class PriceStream : public cutoff::graphql::EventStream {
//    public:
//     asio::awaitable<std::optional<Data>> next(const cutoff::Context& ctx) override {
//       std::optional<Price> p = co_await feed_.receive(ctx);     // stops when ctx stops
//       if (!p) co_return std::nullopt;                            // the feed ended
//       co_return Data::object(std::make_shared<Price>(*p));       // owned by the event
//     }
//     ...
//   };
//
//   // Ready-made: events from a list, the first at once, then one every 100 ms.
//   std::unique_ptr<EventStream> s = cutoff::graphql::events_from(
//       {Data::json_value(tick1), Data::json_value(tick2)}, 100ms);
//
// An event must own what it holds (Data::json_value, Data::object(shared_ptr), strings by
// value), or point into something that outlives the subscription (the stream object itself,
// a fixture document): it is read while the event executes, after next() returned.
#ifndef CUTOFF_GRAPHQL_EVENT_STREAM_HPP_
#define CUTOFF_GRAPHQL_EVENT_STREAM_HPP_

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include "cutoff/core/clock.hpp"
#include "cutoff/core/context.hpp"
#include "cutoff/graphql/data.hpp"

namespace cutoff::graphql {

// A subscription's source of events. Used by one subscription, on its strand, one next() at
// a time.
class EventStream {
 public:
  virtual ~EventStream() = default;

  // The next event, or nullopt when the stream has ended normally.
  //
  // `ctx` is the subscription's context (normally without a deadline; it stops when the
  // client goes away). When it stops, next() should return promptly by throwing
  // cutoff::Error (ctx.check(), or cutoff::with_context around a wait); the executor also
  // cancels the call through Asio (terminal), so a stream that waits on Asio operations
  // stops even if it ignores `ctx`. Throwing anything else (FieldError with a code,
  // cutoff::Error, any std::exception) is a stream error: the subscription ends with it.
  virtual boost::asio::awaitable<std::optional<Data>> next(const Context& ctx) = 0;
};

// Yields a list of events, then ends (or fails with `end_error`, when given). The first event
// is available at once and each later one `interval` after the previous one was due: a fixed
// schedule from the first call to next(), so a slow consumer does not push later events
// back (an overdue event is returned at once). Waiting stops with cutoff::Error when the
// context stops.
class ListEventStream final : public EventStream {
 public:
  explicit ListEventStream(std::vector<Data> events, Duration interval = Duration::zero(),
                           std::exception_ptr end_error = nullptr);

  boost::asio::awaitable<std::optional<Data>> next(const Context& ctx) override;

 private:
  std::vector<Data> events_;
  Duration interval_;
  std::exception_ptr end_error_;
  std::size_t next_ = 0;
  TimePoint start_{};
};

inline std::unique_ptr<EventStream> events_from(std::vector<Data> events, Duration interval = Duration::zero()) {
  return std::make_unique<ListEventStream>(std::move(events), interval);
}

}  // namespace cutoff::graphql

#endif  // CUTOFF_GRAPHQL_EVENT_STREAM_HPP_
