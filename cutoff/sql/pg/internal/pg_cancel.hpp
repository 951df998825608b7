// Cancel requests for the statement a PostgreSQL connection is running, sent from one
// dedicated thread.
//
// PQcancel blocks (it opens a connection of its own to the server), so it never runs on an
// executor: requests are queued to a thread that sends them one at a time, in order, and
// reports each when PQcancel returned. The handle is shared, so a request still queued
// outlives the connection it was made from.
//
//   std::shared_ptr<PGcancel> cancel = cutoff::sql::internal::MakeCancelHandle(conn);  // at connect
//   cutoff::sql::internal::SendCancelRequest(cancel, [ex] {
//     boost::asio::post(ex, [] { /* delivered (or failed): nothing can hit a later statement */ });
//   });
#ifndef CUTOFF_SQL_PG_INTERNAL_PG_CANCEL_HPP_
#define CUTOFF_SQL_PG_INTERNAL_PG_CANCEL_HPP_

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace cutoff::sql::internal {

// What PQgetCancel made for `conn` (null when libpq could not make one), freed with
// PQfreeCancel when the last holder lets go.
std::shared_ptr<PGcancel> MakeCancelHandle(PGconn* conn);

// Queues a cancel request; `done` runs on the cancel thread once PQcancel returned. A failed
// request is not reported: the caller's bound on the drain is what acts then.
void SendCancelRequest(std::shared_ptr<PGcancel> cancel, std::function<void()> done);

// Cancel requests this process has sent so far, counted as each PQcancel returns. For tests:
// a stop must send exactly one, a commit none.
std::uint64_t CancelRequestsSent() noexcept;

}  // namespace cutoff::sql::internal

#endif  // CUTOFF_SQL_PG_INTERNAL_PG_CANCEL_HPP_
