#include "cutoff/resilience/errors.hpp"

#include <boost/asio/error.hpp>
#include <boost/system/system_error.hpp>

namespace cutoff::resilience {

bool is_stop(ErrorCode code) noexcept {
  return code == ErrorCode::deadline_exceeded || code == ErrorCode::cancelled || code == ErrorCode::shutdown;
}

bool never_retried(ErrorCode code) noexcept { return is_stop(code) || code == ErrorCode::commit_ambiguous; }

bool default_retryable(const Error& error) noexcept {
  switch (error.code()) {
    case ErrorCode::attempt_timeout:
    case ErrorCode::unavailable:
    case ErrorCode::overloaded:
      return true;
    default:
      return false;
  }
}

const Error* find_error(const std::exception_ptr& e) noexcept {
  if (!e) return nullptr;
  try {
    std::rethrow_exception(e);
  } catch (const Error& error) {
    return &error;  // the exception object lives as long as `e` refers to it
  } catch (...) {
  }
  return nullptr;
}

bool is_cancellation(const std::exception_ptr& e) noexcept {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const Error& error) {
    return is_stop(error.code());
  } catch (const boost::system::system_error& error) {
    return error.code() == boost::asio::error::operation_aborted;
  } catch (...) {
  }
  return false;
}

}  // namespace cutoff::resilience
