#include "cutoff/graphql/internal/preparation.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <utility>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cutoff::graphql::internal {

namespace asio = boost::asio;

namespace {

asio::thread_pool& PreparationThread() {
  static asio::thread_pool pool(1);
  return pool;
}

std::shared_ptr<const PreparedDocument> Prepare(const Schema& schema, const std::string& query,
                                                const ParseOptions& parse_options,
                                                const ValidationOptions& validation_options, DocumentCache* cache) {
  return cache ? cache->prepare(schema, query, parse_options, validation_options)
               : prepare_document(schema, query, parse_options, validation_options);
}

asio::awaitable<std::shared_ptr<const PreparedDocument>> PrepareThere(const Schema& schema, std::string query,
                                                                      ParseOptions parse_options,
                                                                      ValidationOptions validation_options,
                                                                      DocumentCache* cache) {
  co_return Prepare(schema, query, parse_options, validation_options, cache);
}

}  // namespace

asio::awaitable<std::shared_ptr<const PreparedDocument>> prepare_off_loop_if_large(
    const Schema& schema, std::string query, ParseOptions parse_options, ValidationOptions validation_options,
    DocumentCache* cache) {
  if (query.size() < kPrepareInlineBytes) co_return Prepare(schema, query, parse_options, validation_options, cache);
  // A named awaitable: g++ 12 destroys temporaries of a co_await's full expression twice.
  auto prepared = asio::co_spawn(PreparationThread(),
                                 PrepareThere(schema, std::move(query), parse_options, validation_options, cache),
                                 asio::use_awaitable);
  co_return co_await std::move(prepared);
}

asio::awaitable<PreparedOperation> prepare_operation(const Schema& schema, std::string query,
                                                     std::string operation_name, ParseOptions parse_options,
                                                     ValidationOptions validation_options, DocumentCache* cache) {
  PreparedOperation out;
  out.large = query.size() >= kPrepareInlineBytes;
  // A named awaitable: g++ 12 destroys temporaries of a co_await's full expression twice.
  auto preparing = prepare_off_loop_if_large(schema, std::move(query), parse_options, validation_options, cache);
  out.prepared = co_await std::move(preparing);
  if (out.prepared->ok()) out.operation = select_operation(*out.prepared->document, operation_name);
  co_return out;
}

void return_freed_memory_soon() {
#if defined(__GLIBC__)
  static std::atomic<std::int64_t> last_ms{-1'000'000};
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
  std::int64_t last = last_ms.load(std::memory_order_relaxed);
  if (now - last < 1000 || !last_ms.compare_exchange_strong(last, now)) return;
  // A moment later: by then the request's document and response are freed.
  auto timer = std::make_shared<asio::steady_timer>(PreparationThread(), std::chrono::milliseconds(200));
  timer->async_wait([timer](const boost::system::error_code&) { malloc_trim(0); });
#endif
}

}  // namespace cutoff::graphql::internal
