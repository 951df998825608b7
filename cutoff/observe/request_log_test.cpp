#include "cutoff/observe/request_log.hpp"

#include <gtest/gtest.h>

namespace cutoff::observe {
namespace {

using namespace std::chrono_literals;

TEST(RequestLog, OneJsonLineWithFixedMembers) {
  RequestLog log;
  log.request_id = "req-\"42\"";
  log.operation = "GetWarehouse";
  log.outcome = "deadline_exceeded";
  log.budget_received = 250ms;
  log.time_used = std::chrono::duration<double, std::milli>(251.26);
  log.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  log.at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'796'065'201'123));
  EXPECT_EQ(log.to_json(),
            R"({"ts":"2026-11-30T19:00:01.123Z","request_id":"req-\"42\"","operation":"GetWarehouse",)"
            R"("outcome":"deadline_exceeded","budget_ms":250,"used_ms":251.3,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"})");
}

TEST(RequestLog, UnboundAndEmptyMembersAreLeftOut) {
  RequestLog log;
  log.outcome = "ok";
  log.at = std::chrono::system_clock::time_point(std::chrono::milliseconds(0));
  EXPECT_EQ(log.to_json(), R"({"ts":"1970-01-01T00:00:00.000Z","outcome":"ok","used_ms":0.0})");
}

}  // namespace
}  // namespace cutoff::observe
