#include "cutoff/effects/classify.hpp"

#include <gtest/gtest.h>

namespace cutoff::effects {
namespace {

constexpr Step kSteps[] = {Step::before_begin, Step::body, Step::sending_commit, Step::commit_in_flight,
                           Step::after_commit, Step::after_commit_work};
constexpr StopReason kReasons[] = {StopReason::deadline_exceeded, StopReason::cancelled, StopReason::shutdown};

ErrorCode StoppedCode(StopReason r) { return Error::stopped(r).code(); }

TEST(ClassifyStop, ReadWriteIsItsOwnStopBeforeTheCommitPointAndAmbiguousFromIt) {
  const TransactionShape rw;
  for (Step s : kSteps) {
    for (StopReason r : kReasons) {
      const Error e = classify_stop(s, r, rw, "req-1");
      EXPECT_EQ(e.code(), past_commit_point(s) ? ErrorCode::commit_ambiguous : StoppedCode(r))
          << to_string(s) << " " << to_string(r);
      EXPECT_EQ(e.request_id(), "req-1");
    }
  }
}

TEST(ClassifyStop, EnforcedReadOnlyRootIsNeverAmbiguous) {
  const TransactionShape ro{.read_only = true, .read_only_enforced = true};
  for (Step s : kSteps)
    for (StopReason r : kReasons) EXPECT_EQ(classify_stop(s, r, ro).code(), StoppedCode(r)) << to_string(s);
}

TEST(ClassifyStop, ReadOnlyThatCouldHaveWrittenIsAmbiguousAfterTheCommitPoint) {
  const TransactionShape not_enforced{.read_only = true, .read_only_enforced = false};
  const TransactionShape queued{.read_only = true, .read_only_enforced = true, .after_commit_queued = true};
  for (const auto& shape : {not_enforced, queued}) {
    EXPECT_EQ(classify_stop(Step::body, StopReason::deadline_exceeded, shape).code(), ErrorCode::deadline_exceeded);
    EXPECT_EQ(classify_stop(Step::commit_in_flight, StopReason::deadline_exceeded, shape).code(),
              ErrorCode::commit_ambiguous);
    EXPECT_EQ(classify_stop(Step::after_commit_work, StopReason::cancelled, shape).code(),
              ErrorCode::commit_ambiguous);
  }
}

TEST(ClassifyStop, ASavepointInAnotherTransactionIsAmbiguousOnceItsBodyRan) {
  const TransactionShape nested{.read_only = true, .read_only_enforced = true, .nested = true};
  EXPECT_EQ(classify_stop(Step::before_begin, StopReason::cancelled, nested).code(), ErrorCode::cancelled);
  for (Step s : kSteps) {
    if (s == Step::before_begin) continue;
    EXPECT_EQ(classify_stop(s, StopReason::deadline_exceeded, nested).code(), ErrorCode::commit_ambiguous)
        << to_string(s);
  }
}

TEST(ClassifyStop, TheMessageSaysWhereAndWhy) {
  const Error e = classify_stop(Step::commit_in_flight, StopReason::deadline_exceeded, {});
  EXPECT_NE(std::string(e.message()).find("deadline_exceeded"), std::string::npos) << e.message();
  EXPECT_NE(std::string(e.message()).find("commit_in_flight"), std::string::npos) << e.message();
  EXPECT_FALSE(e.retryable());
}

}  // namespace
}  // namespace cutoff::effects
