// A downstream project using an installed cutoff.
#include <cutoff/core/context.hpp>
#include <cutoff/core/error.hpp>
#include <cutoff/graphql/graphiql_page.hpp>

#include <chrono>
#include <iostream>
#include <thread>

int main() {
  using namespace std::chrono_literals;
  auto ctx = cutoff::Context::background().with_request_id("consumer-1").with_timeout(10ms);
  while (!ctx.stop_requested()) std::this_thread::sleep_for(1ms);
  try {
    ctx.check();
  } catch (const cutoff::Error& e) {
    std::cout << e.info().name << " http=" << e.info().http_status
              << " graphiql_page_bytes=" << cutoff::graphql::graphiql_page().size() << "\n";
    return 0;
  }
  return 1;
}
