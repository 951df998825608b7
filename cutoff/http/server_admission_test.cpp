// A route with RouteOptions::admission, on a real server on loopback: a request whose budget
// is below the route's recent service time is answered 504 at once, without its handler.
#include <atomic>
#include <string>

#include "cutoff/http/internal/server_fixture_test.hpp"
#include "cutoff/resilience/metrics.hpp"
#include "cutoff/resilience/service_time_admission.hpp"

namespace cutoff::http::server_test {
namespace {

using cutoff::test_support::Scaled;

class AdmissionServer : public ServerFixture {
 protected:
  // How long the handler works.
  static Duration Work() { return Scaled(150ms); }

  void Routes(Server& s) override {
    s.route("GET", "/work",
            [this](const Request&, const Context&) -> asio::awaitable<Response> {
              runs_.fetch_add(1);
              co_await Sleep(Work());
              co_return Response::text(200, "done\n");
            },
            {.name = "Work", .admission = &admission_});
    s.route("GET", "/fail",
            [this](const Request&, const Context&) -> asio::awaitable<Response> {
              runs_.fetch_add(1);
              throw Error(ErrorCode::unavailable, "down");
              co_return Response{};
            },
            {.name = "Fail", .admission = &admission_});
  }

  bhttp::response<bhttp::string_body> GetWithBudget(const std::string& target, int budget_ms) {
    return Get(target, {{"Deadline-Budget-Ms", std::to_string(budget_ms)}});
  }

  resilience::ResilienceMetrics metrics_{registry_};
  resilience::ServiceTimeAdmission admission_{
      {.quantile = 0.5, .min_samples = 3, .probe_interval = Duration::zero(), .metrics = &metrics_}};
  std::atomic<int> runs_{0};
};

TEST_F(AdmissionServer, RefusesADoomedRequestAtOnceWithoutRunningTheHandler) {
  Start();
  // Before three runs have been seen nothing is refused, however short the budget: this one
  // runs and is cut at its deadline (a censored sample of 10 ms, kept: there is nothing else).
  EXPECT_EQ(GetWithBudget("/work", 10).result_int(), 504);
  EXPECT_EQ(runs_.load(), 1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Get("/work").result_int(), 200);
  EXPECT_EQ(runs_.load(), 4);
  ASSERT_TRUE(admission_.estimate("Work"));
  EXPECT_GE(*admission_.estimate("Work"), Work());

  // 10 ms left for work that takes 150: refused before starting.
  const auto started = Clock::now();
  const auto res = GetWithBudget("/work", 10);
  const auto took = Clock::now() - started;
  EXPECT_EQ(res.result_int(), 504);
  EXPECT_EQ(res["Deadline-Expired"], "1");
  EXPECT_NE(res.body().find("\"code\":\"deadline_exceeded\""), std::string::npos) << res.body();
  EXPECT_NE(res.body().find("refused before starting: Work needs ~"), std::string::npos) << res.body();
  EXPECT_NE(res.body().find("(p50 of the last 4 runs), 10.0 ms left"), std::string::npos) << res.body();
  EXPECT_EQ(runs_.load(), 4) << "the handler did not run";
  EXPECT_LT(took, Work() / 2) << "answered at once, not at the deadline";

  // Enough budget: it runs.
  EXPECT_EQ(GetWithBudget("/work", 5000).result_int(), 200);
  EXPECT_EQ(runs_.load(), 5);

  EXPECT_EQ(MetricValue("cutoff_resilience_doomed_refused_total{name=\"Work\"}"), 1);
  EXPECT_EQ(MetricValue("cutoff_http_requests_total{route=\"Work\",code=\"504\"}"), 2);
  EXPECT_EQ(MetricValue("cutoff_http_deadline_exceeded_total{route=\"Work\"}"), 2);
  EXPECT_GT(MetricValue("cutoff_resilience_service_time_estimate_seconds{name=\"Work\"}"), 0);
  bool logged = false;
  for (const auto& line : Log())
    logged |= line.find("\"operation\":\"Work\"") != std::string::npos &&
              line.find("\"outcome\":\"deadline_exceeded\"") != std::string::npos &&
              line.find("\"budget_ms\":10,") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST_F(AdmissionServer, FailuresAndStoppedRunsDoNotTeachItToRefuse) {
  Start();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Get("/fail").result_int(), 503);
  EXPECT_EQ(admission_.recent_samples("Fail"), 0u) << "a failure is no service time";
  EXPECT_EQ(GetWithBudget("/fail", 1).result_int(), 503) << "so nothing is refused";
  // Runs cut at 5 ms by short budgets: once a longer run has been seen, they say nothing.
  EXPECT_EQ(Get("/work").result_int(), 200);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(GetWithBudget("/work", 5).result_int(), 504);
  EXPECT_EQ(admission_.recent_samples("Work"), 1u);
  EXPECT_EQ(admission_.stats().censored_dropped, 5u);
}

}  // namespace
}  // namespace cutoff::http::server_test
