// The JSON error document cutoff's servers answer failures with, written and read back:
//
//   {"error":{"code":"deadline_exceeded","message":"...","request_id":"..."}}
//
//   std::string body = cutoff::http::error_document("overloaded", "pool exhausted", rid);
//   if (auto e = cutoff::http::parse_error_document(response.body)) {
//     // e->code: the taxonomy's code, when the document names a known one
//   }
//
// The code is the error taxonomy's name (core/error.hpp), so a client can turn a remote
// failure back into the same ErrorCode (and exit code, or retry decision) the server had.
#ifndef CUTOFF_HTTP_ERROR_DOCUMENT_HPP_
#define CUTOFF_HTTP_ERROR_DOCUMENT_HPP_

#include <optional>
#include <string>
#include <string_view>

#include "cutoff/core/error.hpp"

namespace cutoff::http {

// The document for `code` (a taxonomy name), `message` and, unless empty, `request_id`.
std::string error_document(std::string_view code, std::string_view message, std::string_view request_id);

struct RemoteError {
  std::optional<ErrorCode> code;  // empty: no code, or one this build does not know
  std::string message;            // empty when the document has none
};

// Reads an error document; nullopt when `body` is not one (not JSON, or no "error" object).
std::optional<RemoteError> parse_error_document(std::string_view body);

}  // namespace cutoff::http

#endif  // CUTOFF_HTTP_ERROR_DOCUMENT_HPP_
