#include "cutoff/resilience/pipeline.hpp"

namespace cutoff::resilience {

Pipeline::Pipeline(PipelineOptions options) : options_(std::move(options)) {
  auto inherit = [&](std::string& name, ResilienceMetrics*& metrics) {
    if (name == "default") name = options_.name;
    if (!metrics) metrics = options_.metrics;
  };
  if (options_.retry) {
    inherit(options_.retry->name, options_.retry->metrics);
    retry_ = std::make_unique<Retry>(*options_.retry);
  }
  if (options_.hedge) {
    inherit(options_.hedge->name, options_.hedge->metrics);
    hedge_ = std::make_unique<Hedge>(*options_.hedge);
  }
  if (options_.metrics) {
    attempt_timeouts_ = &options_.metrics->attempt_timeouts.with({options_.name});
    attempts_ = &options_.metrics->attempts.with({options_.name});
  }
}

Pipeline::~Pipeline() = default;

}  // namespace cutoff::resilience
